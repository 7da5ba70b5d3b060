/* Elementary functions on libc alone (fl_math.h). */
#include "fl_math.h"

#include <math.h>
#include <stdint.h>

#define LN2 0.69314718055994530942

/* ln(1 + (i + 1/2) / 32): the centres of 32 slices of [1, 2) (made by a script, not measured). */
static const double ln_centre[32] = {
	0.015504186535965254,
	0.045809536031294201,
	0.075223421237587532,
	0.10379679368164356,
	0.13157635778871926,
	0.15860503017663857,
	0.18492233849401199,
	0.21056476910734964,
	0.23556607131276691,
	0.25995752443692605,
	0.28376817313064462,
	0.30702503529491187,
	0.32975328637246798,
	0.3519764231571782,
	0.37371640979358406,
	0.39499380824086899,
	0.41582789514371099,
	0.43623676677491807,
	0.45623743348158757,
	0.47584590486996392,
	0.49507726679785152,
	0.51394575110223428,
	0.53246479886947184,
	0.5506471179526623,
	0.56850473535266877,
	0.58604904500357824,
	0.60329085143808425,
	0.62024040975185757,
	0.63690746223706918,
	0.65330127201274568,
	0.66943065394262924,
	0.68530400309891937

};

/*
 * ln m for m in [1, 2): the slice's centre c, then ln(m / c) = 2 atanh(s) with
 * s = (m - c) / (m + c), |s| < 1/128, where four terms leave under 1e-19.
 */
static double ln_one_to_two(double m)
{
	int i = (int)((m - 1.0) * 32.0);
	double c, s, s2;

	i = i < 0 ? 0 : i > 31 ? 31 : i;
	c = 1.0 + (i + 0.5) / 32.0;
	s = (m - c) / (m + c);
	s2 = s * s;
	return ln_centre[i] + 2.0 * s * (1.0 + s2 * (1.0 / 3.0 + s2 * (1.0 / 5.0 + s2 / 7.0)));
}

double fl_ln(double x)
{
	union {
		double d;
		uint64_t u;
	} b = { .d = x };
	int e = (int)(b.u >> 52 & 0x7ff);
	double m;

	/*
	 * A positive normal x = m 2^(e - 1023), m in [1, 2): m and e read from its
	 * bits, what frexp gives (2m, e + 1) without a call; the diagnosis takes
	 * millions of logarithms on a large fabric. Zero, subnormals, infinities,
	 * NaN and negatives go the long way.
	 */
	if (e > 0 && e < 0x7ff && !(b.u >> 63)) {
		b.u = (b.u & 0xfffffffffffffULL) | 0x3ff0000000000000ULL;
		m = b.d;
	} else if (isnan(x) || x < 0.0) {
		return NAN;
	} else if (x == 0.0) {
		return -INFINITY;
	} else if (isinf(x)) {
		return x;
	} else {
		m = 2.0 * frexp(x, &e); /* x = (m / 2) 2^e, m / 2 in [1/2, 1) */
		e += 1022;
	}
	return ln_one_to_two(m) + (e - 1023) * LN2;
}

double fl_exp(double x)
{
	double r, term = 1.0, sum = 1.0;
	int k;

	if (isnan(x))
		return x;
	if (x > 709.8)
		return INFINITY;
	if (x < -745.2)
		return 0.0;
	k = (int)(x / LN2 + (x < 0.0 ? -0.5 : 0.5)); /* x = k ln 2 + r, |r| <= ln 2 / 2 */
	r = x - k * LN2;
	for (int i = 1; i <= 22; i++) {
		term *= r / i;
		sum += term;
	}
	return ldexp(sum, k);
}

double fl_sqrt(double x)
{
	double y;

	if (isnan(x) || x < 0.0)
		return NAN;
	if (x == 0.0 || isinf(x))
		return x;
	y = fl_exp(0.5 * fl_ln(x));
	y = 0.5 * (y + x / y); /* Newton: the last bits */
	return 0.5 * (y + x / y);
}
