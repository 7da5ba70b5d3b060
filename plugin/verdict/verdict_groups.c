/*
 * Like with like across measurement modes: hops measured by our transport
 * (net mode) and hops measured from NCCL's profiler events time different
 * things (a profiler receiver's wait includes the wire), so each group is
 * judged on its own and the first group with a finding gives the verdict.
 */
#include <stdlib.h>

#include "verdict.h"

#define MAX_GROUPS 4

static size_t members(const int *group, size_t nhops, int g)
{
	size_t n = 0;

	for (size_t i = 0; i < nhops; i++)
		n += group[i] == g;
	return n;
}

/* Group g's hops into sub (in order), their indices into map; returns the count. */
static size_t pick(const struct fl_hop_figures *hops, const int *group, size_t nhops, int g,
		   struct fl_hop_figures *sub, size_t *map)
{
	size_t n = 0;

	for (size_t i = 0; i < nhops; i++) {
		if (group[i] == g) {
			sub[n] = hops[i];
			map[n++] = i;
		}
	}
	return n;
}

/* map NULL: sub is every hop, in order (no copy taken). */
static void judge_group(const struct fl_hop_figures *sub, const size_t *map, size_t n,
			const struct fl_verdict_params *params, struct fl_verdict *out)
{
	struct fl_verdict_params own;

	/* a topology's elements name hops of the whole array: a group apart goes without them */
	if (map && params && params->elements) {
		own = *params;
		own.elements = NULL;
		params = &own;
	}
	fl_verdict_compute(sub, n, params, out);
	if (!map)
		return;
	if (out->hop >= 0 && (size_t)out->hop < n)
		out->hop = (int)map[out->hop];
	/* Each finding names its hop too (a report marks culprits by them). */
	for (int k = 0; k < out->nfindings; k++) {
		struct fl_finding *f = &out->findings[k];

		if (f->hop >= 0 && (size_t)f->hop < n)
			f->hop = (int)map[f->hop];
	}
}

void fl_verdict_compute_groups(const struct fl_hop_figures *hops, const int *group,
			       size_t nhops, const struct fl_verdict_params *params,
			       struct fl_verdict *out)
{
	struct fl_hop_figures *sub = malloc((nhops + 1) * sizeof(*sub));
	size_t *map = malloc((nhops + 1) * sizeof(*map));
	int judged = 0, used = 0;

	if (!sub || !map) {
		free(sub);
		free(map);
		fl_verdict_compute(hops, nhops, params, out); /* no memory to split: all at once */
		return;
	}
	fl_verdict_compute(hops, 0, params, out);
	for (int g = 0; g < MAX_GROUPS; g++) {
		struct fl_verdict v;
		size_t n = members(group, nhops, g);

		if (!n)
			continue;
		/* one group holding all (the usual case) is judged in place: a copy of 10^6 hops
		 * is 376 MB */
		if (n == nhops)
			judge_group(hops, NULL, n, params, &v);
		else
			judge_group(sub, map, pick(hops, group, nhops, g, sub, map), params, &v);
		judged += v.judged_hops;
		if (v.kind != FL_VERDICT_NONE) {
			*out = v;
			break;
		}
		if (!used++ || v.judged_hops)
			*out = v;
	}
	if (out->kind == FL_VERDICT_NONE)
		out->judged_hops = judged;
	free(sub);
	free(map);
}
