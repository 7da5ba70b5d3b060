/*
 * The pieces of the diagnosis (verdict*.c). Each tries one kind of verdict and
 * returns 1 when it filled `out`, 0 when its kind does not apply, -1 when it
 * ran out of memory.
 */
#ifndef FL_VERDICT_INTERNAL_H
#define FL_VERDICT_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "verdict.h"

struct verdict_input {
	const struct fl_hop_figures *hops;
	size_t nhops;
	const struct fl_verdict_params *params;
};

/* Enough traffic to compare the hop's rates with others. */
bool verdict_judged(const struct verdict_input *in, size_t i);
/* Judged and with a wire sample: a rate to compare. */
bool verdict_has_rate(const struct verdict_input *in, size_t i);
/* Moved anything at all: enough to know how it was configured. */
bool verdict_has_traffic(const struct fl_hop_figures *h);
/* Median of v[0..n), which it sorts; 0 when n is 0. */
double verdict_median(double *v, size_t n);
/* Median wire rate of every hop with a rate; 0 when none. -1 when out of memory. */
double verdict_median_rate(const struct verdict_input *in);
/* The hop leaves or enters node (and dev, unless dev is NULL). */
bool verdict_touches(const struct fl_hop_figures *h, const char *node, const char *dev);
/* Names hop i as the culprit: out->hop, out->culprit_gbs. */
void verdict_set_hop(struct fl_verdict *out, const struct fl_hop_figures *hops, size_t i);
void verdict_set_name(char *dst, size_t len, const char *src);
/* Writes out->reason; long names are cut rather than overflow. */
void verdict_say(struct fl_verdict *out, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

int verdict_try_transport(const struct verdict_input *in, struct fl_verdict *out);
int verdict_try_gdr(const struct verdict_input *in, struct fl_verdict *out);
int verdict_try_wire(const struct verdict_input *in, struct fl_verdict *out);
int verdict_try_node(const struct verdict_input *in, struct fl_verdict *out);

#endif
