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

/*
 * A slow cable stretches every message; a rank starved of CPU now and then
 * (16 lab ranks on 2 busy cores) stretches a few, which pulls its average
 * rate down to 0.57-0.8x while its median message time stays with the
 * others'. So a slow wire must also have its median message take this much
 * longer than the others' median: more than one step of the time histogram
 * (16 linear steps per power of two, so a step is 1/16 to 1/32 of its value,
 * up to 6.25% apart), so that neighbouring buckets are not read as an effect.
 * 1.06 let one step pass at the bottom of an octave: a healthy 16-rank hop
 * at 0.91x with its median message one bucket up (9175 against 8651 us,
 * 1.061x) was named a link. Measured: hops throttled to 90% read
 * 1.10-1.16x, CPU-starved healthy hops 0.94-1.05x, and up to 1.06x one
 * bucket up (docs/report-format.md).
 */
#define VERDICT_MIN_P50_STRETCH 1.07

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
/* Median wire rate of every hop with a rate; 0 when none. -1 when out of memory. */
double verdict_median_rate(const struct verdict_input *in);
/* The hop leaves or enters node (and dev, unless dev is NULL). */
/* Median absolute deviation of v[0..n) from its median; v is overwritten. */
double verdict_mad(double *v, size_t n);
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
/* The same modified z-score test the wire and node rules use: gap in MADs. */
bool verdict_outside_spread(double gap, double mad);
/*
 * Hop i's median message takes longer than the comparable hops' (those not
 * through node/dev when node is given): true when either is unknown.
 */
bool verdict_typical_slow(const struct verdict_input *in, size_t i, const char *node,
			  const char *dev);

/* The median request time of reference hops, and its spread (median absolute deviation). */
struct verdict_p50_ref {
	double median, mad;
};

/* Round trips dilute the rates of hops like `like`: the reference rate is well below line. */
bool verdict_diluted(double ref_gbs, const struct fl_hop_figures *like);
/* Hop h's wire time against the line's, with the reference's round trip taken out. */
double verdict_diluted_ratio(const struct fl_hop_figures *h, double ref_p50_us);
/* Hop i is slow by its median request where round trips dilute rates (verdict_diluted.c). */
bool verdict_diluted_low(const struct verdict_input *in, size_t i, double ref_gbs,
			 const struct verdict_p50_ref *p50);

/* Same transport and nominal speed within 1%: hops whose rates may be compared. */
bool verdict_comparable(const struct fl_hop_figures *a, const struct fl_hop_figures *b);
/*
 * Below min_ratio x ref, and below min_ratio x its line rate when known: a hop
 * faster than its NIC's nominal rate is not a slow cable.
 */
bool verdict_below_ratio(const struct fl_hop_figures *h, double ref, double min_ratio);
/*
 * Adds a `device` finding for every device whose hops are all slow in both
 * directions against the hops not through it; marks their hops in explained.
 * Returns how many it added, -1 when out of memory.
 */
int verdict_find_devices(const struct verdict_input *in, bool *explained,
			 struct fl_verdict *out);

/*
 * Adds a `rail` finding for every device name slow on most nodes (the leaf
 * switch of that rail), then the devices as verdict_find_devices does on the
 * hops no rail explains; marks explained hops. How many it added, -1 out of memory.
 */
int verdict_find_rails_and_devices(const struct verdict_input *in, bool *explained,
				   struct fl_verdict *out);
/* A rail finding on device name dev blames every hop with an end on a device so named. */
bool verdict_rail_blames(const struct fl_hop_figures *h, const char *dev);

/*
 * Marks the nodes whose own wires are not at speed: at an end of a hop a wire
 * finding in v blames (the wire rules ran first), or of a hop below 0.85 x the
 * median rate. Such a node is no straggler: its slow wire explains why others
 * wait on it. nodes: n elements of `size` bytes sorted by name, each starting
 * with its `const char *` name; marked[k] is set for the k-th, never cleared.
 */
void verdict_mark_off_speed(const struct verdict_input *in, const struct fl_verdict *v,
			    const void *nodes, size_t n, size_t size, bool *marked);

int verdict_try_transport(const struct verdict_input *in, struct fl_verdict *out);
int verdict_try_gdr(const struct verdict_input *in, struct fl_verdict *out);
int verdict_try_wire(const struct verdict_input *in, struct fl_verdict *out);
int verdict_try_node(const struct verdict_input *in, struct fl_verdict *out);
/* The straggler as its senders see it, where they wait for receivers to post (verbs). */
int verdict_try_node_senders(const struct verdict_input *in, struct fl_verdict *out);

#endif
