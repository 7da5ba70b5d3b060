/*
 * A slow rail: in a rail-optimised cluster device k of every node (mlx5_k)
 * hangs off leaf switch k, so a bad leaf switch slows the hops of one device
 * name on many nodes at once, while the other rails run at speed. One slow
 * NIC is one node's device (verdict_device.c); the same device name slow on
 * most nodes is the switch they share. Rails are told apart by device name:
 * the plugin sees names, and a rail-optimised cluster names rail k's NIC the
 * same on every node.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "verdict_internal.h"

#define MAX_RAILS 32
/* Fewer nodes cannot tell a switch from that many bad NICs. */
#define RAIL_MIN_NODES 3
/* "Most nodes": at least three quarters of those with the device. */
#define RAIL_MIN_SHARE 0.75

struct rail_reference {
	double gbs, mad, p50_us; /* hops on no device of the rail's name */
	size_t n;
};

/* One end on the rail: its node and whether the hop is low. */
struct rail_end {
	const char *node;
	bool low;
};

/* What the hops through one device name say, node by node (sorted by name). */
struct rail_evidence {
	struct rail_end *ends; /* room for 2 x nhops; after gather, one per node */
	size_t nnodes, nslow;  /* ends[k].low: node k's device is slow */
	long slowest;
	double slow_gbs; /* median rate of the slow nodes' hops on the rail */
};

bool verdict_rail_blames(const struct fl_hop_figures *h, const char *dev)
{
	return !strcmp(h->src_dev, dev) || !strcmp(h->dst_dev, dev);
}

static bool listed(const char *const *names, size_t n, const char *name)
{
	for (size_t k = 0; k < n; k++) {
		if (!strcmp(names[k], name))
			return true;
	}
	return false;
}

/* The device names of rated hops; a rail rule needs two at least. */
static size_t rail_names(const struct verdict_input *in, const char **names)
{
	size_t n = 0;

	for (size_t i = 0; i < in->nhops; i++) {
		const struct fl_hop_figures *h = &in->hops[i];

		if (!verdict_has_rate(in, i))
			continue;
		if (n < MAX_RAILS && !listed(names, n, h->src_dev))
			names[n++] = h->src_dev;
		if (n < MAX_RAILS && !listed(names, n, h->dst_dev))
			names[n++] = h->dst_dev;
	}
	return n;
}

static bool on_rail(const struct verdict_input *in, size_t i, const char *dev,
		    const struct fl_hop_figures *like)
{
	return verdict_has_rate(in, i) && verdict_comparable(&in->hops[i], like) &&
	       verdict_rail_blames(&in->hops[i], dev);
}

static double distance(double a, double b)
{
	return a > b ? a - b : b - a;
}

/* Median, spread and median message time of the comparable hops on other rails. */
static void reference(const struct verdict_input *in, const char *dev,
		      const struct fl_hop_figures *like, double *v, struct rail_reference *r)
{
	size_t n = 0, m = 0;

	for (size_t i = 0; i < in->nhops; i++) {
		if (verdict_has_rate(in, i) && verdict_comparable(&in->hops[i], like) &&
		    !verdict_rail_blames(&in->hops[i], dev) && in->hops[i].wire_p50_us > 0.0)
			v[m++] = in->hops[i].wire_p50_us;
	}
	r->p50_us = verdict_median(v, m);
	for (size_t i = 0; i < in->nhops; i++) {
		if (verdict_has_rate(in, i) && verdict_comparable(&in->hops[i], like) &&
		    !verdict_rail_blames(&in->hops[i], dev))
			v[n++] = fl_verdict_rate(&in->hops[i]);
	}
	r->n = n;
	r->gbs = verdict_median(v, n);
	m = 0;
	for (size_t k = 0; k < n; k++) {
		if (v[k] >= in->params->min_ratio * r->gbs)
			v[m++] = distance(v[k], r->gbs);
	}
	r->mad = verdict_median(v, m);
}

