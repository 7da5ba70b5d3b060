/*
 * The straggler: every wire runs at its normal rate, but one node hardly ever
 * waits for its peers while they spend much of their time waiting. In a ring
 * everyone ends up waiting on the slowest member, so it is the one that waits
 * least: its data is always there by the time it gets round to receiving.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "verdict_internal.h"

/*
 * With requests pipelined, every receiver has some waiting posted most of the
 * time, so a straggler lowers its own share only by part: 0.68-0.74x measured
 * for one adding 11% to the step at 4-16 ranks. So the straggler must be both
 * clearly below the others and outside their spread.
 *
 * Its wait share at most 0.76 x the others' median: in 24 healthy lab runs
 * (4-16 ranks, a busy 2-core host) the least waiting node read 0.81-1.0x
 * (0.78x once, from a trace's events), a straggler adding 11% to the step
 * 0.68-0.74x (docs/report-format.md).
 */
#define STRAGGLER_MAX_RATIO 0.76
#define OTHERS_MIN_SHARE 0.2    /* ... and the others wait at least a fifth of the time */
#define STRAGGLER_MAX_SPEEDUP 10.0

struct received {
	const char *node;
	size_t hop;
};

struct node_share {
	const char *node;
	size_t first_hop;
	/*
	 * Peer wait / active time over the hops it receives on. The wait is summed
	 * over requests, so concurrent requests can take it above 1: only the
	 * comparison between nodes means much then.
	 */
	double share;
	size_t lo, hi; /* its hops in the sorted array */
};

static int cmp_received(const void *pa, const void *pb)
{
	const struct received *a = pa, *b = pb;
	int c = strcmp(a->node, b->node);

	return c ? c : (a->hop > b->hop) - (a->hop < b->hop);
}

static size_t collect_received(const struct verdict_input *in, struct received *r)
{
	size_t n = 0;

	for (size_t i = 0; i < in->nhops; i++) {
		if (verdict_judged(in, i) && in->hops[i].active_seconds > 0.0)
			r[n++] = (struct received){ in->hops[i].dst_node, i };
	}
	qsort(r, n, sizeof(*r), cmp_received);
	return n;
}

/*
 * The waits summed over requests, per unit of active time (the union of
 * posted -> done). With 8 requests in flight this is no share of anything
 * (4-7 in the lab), but it tells the straggler best: one adding 11% to the
 * step read 0.68-0.74x the others. The same waits as a share of the requests'
 * outstanding time (posted -> done summed, the `peer wait` column) read 0.95x,
 * inside the healthy spread: a straggler's requests wait less and are also
 * outstanding for less.
 */
static size_t share_per_node(const struct verdict_input *in, const struct received *r, size_t n,
			     struct node_share *s)
{
	size_t nodes = 0;

	for (size_t lo = 0, hi; lo < n; lo = hi) {
		double wait = 0.0, active = 0.0;

		for (hi = lo; hi < n && !strcmp(r[hi].node, r[lo].node); hi++) {
			wait += in->hops[r[hi].hop].peer_wait_seconds;
			active += in->hops[r[hi].hop].active_seconds;
		}
		s[nodes++] = (struct node_share){ r[lo].node, r[lo].hop, wait / active, lo, hi };
	}
	return nodes;
}

/* Hop i is one a device or rail finding blames: a hop through the slow device. */
static bool blamed_beyond_links(const struct verdict_input *in, const struct fl_verdict *v,
				size_t i)
{
	for (int k = 0; k < v->nfindings; k++) {
		const struct fl_finding *f = &v->findings[k];

		if (f->kind == FL_VERDICT_DEVICE && fl_verdict_touches(&in->hops[i], f->node, f->dev))
			return true;
		if (f->kind == FL_VERDICT_RAIL && verdict_rail_blames(&in->hops[i], f->dev))
			return true;
	}
	return false;
}

/* Hop i is one a wire finding blames: the link itself, or a hop through the slow device. */
static bool blamed(const struct verdict_input *in, const struct fl_verdict *v, size_t i)
{
	for (int k = 0; k < v->nfindings; k++) {
		if (v->findings[k].kind == FL_VERDICT_LINK && v->findings[k].hop == (int)i)
			return true;
	}
	return blamed_beyond_links(in, v, i);
}

