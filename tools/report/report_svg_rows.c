/* The rows of `--svg`'s heatmap and ring: nodes, or blocks of them (report_svg_rows.h). */
#include "report_svg_rows.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugin/base/error.h"
#include "tools/common/tool_hash.h"

static int cmp_name(const void *a, const void *b)
{
	return strverscmp(*(const char *const *)a, *(const char *const *)b);
}

static int cmp_ids(const void *a, const void *b, void *names)
{
	const char **n = names;

	return strverscmp(n[*(const size_t *)a], n[*(const size_t *)b]);
}

/* The name's id in the table (slots hold id + 1), a new one at its first sight. */
static size_t intern(struct report_svg_axis *a, size_t *slots, size_t nslots, const char *name)
{
	size_t at = tool_hash_mix(tool_fnv1a(TOOL_FNV_OFFSET, name)) & (nslots - 1);

	while (slots[at]) {
		if (!strcmp(a->nodes[slots[at] - 1], name))
			return slots[at] - 1;
		at = (at + 1) & (nslots - 1);
	}
	a->nodes[a->nnodes] = name;
	slots[at] = ++a->nnodes;
	return a->nnodes - 1;
}

/*
 * Every node name once, in natural order, and each hop's ends as indices into
 * them: the 2 x hops ends cost a hash each, only the distinct names are sorted
 * (sorting every end took 2 s of 10^6 hops).
 */
static int collect_nodes(const struct report_set *set, struct report_svg_axis *a)
{
	size_t nslots = 16, *slots, *order = NULL, *rank = NULL;
	const char **sorted = NULL;
	bool ok;

	while (nslots < 4 * set->nhops + 4) /* two ends a hop, at most half full */
		nslots *= 2;
	if (!(slots = calloc(nslots, sizeof(*slots))))
		return -1;
	a->nnodes = 0;
	for (size_t i = 0; i < set->nhops; i++) {
		a->hop_src[i] = intern(a, slots, nslots, set->hops[i].key.src_node);
		a->hop_dst[i] = intern(a, slots, nslots, set->hops[i].key.dst_node);
	}
	free(slots);
	order = malloc((a->nnodes + 1) * sizeof(*order));
	rank = malloc((a->nnodes + 1) * sizeof(*rank));
	sorted = malloc((a->nnodes + 1) * sizeof(*sorted));
	ok = order && rank && sorted;
	if (ok) {
		for (size_t k = 0; k < a->nnodes; k++)
			order[k] = k;
		qsort_r(order, a->nnodes, sizeof(*order), cmp_ids, a->nodes);
		for (size_t k = 0; k < a->nnodes; k++) {
			rank[order[k]] = k;
			sorted[k] = a->nodes[order[k]];
		}
		memcpy(a->nodes, sorted, a->nnodes * sizeof(*sorted));
		for (size_t i = 0; i < set->nhops; i++) {
			a->hop_src[i] = rank[a->hop_src[i]];
			a->hop_dst[i] = rank[a->hop_dst[i]];
		}
	}
	free(sorted);
	free(rank);
	free(order);
	return ok ? 0 : -1;
}

/* The node's index, or nnodes when no hop names it. */
static size_t node_index(const struct report_svg_axis *a, const char *name)
{
	const char **hit = bsearch(&name, a->nodes, a->nnodes, sizeof(*a->nodes), cmp_name);

	return hit ? (size_t)(hit - a->nodes) : a->nnodes;
}

/* Nodes drawn alone, in order of priority, while there is room. */
struct alone {
	bool *flag;
	size_t n;
};

static void keep_alone(struct alone *al, size_t node, size_t nnodes)
{
	if (node < nnodes && !al->flag[node] && al->n < REPORT_SVG_MAX_ALONE) {
		al->flag[node] = true;
		al->n++;
	}
}

/*
 * Adds the nodes marked in more (cleared as it goes) only when all of them fit:
 * a rail's or a busy node's hundreds of ends would fill the rows with an
 * arbitrary few; their blocks carry the red frame instead.
 */
static void keep_all_or_none(struct alone *al, bool *more, size_t nnodes)
{
	size_t extra = 0;

	for (size_t k = 0; k < nnodes; k++)
		extra += more[k] && !al->flag[k];
	for (size_t k = 0; k < nnodes; k++) {
		if (more[k] && al->n + extra <= REPORT_SVG_MAX_ALONE)
			keep_alone(al, k, nnodes);
		more[k] = false;
	}
}

static void name_node(struct alone *al, size_t node, size_t nnodes, size_t *named,
		      size_t *nnamed)
{
	if (node >= nnodes)
		return;
	named[(*nnamed)++] = node;
	keep_alone(al, node, nnodes);
}

/*
 * The nodes the findings name (a link's: both its ends) first, then their peers
 * (the neighbours on the ring), then the ends of every blamed hop. A rail's
 * finding names no node: its example hop is no more to blame than the others.
 */
