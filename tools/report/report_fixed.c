/* "%.Nf" without printf (report_fixed.h). */
#include "report_fixed.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/*
 * x x 10^decimals rounded as printf rounds it (to nearest, a tie to even, on
 * x's exact binary value): the product's rounding error is exact by fma, so
 * which side of the half the exact product lies on is never misread.
 * False where that whole number is not below 2^52 (printf's own way then).
 */
static bool scaled(double x, int decimals, unsigned long long *out)
{
	static const double pow10[] = { 1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6 };
	double t = x * pow10[decimals], err = fma(x, pow10[decimals], -t), m, side;

	if (!(t < 4503599627370496.0)) /* 2^52; NaN too */
		return false;
	m = floor(t);
	if (t - m == 0.0 && err < 0.0) /* t whole, the exact product just below it */
		m -= 1.0;
	side = ((t - m) - 0.5) + err; /* each step exact near a tie: its sign is the truth */
	if (side > 0.0 || (side == 0.0 && fmod(m, 2.0) != 0.0))
		m += 1.0;
	*out = (unsigned long long)m;
	return true;
}

void report_fixed(char *buf, size_t len, double x, int decimals)
{
	char text[48], *p = text + sizeof(text);
	unsigned long long whole;
	bool negative = signbit(x);

	if (decimals < 0 || decimals > 6 || !isfinite(x) ||
	    !scaled(negative ? -x : x, decimals, &whole)) {
		snprintf(buf, len, "%.*f", decimals, x);
		return;
	}
	*--p = '\0';
	for (int d = 0; d < decimals; d++) {
		*--p = (char)('0' + whole % 10);
		whole /= 10;
	}
	if (decimals)
		*--p = '.';
	do {
		*--p = (char)('0' + whole % 10);
		whole /= 10;
	} while (whole);
	if (negative)
		*--p = '-';
	snprintf(buf, len, "%s", p);
}
