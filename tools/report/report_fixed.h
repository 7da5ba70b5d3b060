/*
 * "%.Nf" without printf, the same text: the hop table of a report of 10^6 hops
 * formats some five reals a hop, and printf's exact decimal conversion was a
 * tenth of the text output's time.
 */
#ifndef FABRICLAB_REPORT_FIXED_H
#define FABRICLAB_REPORT_FIXED_H

#include <stddef.h>

/* x with decimals (0..6) digits after the point into buf, as snprintf(buf, len, "%.*f"). */
void report_fixed(char *buf, size_t len, double x, int decimals);

#endif
