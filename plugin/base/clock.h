/*
 * A cheap monotonic clock in nanoseconds. clock_gettime costs ~28 ns here, two
 * of them per request would blow the wrapper's budget, so on x86 with an
 * invariant TSC we read the TSC (~11 ns) and scale it, calibrated once against
 * CLOCK_MONOTONIC. Values start on the CLOCK_MONOTONIC time line and may drift
 * from it by the scale's error (parts per million): compare them only with
 * each other.
 */
#ifndef FL_CLOCK_H
#define FL_CLOCK_H

#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define FL_HAVE_TSC 1
#endif

/*
 * ns = ns_off + (tsc * mult >> FL_CLOCK_SHIFT): the calibration point's offset folded into one
 * word (mod 2^64), so a read is a multiply and an add, and monotonic in the TSC wherever it is
 * read (no tick count below the calibration point to wrap).
 */
struct fl_clock_scale {
	_Atomic uint64_t mult; /* ns per tick << FL_CLOCK_SHIFT; 0 = use clock_gettime */
	_Atomic uint64_t ns_off;
};

#define FL_CLOCK_SHIFT 24

extern struct fl_clock_scale fl_clock_scale;

/* Calibrates the TSC once (about 2 ms); safe to call many times from any thread. */
void fl_clock_init(void);

static inline uint64_t fl_clock_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static inline uint64_t fl_clock_ns(void)
{
#ifdef FL_HAVE_TSC
	uint64_t mult = atomic_load_explicit(&fl_clock_scale.mult, memory_order_acquire);

	if (__builtin_expect(mult != 0, 1)) /* the TSC path falls through: no jump back */
		return atomic_load_explicit(&fl_clock_scale.ns_off, memory_order_relaxed) +
		       (uint64_t)(((unsigned __int128)__rdtsc() * mult) >> FL_CLOCK_SHIFT);
#endif
	return fl_clock_mono_ns();
}

#endif
