/*
 * The diagnosis's logarithm (plugin/base/fl_math.h) against libm's, over
 * positive doubles drawn from every binade, the subnormals (which take the
 * frexp path) included, and its special values. Its fast path reads the
 * exponent and mantissa from the bits; a slip there is off by ln 2 or more,
 * far outside the bound.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <math.h>

#include "plugin/base/fl_math.h"

static uint64_t seed = 0x9e3779b97f4a7c15ULL;

static uint64_t next(void) /* xorshift64 */
{
	seed ^= seed << 13;
	seed ^= seed >> 7;
	seed ^= seed << 17;
	return seed;
}

/* Two units in the last place of ln x, and never tighter than that of 1 (ln x near 0). */
static void assert_near_log(double x)
{
	double want = log(x), got = fl_ln(x), scale = fabs(want) > 1.0 ? fabs(want) : 1.0;

	if (fabs(got - want) > 2.0 * 0x1p-52 * scale)
		fail_msg("fl_ln(%a) = %a, libm %a", x, got, want);
}

static void test_every_binade_matches_libm(void **state)
{
	(void)state;
	for (int i = 0; i < 2000000; i++) {
		uint64_t u = next() & ~(1ULL << 63); /* positive, any exponent */
		double x;

		memcpy(&x, &u, sizeof(x));
		if (isfinite(x) && x > 0.0)
			assert_near_log(x);
	}
}

static void test_subnormals_and_edges_match_libm(void **state)
{
	const double edge[] = { 0x1p-1074, 0x1.8p-1070, 0x0.fffffffffffffp-1022, 0x1p-1022,
				0x1.fffffffffffffp1023, 1.0, 0x1.0000000000001p0,
				0x1.fffffffffffffp-1, 2.0, 0.5, 50.0, 0.01 };

	(void)state;
	for (size_t i = 0; i < sizeof(edge) / sizeof(edge[0]); i++)
		assert_near_log(edge[i]);
	for (int i = 0; i < 100000; i++) {
		uint64_t u = next() & 0x000fffffffffffffULL; /* exponent field 0 */
		double x;

		memcpy(&x, &u, sizeof(x));
		if (x > 0.0)
			assert_near_log(x);
	}
}

static void test_special_values(void **state)
{
	(void)state;
	assert_true(isinf(fl_ln(0.0)) && fl_ln(0.0) < 0.0);
	assert_true(isinf(fl_ln(-0.0)) && fl_ln(-0.0) < 0.0);
	assert_true(isnan(fl_ln(-1.0)));
	assert_true(isnan(fl_ln(-INFINITY)));
	assert_true(isnan(fl_ln(NAN)));
	assert_true(isinf(fl_ln(INFINITY)) && fl_ln(INFINITY) > 0.0);
	assert_true(fl_ln(1.0) == 0.0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_binade_matches_libm),
		cmocka_unit_test(test_subnormals_and_edges_match_libm),
		cmocka_unit_test(test_special_values),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
