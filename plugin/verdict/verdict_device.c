/*
 * A slow device (NIC, port or cable) on its own evidence: every hop through it
 * is slow in both directions, against the comparable hops that do not go
 * through it, and outside their spread. Judged against the hops elsewhere, a
 * device at 0.9x stands out even when each of its hops, judged alone among
 * all the others, would not; and several slow devices are each named.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "verdict_internal.h"

/* Devices worth a closer look: more would mean the spread, not a device, is the story. */
/*
 * A port that stops now and then (a PFC pause storm, 40 ms of every 100 ms)
 * stretches only the requests a pause catches: its hops' median request keeps
 * its time while their rate falls to 0.6x, in both directions at once. A rank
 * starved of CPU also keeps its median, but loses 0.57-0.8x on one hop at a
 * time (docs/report-format.md). So where every hop of a device, both ways,
 * runs below this share of the others, the median message is not asked.
 */
#define DEVICE_STALL_RATIO 0.75
/*
 * ... or where its slowest requests take this much longer than the others'
 * slowest: a pause storm catches some requests of every hop through the port
 * (lab --like ndr -n 8, pause 40 ms of 100 ms: both hops at 0.80x, p99 1.65x
 * and 2.0x the others', while the outgoing hop's median request kept its time).
 */
#define DEVICE_TAIL_STRETCH 1.5
#define MAX_CANDIDATES 64

struct device_ref {
	const char *node, *dev;
};

/* What the hops through a device and those elsewhere say about it. */
struct device_evidence {
	size_t through, others;
	bool as_src, as_dst;
	long slowest;
	double ref; /* median rate of the comparable hops not through it */
	double mad; /* their spread */
	struct verdict_p50_ref p50; /* their median request time and its spread */
	double other_min; /* their lowest rate */
	double p99; /* their median 99th percentile request time; 0 unknown */
};

static bool through(const struct fl_hop_figures *h, const struct device_ref *d)
{
	return fl_verdict_touches(h, d->node, d->dev);
}

static double distance(double a, double b)
{
	return a > b ? a - b : b - a;
}

/* Median and spread of v[0..n) (reordered, then overwritten), leaving out values below
 * floor: hops slow by the ratio themselves (another fault) stay out of the spread. */
static void median_and_spread(double *v, size_t n, double floor, double *median, double *mad)
{
	size_t m = 0;

	*median = verdict_median(v, n);
	for (size_t k = 0; k < n; k++) {
		if (v[k] >= floor * *median)
			v[m++] = distance(v[k], *median);
	}
	*mad = verdict_median(v, m);
}

static bool reference_hop(const struct verdict_input *in, size_t i, const struct device_ref *d,
			  const struct fl_hop_figures *like)
{
	const struct fl_hop_figures *h = &in->hops[i];

	return verdict_has_rate(in, i) && verdict_comparable(h, like) && !through(h, d);
}

/* Its request times count: a rate above the line is a measurement error, and so are they. */
static bool reference_times(const struct verdict_input *in, size_t i, const struct device_ref *d,
			    const struct fl_hop_figures *like)
{
	const struct fl_hop_figures *h = &in->hops[i];

	return reference_hop(in, i, d, like) && fl_verdict_rate(h) == h->wire_gbs;
}

/* Rates and median request times of the hops comparable with `like` not through d. */
static void reference(const struct verdict_input *in, const struct device_ref *d,
		      const struct fl_hop_figures *like, double *v, struct device_evidence *e)
{
	size_t n = 0;

	e->other_min = 0.0;
	for (size_t i = 0; i < in->nhops; i++) {
		const struct fl_hop_figures *h = &in->hops[i];

		if (!reference_hop(in, i, d, like))
			continue;
		v[n++] = fl_verdict_rate(h);
		if (n == 1 || fl_verdict_rate(h) < e->other_min)
			e->other_min = fl_verdict_rate(h);
	}
	e->others = n;
	median_and_spread(v, n, in->params->min_ratio, &e->ref, &e->mad);
	n = 0;
	for (size_t i = 0; i < in->nhops; i++)
		if (reference_times(in, i, d, like) && in->hops[i].wire_p50_us > 0.0)
			v[n++] = -in->hops[i].wire_p50_us; /* longer is slower: floor on -t */
	median_and_spread(v, n, 1.0 / in->params->min_ratio, &e->p50.median, &e->p50.mad);
	e->p50.median = -e->p50.median;
	n = 0;
	for (size_t i = 0; i < in->nhops; i++)
		if (reference_times(in, i, d, like) && in->hops[i].wire_p99_us > 0.0)
			v[n++] = in->hops[i].wire_p99_us;
	e->p99 = verdict_median(v, n);
}

