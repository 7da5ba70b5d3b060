/*
 * The few elementary functions the diagnosis needs, on libc alone: the plugin
 * links only libc, libpthread and libdl at load time, and libm is none of
 * them. Accurate to a few units in the last place over the ranges used
 * (rates, waits and likelihoods), not a general libm.
 */
#ifndef FL_MATH_H
#define FL_MATH_H

/* Natural logarithm; -inf at 0, NaN below. */
double fl_ln(double x);
/* e^x; 0 below -745, +inf above 709.8. */
double fl_exp(double x);
double fl_sqrt(double x);

#endif
