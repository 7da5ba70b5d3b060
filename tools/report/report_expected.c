/*
 * What the merge expected against what it got: the ranks the reports' world
 * size promises, the nodes the hops name, and which of them left no report (a
 * rank that died before writing one). Also whether several processes of one
 * node share hop names, so that names for people carry ranks.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugin/base/error.h"
#include "report.h"
#include "report_index.h"

static bool file_used(const struct report_file *f)
{
	return f->superseded_by < 0;
}

/* Node names by hash: each looked up as a hop end names it. */
struct names {
	const char **name;
	size_t n;
	struct report_index ix;
	const char *want; /* the one looked up */
};

static bool same_name(const void *ctx, size_t e)
{
	const struct names *s = ctx;

	return !strcmp(s->name[e], s->want);
}

/* Adds name unless it is there: whether it was new. */
static bool add_name(struct names *s, const char *name)
{
	size_t *slot;

	s->want = name;
	slot = report_index_slot(&s->ix, report_index_hash(name, "", 0), same_name, s);
	if (*slot)
		return false;
	s->name[s->n] = name;
	*slot = ++s->n;
	return true;
}

static bool has_name(struct names *s, const char *name)
{
	s->want = name;
	return *report_index_slot(&s->ix, report_index_hash(name, "", 0), same_name, s) != 0;
}

static int names_init(struct names *s, size_t cap)
{
	s->n = 0;
	s->name = malloc((cap + 1) * sizeof(*s->name));
	return s->name && !report_index_init(&s->ix, cap) ? 0 : -1;
}

static void names_free(struct names *s)
{
	free(s->name);
	report_index_free(&s->ix);
}

static bool missing(struct names *reported, const char *node)
{
	return strcmp(node, "*") && !has_name(reported, node);
}

/*
 * The hop ends whose node wrote no report, in the order the hops first name
 * them: each end looked up by name among the nodes already named, then each
 * distinct one among those that reported. A 16 k-node job has 10^5 hops and
 * 10^5 files (a scan of the files per hop took minutes), a large report 10^6
 * hops (sorting their 2 x 10^6 names took half a second).
 */
static int find_missing_nodes(struct report_set *set)
{
	struct names reported = { 0 }, named = { 0 };
	size_t kept = 0;
	int err = names_init(&reported, set->nfiles) | names_init(&named, 2 * set->nhops);

	for (size_t f = 0; !err && f < set->nfiles; f++) {
		if (file_used(&set->files[f]))
			add_name(&reported, set->files[f].node);
	}
	for (size_t i = 0; !err && i < set->nhops; i++) {
		/* sorted by source first: a source named by the hop before is named already */
		if (!i || set->hops[i].key.src_node != set->hops[i - 1].key.src_node)
			add_name(&named, set->hops[i].key.src_node);
		add_name(&named, set->hops[i].key.dst_node);
	}
	for (size_t k = 0; !err && k < named.n; k++)
		kept += missing(&reported, named.name[k]);
	set->missing_nodes = err ? NULL : calloc(kept + 1, sizeof(*set->missing_nodes));
	kept = 0;
	for (size_t k = 0; set->missing_nodes && k < named.n; k++) {
		if (missing(&reported, named.name[k]))
			snprintf(set->missing_nodes[kept++], FL_NODE_NAME_LEN, "%s", named.name[k]);
	}
	set->nmissing_nodes = kept;
	names_free(&reported);
	names_free(&named);
	return set->missing_nodes ? 0 : fl_fail(FL_ERR_SYSTEM, "out of memory");
}

/* world_size is bounded by the loader (REPORT_MAX_WORLD): a flag per rank. */
static int find_missing_ranks(struct report_set *set)
{
	bool *seen;

	set->world_size = -1;
	for (size_t f = 0; f < set->nfiles; f++) {
		if (file_used(&set->files[f]) && set->files[f].world_size > set->world_size)
			set->world_size = (long)set->files[f].world_size;
	}
	if (set->world_size <= 0)
		return 0;
	seen = calloc((size_t)set->world_size, sizeof(*seen));
	set->missing_ranks = malloc((size_t)set->world_size * sizeof(*set->missing_ranks));
	if (!seen || !set->missing_ranks) {
		free(seen);
		return fl_fail(FL_ERR_SYSTEM, "out of memory");
	}
	for (size_t f = 0; f < set->nfiles; f++) {
		long long r = set->files[f].rank;

		if (file_used(&set->files[f]) && r >= 0 && r < set->world_size)
			seen[r] = true;
	}
	for (long r = 0; r < set->world_size; r++) {
		if (!seen[r])
			set->missing_ranks[set->nmissing_ranks++] = r;
	}
	free(seen);
	return 0;
}

static bool same_names(const struct report_hop_key *a, const struct report_hop_key *b)
{
	return !strcmp(a->src_node, b->src_node) && !strcmp(a->src_dev, b->src_dev) &&
	       !strcmp(a->dst_node, b->dst_node) && !strcmp(a->dst_dev, b->dst_dev);
}

int report_find_missing(struct report_set *set)
{
	int err = find_missing_ranks(set);

	err = err ? err : find_missing_nodes(set);
	if (err)
		return err;
	set->ranked_names = false;
	for (size_t i = 0; i < set->nhops; i++) {
		/* The hops are sorted by name: a shared name sits next to its twin. */
		if (i && same_names(&set->hops[i].key, &set->hops[i - 1].key))
			set->ranked_names = true;
	}
	return 0;
}

static void rank_suffix(long rank, char *buf, size_t len)
{
	if (rank >= 0)
		snprintf(buf, len, "[r%ld]", rank);
	else
		snprintf(buf, len, "[r?]");
}

void report_hop_name(const struct report_set *set, size_t i, char *buf, size_t len)
{
	const struct report_hop *h = &set->hops[i];
	char src[32] = "", dst[32] = "";

	if (set->ranked_names) {
		rank_suffix(h->src_rank, src, sizeof(src));
		rank_suffix(h->dst_rank, dst, sizeof(dst));
	}
	snprintf(buf, len, "%s/%s%s -> %s/%s%s", h->key.src_node, h->key.src_dev, src,
		 h->key.dst_node, h->key.dst_dev, dst);
}

/* Appends to buf without overflowing it. */
static void add(char *buf, size_t len, const char *fmt, const char *s, long x)
{
	size_t used = strlen(buf);

	if (used + 1 >= len)
		return;
	if (s)
		snprintf(buf + used, len - used, fmt, s);
	else
		snprintf(buf + used, len - used, fmt, x);
}

void report_missing_text(const struct report_set *set, char *buf, size_t len)
{
	buf[0] = '\0';
	if (set->nmissing_ranks) {
		add(buf, len, "expected %ld ranks (world size), no report from rank", NULL,
		    set->world_size);
		add(buf, len, "%s", set->nmissing_ranks > 1 ? "s" : "", 0);
		for (size_t k = 0; k < set->nmissing_ranks; k++)
			add(buf, len, k ? ", %ld" : " %ld", NULL, set->missing_ranks[k]);
	}
	if (set->nmissing_nodes) {
		add(buf, len, "%s", *buf ? "; " : "", 0);
		add(buf, len, "%s", "no report from node", 0);
		add(buf, len, "%s", set->nmissing_nodes > 1 ? "s" : "", 0);
		for (size_t k = 0; k < set->nmissing_nodes; k++)
			add(buf, len, k ? ", %s" : " %s", set->missing_nodes[k], 0);
		add(buf, len, "%s", " (named by the hops of others)", 0);
	}
}
