/* The TSC clock keeps CLOCK_MONOTONIC's pace: a wrong scale would skew every rate reported. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <cmocka.h>

#include "plugin/base/clock.h"

/*
 * One TSC read bracketed by two CLOCK_MONOTONIC reads: the TSC moment lies between them, so a
 * preemption between the reads widens the bracket instead of skewing the comparison.
 */
struct bracket {
	uint64_t mono_before, tsc, mono_after;
};

static struct bracket bracket_now(void)
{
	struct bracket b;

	b.mono_before = fl_clock_mono_ns();
	b.tsc = fl_clock_ns();
	b.mono_after = fl_clock_mono_ns();
	return b;
}

static void test_tsc_clock_keeps_monotonic_pace(void **state)
{
	struct timespec nap = { 0, 50 * 1000 * 1000 };
	/* 0.5% of 50 ms (250 us) is far above a bracket's width and far below a bad scale. */
	const double tol = 0.005;
	struct bracket b0, b1;
	uint64_t slack = 0;
	double tsc_ns, shortest, longest;

	(void)state;
	fl_clock_init();
	/*
	 * A bracket wider than 100 us (a preemption inside it) would blunt the check: sampled
	 * again, up to 20 times, until 1 sample is narrow. The check is judged once, on that
	 * sample; the retry is chosen by the bracket's width, never by the result, so a wrong
	 * scale fails whichever sample is judged.
	 */
	for (int tries = 0; tries < 20; tries++) {
		b0 = bracket_now();
		nanosleep(&nap, NULL);
		b1 = bracket_now();
		slack = (b0.mono_after - b0.mono_before) + (b1.mono_after - b1.mono_before);
		if (slack <= 100000)
			break;
	}
	assert_true(slack <= 100000);
	assert_true(b1.tsc > b0.tsc);
	/*
	 * The TSC interval lies between the shortest and the longest monotonic interval the
	 * brackets allow, give or take the tolerance on the scale.
	 */
	tsc_ns = (double)(b1.tsc - b0.tsc);
	shortest = (double)(b1.mono_before - b0.mono_after);
	longest = (double)(b1.mono_after - b0.mono_before);

	if (tsc_ns < shortest * (1 - tol) || tsc_ns > longest * (1 + tol))
		fail_msg("TSC interval %.0f ns outside [%.0f, %.0f] ns (monotonic, +-%.1f%%)",
			 tsc_ns, shortest * (1 - tol), longest * (1 + tol), tol * 100);
}

static void test_clock_never_goes_back(void **state)
{
	uint64_t last = fl_clock_ns();

	(void)state;
	for (int i = 0; i < 1000000; i++) {
		uint64_t now = fl_clock_ns();

		assert_true(now >= last);
		last = now;
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tsc_clock_keeps_monotonic_pace),
		cmocka_unit_test(test_clock_never_goes_back),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
