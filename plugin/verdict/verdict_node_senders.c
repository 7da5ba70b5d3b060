/*
 * The straggler as its senders see it. Over verbs a sender may write only into
 * a buffer the receiver has posted, so a request's posted -> ready is the wait
 * for its receiver; the receiver's own posted -> ready is nothing (its buffer
 * goes out at once), and the receivers' rule (verdict_node.c) has no waits to
 * compare: it never named a straggler over verbs, not even one that doubled the
 * step. A straggler posts its receives late, so the senders into it wait on it
 * while the senders into the other nodes wait on the ring: in the lab (8 ranks,
 * `--fabric ib`, 200 mbit/s) 26% of their requests' time into a straggler adding
 * 10% to the step against 0-3% into the others. Sockets have no such wait (a
 * send goes into the kernel's buffer, ready at once), and this rule stays silent.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "verdict_internal.h"

/*
 * The figure: the share (0-1) of the senders' requests' time (posted -> done,
 * summed) spent waiting for the receiver. Healthy lab runs (35, ib, 4-16 ranks,
 * 200 and 400 mbit/s, docs/report-format.md): the node waited on most read at
 * most 0.18 above the others' median (a full ring keeps every sender waiting
 * on the wire downstream: 0.74 against 0.71 at 4 ranks), and at most 1.41x it
 * where the gap passed 0.1. Stragglers adding 10% or more to the step: 0.34-0.86
 * above, 1.8x and more; adding 3.5% and 9.5%: 0.25 above (1.7x, 25x).
 */
#define SENDERS_MIN_GAP 0.25
#define SENDERS_MIN_RATIO 1.5
#define SENDERS_MIN_OTHERS 3 /* a median of fewer is luck */

struct sender_wait {
	const char *node; /* the receiver the senders wait on */
	double wait, outstanding;
};

_Static_assert(offsetof(struct sender_wait, node) == 0, "verdict_mark_off_speed reads it first");

static int cmp_node(const void *pa, const void *pb)
{
	return strcmp(((const struct sender_wait *)pa)->node, ((const struct sender_wait *)pb)->node);
}

/*
 * Senders' waits and outstanding time summed per receiving node, over the
 * judged hops: one entry per hop, sorted by node, then folded in place.
 */
static size_t per_receiver(const struct verdict_input *in, struct sender_wait *w)
{
	size_t n = 0, nodes = 0;

	for (size_t i = 0; i < in->nhops; i++) {
		const struct fl_hop_figures *h = &in->hops[i];

		/*
		 * Our verbs transport only: its senders' waits are measured in the lab.
		 * NCCL's own transports (profiler mode) and other plugins (ext) have no
		 * healthy figures yet to set a bound from.
		 */
		if (verdict_judged(in, i) && h->send_outstanding_seconds > 0.0 &&
		    !strcmp(h->transport, "ib"))
			w[n++] = (struct sender_wait){ h->dst_node, h->send_wait_seconds,
						       h->send_outstanding_seconds };
	}
	qsort(w, n, sizeof(*w), cmp_node);
	for (size_t k = 0; k < n; k++) {
		if (nodes && !strcmp(w[nodes - 1].node, w[k].node)) {
			w[nodes - 1].wait += w[k].wait;
			w[nodes - 1].outstanding += w[k].outstanding;
		} else {
			w[nodes++] = w[k];
		}
	}
	return nodes;
}

static double figure(const struct sender_wait *w)
{
	return w->wait / w->outstanding;
}

/* The node senders wait on most, among those whose own wires run at speed; SIZE_MAX if none. */
static size_t most_waited_on(const struct sender_wait *w, size_t n, const bool *excluded)
{
	size_t best = SIZE_MAX;

	for (size_t k = 0; k < n; k++)
		if (!excluded[k] && (best == SIZE_MAX || figure(&w[k]) > figure(&w[best])))
			best = k;
	return best;
}

/* Median of the other nodes at speed; how many there were. */
static size_t others(const struct sender_wait *w, size_t n, size_t skip, const bool *excluded,
		     double *v, double *median)
{
	size_t m = 0;

	for (size_t k = 0; k < n; k++)
		if (k != skip && !excluded[k])
			v[m++] = figure(&w[k]);
	*median = verdict_median(v, m);
	return m;
}

static bool stands_out(double its, double median, size_t nothers)
{
	return nothers >= SENDERS_MIN_OTHERS && its - median >= SENDERS_MIN_GAP &&
	       its >= SENDERS_MIN_RATIO * median;
}

static bool named_already(const struct fl_verdict *out, const char *node)
{
	for (int k = 0; k < out->nfindings; k++)
		if (out->findings[k].kind == FL_VERDICT_NODE && !strcmp(out->findings[k].node, node))
			return true;
	return false;
}

/* The median wire rate of the hops into node (v: scratch, nhops long). */
static double rate_into(const struct verdict_input *in, const char *node, double *v)
{
	size_t n = 0;

	for (size_t i = 0; i < in->nhops; i++)
		if (verdict_has_rate(in, i) && !strcmp(in->hops[i].dst_node, node))
			v[n++] = fl_verdict_rate(&in->hops[i]);
	return verdict_median(v, n);
}

static void fill(const struct verdict_input *in, const struct sender_wait *w, double median,
		 double rate, double *v, struct fl_finding *f)
{
	verdict_set_name(f->node, sizeof(f->node), w->node);
	f->ratio = figure(w) > 0.0 ? median / figure(w) : 1.0;
	f->median_gbs = rate > 0.0 ? rate : 0.0;
	f->culprit_gbs = rate_into(in, w->node, v);
	verdict_say(f,
		    "wire rates are normal, but the senders into %s wait for it to post its "
		    "receives %.0f%% of their requests' time, into the other nodes %.0f%% "
		    "(median): %s is the straggler the others wait on (speedup not estimated)",
		    w->node, 100.0 * figure(w), 100.0 * median, w->node);
}

int verdict_try_node_senders(const struct verdict_input *in, struct fl_verdict *out)
{
	size_t n = in->nhops ? in->nhops : 1, count, culprit, nothers;
	struct sender_wait *w = malloc(n * sizeof(*w));
	bool *excluded = calloc(n, sizeof(*excluded));
	double *v = malloc(n * sizeof(*v));
	double rate = verdict_median_rate(in), median;
	int found = -1;

	if (w && excluded && v && rate >= 0.0) {
		found = 0;
		count = per_receiver(in, w);
		verdict_mark_off_speed(in, out, w, count, sizeof(*w), excluded);
		culprit = most_waited_on(w, count, excluded);
		if (culprit != SIZE_MAX) {
			nothers = others(w, count, culprit, excluded, v, &median);
			if (stands_out(figure(&w[culprit]), median, nothers) &&
			    !named_already(out, w[culprit].node)) {
				struct fl_finding *f = verdict_add_finding(out, FL_VERDICT_NODE);

				found = f != NULL;
				if (f)
					fill(in, &w[culprit], median, rate, v, f);
			}
		}
	}
	free(w);
	free(excluded);
	free(v);
	return found;
}
