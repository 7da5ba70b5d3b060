/*
 * Which shared elements a report's hops cross (plugin/verdict/verdict_topology.h).
 * A hop from NIC a to NIC b crosses a's leaf port and b's, a's leaf and b's;
 * between two leaves also both leaves' uplinks, the spine layer, and one of
 * the spines both leaves are cabled to with its two uplinks, which one the
 * connection's hash decides (ECMP) and the reports do not say: each of those
 * spines is crossed by the hop as far as they can tell. Elements whose hops
 * are the same are one, named by the most specific of them, or by the layer
 * above where several alike tie (two spines, both crossed by every hop
 * between the leaves, are "the spine layer (spine0, spine1)").
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topology.h"

struct ids {
	int base[FL_ELEMENT_KINDS];
	int total;
};

static void layout_ids(const struct ft_topo *t, struct ids *x)
{
	int n[FL_ELEMENT_KINDS] = { [FL_ELEMENT_LEAF_PORT] = t->nnics, [FL_ELEMENT_UPLINK] = t->nup,
				    [FL_ELEMENT_LEAF_UPLINKS] = t->nsw, [FL_ELEMENT_SPINE] = t->nsw,
				    [FL_ELEMENT_SPINES] = 1, [FL_ELEMENT_LEAF] = t->nsw };

	x->total = 0;
	for (int k = 0; k < FL_ELEMENT_KINDS; k++) {
		x->base[k] = x->total;
		x->total += n[k];
	}
}

int topo_nic_of(const struct ft_topo *t, const char *node, const char *dev)
{
	int c = ft_find_nic(t, node, dev), n = ft_find_node(t, node);

	if (c < 0 && n >= 0 && t->nodes[n].nnics == 1) /* lldp names netdevs, reports RDMA devices */
		c = t->nodes[n].first_nic;
	return c;
}

/* The elements hop h crosses into ids[]; their number. *ecmp: it may take several spines. */
static int crossed(const struct ft_topo *t, const struct ids *x, int a, int b, int *ids,
		   bool *ecmp)
{
	int la = t->nics[a].leaf, lb = t->nics[b].leaf, n = 0, spines = 0;

	if (la >= 0) /* a NIC cabled to no known switch has no leaf port to name */
		ids[n++] = x->base[FL_ELEMENT_LEAF_PORT] + a;
	if (lb >= 0)
		ids[n++] = x->base[FL_ELEMENT_LEAF_PORT] + b;
	if (la < 0 || lb < 0)
		return n;
	ids[n++] = x->base[FL_ELEMENT_LEAF] + la;
	if (la == lb)
		return n;
	ids[n++] = x->base[FL_ELEMENT_LEAF] + lb;
	ids[n++] = x->base[FL_ELEMENT_LEAF_UPLINKS] + la;
	ids[n++] = x->base[FL_ELEMENT_LEAF_UPLINKS] + lb;
	ids[n++] = x->base[FL_ELEMENT_SPINES];
	for (int u = 0; u < t->nup; u++) {
		int v = t->up[u].leaf == la ? ft_find_uplink(t, lb, t->up[u].spine) : -1;

		if (v < 0)
			continue;
		ids[n++] = x->base[FL_ELEMENT_SPINE] + t->up[u].spine;
		ids[n++] = x->base[FL_ELEMENT_UPLINK] + u;
		ids[n++] = x->base[FL_ELEMENT_UPLINK] + v;
		spines++;
	}
	*ecmp = spines > 1;
	return n;
}

struct pass {
	const struct ft_topo *t;
	const struct fl_hop_figures *hops;
	size_t n;
	struct ids x;
	int *nic;          /* 2 per hop: its ends' NICs, -1 for a hop within a node */
	size_t *count;     /* per element id */
	size_t *start;
	bool *uncertain;   /* an ECMP hop is among its hops */
	size_t *members;
};

static int match_ends(struct pass *p, char *why, size_t len)
{
	for (size_t i = 0; i < p->n; i++) {
		const struct fl_hop_figures *h = &p->hops[i];
		int a = topo_nic_of(p->t, h->src_node, h->src_dev);
		int b = topo_nic_of(p->t, h->dst_node, h->dst_dev);

		if (a < 0 || b < 0) {
			const char *node = a < 0 ? h->src_node : h->dst_node;

			snprintf(why, len, "hop %s/%s -> %s/%s: the topology (%s) has no %s %s%s%s",
				 h->src_node, h->src_dev, h->dst_node, h->dst_dev, p->t->layout,
				 ft_find_node(p->t, node) < 0 ? "node" : "NIC", node,
				 ft_find_node(p->t, node) < 0 ? "" : "/",
				 ft_find_node(p->t, node) < 0 ? "" : (a < 0 ? h->src_dev : h->dst_dev));
			return -1;
		}
		p->nic[2 * i] = p->t->nics[a].node == p->t->nics[b].node ? -1 : a;
		p->nic[2 * i + 1] = b;
	}
	return 0;
}

/* Counts (fill false) or lists (fill true) every hop under every element it crosses. */
static void each_hop(struct pass *p, bool fill)
{
	int ids[8 + 3 * 256];

	for (size_t i = 0; i < p->n; i++) {
		bool ecmp = false;
		int m;

		if (p->nic[2 * i] < 0)
			continue;
		m = crossed(p->t, &p->x, p->nic[2 * i], p->nic[2 * i + 1], ids, &ecmp);
		for (int k = 0; k < m; k++) {
			if (fill)
				p->members[p->start[ids[k]] + p->count[ids[k]]] = i;
			p->count[ids[k]]++;
			p->uncertain[ids[k]] |= ecmp && ids[k] >= p->x.base[FL_ELEMENT_UPLINK] &&
						ids[k] < p->x.base[FL_ELEMENT_LEAF_UPLINKS];
			p->uncertain[ids[k]] |= ecmp && ids[k] >= p->x.base[FL_ELEMENT_SPINE] &&
						ids[k] < p->x.base[FL_ELEMENT_SPINES];
		}
	}
}