static void choose_alone(const struct report_set *set, const struct report_svg_axis *a,
			 struct alone *al, bool *more)
{
	const struct fl_verdict *v = &set->verdict;
	size_t named[2 * FL_VERDICT_MAX_FINDINGS], nnamed = 0;

	for (int k = 0; k < v->nfindings; k++) {
		const struct fl_finding *f = &v->findings[k];

		if (f->node[0])
			name_node(al, node_index(a, f->node), a->nnodes, named, &nnamed);
		else if (f->kind == FL_VERDICT_LINK && f->hop >= 0 && (size_t)f->hop < set->nhops) {
			name_node(al, a->hop_src[f->hop], a->nnodes, named, &nnamed);
			name_node(al, a->hop_dst[f->hop], a->nnodes, named, &nnamed);
		}
	}
	for (size_t i = 0; i < set->nhops; i++) {
		for (size_t k = 0; k < nnamed; k++) {
			if (a->hop_src[i] == named[k])
				more[a->hop_dst[i]] = true;
			if (a->hop_dst[i] == named[k])
				more[a->hop_src[i]] = true;
		}
	}
	keep_all_or_none(al, more, a->nnodes);
	for (size_t i = 0; i < set->nhops; i++) {
		if (report_is_culprit(set, i))
			more[a->hop_src[i]] = more[a->hop_dst[i]] = true;
	}
	keep_all_or_none(al, more, a->nnodes);
}

/* "node00000..00255": the last name without what it shares with the first, short on the axes. */
static void name_row(const struct report_svg_axis *a, struct report_svg_row *r)
{
	const char *first = a->nodes[r->first], *last = a->nodes[r->first + r->count - 1];
	size_t same = 0;

	while (first[same] && first[same] == last[same])
		same++;
	/* back to where a number starts, so "node00127..00255" not "node00127..255" */
	while (same > 0 && last[same - 1] >= '0' && last[same - 1] <= '9')
		same--;
	if (r->count == 1)
		snprintf(r->name, sizeof(r->name), "%s", first);
	else
		snprintf(r->name, sizeof(r->name), "%s..%s", first, last + same);
}

/* Walks the nodes in order: each one kept alone is a row, the others fill blocks between. */
static void make_rows(struct report_svg_axis *a, const bool *alone, size_t nalone)
{
	size_t others = a->nnodes - nalone;
	size_t block = a->aggregated ? (others + REPORT_SVG_BLOCKS - 1) / REPORT_SVG_BLOCKS : 1;
	struct report_svg_row *open = NULL;

	a->nrows = 0;
	for (size_t k = 0; k < a->nnodes; k++) {
		if (alone[k] || !open || open->count >= block) {
			open = &a->rows[a->nrows++];
			*open = (struct report_svg_row){ .first = k, .count = 0, .alone = alone[k] };
		}
		open->count++;
		a->row_of[k] = a->nrows - 1;
		if (alone[k])
			open = NULL; /* the next node starts a row of its own */
	}
	for (size_t r = 0; r < a->nrows; r++)
		name_row(a, &a->rows[r]);
}

int report_svg_axis_build(const struct report_set *set, struct report_svg_axis *a)
{
	bool *alone = NULL, *more = NULL;
	struct alone al;

	memset(a, 0, sizeof(*a));
	a->nodes = malloc((2 * set->nhops + 1) * sizeof(*a->nodes));
	a->hop_src = malloc((set->nhops + 1) * sizeof(*a->hop_src));
	a->hop_dst = malloc((set->nhops + 1) * sizeof(*a->hop_dst));
	if (a->nodes && a->hop_src && a->hop_dst && !collect_nodes(set, a)) {
		a->row_of = malloc((a->nnodes + 1) * sizeof(*a->row_of));
		a->rows = malloc((a->nnodes + 1) * sizeof(*a->rows));
		alone = calloc(a->nnodes + 1, sizeof(*alone));
		more = calloc(a->nnodes + 1, sizeof(*more));
	}
	if (!a->row_of || !a->rows || !alone || !more) {
		free(alone);
		free(more);
		report_svg_axis_free(a);
		return fl_fail(FL_ERR_SYSTEM, "out of memory drawing %zu hops", set->nhops);
	}
	a->aggregated = a->nnodes > REPORT_SVG_ALL_NODES;
	al = (struct alone){ alone, 0 };
	if (a->aggregated)
		choose_alone(set, a, &al, more);
	make_rows(a, alone, al.n);
	free(alone);
	free(more);
	return 0;
}

void report_svg_axis_free(struct report_svg_axis *a)
{
	free(a->nodes);
	free(a->hop_src);
	free(a->hop_dst);
	free(a->row_of);
	free(a->rows);
	memset(a, 0, sizeof(*a));
}