static bool hop_low(const struct verdict_input *in, size_t i, const struct rail_reference *r)
{
	const struct fl_hop_figures *h = &in->hops[i];

	return verdict_below_ratio(h, r->gbs, in->params->min_ratio) &&
	       verdict_outside_spread(r->gbs - fl_verdict_rate(h), r->mad) &&
	       (h->wire_p50_us <= 0.0 || r->p50_us <= 0.0 ||
		h->wire_p50_us >= VERDICT_MIN_P50_STRETCH * r->p50_us);
}

static int cmp_end(const void *pa, const void *pb)
{
	return strcmp(((const struct rail_end *)pa)->node, ((const struct rail_end *)pb)->node);
}

/* The ends of one node become one: slow when every hop through its device is low. */
static void by_node(struct rail_evidence *e, size_t nends)
{
	size_t n = 0;

	qsort(e->ends, nends, sizeof(*e->ends), cmp_end);
	for (size_t i = 0; i < nends; i++) {
		if (n && !strcmp(e->ends[n - 1].node, e->ends[i].node))
			e->ends[n - 1].low &= e->ends[i].low;
		else
			e->ends[n++] = e->ends[i];
	}
	e->nnodes = n;
	e->nslow = 0;
	for (size_t k = 0; k < n; k++)
		e->nslow += e->ends[k].low;
}

static void gather(const struct verdict_input *in, const char *dev,
		   const struct fl_hop_figures *like, const struct rail_reference *r,
		   struct rail_evidence *e)
{
	size_t nends = 0;

	e->slowest = -1;
	for (size_t i = 0; i < in->nhops; i++) {
		const struct fl_hop_figures *h = &in->hops[i];
		bool low;

		if (!on_rail(in, i, dev, like))
			continue;
		low = hop_low(in, i, r);
		if (!strcmp(h->src_dev, dev))
			e->ends[nends++] = (struct rail_end){ h->src_node, low };
		if (!strcmp(h->dst_dev, dev))
			e->ends[nends++] = (struct rail_end){ h->dst_node, low };
		if (low && (e->slowest < 0 ||
			    fl_verdict_rate(h) < fl_verdict_rate(&in->hops[e->slowest])))
			e->slowest = (long)i;
	}
	by_node(e, nends);
}

static bool slow_node(const struct rail_evidence *e, const char *node)
{
	struct rail_end key = { node, false };
	const struct rail_end *found = bsearch(&key, e->ends, e->nnodes, sizeof(*e->ends), cmp_end);

	return found && found->low;
}

static bool hop_of_slow_node(const struct fl_hop_figures *h, const char *dev,
			     const struct rail_evidence *e)
{
	return (!strcmp(h->src_dev, dev) && slow_node(e, h->src_node)) ||
	       (!strcmp(h->dst_dev, dev) && slow_node(e, h->dst_node));
}

static double slow_median(const struct verdict_input *in, const char *dev,
			  const struct fl_hop_figures *like, const struct rail_evidence *e,
			  double *v)
{
	size_t n = 0;

	for (size_t i = 0; i < in->nhops; i++) {
		if (on_rail(in, i, dev, like) && hop_of_slow_node(&in->hops[i], dev, e))
			v[n++] = fl_verdict_rate(&in->hops[i]);
	}
	return verdict_median(v, n);
}

static bool rail_slow(const struct verdict_input *in, const char *dev,
		      const struct fl_hop_figures *like, double *v, struct rail_reference *r,
		      struct rail_evidence *e)
{
	reference(in, dev, like, v, r);
	if (r->n < 2 || r->gbs <= 0.0)
		return false; /* no other rail to compare with */
	gather(in, dev, like, r, e);
	if (e->slowest < 0 || e->nslow < RAIL_MIN_NODES ||
	    (double)e->nslow < RAIL_MIN_SHARE * (double)e->nnodes)
		return false;
	e->slow_gbs = slow_median(in, dev, like, e, v);
	return true;
}

/* "2" for mlx5_2 or eth2: the rail's number as people say it; "" when the name has none. */
static void rail_number(const char *dev, char *buf, size_t len)
{
	size_t n = strlen(dev), k = n;

	while (k > 0 && isdigit((unsigned char)dev[k - 1]))
		k--;
	snprintf(buf, len, "%s", k < n ? dev + k : "");
}

