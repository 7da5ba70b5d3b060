/* The TSC clock keeps CLOCK_MONOTONIC's pace: a wrong scale would skew every rate reported. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <cmocka.h>

#include "plugin/base/clock.h"

static void test_tsc_clock_keeps_monotonic_pace(void **state)
{
	struct timespec nap = { 0, 50 * 1000 * 1000 };
	uint64_t tsc0, mono0, tsc1, mono1;
	double ratio;

	(void)state;
	fl_clock_init();
	tsc0 = fl_clock_ns();
	mono0 = fl_clock_mono_ns();
	nanosleep(&nap, NULL);
	tsc1 = fl_clock_ns();
	mono1 = fl_clock_mono_ns();
	assert_true(tsc1 > tsc0);
	ratio = (double)(tsc1 - tsc0) / (double)(mono1 - mono0);
	/* 50 ms against two reads' jitter: 0.5% is far above noise and far below a bad scale. */
	assert_true(ratio > 0.995 && ratio < 1.005);
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
