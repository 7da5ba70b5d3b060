/*
 * The layouts the lab generates over a description's nodes and NICs:
 *   flat                      no switches: every NIC reaches every other alone
 *                             (the emulation before switches);
 *   fat-tree:leaves=L,spines=S[,oversub=X][,cables=C]
 *                             nodes in order over the leaves (node i on leaf
 *                             i x L / nodes), all of a node's NICs on its leaf,
 *                             every leaf cabled to every spine;
 *   rail[:spines=S][,oversub=X][,cables=C]
 *                             rail-optimised: NIC k of every node on leaf k,
 *                             the leaves joined by S spines (1 by default).
 * oversub: the leaf's downlinks over its uplinks (1: non-blocking); cables:
 * parallel cables per leaf and spine, each at a NIC's rate (default: enough
 * for the leaf's NICs over the oversubscription).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topo.h"

struct layout {
	enum { FLAT, FAT_TREE, RAIL } kind;
	long leaves, spines, cables;
	double oversub;
};

static int fail(char *why, size_t len, const char *spec, const char *what)
{
	snprintf(why, len, "topology \"%s\": %s", spec, what);
	return -1;
}

static int number(const char *v, size_t n, long lo, long hi, long *out)
{
	char buf[32], *end;

	if (n == 0 || n >= sizeof(buf))
		return -1;
	memcpy(buf, v, n);
	buf[n] = '\0';
	*out = strtol(buf, &end, 10);
	return *end || *out < lo || *out > hi ? -1 : 0;
}

static int param(struct layout *l, const char *key, size_t klen, const char *v, size_t vlen)
{
	char buf[32], *end;

#define KEY(k) (klen == strlen(k) && !strncmp(key, k, klen))
	if (KEY("leaves") && l->kind == FAT_TREE)
		return number(v, vlen, 1, 256, &l->leaves);
	if (KEY("spines"))
		return number(v, vlen, 1, 256, &l->spines);
	if (KEY("cables"))
		return number(v, vlen, 1, FT_MAX_CABLES, &l->cables);
	if (KEY("oversub")) {
		if (vlen == 0 || vlen >= sizeof(buf))
			return -1;
		memcpy(buf, v, vlen);
		buf[vlen] = '\0';
		l->oversub = strtod(buf, &end);
		return *end || !(l->oversub >= 1.0 && l->oversub <= 64.0) ? -1 : 0;
	}
#undef KEY
	return -1;
}

static int parse(const char *spec, struct layout *l, char *why, size_t len)
{
	const char *p;
	size_t klen;

	memset(l, 0, sizeof(*l));
	l->oversub = 1.0;
	klen = strcspn(spec, ":");
	if (klen == 4 && !strncmp(spec, "flat", 4))
		l->kind = FLAT;
	else if (klen == 8 && !strncmp(spec, "fat-tree", 8))
		l->kind = FAT_TREE;
	else if (klen == 4 && !strncmp(spec, "rail", 4))
		l->kind = RAIL;
	else
		return fail(why, len, spec, "expected flat, fat-tree:leaves=L,spines=S, rail[:spines=S] "
			    "or a file");
	for (p = spec[klen] ? spec + klen + 1 : spec + klen; *p;) {
		size_t n = strcspn(p, ","), k;
		const char *eq = memchr(p, '=', n);

		if (!eq || l->kind == FLAT)
			return fail(why, len, spec, "expected KEY=VALUE after the colon: leaves=L, "
				    "spines=S, oversub=X (1-64) or cables=C (1-64)");
		k = (size_t)(eq - p);
		if (param(l, p, k, eq + 1, n - k - 1)) {
			char what[96];

			snprintf(what, sizeof(what), "%.*s: expected %s", (int)(k < 16 ? k : 16), p,
				 l->kind == FAT_TREE ? "leaves=1-256, spines=1-256, oversub=1-64, "
				 "cables=1-64" : "spines=1-256, oversub=1-64, cables=1-64");
			return fail(why, len, spec, what);
		}
		p += n + (p[n] == ',');
	}
	if (l->kind == FAT_TREE && (!l->leaves || !l->spines))
		return fail(why, len, spec, "fat-tree needs both leaves=L and spines=S");
	return 0;
}

bool ft_is_layout_spec(const char *spec)
{
	size_t k = strcspn(spec, ":");

	return (k == 4 && (!strncmp(spec, "flat", 4) || !strncmp(spec, "rail", 4))) ||
	       (k == 8 && !strncmp(spec, "fat-tree", 8));
}

static int add_switches(struct ft_topo *t, const char *prefix, enum ft_role role, long n)
{
	char name[FT_NAME_LEN];

	for (long i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "%s%ld", prefix, i);
		if (ft_add_switch(t, name, role) < 0)
			return -1;
	}
	return 0;
}

static int wire(struct ft_topo *t, const struct layout *l, int leaves)
{
	int first_spine = t->nsw;

	if (add_switches(t, "spine", FT_SPINE, l->spines))
		return -1;
	for (int leaf = 0; leaf < leaves; leaf++)
		for (int s = 0; s < l->spines; s++)
			if (ft_add_uplink(t, leaf, first_spine + s, (int)l->cables) < 0)
				return -1;
	return 0;
}

static int max_nics(const struct ft_topo *t)
{
	int m = 0;

	for (int i = 0; i < t->nnodes; i++)
		m = t->nodes[i].nnics > m ? t->nodes[i].nnics : m;
	return m;
}

int ft_build_layout(struct ft_topo *t, const char *spec, char *why, size_t len)
{
	struct layout l;
	int leaves;

	if (parse(spec, &l, why, len))
		return -1;
	if (t->nsw)
		return fail(why, len, spec, "the description already has switches");
	snprintf(t->layout, sizeof(t->layout), "%s", spec);
	t->oversubscription = l.oversub;
	if (l.kind == FLAT)
		return 0;
	leaves = l.kind == FAT_TREE ? (int)l.leaves : max_nics(t);
	if (l.kind == FAT_TREE && leaves > t->nnodes)
		return fail(why, len, spec, "more leaves than nodes");
	if (l.kind == RAIL && !l.spines)
		l.spines = leaves > 1 ? 1 : 0;
	if (add_switches(t, "leaf", FT_LEAF, leaves) || wire(t, &l, leaves))
		return fail(why, len, spec, "out of memory");
	for (int n = 0; n < t->nnodes; n++)
		for (int k = 0; k < t->nodes[n].nnics; k++)
			t->nics[t->nodes[n].first_nic + k].leaf =
				l.kind == RAIL ? k : (int)((long)n * leaves / t->nnodes);
	ft_complete(t);
	return 0;
}
