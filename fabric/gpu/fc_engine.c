/*
 * The emulated GPU's copy engine: a copy between host and device memory of N bytes takes
 * N / gpus.copy_bytes_per_s (a PCIe link), and copies queue behind one another, one engine
 * each way per process (a process drives one GPU, as the shim's ranks do). The copy itself is
 * a memcpy done at once; the caller then waits out the rest of its time.
 */
#include <pthread.h>
#include <time.h>

#include "fc_internal.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
/* when the engine is done with what it was given: to the device [0], to the host [1] */
static uint64_t free_at[2];

uint64_t fc_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t fc_engine_take(int to_host, size_t size, uint64_t at)
{
	uint64_t rate = fc_gpus()->copy_bytes_per_s, done;
	uint64_t *engine = &free_at[to_host != 0];

	if (!rate)
		return 0;
	pthread_mutex_lock(&lock);
	/* it starts once the copies before it are done; rounded up: never sooner than size/rate */
	done = (*engine > at ? *engine : at) + (uint64_t)((double)size / (double)rate * 1e9) + 1;
	*engine = done;
	pthread_mutex_unlock(&lock);
	return done;
}

void fc_hold_until(uint64_t done)
{
	struct timespec ts = { (time_t)(done / 1000000000u), (long)(done % 1000000000u) };

	while (done && clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL))
		;
}