/*
 * The node that waits least among those whose own wires run at speed: a node
 * with a slow hop waits little because its wire, not a peer, holds it back,
 * and is a device or link finding, not a straggler. Only hops a wire finding
 * blames count as slow: a straggler's own hops wobble by a few percent (0.94x
 * in a lab run) and it is still the straggler. SIZE_MAX when none.
 */
static size_t least_waiting(const struct node_share *s, size_t nodes, const bool *touched)
{
	size_t best = SIZE_MAX;

	for (size_t k = 0; k < nodes; k++) {
		if (touched[k])
			continue;
		if (best == SIZE_MAX || s[k].share < s[best].share ||
		    (s[k].share == s[best].share && s[k].first_hop < s[best].first_hop))
			best = k;
	}
	return best;
}

/*
 * Beside a slow wire, the ring moves at that wire's pace and a straggler's
 * late posts hide in the wait for it: one holding each message for as long as
 * its bytes take at the line rate (slow factor 2) read 0.80x the others next
 * to a halved cable at 8 lab ranks, 0.65x alone. The nodes no wire finding
 * touches then wait alike (their shares within 1% of each other), so there a
 * straggler is named at a smaller effect, when it is also far outside their
 * spread: at most 0.9x their median. Healthy runs have no wire finding and
 * never reach this rule; the least waiting of such nodes read 0.97-1.0x
 * beside a halved cable or a 90% device alone (docs/report-format.md).
 */
#define BESIDE_WIRE_MAX_RATIO 0.9
#define BESIDE_WIRE_MIN_NODES 4 /* a spread from fewer is luck */

/* The nodes the straggler is compared with: every other one, or those no wire finding touches. */
struct node_reference {
	double median, mad;
	size_t n;
};

/* The shares of the nodes but skip (and but the touched ones, when given) into v. */
static size_t others_shares(const struct node_share *s, size_t nodes, size_t skip,
			    const bool *touched, double *v)
{
	size_t n = 0;

	for (size_t k = 0; k < nodes; k++) {
		if (k != skip && (!touched || !touched[k]))
			v[n++] = s[k].share;
	}
	return n;
}

/* touched: nodes a wire finding touches or whose wires are not at speed, left out; NULL: none. */
static void reference(const struct node_share *s, size_t nodes, size_t skip, const bool *touched,
		      double *v, struct node_reference *ref)
{
	ref->n = others_shares(s, nodes, skip, touched, v);
	ref->median = verdict_median(v, ref->n);
	others_shares(s, nodes, skip, touched, v);
	ref->mad = verdict_mad(v, ref->n);
}

static bool wire_findings(const struct fl_verdict *out)
{
	for (int k = 0; k < out->nfindings; k++) {
		if (out->findings[k].kind == FL_VERDICT_LINK ||
		    out->findings[k].kind == FL_VERDICT_DEVICE)
			return true;
	}
	return false;
}

/* Below STRAGGLER_MAX_RATIO x every other node's share, and outside their spread. */
static bool stands_alone(const struct node_share *s, size_t nodes, size_t culprit, double *v,
			 double *others)
{
	struct node_reference all;
	double share = s[culprit].share;

	reference(s, nodes, culprit, NULL, v, &all);
	*others = all.median;
	return all.median >= OTHERS_MIN_SHARE && share <= STRAGGLER_MAX_RATIO * all.median &&
	       verdict_outside_spread(all.median - share, all.mad);
}

static bool stands_out(const struct fl_verdict *out, const struct node_share *s, size_t nodes,
		       size_t culprit, const bool *touched, double *v, double *others)
{
	struct node_reference clear;
	double share = s[culprit].share;

	if (stands_alone(s, nodes, culprit, v, others))
		return true;
	if (!wire_findings(out))
		return false;
	reference(s, nodes, culprit, touched, v, &clear);
	*others = clear.median;
	return clear.n >= BESIDE_WIRE_MIN_NODES && clear.median >= OTHERS_MIN_SHARE &&
	       share <= BESIDE_WIRE_MAX_RATIO * clear.median &&
	       verdict_outside_spread(clear.median - share, clear.mad);
}

