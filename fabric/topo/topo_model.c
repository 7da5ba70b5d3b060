/* The description's tables: growing them, finding by name, filling defaults, checking. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topo.h"

void ft_init(struct ft_topo *t)
{
	memset(t, 0, sizeof(*t));
	snprintf(t->layout, sizeof(t->layout), "flat");
	t->oversubscription = 1.0;
	t->rate_div = 1;
	ft_gpus_default(&t->gpus);
}

void ft_free(struct ft_topo *t)
{
	free(t->nodes);
	free(t->nics);
	free(t->sw);
	free(t->up);
	ft_init(t);
}

/* Room for one more of n items of size sz in *v; 0 or -1. */
static int grow(void **v, int n, size_t sz)
{
	void *p;

	if (n & (n - 1)) /* the capacity is n rounded up to a power of two: full only there */
		return 0;
	p = realloc(*v, (size_t)(n ? 2 * n : 1) * sz);
	if (!p)
		return -1;
	*v = p;
	return 0;
}

int ft_add_node(struct ft_topo *t, const char *name)
{
	struct ft_node *n;

	if (grow((void **)&t->nodes, t->nnodes, sizeof(*t->nodes)))
		return -1;
	n = &t->nodes[t->nnodes];
	memset(n, 0, sizeof(*n));
	snprintf(n->name, sizeof(n->name), "%s", name);
	n->first_nic = t->nnics;
	return t->nnodes++;
}

/* NICs of a node are contiguous: a node's NICs are added before the next node's. */
int ft_add_nic(struct ft_topo *t, int node, const char *name, const char *port)
{
	struct ft_nic *c;

	if (node != t->nnodes - 1 || grow((void **)&t->nics, t->nnics, sizeof(*t->nics)))
		return -1;
	c = &t->nics[t->nnics];
	memset(c, 0, sizeof(*c));
	snprintf(c->name, sizeof(c->name), "%s", name);
	snprintf(c->port, sizeof(c->port), "%s", port ? port : "");
	c->node = node;
	c->leaf = -1;
	t->nodes[node].nnics++;
	return t->nnics++;
}

int ft_add_switch(struct ft_topo *t, const char *name, enum ft_role role)
{
	struct ft_switch *s;

	if (grow((void **)&t->sw, t->nsw, sizeof(*t->sw)))
		return -1;
	s = &t->sw[t->nsw];
	memset(s, 0, sizeof(*s));
	snprintf(s->name, sizeof(s->name), "%s", name);
	s->role = role;
	return t->nsw++;
}

int ft_add_uplink(struct ft_topo *t, int leaf, int spine, int cables)
{
	struct ft_uplink *u;

	if (grow((void **)&t->up, t->nup, sizeof(*t->up)))
		return -1;
	u = &t->up[t->nup];
	memset(u, 0, sizeof(*u));
	u->leaf = leaf;
	u->spine = spine;
	u->cables = cables;
	return t->nup++;
}

int ft_find_node(const struct ft_topo *t, const char *name)
{
	for (int i = 0; i < t->nnodes; i++)
		if (!strcmp(t->nodes[i].name, name))
			return i;
	return -1;
}

int ft_find_switch(const struct ft_topo *t, const char *name)
{
	for (int i = 0; i < t->nsw; i++)
		if (!strcmp(t->sw[i].name, name))
			return i;
	return -1;
}

int ft_find_nic(const struct ft_topo *t, const char *node, const char *dev)
{
	int n = ft_find_node(t, node);

	if (n < 0)
		return -1;
	for (int i = 0; i < t->nodes[n].nnics; i++)
		if (!strcmp(t->nics[t->nodes[n].first_nic + i].name, dev))
			return t->nodes[n].first_nic + i;
	return -1;
}

int ft_find_uplink(const struct ft_topo *t, int leaf, int spine)
{
	for (int i = 0; i < t->nup; i++)
		if (t->up[i].leaf == leaf && t->up[i].spine == spine)
			return i;
	return -1;
}