static enum fl_element_kind kind_of(const struct ids *x, int id, int *index)
{
	int k = FL_ELEMENT_KINDS - 1;

	*index = 0;
	while (k > 0 && id < x->base[k])
		k--;
	*index = id - x->base[k];
	return (enum fl_element_kind)k;
}

static void describe(const struct ft_topo *t, enum fl_element_kind k, int i,
		     struct fl_shared_element *e)
{
	const struct ft_switch *sw = NULL;

	switch (k) {
	case FL_ELEMENT_LEAF_PORT: {
		const struct ft_nic *c = &t->nics[i];

		sw = c->leaf >= 0 ? &t->sw[c->leaf] : NULL;
		e->port = c->leaf_port;
		snprintf(e->name, sizeof(e->name), "%.40s port %.24s%s%d (%.24s/%.16s)",
			 sw ? sw->name : "?", c->port_name[0] ? c->port_name : "",
			 c->port_name[0] ? " = " : "", c->leaf_port, t->nodes[c->node].name, c->name);
		break;
	}
	case FL_ELEMENT_UPLINK:
		sw = &t->sw[t->up[i].leaf];
		e->port = t->up[i].leaf_port;
		e->cables = t->up[i].cables;
		snprintf(e->name, sizeof(e->name), "%s-%s", sw->name, t->sw[t->up[i].spine].name);
		break;
	case FL_ELEMENT_LEAF_UPLINKS:
		sw = &t->sw[i];
		snprintf(e->name, sizeof(e->name), "%s's uplinks", sw->name);
		break;
	case FL_ELEMENT_SPINES:
		snprintf(e->name, sizeof(e->name), "the spine layer");
		break;
	default:
		sw = &t->sw[i];
		snprintf(e->name, sizeof(e->name), "%s", sw->name);
	}
	e->kind = k;
	if (sw) {
		snprintf(e->sw, sizeof(e->sw), "%.*s", (int)sizeof(e->sw) - 1, sw->name);
		e->lid = sw->lid;
		e->guid = sw->guid;
	}
}

static int collect(struct pass *p, struct fl_hop_elements *out)
{
	size_t total = 0, nel = 0;

	for (int id = 0; id < p->x.total; id++) {
		p->start[id] = total;
		total += p->count[id];
		nel += p->count[id] >= 2;
		p->count[id] = 0;
	}
	p->members = malloc((total ? total : 1) * sizeof(*p->members));
	out->el = calloc(nel ? nel : 1, sizeof(*out->el));
	out->hops = malloc((total ? total : 1) * sizeof(*out->hops));
	if (!p->members || !out->el || !out->hops)
		return -1;
	each_hop(p, true);
	for (int id = 0; id < p->x.total; id++) {
		struct fl_shared_element *e;
		enum fl_element_kind kind;
		int index = 0;

		if (p->count[id] < 2)
			continue;
		e = &out->el[out->nel++];
		kind = kind_of(&p->x, id, &index); /* before its index is read */
		describe(p->t, kind, index, e);
		e->certain = !p->uncertain[id];
		e->first = out->nhops;
		e->count = p->count[id];
		memcpy(out->hops + out->nhops, p->members + p->start[id],
		       p->count[id] * sizeof(*out->hops));
		out->nhops += p->count[id];
	}
	topo_merge_equal(out);
	return 0;
}

int topo_hop_elements(const struct ft_topo *t, const struct fl_hop_figures *hops, size_t n,
		      struct fl_hop_elements *out, char *why, size_t len)
{
	struct pass p = { .t = t, .hops = hops, .n = n };
	int rc = -1;

	memset(out, 0, sizeof(*out));
	snprintf(out->layout, sizeof(out->layout), "%s", t->layout);
	out->infiniband = !strcmp(t->layout, "ibnetdiscover") ||
			  (t->nnics && t->nics[0].port[0] && !ft_port_is_eth(t->nics[0].port) &&
			   strcmp(t->layout, "lldp"));
	layout_ids(t, &p.x);
	p.nic = malloc((n ? 2 * n : 1) * sizeof(*p.nic));
	p.count = calloc((size_t)p.x.total + 1, sizeof(*p.count));
	p.start = calloc((size_t)p.x.total + 1, sizeof(*p.start));
	p.uncertain = calloc((size_t)p.x.total + 1, sizeof(*p.uncertain));
	if (!p.nic || !p.count || !p.start || !p.uncertain)
		snprintf(why, len, "out of memory");
	else if (!match_ends(&p, why, len)) {
		each_hop(&p, false);
		rc = collect(&p, out);
		if (rc)
			snprintf(why, len, "out of memory");
	}
	free(p.nic);
	free(p.count);
	free(p.start);
	free(p.uncertain);
	free(p.members);
	if (rc)
		fl_hop_elements_free(out);
	return rc;
}

void fl_hop_elements_free(struct fl_hop_elements *e)
{
	free(e->el);
	free(e->hops);
	memset(e, 0, sizeof(*e));
}

const char *fl_element_kind_name(enum fl_element_kind k)
{
	static const char *const names[FL_ELEMENT_KINDS] = {
		"leaf port", "uplink", "leaf uplinks", "spine", "spine layer", "leaf",
	};

	return k < FL_ELEMENT_KINDS ? names[k] : "?";
}
