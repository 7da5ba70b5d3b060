/*
 * Verdicts about how the job is set up rather than how fast its wires run:
 * TCP where RDMA is available (`transport`), and GPUDirect RDMA unused where
 * the device supports it or used unevenly (`gdr`). They need traffic, not a
 * statistical sample: one message says which path NCCL chose.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "verdict_internal.h"

#define GDR_MEMORY (FL_PTR_CUDA | FL_PTR_DMABUF)

static double median_rate_except(const struct verdict_input *in,
				 bool (*pick)(const struct fl_hop_figures *), double *v)
{
	size_t n = 0;

	for (size_t i = 0; i < in->nhops; i++) {
		if (verdict_has_rate(in, i) && pick(&in->hops[i]))
			v[n++] = in->hops[i].wire_gbs;
	}
	return verdict_median(v, n);
}

static bool over_tcp_beside_rdma(const struct fl_hop_figures *h)
{
	return verdict_has_traffic(h) && h->rdma_port_active && !strcmp(h->transport, "socket");
}

static bool any_hop(const struct fl_hop_figures *h)
{
	(void)h;
	return true;
}

/* The node with the active port and the port, where the report says which (else the sender). */
static void name_rdma_port(const struct fl_hop_figures *h, struct fl_finding *out)
{
	verdict_set_name(out->node, sizeof(out->node),
			 h->rdma_node[0] ? h->rdma_node : h->src_node);
	verdict_set_name(out->dev, sizeof(out->dev), h->rdma_port);
}

int verdict_try_transport(const struct verdict_input *in, struct fl_verdict *verdict)
{
	size_t count = 0, first = 0, moving = 0;
	struct fl_finding *out;
	double *v;

	for (size_t i = in->nhops; i-- > 0;) {
		moving += verdict_has_traffic(&in->hops[i]);
		if (over_tcp_beside_rdma(&in->hops[i])) {
			count++;
			first = i;
		}
	}
	if (!count)
		return 0;
	v = malloc(in->nhops * sizeof(*v));
	if (!v)
		return -1;
	out = verdict_add_finding(verdict, FL_VERDICT_TRANSPORT);
	verdict_set_hop(out, in->hops, first);
	name_rdma_port(&in->hops[first], out);
	out->median_gbs = median_rate_except(in, any_hop, v);
	out->ratio = out->median_gbs > 0.0 ? out->culprit_gbs / out->median_gbs : 1.0;
	free(v);
	verdict_say(out,
		    "%zu of %zu hops carry traffic over TCP sockets although %s has an active RDMA "
		    "port%s%s: NCCL is not using InfiniBand/RoCE (speedup not estimated)",
		    count, moving, out->node, out->dev[0] ? " " : "", out->dev);
	return 1;
}

/* Only hops whose registrations are known: no registration reported means we cannot tell. */
static bool gdr_known(const struct fl_hop_figures *h)
{
	return verdict_has_traffic(h) && h->mem_types != 0;
}

/* What one end registered: 1 GPU memory, -1 host memory only, 0 unknown. */
static int end_gdr(int mem_types)
{
	return !mem_types ? 0 : mem_types & GDR_MEMORY ? 1 : -1;
}

static bool uses_gdr(const struct fl_hop_figures *h)
{
	return gdr_known(h) && (h->mem_types & GDR_MEMORY);
}

static bool lacks_gdr(const struct fl_hop_figures *h)
{
	return gdr_known(h) && !(h->mem_types & GDR_MEMORY);
}

/*
 * GPUDirect is a property of an end, not of a hop: in a 2-node ring every hop
 * touches the node without it, and only the ends' own registrations (a
 * merged report has both) say which node that is.
 */
static void count_ends(const struct verdict_input *in, size_t *using, size_t *lacking)
{
	*using = *lacking = 0;
	for (size_t i = 0; i < in->nhops; i++) {
		const struct fl_hop_figures *h = &in->hops[i];
		int ends[2] = { end_gdr(h->src_mem_types), end_gdr(h->dst_mem_types) };

		for (int e = 0; e < 2 && verdict_has_traffic(h); e++) {
			*using += ends[e] > 0;
			*lacking += ends[e] < 0;
		}
	}
}

static bool lacks_capable_gdr(const struct fl_hop_figures *h)
{
	return lacks_gdr(h) && h->gdr_capable;
}

struct endpoint {
	const char *node;
	size_t hop;
};

