/*
 * The pieces of the diagnosis (verdict*.c). Each tries one kind of finding and
 * returns how many it added to `out` (0 when its kind does not apply), -1 when
 * it ran out of memory.
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
/* Judged and with a wire sample its requests were large enough to pace: a rate to compare. */
bool verdict_has_rate(const struct verdict_input *in, size_t i);
/*
 * fl_wire_bound for the hop: its typical request (else its mean one) and its
 * requests in flight (fl_hop_in_flight).
 */
bool verdict_wire_bound(const struct fl_hop_figures *h);
/* The hop's typical request, else its mean one; 0 when it moved nothing. */
uint64_t verdict_request_size(const struct fl_hop_figures *h);
/* Moved anything at all: enough to know how it was configured. */
bool verdict_has_traffic(const struct fl_hop_figures *h);
/* Median of v[0..n), which it reorders; 0 when n is 0. */
double verdict_median(double *v, size_t n);
/* The k-th smallest of v (k < n), which it reorders. */
double verdict_kth(double *v, size_t n, size_t k);
/* Names hop i as the culprit: out->hop, out->culprit_gbs. */
void verdict_set_hop(struct fl_finding *out, const struct fl_hop_figures *hops, size_t i);
void verdict_set_name(char *dst, size_t len, const char *src);
/* Writes out->reason; long names are cut rather than overflow. */
void verdict_say(struct fl_finding *out, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void verdict_say_more(struct fl_finding *out, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* A new finding, cleared, in v; NULL when v holds FL_VERDICT_MAX_FINDINGS already. */
struct fl_finding *verdict_add_finding(struct fl_verdict *v, enum fl_verdict_kind kind);
/* Same transport and nominal speed within 1%: hops whose rates may be compared. */
bool verdict_comparable(const struct fl_hop_figures *a, const struct fl_hop_figures *b);
int verdict_try_transport(const struct verdict_input *in, struct fl_verdict *out);
int verdict_try_gdr(const struct verdict_input *in, struct fl_verdict *out);

#endif
