#include "clock.h"

#include <pthread.h>
#include <stdint.h>
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

struct clock_pair {
	uint64_t tsc, ns;
};

/*
 * One (TSC, monotonic) pair read as close together as we can: the TSC is read
 * on both sides of clock_gettime and the tightest of a few tries is kept, so
 * a preemption between the two reads cannot skew the scale.
 */
static int read_pair(struct clock_pair *p)
{
	const uint64_t max_spread_ticks = 20000; /* ~10 us at 2 GHz */
	uint64_t best = UINT64_MAX;

	for (int i = 0; i < 8; i++) {
		uint64_t before = __rdtsc(), ns = fl_clock_mono_ns(), after = __rdtsc();

		if (after > before && after - before < best) {
			best = after - before;
			p->tsc = before + (after - before) / 2;
			p->ns = ns;
		}
	}
	return best < max_spread_ticks ? 0 : -1;
}

static void calibrate(void)
{
	const uint64_t window_ns = 2000000;
	struct clock_pair start, end;
	uint64_t mult;

	if (!tsc_is_invariant() || read_pair(&start))
		return;
	while (fl_clock_mono_ns() - start.ns < window_ns)
		;
	if (read_pair(&end) || end.tsc <= start.tsc)
		return;
	mult = ((end.ns - start.ns) << FL_CLOCK_SHIFT) / (end.tsc - start.tsc);
	/* end.ns at end.tsc, to within a nanosecond of rounding */
	atomic_store_explicit(&fl_clock_scale.ns_off,
			      end.ns - (uint64_t)(((unsigned __int128)end.tsc * mult) >>
						  FL_CLOCK_SHIFT),
			      memory_order_relaxed);
	atomic_store_explicit(&fl_clock_scale.mult, mult, memory_order_release);
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