static int cmp_endpoint(const void *pa, const void *pb)
{
	const struct endpoint *a = pa, *b = pb;
	int c = strcmp(a->node, b->node);

	return c ? c : (a->hop > b->hop) - (a->hop < b->hop);
}

/*
 * The node that the most offending hops go through (ties: the one seen first),
 * and its first offending hop. In a ring a node without GDR spoils both the hop
 * into it and the hop out of it, while its neighbours each have one good hop.
 */
static int most_involved(const struct verdict_input *in,
			 bool (*offends)(const struct fl_hop_figures *), const char **node,
			 size_t *hop, size_t *hops_through)
{
	struct endpoint *e = malloc(2 * in->nhops * sizeof(*e));
	size_t n = 0, best = 0, best_count = 0;

	if (!e)
		return -1;
	for (size_t i = 0; i < in->nhops; i++) {
		const struct fl_hop_figures *h = &in->hops[i];
		int s = end_gdr(h->src_mem_types), d = end_gdr(h->dst_mem_types);
		/* where both ends are known, only an end without GPUDirect is involved */
		bool src = !(s && d) || s < 0, dst = !(s && d) || d < 0;

		if (!offends(h))
			continue;
		if (src)
			e[n++] = (struct endpoint){ h->src_node, i };
		if (dst && strcmp(h->src_node, h->dst_node))
			e[n++] = (struct endpoint){ h->dst_node, i };
	}
	if (!n) {
		free(e);
		return 1;
	}
	qsort(e, n, sizeof(*e), cmp_endpoint);
	for (size_t lo = 0, hi; lo < n; lo = hi) {
		for (hi = lo; hi < n && !strcmp(e[hi].node, e[lo].node); hi++)
			;
		if (hi - lo > best_count || (hi - lo == best_count && e[lo].hop < e[best].hop)) {
			best = lo;
			best_count = hi - lo;
		}
	}
	*node = e[best].node;
	*hop = e[best].hop;
	*hops_through = best_count;
	free(e);
	return 0;
}

static size_t count_hops(const struct verdict_input *in,
			 bool (*pick)(const struct fl_hop_figures *))
{
	size_t n = 0;

	for (size_t i = 0; i < in->nhops; i++)
		n += pick(&in->hops[i]);
	return n;
}

static void gdr_figures(const struct verdict_input *in, double *v, struct fl_finding *out)
{
	double with = median_rate_except(in, uses_gdr, v);
	double without = median_rate_except(in, lacks_gdr, v);

	out->median_gbs = with;
	out->ratio = with > 0.0 && without > 0.0 ? without / with : 1.0;
	out->speedup = out->ratio < 1.0 ? 1.0 / out->ratio : 1.0;
}

int verdict_try_gdr(const struct verdict_input *in, struct fl_verdict *verdict)
{
	struct fl_finding *out;
	size_t using = count_hops(in, uses_gdr), lacking = count_hops(in, lacks_gdr);
	size_t capable = count_hops(in, lacks_capable_gdr), hop, through, ends_using, ends_lacking;
	const char *node;
	bool (*offends)(const struct fl_hop_figures *) = capable ? lacks_capable_gdr : lacks_gdr;
	double *v;
	int rc;

	count_ends(in, &ends_using, &ends_lacking);
	if (!capable && !(using && lacking) && !(ends_using && ends_lacking))
		return 0;
	v = malloc(in->nhops * sizeof(*v));
	rc = v ? most_involved(in, offends, &node, &hop, &through) : -1;
	if (rc) {
		free(v);
		return rc < 0 ? -1 : 0;
	}
	out = verdict_add_finding(verdict, FL_VERDICT_GDR);
	verdict_set_hop(out, in->hops, hop);
	verdict_set_name(out->node, sizeof(out->node), node);
	gdr_figures(in, v, out);
	free(v);
	if (capable)
		verdict_say(out,
			    "%zu hops move data through host memory although their device supports "
			    "GPUDirect RDMA (%zu through %s); %zu of %zu hops use it",
			    capable, through, out->node, using, using + lacking);
	else if (ends_using && ends_lacking)
		verdict_say(out,
			    "GPUDirect RDMA is used unevenly: %zu ends of hops register GPU memory, "
			    "%zu only host memory (%zu of them on %s)",
			    ends_using, ends_lacking, through, out->node);
	else
		verdict_say(
			out,
			"GPUDirect RDMA is used unevenly: on %zu hops but not on %zu (%zu of them "
			"through %s)",
			using, lacking, through, out->node);
	return 1;
}