static double received_rate(const struct verdict_input *in, const struct received *r,
			    const struct node_share *s, double *v)
{
	size_t n = 0;

	for (size_t k = s->lo; k < s->hi; k++) {
		if (in->hops[r[k].hop].wire_gbs > 0.0)
			v[n++] = in->hops[r[k].hop].wire_gbs;
	}
	return verdict_median(v, n);
}

/*
 * Below 1 the shares are fractions of time, and the others stop waiting on it:
 * their time shrinks by their wait share. Summed over concurrent requests they
 * are no fraction of anything, and no estimate is given (1, as "not estimated").
 */
static double straggler_speedup(double others)
{
	if (others >= 1.0)
		return 1.0;
	return others < 1.0 - 1.0 / STRAGGLER_MAX_SPEEDUP ? 1.0 / (1.0 - others)
							 : STRAGGLER_MAX_SPEEDUP;
}

/*
 * Below 1 the figure is a share of the receive time; above it, several requests
 * waited at once, and it is said as what it then is: how many receives waited
 * on their senders at a time, on average (a "279% of its time" helps nobody).
 */
static void say_straggler(struct fl_finding *out, const char *node, double share, double others)
{
	if (others < 1.0) {
		verdict_say(out,
			    "wire rates are normal, but %s waits on its peers %.0f%% of its receive "
			    "time while the other nodes wait %.0f%% (median): %s is the straggler "
			    "the others wait on",
			    node, 100.0 * share, 100.0 * others, node);
		return;
	}
	verdict_say(out,
		    "wire rates are normal, but %s has %.1f receives waiting on their senders at a "
		    "time (mean over its receive time) while the other nodes have %.1f (median): "
		    "%s is the straggler the others wait on (speedup not estimated)",
		    node, share, others, node);
}

static void fill_node(const struct verdict_input *in, const struct received *r,
		      const struct node_share *s, double others, double *v, struct fl_finding *out)
{
	double median = verdict_median_rate(in);

	verdict_set_name(out->node, sizeof(out->node), s->node);
	out->ratio = s->share / others;
	out->speedup = straggler_speedup(others);
	out->median_gbs = median > 0.0 ? median : 0.0;
	out->culprit_gbs = received_rate(in, r, s, v);
	say_straggler(out, s->node, s->share, others);
}

/*
 * A straggler's own wires run at speed: its hops read 0.94-1.0x the others' in the lab. A
 * node starved of CPU (16 ranks, or 4 on a machine at load 18) is slow everywhere, its
 * receives included: one read 0.64x on the hop into it and waited 0.70x the others, which
 * the straggler rule alone took for a slow GPU. Below this a node's wire is not at speed and
 * it is not named a straggler (its slow hop is left to the wire rules).
 */
#define STRAGGLER_MIN_WIRE 0.85

static int cmp_first_name(const void *key, const void *elem)
{
	return strcmp(key, *(const char *const *)elem);
}

static void mark(const char *node, const void *nodes, size_t n, size_t size, bool *marked)
{
	const char *at = bsearch(node, nodes, n, size, cmp_first_name);

	if (at)
		marked[(size_t)(at - (const char *)nodes) / size] = true;
}

/*
 * A link finding at STRAGGLER_MIN_WIRE of the median or more may be a late receiver's doing:
 * a sender's bytes wait in a buffer its receiver has not read (sockets time the wire at the
 * sender, "a slow receiver would also show here"). Into a straggler adding 10% to a 12-rank
 * tcp step (100 ms compute), the hop read 0.92x and was named a link; the straggler, waiting
 * 0.43x the others, was left out as touched by it.
 */
static bool late_receiver_link(const struct verdict_input *in, const struct fl_finding *f,
			       double median)
{
	/* verbs and ext senders time post -> completion, after their receiver was ready */
	return f->kind == FL_VERDICT_LINK && f->hop >= 0 && median > 0.0 &&
	       !strcmp(in->hops[f->hop].transport, "socket") &&
	       fl_verdict_rate(&in->hops[f->hop]) >= STRAGGLER_MIN_WIRE * median;
}

