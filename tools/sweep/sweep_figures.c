/*
 * The sweep's measurements as the diagnosis model's hops (plugin/verdict): a
 * directed pair at the largest size is a hop whose every transfer is one
 * message; its rate is bytes over the transfers' time, its sampling error
 * the spread of their times (p50, p99) over their number.
 *
 * Against a baseline each pair is held to what it did before: its rate is
 * taken relative to its own baseline (its times scaled by baseline / the
 * baseline's median, so a pair that kept its rate reads at that median; one
 * the baseline lacks is scaled by the median itself, the fleet), and every
 * baseline pair joins at that median, with its own samples, as a hop of
 * nodes and devices of its own ("node0@baseline", "mlx5_0@b"). The model then
 * compares the sweep with its past as it compares a hop with its peers: a
 * node, a link or the whole rail below its baseline is a culprit, even where
 * the sweep's own median is as slow. Those rates are ratios: no line rate.
 */
#include "sweep.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "plugin/report/report_model.h"
#include "shim/shim.h"

#define BASE_NODE "@baseline"
#define BASE_DEV "@b"

/* FNV-1a: names too long for the hop's fields stay apart by a hash of the whole name. */
static unsigned name_hash(const char *s)
{
	unsigned h = 2166136261u;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

/* name + suffix in len bytes; too long: its start, "~", its hash and the suffix. */
static void hop_name(char *dst, size_t len, const char *name, const char *suffix)
{
	size_t a = strlen(name), b = strlen(suffix);

	if (a + b < len) {
		memcpy(dst, name, a);
		memcpy(dst + a, suffix, b + 1);
		return;
	}
	a = len - 1 - 9 - b; /* room for "~" and 8 hex digits */
	memcpy(dst, name, a);
	snprintf(dst + a, len - a, "~%08x%s", name_hash(name), suffix);
}

/* The sweep's transport as the report names it: verbs where the device has a link layer. */
static const char *transport_of(const struct sweep_node *n)
{
	return n->link_layer[0] ? "ib" : "socket";
}

/* The slower end's nominal speed bounds the pair, as in the merged report. */
static double pair_line(const struct sweep_node *a, const struct sweep_node *b)
{
	double x = fl_report_line_rate(a->speed_mbps), y = fl_report_line_rate(b->speed_mbps);

	if (x > 0 && y > 0)
		return x < y ? x : y;
	return x > 0 ? x : y;
}

/*
 * One pair's figures: every transfer a message of `bytes` (the size carrying
 * every byte), its time that of the transfers back to back.
 */
static void pair_figures(size_t bytes, double time_us, double iters, double p50, double p99,
			 struct fl_hop_figures *f)
{
	double n = iters >= 1 ? iters : 1; /* unknown: one sample, a wide error */

	f->bytes = (uint64_t)((double)bytes * n);
	f->messages = (uint64_t)n;
	f->typical_request = bytes;
	f->wire_seconds = time_us * n / 1e6;
	f->wire_gbs = sweep_gbs(bytes, time_us);
	f->wire_p50_us = p50 > 0 && p99 >= p50 ? p50 : 0;
	f->wire_p99_us = p50 > 0 && p99 >= p50 ? p99 : 0;
}

static void set_ends(struct fl_hop_figures *f, const struct sweep_node *src,
		     const struct sweep_node *dst)
{
	snprintf(f->transport, sizeof(f->transport), "%s", transport_of(src));
	snprintf(f->link_layer, sizeof(f->link_layer), "%s", src->link_layer);
	f->line_rate_gbs = pair_line(src, dst);
}

static int alloc_hops(struct sweep_hops *h, size_t cap, int nnodes)
{
	size_t room = cap ? cap : 1, nodes = nnodes > 0 ? (size_t)nnodes : 1;

	*h = (struct sweep_hops){ .nnodes = nnodes };
	h->figs = calloc(room, sizeof(*h->figs));
	h->src = calloc(room, sizeof(*h->src));
	h->dst = calloc(room, sizeof(*h->dst));
	h->node = calloc(nodes, sizeof(*h->node));
	h->dev = calloc(nodes, sizeof(*h->dev));
	if (!h->figs || !h->src || !h->dst || !h->node || !h->dev) {
		sweep_hops_free(h);
		return shim_fail(FL_ERR_SYSTEM, "out of memory for %zu hops", cap);
	}
	return FL_OK;
}

/*
 * The sweep's pairs as hops; with a baseline, each relative to its own (else
 * to ref, the baseline's median) at the scale ref, without a line rate.
 */
static void sweep_pairs(const struct sweep_result *res, struct sweep_hops *h,
			const struct sweep_baseline *base, double ref)
{
	const struct sweep_size *s = &res->sizes[res->nsizes - 1];
	int n = res->n;

	for (int i = 0; i < n; i++) {
		hop_name(h->node[i], sizeof(h->node[i]), res->nodes[i].name, "");
		hop_name(h->dev[i], sizeof(h->dev[i]), res->nodes[i].dev, "");
	}
	for (int a = 0; a < n; a++) {
		for (int b = 0; b < n; b++) {
			size_t k = (size_t)a * (size_t)n + (size_t)b;
			struct fl_hop_figures *f = &h->figs[h->n];
			double was = base ? sweep_baseline_find(base, res->nodes[a].name,
								res->nodes[b].name) : 0;
			double scale = base ? (was > 0 ? was : ref) / ref : 1;

			if (a == b || s->time_us[k] < 0)
				continue;
			memcpy(f->src_node, h->node[a], sizeof(f->src_node));
			memcpy(f->src_dev, h->dev[a], sizeof(f->src_dev));
			memcpy(f->dst_node, h->node[b], sizeof(f->dst_node));
			memcpy(f->dst_dev, h->dev[b], sizeof(f->dst_dev));
			set_ends(f, &res->nodes[a], &res->nodes[b]);
			if (base)
				f->line_rate_gbs = 0;
			pair_figures(s->bytes, s->time_us[k] * scale, s->iters ? s->iters[k] : 0,
				     s->p50_us ? s->p50_us[k] * scale : 0,
				     s->p99_us ? s->p99_us[k] * scale : 0, f);
			h->src[h->n] = a;
			h->dst[h->n++] = b;
		}
	}
	h->nsweep = h->n;
}

/* The scale of the baseline's pairs: their median rate (what a pair without one is held to). */
static double baseline_median(const struct sweep_baseline *base)
{
	double *v = malloc((base->npairs + 1) * sizeof(*v)), m;

	if (!v)
		return 0;
	for (size_t i = 0; i < base->npairs; i++)
		v[i] = base->pairs[i].gbs;
	m = sweep_median(v, base->npairs);
	free(v);
	return m;
}

/* A baseline pair as a hop at the scale ref, of nodes and devices renamed. */
static void base_pair(const struct sweep_result *res, const struct sweep_baseline *base,
		      const struct sweep_base_pair *p, double ref, struct fl_hop_figures *f)
{
	double k = p->gbs / ref, t = (double)base->bytes / p->gbs / 1e3;

	hop_name(f->src_node, sizeof(f->src_node), p->src, BASE_NODE);
	hop_name(f->dst_node, sizeof(f->dst_node), p->dst, BASE_NODE);
	hop_name(f->src_dev, sizeof(f->src_dev), p->src_dev[0] ? p->src_dev : "?", BASE_DEV);
	hop_name(f->dst_dev, sizeof(f->dst_dev), p->dst_dev[0] ? p->dst_dev : "?", BASE_DEV);
	snprintf(f->transport, sizeof(f->transport), "%s", transport_of(&res->nodes[0]));
	pair_figures(base->bytes, t * k, p->iters, p->p50_us * k, p->p99_us * k, f);
}

/*
 * A nominal speed that a measured rate beats is not the wires' bound (sockets
 * on lo report a default): every line rate is then unknown, as one group of
 * hops must share one. FL_VERDICT_MAX_LINE_FRACTION: what the model allows a
 * rate above its line before it calls it a measurement error.
 */
static void drop_false_lines(struct sweep_hops *h)
{
	bool beaten = false;

	for (size_t i = 0; i < h->n; i++) {
		const struct fl_hop_figures *f = &h->figs[i];

		beaten |= f->line_rate_gbs > 0 &&
			  f->wire_gbs > FL_VERDICT_MAX_LINE_FRACTION * f->line_rate_gbs;
	}
	for (size_t i = 0; beaten && i < h->n; i++)
		h->figs[i].line_rate_gbs = 0;
}

int sweep_hops_build(const struct sweep_result *res, struct sweep_hops *h)
{
	int rc = alloc_hops(h, (size_t)res->n * (size_t)res->n, res->n);

	if (rc)
		return rc;
	sweep_pairs(res, h, NULL, 0);
	drop_false_lines(h);
	return FL_OK;
}

int sweep_hops_against(const struct sweep_result *res, const struct sweep_baseline *base,
		       struct sweep_hops *h)
{
	double ref = baseline_median(base);
	int rc;

	if (!(ref > 0))
		return shim_fail(FL_ERR_USAGE, "the baseline has no pairs to compare with");
	rc = alloc_hops(h, (size_t)res->n * (size_t)res->n + base->npairs, res->n);
	if (rc)
		return rc;
	sweep_pairs(res, h, base, ref);
	for (size_t i = 0; i < base->npairs; i++)
		base_pair(res, base, &base->pairs[i], ref, &h->figs[h->n++]);
	return FL_OK;
}

void sweep_hops_free(struct sweep_hops *h)
{
	free(h->figs);
	free(h->src);
	free(h->dst);
	free(h->node);
	free(h->dev);
	*h = (struct sweep_hops){ 0 };
}

int sweep_hops_node(const struct sweep_hops *h, const char *name)
{
	for (int i = 0; i < h->nnodes; i++) {
		if (!strcmp(h->node[i], name))
			return i;
	}
	return -1;
}

bool sweep_finding_has(const struct fl_finding *f, const struct fl_hop_figures *hops, size_t i)
{
	const struct fl_hop_figures *h = &hops[i];

	switch (f->kind) {
	case FL_VERDICT_LINK: return f->hop == (int)i;
	case FL_VERDICT_DEVICE: return fl_verdict_touches(h, f->node, f->dev);
	case FL_VERDICT_RAIL: return !strcmp(h->src_dev, f->dev) || !strcmp(h->dst_dev, f->dev);
	case FL_VERDICT_NODE: return !strcmp(h->dst_node, f->node); /* the hops into it wait */
	case FL_VERDICT_GDR:
	case FL_VERDICT_TRANSPORT: return fl_verdict_touches(h, f->node, NULL);
	case FL_VERDICT_SWITCH: /* a sweep is judged without a topology: never named */
	case FL_VERDICT_NONE:
	case FL_VERDICT_UNSURE: break;
	}
	return false;
}
