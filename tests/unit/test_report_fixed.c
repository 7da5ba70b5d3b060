/*
 * report_fixed: "%.Nf" without printf reads as snprintf's, on reals a report
 * has (rates, percentages, bytes in units, microseconds) and on the hard ones:
 * exact ties (0.125, 2.5: to even), values a hair off a tie (2.675 is
 * 2.67499999...), whole numbers just below and above a power of ten, huge,
 * tiny, negative, -0.0, NaN and infinities (left to printf).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "tools/report/report_fixed.h"

static void same(double x, int decimals)
{
	char want[64], got[64];

	snprintf(want, sizeof(want), "%.*f", decimals, x);
	report_fixed(got, sizeof(got), x, decimals);
	if (strcmp(got, want))
		fail_msg("%.17g with %d decimals: \"%s\", printf writes \"%s\"", x, decimals, got,
			 want);
}

static void test_as_printf_writes(void **state)
{
	static const double hard[] = { 0.0, -0.0, 0.5, 1.5, 2.5, 0.125, 0.375, 0.05, 0.15, 0.25,
				       0.35, 2.675, 1.005, 1.0049999999999999, 9.995, 99.95,
				       999.95, 0.045, 1e15, 4503599627370495.5, 4503599627370497.0,
				       1e22, 1e-300, 5e-324, -0.04, -0.05, -2.5, 953.67431640625,
				       1e300, NAN, INFINITY, -INFINITY, 0.1, 0.7, 123456.789 };
	uint64_t seed = 42;

	(void)state;
	for (int d = 0; d <= 6; d++) {
		for (size_t i = 0; i < sizeof(hard) / sizeof(hard[0]); i++)
			same(hard[i], d);
	}
	for (int n = 0; n < 300000; n++) {
		uint64_t r;
		double x;

		seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
		r = seed >> 11;
		if (n % 4 == 0) /* any bits over twenty decades */
			x = (double)r / (double)(1ULL << 53) * pow(10.0, (double)((r >> 3) % 20) - 6.0);
		else if (n % 4 == 1) /* short decimals and their ties */
			x = (double)(r % 2000000) / pow(10.0, (double)((r >> 30) % 7));
		else if (n % 4 == 2) /* bytes in a unit, as the hop table shows them */
			x = (double)(r % (1ULL << 40)) / pow(1024.0, (double)((r >> 45) % 4));
		else /* a percentage of two rates */
			x = 100.0 * (double)(r % 100000) / (double)(1 + (r >> 20) % 100000);
		same((r & 1) ? -x : x, (int)((r >> 50) % 4));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_as_printf_writes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