static int nics_on(const struct ft_topo *t, int leaf)
{
	int n = 0;

	for (int i = 0; i < t->nnics; i++)
		n += t->nics[i].leaf == leaf;
	return n;
}

static int spines_of(const struct ft_topo *t, int leaf)
{
	int n = 0;

	for (int i = 0; i < t->nup; i++)
		n += t->up[i].leaf == leaf;
	return n;
}

/*
 * Cables not given: enough for the leaf's NICs at their own rate, divided by
 * the oversubscription, spread over its spines (a non-blocking leaf by
 * default). Leaf ports not given: NICs first, in order, then the uplinks.
 */
void ft_complete(struct ft_topo *t)
{
	double over = t->oversubscription >= 1.0 ? t->oversubscription : 1.0;

	for (int u = 0; u < t->nup; u++) {
		struct ft_uplink *up = &t->up[u];
		int down = nics_on(t, up->leaf), spines = spines_of(t, up->leaf);
		double want = spines ? (double)down / over / spines : 0;

		if (up->cables <= 0)
			up->cables = want < 1 ? 1 : (int)(want + 0.999);
		if (up->cables > FT_MAX_CABLES)
			up->cables = FT_MAX_CABLES;
	}
	for (int s = 0; s < t->nsw; s++) {
		int port = 1;

		for (int i = 0; i < t->nnics; i++)
			if (t->nics[i].leaf == s) {
				if (!t->nics[i].leaf_port)
					t->nics[i].leaf_port = port;
				port = t->nics[i].leaf_port + 1;
			}
		for (int u = 0; u < t->nup; u++) {
			if (t->up[u].leaf == s && !t->up[u].leaf_port)
				t->up[u].leaf_port = port;
			if (t->up[u].leaf == s)
				port = t->up[u].leaf_port + t->up[u].cables;
		}
	}
	for (int s = 0; s < t->nsw; s++) {
		int port = 1;

		for (int u = 0; u < t->nup; u++)
			if (t->up[u].spine == s) {
				if (!t->up[u].spine_port)
					t->up[u].spine_port = port;
				port = t->up[u].spine_port + t->up[u].cables;
			}
	}
}

static int bad(char *why, size_t len, const char *fmt, const char *a, const char *b)
{
	snprintf(why, len, fmt, a, b);
	return -1;
}

int ft_check(const struct ft_topo *t, char *why, size_t len)
{
	for (int i = 0; i < t->nnodes; i++)
		for (int j = i + 1; j < t->nnodes; j++)
			if (!strcmp(t->nodes[i].name, t->nodes[j].name))
				return bad(why, len, "nodes: \"%s\" twice%s", t->nodes[i].name, "");
	for (int i = 0; i < t->nsw; i++)
		if (ft_find_switch(t, t->sw[i].name) != i)
			return bad(why, len, "switches: \"%s\" twice%s", t->sw[i].name, "");
	for (int i = 0; i < t->nnics; i++) {
		const struct ft_nic *c = &t->nics[i];

		if (c->leaf >= 0 && t->sw[c->leaf].role != FT_LEAF)
			return bad(why, len, "%s: its leaf %s is a spine", c->name,
				   t->sw[c->leaf].name);
		if (ft_find_nic(t, t->nodes[c->node].name, c->name) != i)
			return bad(why, len, "node %s: NIC \"%s\" twice", t->nodes[c->node].name,
				   c->name);
	}
	for (int u = 0; u < t->nup; u++) {
		const struct ft_uplink *up = &t->up[u];

		if (t->sw[up->leaf].role != FT_LEAF || t->sw[up->spine].role != FT_SPINE)
			return bad(why, len, "uplinks: %s-%s must join a leaf to a spine",
				   t->sw[up->leaf].name, t->sw[up->spine].name);
		if (ft_find_uplink(t, up->leaf, up->spine) != u)
			return bad(why, len, "uplinks: %s-%s twice", t->sw[up->leaf].name,
				   t->sw[up->spine].name);
	}
	return 0;
}