/*
 * A ring of 4 leaves 2 hops to compare a device's 2 with, and the spread of two
 * is no spread: a port at 85% read 0.89-0.91x their median (lab --like ndr/xdr
 * -n 4, 6 of 6 runs), each of its hops slower than both others and its median
 * request longer than their median, but outside no spread. There, the hop must be
 * below min_ratio x their median, below each of them, and its median request more
 * than a histogram step above their median (not above each: the hop into the node
 * before the port was as long in 2 of those runs);
 * or, whatever its requests' times, below SMALL_REFERENCE_STALL x the slower of
 * them: a pause storm at 4 ranks left the outgoing hop at 0.82x the slower
 * other, its median request with theirs and its p99 1.43x their median p99
 * (theirs 0.56x apart), and the rule named a link.
 */
#define SMALL_REFERENCE 4
#define SMALL_REFERENCE_STALL 0.85

static bool small_reference_low(const struct verdict_input *in, size_t i,
				const struct device_evidence *e)
{
	const struct fl_hop_figures *h = &in->hops[i];
	double rate = fl_verdict_rate(h);

	if (e->others < 2 || e->others >= SMALL_REFERENCE ||
	    rate >= in->params->min_ratio * e->ref || rate >= e->other_min)
		return false;
	return rate < SMALL_REFERENCE_STALL * e->other_min ||
	       (h->wire_p50_us > 0.0 && h->wire_p50_us >= VERDICT_MIN_P50_STRETCH * e->p50.median);
}

/* Below the ratio and outside the others' spread, with its requests' times agreeing. */
static bool rate_low(const struct verdict_input *in, size_t i, const struct device_ref *d,
		     const struct device_evidence *e)
{
	const struct fl_hop_figures *h = &in->hops[i];

	if (!verdict_below_ratio(h, e->ref, in->params->min_ratio) ||
	    !verdict_outside_spread(e->ref - fl_verdict_rate(h), e->mad))
		return false;
	return fl_verdict_rate(h) < DEVICE_STALL_RATIO * e->ref ||
	       (e->p99 > 0.0 && h->wire_p99_us >= DEVICE_TAIL_STRETCH * e->p99) ||
	       verdict_typical_slow(in, i, d->node, d->dev);
}

static bool hop_low(const struct verdict_input *in, size_t i, const struct device_ref *d,
		    const struct device_evidence *e)
{
	return rate_low(in, i, d, e) || verdict_diluted_low(in, i, e->ref, &e->p50) ||
	       small_reference_low(in, i, e);
}

static bool device_slow(const struct verdict_input *in, const struct device_ref *d,
			const struct fl_hop_figures *like, double *v, struct device_evidence *e)
{
	memset(e, 0, sizeof(*e));
	e->slowest = -1;
	reference(in, d, like, v, e);
	if (e->others < 2 || e->ref <= 0.0)
		return false;
	for (size_t i = 0; i < in->nhops; i++) {
		const struct fl_hop_figures *h = &in->hops[i];

		if (!verdict_has_rate(in, i) || !verdict_comparable(h, like) || !through(h, d))
			continue;
		if (!hop_low(in, i, d, e))
			return false;
		e->through++;
		e->as_src |= !strcmp(h->src_node, d->node) && !strcmp(h->src_dev, d->dev);
		e->as_dst |= !strcmp(h->dst_node, d->node) && !strcmp(h->dst_dev, d->dev);
		if (e->slowest < 0 || fl_verdict_rate(h) < fl_verdict_rate(&in->hops[e->slowest]))
			e->slowest = (long)i;
	}
	return e->through >= 2 && e->as_src && e->as_dst;
}

static void name_device(const struct verdict_input *in, const struct device_ref *d,
			const struct device_evidence *e, struct fl_finding *out)
{
	const struct fl_hop_figures *h = &in->hops[e->slowest];

	verdict_set_hop(out, in->hops, (size_t)e->slowest);
	verdict_set_name(out->node, sizeof(out->node), d->node);
	verdict_set_name(out->dev, sizeof(out->dev), d->dev);
	out->median_gbs = e->ref;
	out->ratio = fl_verdict_rate(h) / e->ref;
	/* A ring moves at the pace of its slowest hop. */
	out->speedup = out->ratio > 0.0 ? 1.0 / out->ratio : 1.0;
	verdict_say(out,
		    "all %zu hops through %s/%s are slow in both directions (slowest %s/%s -> "
		    "%s/%s: %.2f GB/s, %.2fx the %.2f GB/s median of the %zu hops elsewhere): "
		    "suspect its NIC, port or cable",
		    e->through, d->node, d->dev, h->src_node, h->src_dev, h->dst_node, h->dst_dev,
		    h->wire_gbs, out->ratio, e->ref, e->others);
	/* named by its median request where round trips hid it in the rate */
	if (out->ratio >= in->params->min_ratio && verdict_diluted(e->ref, h) &&
	    e->p50.median > 0.0) {
		out->ratio = verdict_diluted_ratio(h, e->p50.median);
		out->speedup = 1.0 / out->ratio;
		verdict_say_more(out, "; rates diluted by round trips (%.0f%% of line): its median "
				 "request %.2fx theirs, %.2fx of line less their round trip",
				 100.0 * e->ref / h->line_rate_gbs,
				 h->wire_p50_us / e->p50.median, out->ratio);
	}
}

