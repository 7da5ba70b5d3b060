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

static bool file_used(const struct report_file *f)
{
	return f->superseded_by < 0;
}

static bool rank_reported(const struct report_set *set, long rank)
{
	for (size_t f = 0; f < set->nfiles; f++) {
		if (file_used(&set->files[f]) && set->files[f].rank == rank)
			return true;
	}
	return false;
}

static bool node_reported(const struct report_set *set, const char *node)
{
	for (size_t f = 0; f < set->nfiles; f++) {
		if (file_used(&set->files[f]) && !strcmp(set->files[f].node, node))
			return true;
	}
	return false;
}

static bool node_listed(const struct report_set *set, const char *node)
{
	for (size_t k = 0; k < set->nmissing_nodes; k++) {
		if (!strcmp(set->missing_nodes[k], node))
			return true;
	}
	return false;
}

static void note_node(struct report_set *set, const char *node)
{
	if (node_reported(set, node) || node_listed(set, node) || !strcmp(node, "*"))
		return;
	snprintf(set->missing_nodes[set->nmissing_nodes++], FL_NODE_NAME_LEN, "%s", node);
}

static int find_missing_ranks(struct report_set *set)
{
	set->world_size = -1;
	for (size_t f = 0; f < set->nfiles; f++) {
		if (file_used(&set->files[f]) && set->files[f].world_size > set->world_size)
			set->world_size = (long)set->files[f].world_size;
	}
	if (set->world_size <= 0)
		return 0;
	set->missing_ranks = malloc((size_t)set->world_size * sizeof(*set->missing_ranks));
	if (!set->missing_ranks)
		return fl_fail(FL_ERR_SYSTEM, "out of memory");
	for (long r = 0; r < set->world_size; r++) {
		if (!rank_reported(set, r))
			set->missing_ranks[set->nmissing_ranks++] = r;
	}
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

	if (err)
		return err;
	set->missing_nodes = calloc(2 * set->nhops + 1, sizeof(*set->missing_nodes));
	if (!set->missing_nodes)
		return fl_fail(FL_ERR_SYSTEM, "out of memory");
	set->ranked_names = false;
	for (size_t i = 0; i < set->nhops; i++) {
		note_node(set, set->hops[i].key.src_node);
		note_node(set, set->hops[i].key.dst_node);
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
