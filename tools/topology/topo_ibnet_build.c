/*
 * The nodes and cabled ports ibnetdiscover listed, as a topology: HCAs
 * grouped into hosts by their descriptions ("HOST DEVICE"), switches with an
 * HCA behind them as leaves, the others as spines, and each leaf's cables to
 * each spine counted into one uplink.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "topo_ibnet.h"

static struct ib_node *by_guid(struct ib *p, uint64_t guid)
{
	for (size_t i = 0; i < p->n; i++)
		if (p->nodes[i].guid == guid)
			return &p->nodes[i];
	return NULL;
}

/* "4xNDR" as the emulated NIC's port spec "ib:4x:ndr"; "" when not one. */
static void port_spec(const char *speed, char *out, size_t n)
{
	char w[8] = "", sp[8] = "";

	out[0] = '\0';
	if (sscanf(speed, "%7[0-9x]%7[A-Za-z0-9]", w, sp) == 2) {
		for (char *c = sp; *c; c++)
			*c = (char)tolower((unsigned char)*c);
		snprintf(out, n, "ib:%s:%s", w, sp);
		if (ft_port_mbps(out) <= 0)
			out[0] = '\0';
	}
}

/* An HCA's host and device from its description: "node3 mlx5_0" (a lone word: device HCA-1). */
static void host_dev(const char *desc, char *host, size_t hn, char *dev, size_t dn)
{
	size_t h = strcspn(desc, " \t");
	const char *d = desc + h + strspn(desc + h, " \t");

	snprintf(host, hn, "%.*s", (int)(h < hn ? h : hn - 1), desc);
	snprintf(dev, dn, "%.*s", (int)strcspn(d, " \t"), *d ? d : "HCA-1");
}

static void mark_leaves(struct ib *p)
{
	for (size_t i = 0; i < p->nl; i++) {
		struct ib_node *a = by_guid(p, p->links[i].a), *b = by_guid(p, p->links[i].b);

		if (a && b && a->sw && !b->sw)
			a->leaf = true;
		if (a && b && !a->sw && b->sw)
			b->leaf = true;
	}
}

/* Switches under names of their own: the description, made unique by the GUID. */
static int add_switches(struct ib *p, struct ft_topo *t, bool leaves)
{
	char name[FT_NAME_LEN];

	for (size_t i = 0; i < p->n; i++) {
		struct ib_node *nd = &p->nodes[i];

		if (!nd->sw || nd->leaf != leaves)
			continue;
		snprintf(name, sizeof(name), "%s", nd->desc[0] ? nd->desc : "switch");
		if (ft_find_switch(t, name) >= 0)
			snprintf(name, sizeof(name), "%.40s (%016llx)", nd->desc,
				 (unsigned long long)nd->guid);
		nd->index = ft_add_switch(t, name, leaves ? FT_LEAF : FT_SPINE);
		if (nd->index < 0)
			return ibnet_fail(p, 0, "out of memory");
		t->sw[nd->index].guid = nd->guid;
		t->sw[nd->index].lid = nd->lid;
	}
	return 0;
}

/* The HCAs of one host, in the order they were listed, after those of the hosts before. */
static int add_host(struct ib *p, struct ft_topo *t, const char *host)
{
	char h[FT_NAME_LEN], dev[FT_DEV_LEN];
	int node = ft_add_node(t, host);

	if (node < 0)
		return ibnet_fail(p, 0, "out of memory");
	for (size_t i = 0; i < p->n; i++) {
		struct ib_node *nd = &p->nodes[i];

		if (nd->sw || nd->index >= 0)
			continue;
		host_dev(nd->desc, h, sizeof(h), dev, sizeof(dev));
		if (strcmp(h, host))
			continue;
		if (ft_find_nic(t, host, dev) >= 0)
			return ibnet_fail(p, 0, "host %s has two HCAs described as %s", host, dev);
		nd->index = ft_add_nic(t, node, dev, "");
		if (nd->index < 0)
			return ibnet_fail(p, 0, "out of memory");
		t->nics[nd->index].guid = nd->guid;
	}
	return 0;
}

static int add_hosts(struct ib *p, struct ft_topo *t)
{
	char host[FT_NAME_LEN], dev[FT_DEV_LEN];

	for (size_t i = 0; i < p->n; i++)
		if (!p->nodes[i].sw && p->nodes[i].index < 0) {
			host_dev(p->nodes[i].desc, host, sizeof(host), dev, sizeof(dev));
			if (add_host(p, t, host))
				return -1;
		}
	return 0;
}

/* A cable between an HCA and a leaf: where the NIC hangs; its LID and rate. */
static void cable_nic(struct ft_topo *t, const struct ib_link *l, struct ib_node *ca,
		      const struct ib_node *sw, int sw_port)
{
	struct ft_nic *c = &t->nics[ca->index];

	c->leaf = sw->index;
	c->leaf_port = sw_port;
	if (l->a == ca->guid && l->lid)
		c->lid = l->lid;
	if (!c->port[0] && l->speed[0])
		port_spec(l->speed, c->port, sizeof(c->port));
}

/* A cable between a leaf and a spine: one more in their uplink. */
static int cable_uplink(struct ib *p, struct ft_topo *t, const struct ib_node *leaf, int lp,
			const struct ib_node *spine, int sp)
{
	int u = ft_find_uplink(t, leaf->index, spine->index);

	if (u < 0) {
		u = ft_add_uplink(t, leaf->index, spine->index, 0);
		if (u < 0)
			return ibnet_fail(p, 0, "out of memory");
		t->up[u].leaf_port = lp;
		t->up[u].spine_port = sp;
	}
	if (lp < t->up[u].leaf_port || t->up[u].cables == 0) {
		t->up[u].leaf_port = lp;
		t->up[u].spine_port = sp;
	}
	if (t->up[u].cables < FT_MAX_CABLES)
		t->up[u].cables++;
	return 0;
}

static int add_cables(struct ib *p, struct ft_topo *t)
{
	for (size_t i = 0; i < p->nl; i++) {
		const struct ib_link *l = &p->links[i];
		struct ib_node *a = by_guid(p, l->a), *b = by_guid(p, l->b);

		if (!a || !b)
			return ibnet_fail(p, 0, "a port is cabled to %016llx, which has no block of "
					  "its own", (unsigned long long)(a ? l->b : l->a));
		if (!a->sw && b->sw)
			cable_nic(t, l, a, b, l->bp);
		else if (a->sw && !b->sw)
			cable_nic(t, l, b, a, l->ap);
		/* each switch-to-switch cable is listed from both ends: count it from the leaf's */
		else if (a->sw && b->sw && a->leaf && !b->leaf &&
			 cable_uplink(p, t, a, l->ap, b, l->bp))
			return -1;
	}
	return 0;
}

int ibnet_build(struct ib *p, struct ft_topo *t)
{
	snprintf(t->layout, sizeof(t->layout), "ibnetdiscover");
	mark_leaves(p);
	if (add_switches(p, t, true) || add_switches(p, t, false) || add_hosts(p, t) ||
	    add_cables(p, t))
		return -1;
	return ft_check(t, p->why, p->len);
}
