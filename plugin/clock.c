#include "clock.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

struct fl_clock_scale fl_clock_scale;

#ifdef FL_HAVE_TSC
/* Only a TSC that ticks at a constant rate in every power state is a clock. */
static int tsc_is_invariant(void)
{
	char line[4096];
	int ok = 0;
	FILE *f = fopen("/proc/cpuinfo", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "flags", 5))
			continue;
		ok = strstr(line, " constant_tsc") && strstr(line, " nonstop_tsc");
		break;
	}
	fclose(f);
	return ok;
}

static void calibrate(void)
{
	const uint64_t window_ns = 2000000;
	uint64_t ns0, ns1, tsc0, tsc1;

	if (!tsc_is_invariant())
		return;
	ns0 = fl_clock_mono_ns();
	tsc0 = __rdtsc();
	do
		ns1 = fl_clock_mono_ns();
	while (ns1 - ns0 < window_ns);
	tsc1 = __rdtsc();
	if (tsc1 <= tsc0)
		return;
	atomic_store_explicit(&fl_clock_scale.tsc_base, tsc1, memory_order_relaxed);
	atomic_store_explicit(&fl_clock_scale.ns_base, ns1, memory_order_relaxed);
	atomic_store_explicit(&fl_clock_scale.mult,
			      ((ns1 - ns0) << FL_CLOCK_SHIFT) / (tsc1 - tsc0), memory_order_release);
}
#else
static void calibrate(void)
{
}
#endif

void fl_clock_init(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, calibrate);
}
