/* The hops' order by ranked names (report_hop_order.h). */
#include "report_hop_order.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "plugin/base/error.h"
#include "tools/common/tool_hash.h"

/* What cmp_hop compares, with each name replaced by its rank. */
struct hop_key {
	uint32_t name[4]; /* src_node, src_dev, dst_node, dst_dev */
	long src_rank, dst_rank;
	uint64_t comm_hash;
};

/*
 * Every distinct name once, numbered in order of first sight. The hops hold
 * each name's one copy (report_names.h): a name is its pointer, hashed and
 * compared without reading its text.
 */
struct names {
	const char **text; /* by id */
	uint32_t n;
	uint32_t *slots; /* id + 1; 0 empty */
	size_t nslots;
};

static uint32_t intern(struct names *t, const char *s)
{
	size_t at = tool_hash_mix((uint64_t)(uintptr_t)s) & (t->nslots - 1);

	while (t->slots[at]) {
		uint32_t id = t->slots[at] - 1;

		if (t->text[id] == s)
			return id;
		at = (at + 1) & (t->nslots - 1);
	}
	t->text[t->n] = s;
	t->slots[at] = ++t->n;
	return t->n - 1;
}

static int cmp_name(const void *a, const void *b, void *text)
{
	const char **t = text;

	return strverscmp(t[*(const uint32_t *)a], t[*(const uint32_t *)b]);
}

/*
 * rank[id]: the name's place in natural order, names strverscmp holds equal
 * sharing one, so that comparing ranks gives strverscmp's sign.
 */
static uint32_t *rank_names(const struct names *t)
{
	uint32_t *by = malloc(((size_t)t->n + 1) * sizeof(*by));
	uint32_t *rank = malloc(((size_t)t->n + 1) * sizeof(*rank));

	if (!by || !rank) {
		free(by);
		free(rank);
		return NULL;
	}
	for (uint32_t i = 0; i < t->n; i++)
		by[i] = i;
	qsort_r(by, t->n, sizeof(*by), cmp_name, t->text);
	for (uint32_t i = 0, r = 0; i < t->n; i++) {
		if (i && strverscmp(t->text[by[i - 1]], t->text[by[i]]))
			r++;
		rank[by[i]] = r;
	}
	free(by);
	return rank;
}

static int cmp_num(long long a, long long b)
{
	return (a > b) - (a < b);
}

static int cmp_key(const void *pa, const void *pb, void *keys)
{
	const struct hop_key *a = &((const struct hop_key *)keys)[*(const size_t *)pa];
	const struct hop_key *b = &((const struct hop_key *)keys)[*(const size_t *)pb];

	for (size_t i = 0; i < 4; i++) {
		if (a->name[i] != b->name[i])
			return a->name[i] < b->name[i] ? -1 : 1;
	}
	if (a->src_rank != b->src_rank || a->dst_rank != b->dst_rank)
		return a->src_rank != b->src_rank ? cmp_num(a->src_rank, b->src_rank)
						  : cmp_num(a->dst_rank, b->dst_rank);
	return (a->comm_hash > b->comm_hash) - (a->comm_hash < b->comm_hash);
}

/* Each hop's names as ids, and how many distinct node names there are. */
static void intern_hops(struct names *t, const struct report_hop *hops, size_t nhops,
			struct hop_key *keys, size_t *nodes)
{
	for (size_t i = 0; i < nhops; i++) {
		const struct report_hop_key *k = &hops[i].key;
		struct hop_key *o = &keys[i];

		o->name[0] = intern(t, k->src_node);
		o->name[2] = intern(t, k->dst_node);
		o->src_rank = hops[i].src_rank;
		o->dst_rank = hops[i].dst_rank;
		o->comm_hash = k->comm_hash;
	}
	*nodes = t->n; /* the node names come first: the devices' are numbered after them */
	for (size_t i = 0; i < nhops; i++) {
		keys[i].name[1] = intern(t, hops[i].key.src_dev);
		keys[i].name[3] = intern(t, hops[i].key.dst_dev);
	}
}

int report_hop_order(const struct report_hop *hops, size_t nhops, size_t *order, size_t *nodes)
{
	struct names t = { NULL, 0, NULL, 16 };
	struct hop_key *keys = malloc((nhops + 1) * sizeof(*keys));
	uint32_t *rank = NULL;
	int ok;

	while (t.nslots < 8 * nhops) /* 4 names a hop, at most half full */
		t.nslots *= 2;
	t.slots = calloc(t.nslots, sizeof(*t.slots));
	t.text = malloc((4 * nhops + 1) * sizeof(*t.text));
	if (keys && t.slots && t.text) {
		intern_hops(&t, hops, nhops, keys, nodes);
		free(t.slots);
		t.slots = NULL;
		rank = rank_names(&t);
	}
	if (rank) {
		for (size_t i = 0; i < nhops; i++) {
			for (size_t k = 0; k < 4; k++)
				keys[i].name[k] = rank[keys[i].name[k]];
			order[i] = i;
		}
		qsort_r(order, nhops, sizeof(*order), cmp_key, keys);
	}
	ok = rank != NULL;
	free(rank);
	free(t.slots);
	free(t.text);
	free(keys);
	return ok ? 0 : fl_fail(FL_ERR_SYSTEM, "out of memory ordering %zu hops", nhops);
}
