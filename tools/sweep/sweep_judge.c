/*
 * Which directed pairs are slow, and what they have in common. A pair is slow
 * below a fraction of the reference (the median of the sweep; for the gate,
 * the median of the healthy peers among themselves or of the baseline) or of
 * its own baseline. Then: one pair only -> that link; one node in every slow
 * pair with two or more peers -> that node; one device name at both ends of
 * every slow pair while others fare well, or every pair of a one-rail sweep
 * below its baseline -> that rail; else scattered.
 */
#include "sweep.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "shim/shim.h"

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

double sweep_gbs(size_t bytes, double time_us)
{
	return time_us > 0 ? (double)bytes / time_us / 1e3 : 0;
}

double sweep_median(double *values, size_t n)
{
	if (!n)
		return 0;
	qsort(values, n, sizeof(*values), cmp_double);
	return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

const char *sweep_kind_name(enum sweep_kind k)
{
	static const char *const names[] = { "none", "link", "node", "rail", "scattered" };

	return names[k];
}

static int gate_node(const struct sweep_result *res, const struct sweep_opts *o)
{
	for (int i = 0; o->gate && i < res->n; i++) {
		if (!strcasecmp(res->nodes[i].name, o->gate_node))
			return i;
	}
	return -1;
}

static int collect(const struct sweep_result *res, struct sweep_verdict *v)
{
	const struct sweep_size *s = &res->sizes[res->nsizes - 1];
	int n = res->n;

	v->entries = calloc((size_t)n * (size_t)n + 1, sizeof(*v->entries));
	if (!v->entries)
		return shim_fail(FL_ERR_SYSTEM, "out of memory");
	for (int a = 0; a < n; a++) {
		for (int b = 0; b < n; b++) {
			double t = s->time_us[a * n + b];

			if (a != b && t >= 0)
				v->entries[v->nentries++] = (struct sweep_entry){
					a, b, sweep_gbs(s->bytes, t), 0, SWEEP_FINE };
		}
	}
	return FL_OK;
}

/* The median of the entries that `gate` is not part of (all of them when gate < 0). */
static double median_without(const struct sweep_verdict *v, int gate)
{
	double *values = malloc((v->nentries + 1) * sizeof(*values)), m;
	size_t k = 0;

	if (!values)
		return 0;
	for (size_t i = 0; i < v->nentries; i++) {
		if (v->entries[i].src != gate && v->entries[i].dst != gate)
			values[k++] = v->entries[i].gbs;
	}
	m = sweep_median(values, k);
	free(values);
	return m;
}

static void flag(const struct sweep_result *res, const struct sweep_opts *o,
		 const struct sweep_baseline *base, int gate, struct sweep_verdict *v)
{
	for (size_t i = 0; i < v->nentries; i++) {
		struct sweep_entry *e = &v->entries[i];
		bool below_median, below_base;

		if (gate >= 0 && e->src != gate && e->dst != gate)
			continue; /* the peers among themselves are the yardstick, not judged */
		if (base)
			e->base_gbs = sweep_baseline_find(base, res->nodes[e->src].name,
							  res->nodes[e->dst].name);
		below_median = e->gbs < o->threshold * v->reference_gbs;
		below_base = e->base_gbs > 0 && e->gbs < o->baseline_min * e->base_gbs;
		/* The gate holds a pair to its own baseline when it has one. */
		if (gate >= 0 && e->base_gbs > 0)
			below_median = false;
		e->flag = below_median && below_base ? SWEEP_BELOW_BOTH :
			  below_base ? SWEEP_BELOW_BASELINE :
			  below_median ? SWEEP_BELOW_MEDIAN : SWEEP_FINE;
		v->nslow += e->flag != SWEEP_FINE;
	}
}

/* The node at one end of every slow entry, with slow pairs to two peers or more; else -1. */
static int common_node(const struct sweep_result *res, const struct sweep_verdict *v)
{
	for (int x = 0; x < res->n; x++) {
		int first = -1;
		bool everywhere = true, two = false;

		for (size_t i = 0; everywhere && i < v->nentries; i++) {
			const struct sweep_entry *e = &v->entries[i];
			int peer = e->src == x ? e->dst : e->dst == x ? e->src : -1;

			if (e->flag == SWEEP_FINE)
				continue;
			everywhere = peer >= 0;
			if (first < 0)
				first = peer;
			two |= peer != first;
		}
		if (everywhere && two)
			return x;
	}
	return -1;
}

static bool one_link(const struct sweep_verdict *v, int *a, int *b)
{
	*a = *b = -1;
	for (size_t i = 0; i < v->nentries; i++) {
		const struct sweep_entry *e = &v->entries[i];

		if (e->flag == SWEEP_FINE)
			continue;
		if (*a < 0) {
			*a = e->src;
			*b = e->dst;
		} else if (!(e->src == *a && e->dst == *b) && !(e->src == *b && e->dst == *a)) {
			return false;
		}
	}
	return *a >= 0;
}

/* Nodes the rail-wide rule needs: fewer cannot tell a leaf switch from a few bad NICs. */
#define RAIL_MIN_NODES 3

/*
 * A sweep of one rail (every node on the same device): when every direction
 * is below its own baseline, with three nodes or more, the rail is what they
 * share. The median cannot see it (it is as slow as they are).
 */
static bool whole_rail_below_baseline(const struct sweep_result *res,
				      const struct sweep_verdict *v, const char *dev)
{
	if (res->n < RAIL_MIN_NODES || v->nslow != v->nentries)
		return false;
	for (size_t i = 0; i < v->nentries; i++) {
		if (v->entries[i].flag != SWEEP_BELOW_BASELINE &&
		    v->entries[i].flag != SWEEP_BELOW_BOTH)
			return false;
	}
	for (int i = 0; i < res->n; i++) {
		if (strcmp(res->nodes[i].dev, dev))
			return false;
	}
	return true;
}

/*
 * One device name at both ends of every slow entry, while some fine entry uses
 * another, or every entry of a one-rail sweep is below its baseline.
 */
static bool common_rail(const struct sweep_result *res, const struct sweep_verdict *v,
			char *rail, size_t len)
{
	const char *dev = NULL;

	for (size_t i = 0; i < v->nentries; i++) {
		const struct sweep_entry *e = &v->entries[i];
		const char *s = res->nodes[e->src].dev, *d = res->nodes[e->dst].dev;

		if (e->flag == SWEEP_FINE)
			continue;
		if (strcmp(s, d) || (dev && strcmp(s, dev)))
			return false;
		dev = s;
	}
	for (size_t i = 0; dev && i < v->nentries; i++) {
		const struct sweep_entry *e = &v->entries[i];

		if (e->flag == SWEEP_FINE && (strcmp(res->nodes[e->src].dev, dev) ||
					       strcmp(res->nodes[e->dst].dev, dev))) {
			snprintf(rail, len, "%s", dev);
			return true;
		}
	}
	if (dev && whole_rail_below_baseline(res, v, dev)) {
		snprintf(rail, len, "%s", dev);
		return true;
	}
	return false;
}

static double mean_slow_gbs(const struct sweep_verdict *v)
{
	double sum = 0;

	for (size_t i = 0; i < v->nentries; i++)
		sum += v->entries[i].flag != SWEEP_FINE ? v->entries[i].gbs : 0;
	return v->nslow ? sum / (double)v->nslow : 0;
}

/* Of node x's measured directions, how many are slow. */
static void node_share(const struct sweep_verdict *v, int x, size_t *slow, size_t *all)
{
	*slow = *all = 0;
	for (size_t i = 0; i < v->nentries; i++) {
		const struct sweep_entry *e = &v->entries[i];

		if (e->src != x && e->dst != x)
			continue;
		(*all)++;
		*slow += e->flag != SWEEP_FINE;
	}
}

static void explain(const struct sweep_result *res, struct sweep_verdict *v)
{
	const struct sweep_node *nodes = res->nodes;
	size_t slow, all;

	switch (v->kind) {
	case SWEEP_NONE:
		snprintf(v->reason, sizeof(v->reason), "every pair within reach of the reference "
			 "%.3f GB/s", v->reference_gbs);
		break;
	case SWEEP_LINK:
		snprintf(v->reason, sizeof(v->reason), "only the pair %s %s %s is slow (%.3f GB/s "
			 "against %.3f%s): both nodes are fine with their other peers, so suspect "
			 "the cable, the optics or the switch ports between %s/%s and %s/%s",
			 nodes[v->node].name, v->nslow == 1 ? "->" : "<->", nodes[v->other].name,
			 mean_slow_gbs(v), v->reference_gbs, v->nslow == 1 ? ", one way only" : "",
			 nodes[v->node].name, nodes[v->node].dev, nodes[v->other].name,
			 nodes[v->other].dev);
		break;
	case SWEEP_NODE:
		node_share(v, v->node, &slow, &all);
		snprintf(v->reason, sizeof(v->reason), "%s (device %s) is in every slow pair: %zu "
			 "of its %zu directions slow (%.3f GB/s against %.3f), pairs without it "
			 "fine", nodes[v->node].name, nodes[v->node].dev, slow, all,
			 mean_slow_gbs(v), v->reference_gbs);
		break;
	case SWEEP_RAIL:
		if (v->nslow == v->nentries)
			snprintf(v->reason, sizeof(v->reason), "all %zu directions of the %d nodes "
				 "on %s are below their baseline (%.3f GB/s on average): suspect the "
				 "leaf switch of that rail, or anything every pair crosses (a spine); "
				 "sweep another rail (FABRICLAB_SHIM_DEV) to tell them apart",
				 v->nslow, res->n, v->rail, mean_slow_gbs(v));
		else
			snprintf(v->reason, sizeof(v->reason), "every slow pair runs device %s at "
				 "both ends and pairs on other devices are fine: suspect the leaf "
				 "switch of the rail of %s (%zu slow directions)", v->rail, v->rail,
				 v->nslow);
		break;
	case SWEEP_SCATTERED:
		snprintf(v->reason, sizeof(v->reason), "%zu slow directions with no node, device "
			 "or rail in common: several faults, or a congested spine", v->nslow);
		break;
	}
}

static void find_common(const struct sweep_result *res, struct sweep_verdict *v)
{
	int a, b;

	if (!v->nslow) {
		v->kind = SWEEP_NONE;
	} else if (one_link(v, &a, &b)) {
		v->kind = SWEEP_LINK;
		v->node = a;
		v->other = b;
	} else if ((a = common_node(res, v)) >= 0) {
		v->kind = SWEEP_NODE;
		v->node = a;
	} else if (common_rail(res, v, v->rail, sizeof(v->rail))) {
		v->kind = SWEEP_RAIL;
	} else {
		v->kind = SWEEP_SCATTERED;
	}
	explain(res, v);
}

int sweep_judge(const struct sweep_result *res, const struct sweep_opts *o,
		const struct sweep_baseline *base, struct sweep_verdict *v)
{
	int gate = gate_node(res, o), rc;

	*v = (struct sweep_verdict){ .node = -1, .other = -1 };
	rc = collect(res, v);
	if (rc)
		return rc;
	v->median_gbs = median_without(v, -1);
	v->reference_gbs = v->median_gbs;
	if (gate >= 0) {
		/* The fleet: the healthy peers measured now, else the baseline's median. */
		v->reference_gbs = median_without(v, gate);
		if (!v->reference_gbs && base)
			v->reference_gbs = base->median_gbs;
	}
	flag(res, o, base, gate, v);
	find_common(res, v);
	return FL_OK;
}

void sweep_verdict_free(struct sweep_verdict *v)
{
	free(v->entries);
	*v = (struct sweep_verdict){ 0 };
}
