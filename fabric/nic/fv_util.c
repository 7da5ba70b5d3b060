/* Clock, logging and the IB timer encodings. */
#include <stdarg.h>
#include <stdio.h>
#include <time.h>

#include "fv_internal.h"

uint64_t fv_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void fv_log(const char *fmt, ...)
{
	struct fv_config *cfg = fv_config_get();
	va_list ap;

	if (!cfg || !cfg->verbose)
		return;
	va_start(ap, fmt);
	fprintf(stderr, "fakeverbs: ");
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

/* Minimum RNR NAK timer, in microseconds, per its 5-bit code (code 0 is the longest). */
uint32_t fv_rnr_timer_us(uint8_t code)
{
	static const uint32_t us[32] = {
		655360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640, 960, 1280, 1920,
		2560, 3840, 5120, 7680, 10240, 15360, 20480, 30720, 40960, 61440, 81920, 122880,
		163840, 245760, 327680, 491520,
	};

	return us[code & 31];
}

/* How long a requester keeps retrying: 4.096 us << timeout per try, retry_cnt + 1 tries (timeout
 * 0 means for ever), capped so that a test hangs at most a few seconds. */
uint64_t fv_retry_window_ns(uint8_t timeout, uint8_t retry_cnt)
{
	struct fv_config *cfg = fv_config_get();
	uint64_t cap = cfg && cfg->retry_ms ? (uint64_t)cfg->retry_ms * 1000000ull : 8000000000ull;
	uint64_t window;

	if (timeout == 0)
		return cap;
	window = (4096ull << (timeout > 31 ? 31 : timeout)) * (uint64_t)(retry_cnt + 1);
	return window < cap ? window : cap;
}