static void name_rail(const struct verdict_input *in, const char *dev,
		      const struct rail_reference *r, const struct rail_evidence *e,
		      struct fl_finding *out)
{
	const struct fl_hop_figures *h = &in->hops[e->slowest];
	char number[FL_DEV_NAME_LEN];

	verdict_set_hop(out, in->hops, (size_t)e->slowest);
	verdict_set_name(out->dev, sizeof(out->dev), dev);
	out->median_gbs = r->gbs;
	out->ratio = fl_verdict_rate(h) / r->gbs;
	/* A ring moves at the pace of its slowest hop. */
	out->speedup = out->ratio > 0.0 ? 1.0 / out->ratio : 1.0;
	rail_number(dev, number, sizeof(number));
	verdict_say(out,
		    "leaf switch of rail %s suspected: %zu of %zu nodes' %s slow (their hops "
		    "%.2f GB/s median, slowest %s/%s -> %s/%s %.2fx the %.2f GB/s median of "
		    "%zu hops on other devices)",
		    *number ? number : dev, e->nslow, e->nnodes, dev, e->slow_gbs, h->src_node,
		    h->src_dev, h->dst_node, h->dst_dev, out->ratio, r->gbs, r->n);
}

/* The first rated hop on the rail: its comparable group is the one the rail is judged in. */
static const struct fl_hop_figures *first_on(const struct verdict_input *in, const char *dev)
{
	for (size_t i = 0; i < in->nhops; i++) {
		if (verdict_has_rate(in, i) && verdict_rail_blames(&in->hops[i], dev))
			return &in->hops[i];
	}
	return NULL;
}

static void mark_explained(const struct verdict_input *in, const char *dev, bool *explained)
{
	for (size_t i = 0; i < in->nhops; i++)
		explained[i] |= verdict_rail_blames(&in->hops[i], dev);
}

static int verdict_find_rails(const struct verdict_input *in, bool *explained,
			      struct fl_verdict *out)
{
	const char *names[MAX_RAILS];
	double *v = malloc((in->nhops ? in->nhops : 1) * sizeof(*v));
	struct rail_evidence e = { malloc((2 * in->nhops + 1) * sizeof(*e.ends)), 0, 0, -1, 0 };
	struct rail_reference r;
	size_t n = rail_names(in, names);
	int added = 0;

	if (!v || !e.ends) {
		free(v);
		free(e.ends);
		return -1;
	}
	for (size_t k = 0; n >= 2 && k < n; k++) {
		const struct fl_hop_figures *like = first_on(in, names[k]);
		struct fl_finding *f;

		if (!like || !rail_slow(in, names[k], like, v, &r, &e))
			continue;
		f = verdict_add_finding(out, FL_VERDICT_RAIL);
		if (!f)
			break;
		name_rail(in, names[k], &r, &e, f);
		mark_explained(in, names[k], explained);
		added++;
	}
	free(v);
	free(e.ends);
	return added;
}

/* A copy of the hops where those explained carry no traffic, so no rule judges them again. */
static struct fl_hop_figures *without_explained(const struct verdict_input *in,
						const bool *explained)
{
	struct fl_hop_figures *rest = malloc((in->nhops ? in->nhops : 1) * sizeof(*rest));

	if (!rest)
		return NULL;
	memcpy(rest, in->hops, in->nhops * sizeof(*rest));
	for (size_t i = 0; i < in->nhops; i++) {
		if (explained[i])
			rest[i].bytes = rest[i].messages = 0;
	}
	return rest;
}

/*
 * Rails first: the hops of a slow rail would otherwise make each of its
 * devices look slow against the others. Devices are then judged on the hops
 * no rail explains (same indices, so findings point into the whole array).
 */
int verdict_find_rails_and_devices(const struct verdict_input *in, bool *explained,
				   struct fl_verdict *out)
{
	int rails = verdict_find_rails(in, explained, out), devices;
	struct verdict_input rest = *in;
	struct fl_hop_figures *hops;

	if (rails <= 0)
		return rails < 0 ? -1 : verdict_find_devices(in, explained, out);
	hops = without_explained(in, explained);
	if (!hops)
		return -1;
	rest.hops = hops;
	devices = verdict_find_devices(&rest, explained, out);
	free(hops);
	return devices < 0 ? -1 : rails + devices;
}