static bool known(const struct device_ref *c, size_t n, const char *node, const char *dev)
{
	for (size_t k = 0; k < n; k++) {
		if (!strcmp(c[k].node, node) && !strcmp(c[k].dev, dev))
			return true;
	}
	return false;
}

static void add_candidate(struct device_ref *c, size_t *n, const char *node, const char *dev)
{
	if (*n < MAX_CANDIDATES && !known(c, *n, node, dev))
		c[(*n)++] = (struct device_ref){ node, dev };
}

/*
 * The rate candidates are picked against: the median of the hops left when the slowest
 * quarter is left out (the 5/8 quantile). In a ring of 4 a slow device's two hops are half of
 * all, and the median sat between them and the good ones: a 90% NIC at 88.5% and 88.2% with
 * good hops at 95.6% and 98.5% had no hop below 0.95x the median, so no candidate (lab). A
 * candidate is only looked at closer; a higher quantile would make many in a large, spread set.
 */
static double candidate_reference(const struct verdict_input *in, double *v)
{
	size_t n = 0;

	for (size_t i = 0; i < in->nhops; i++) {
		if (verdict_has_rate(in, i))
			v[n++] = fl_verdict_rate(&in->hops[i]);
	}
	if (!n)
		return 0.0;
	return verdict_kth(v, n, (5 * n) / 8 < n ? (5 * n) / 8 : n - 1);
}

/* Median request time of the hops with a rate; 0 when none. */
static double median_p50(const struct verdict_input *in, double *v)
{
	size_t n = 0;

	for (size_t i = 0; i < in->nhops; i++)
		if (verdict_has_rate(in, i) && in->hops[i].wire_p50_us > 0.0)
			v[n++] = in->hops[i].wire_p50_us;
	return verdict_median(v, n);
}

/*
 * Ends of hops below min_ratio x that reference, or, where round trips dilute
 * rates, whose median request stretches: a slow device has some.
 */
static size_t candidates(const struct verdict_input *in, double upper, double p50,
			 struct device_ref *c)
{
	size_t n = 0;

	for (size_t i = 0; i < in->nhops; i++) {
		const struct fl_hop_figures *h = &in->hops[i];
		bool stretched = verdict_diluted(upper, h) && p50 > 0.0 &&
				 h->wire_p50_us >= VERDICT_MIN_P50_STRETCH * p50;

		if (!verdict_has_rate(in, i) ||
		    (fl_verdict_rate(h) >= in->params->min_ratio * upper && !stretched))
			continue;
		add_candidate(c, &n, h->src_node, h->src_dev);
		add_candidate(c, &n, h->dst_node, h->dst_dev);
	}
	return n;
}

/* The first rated hop through d: its comparable group is the one d is judged in. */
static const struct fl_hop_figures *first_through(const struct verdict_input *in,
						  const struct device_ref *d)
{
	for (size_t i = 0; i < in->nhops; i++) {
		if (verdict_has_rate(in, i) && through(&in->hops[i], d))
			return &in->hops[i];
	}
	return NULL;
}

static void mark_explained(const struct verdict_input *in, const struct device_ref *d,
			   bool *explained)
{
	for (size_t i = 0; i < in->nhops; i++)
		explained[i] |= through(&in->hops[i], d);
}

int verdict_find_devices(const struct verdict_input *in, bool *explained,
			 struct fl_verdict *out)
{
	struct device_ref c[MAX_CANDIDATES];
	double median = verdict_median_rate(in);
	double *v = malloc((in->nhops ? in->nhops : 1) * sizeof(*v));
	struct device_evidence e;
	size_t n;
	int added = 0;

	if (!v || median < 0.0) {
		free(v);
		return -1;
	}
	if (median > 0.0) {
		double upper = candidate_reference(in, v);

		n = candidates(in, upper, median_p50(in, v), c);
	} else {
		n = 0;
	}
	for (size_t k = 0; k < n; k++) {
		const struct fl_hop_figures *like = first_through(in, &c[k]);
		struct fl_finding *f;

		if (!like || !device_slow(in, &c[k], like, v, &e))
			continue;
		f = verdict_add_finding(out, FL_VERDICT_DEVICE);
		if (!f)
			break;
		name_device(in, &c[k], &e, f);
		mark_explained(in, &c[k], explained);
		added++;
	}
	free(v);
	return added;
}