/* Hop i is blamed by such links alone. */
static bool blamed_as_late_receiver(const struct verdict_input *in, const struct fl_verdict *v,
				    size_t i, double median)
{
	bool any = false;

	for (int k = 0; k < v->nfindings; k++) {
		const struct fl_finding *f = &v->findings[k];

		if (f->kind == FL_VERDICT_LINK && f->hop == (int)i) {
			if (!late_receiver_link(in, f, median))
				return false;
			any = true;
		}
	}
	return any && !blamed_beyond_links(in, v, i);
}

/*
 * verdict_mark_off_speed, with the receivers of late-receiver links marked in `spared`
 * instead (spared NULL: in `marked` like the others).
 */
static void mark_ends(const struct verdict_input *in, const struct fl_verdict *v,
		      const void *nodes, size_t n, size_t size, bool *marked, bool *spared)
{
	double median = verdict_median_rate(in);

	for (size_t i = 0; i < in->nhops; i++) {
		const struct fl_hop_figures *h = &in->hops[i];
		bool slow = median > 0.0 && verdict_has_rate(in, i) &&
			    fl_verdict_rate(h) < STRAGGLER_MIN_WIRE * median;

		if (!slow && !blamed(in, v, i))
			continue;
		mark(h->src_node, nodes, n, size, marked);
		/* its receiver may be the straggler that slowed it */
		mark(h->dst_node, nodes, n, size,
		     spared && !slow && blamed_as_late_receiver(in, v, i, median) ? spared
										 : marked);
	}
}

void verdict_mark_off_speed(const struct verdict_input *in, const struct fl_verdict *v,
			    const void *nodes, size_t n, size_t size, bool *marked)
{
	mark_ends(in, v, nodes, n, size, marked, NULL);
}

/* The straggler explains the links into it that a late receiver explains. */
static void drop_late_receiver_links(const struct verdict_input *in, struct fl_verdict *out,
				     const char *node)
{
	double median = verdict_median_rate(in);
	int k = 0;

	for (int i = 0; i < out->nfindings; i++) {
		const struct fl_finding *f = &out->findings[i];

		if (late_receiver_link(in, f, median) && !strcmp(in->hops[f->hop].dst_node, node))
			continue;
		out->findings[k++] = *f;
	}
	out->nfindings = k;
}

_Static_assert(offsetof(struct node_share, node) == 0, "verdict_mark_off_speed reads it first");

int verdict_try_node(const struct verdict_input *in, struct fl_verdict *out)
{
	size_t n = in->nhops ? in->nhops : 1, count, nodes, culprit;
	struct received *r = malloc(n * sizeof(*r));
	struct node_share *s = calloc(n, sizeof(*s));
	bool *touched = calloc(n, sizeof(*touched)), *spared = calloc(n, sizeof(*spared));
	double *v = malloc(n * sizeof(*v));
	double others;
	int found = -1;

	if (r && s && v && touched && spared) {
		count = collect_received(in, r);
		nodes = share_per_node(in, r, count, s);
		/*
		 * spared: off speed only as the receiver of late-receiver links, so maybe the
		 * straggler that slowed them, if it stands out on its own (a 90% cable into a
		 * node at 16 tcp ranks read 0.90x, its receiver waiting 0.87x the others: no
		 * straggler by itself).
		 */
		mark_ends(in, out, s, nodes, sizeof(*s), touched, spared);
		for (size_t k = 0; k < nodes; k++)
			spared[k] = spared[k] && !touched[k];
		found = 0;
		culprit = nodes >= 2 ? least_waiting(s, nodes, touched) : SIZE_MAX;
		if (culprit != SIZE_MAX &&
		    (spared[culprit] ? stands_alone(s, nodes, culprit, v, &others)
				     : stands_out(out, s, nodes, culprit, touched, v, &others))) {
			struct fl_finding *f;

			drop_late_receiver_links(in, out, s[culprit].node);
			f = verdict_add_finding(out, FL_VERDICT_NODE);

			found = f != NULL;
			if (f)
				fill_node(in, r, &s[culprit], others, v, f);
		}
	}
	free(r);
	free(s);
	free(touched);
	free(spared);
	free(v);
	return found;
}
