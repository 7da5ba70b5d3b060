/*
 * The commands that would confirm a shared element on the machines, with the
 * names, LIDs and ports the topology gives. InfiniBand (infiniband-diags):
 * `ibtracert` between a slow hop's ends names the switches and ports its
 * route takes; `perfquery -x` reads a port's counters (errors, discards,
 * PortXmitWait) and `ibportstate` its trained width and speed. Ethernet: the
 * switch's own counters for its port (NOS-specific; `ethtool -S` where the
 * NOS is Linux, as Cumulus and SONiC are) and `lldpctl` from the host.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "topology.h"

struct out {
	char *buf;
	size_t len, used;
	int lines;
};

static void line(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void line(struct out *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (o->used >= o->len)
		return;
	va_start(ap, fmt);
	n = vsnprintf(o->buf + o->used, o->len - o->used, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n + 1 >= o->len - o->used) {
		o->buf[o->used] = '\0';
		o->used = o->len;
		return;
	}
	o->used += (size_t)n;
	o->buf[o->used++] = '\n';
	o->buf[o->used] = '\0';
	o->lines++;
}

/* A switch as infiniband-diags' commands take it: its LID, else -G and its GUID. */
static void ib_addr(const struct ft_switch *sw, char *buf, size_t n)
{
	if (sw->lid)
		snprintf(buf, n, "%d", sw->lid);
	else if (sw->guid)
		snprintf(buf, n, "-G 0x%016" PRIx64, sw->guid);
	else
		snprintf(buf, n, "<%.32s's LID>", sw->name);
}

static void ib_port(struct out *o, const struct ft_switch *sw, int port, const char *what)
{
	char a[64];

	ib_addr(sw, a, sizeof(a));
	line(o, "perfquery -x %s %d   # %s port %d (%s): errors, discards, PortXmitWait", a, port,
	     sw->name, port, what);
	line(o, "ibportstate %s %d query   # its trained width and speed", a, port);
}

static void ib_uplink(struct out *o, const struct ft_topo *t, const struct ft_uplink *u)
{
	char a[64], b[64];

	ib_addr(&t->sw[u->leaf], a, sizeof(a));
	ib_addr(&t->sw[u->spine], b, sizeof(b));
	for (int c = 0; c < u->cables && c < 4; c++)
		line(o, "perfquery -x %s %d; perfquery -x %s %d   # cable %s:%d - %s:%d", a,
		     u->leaf_port + c, b, u->spine_port + c, t->sw[u->leaf].name, u->leaf_port + c,
		     t->sw[u->spine].name, u->spine_port + c);
}

/* The route of the slow hop, between its NICs' GUIDs. */
static void ib_route(struct out *o, const struct ft_topo *t, const struct fl_hop_figures *h)
{
	int a = topo_nic_of(t, h->src_node, h->src_dev), b = topo_nic_of(t, h->dst_node, h->dst_dev);

	if (a < 0 || b < 0)
		return;
	if (t->nics[a].guid && t->nics[b].guid)
		line(o, "ibtracert -G 0x%016" PRIx64 " 0x%016" PRIx64 "   # the route of %s/%s -> "
		     "%s/%s: which switches and ports it crosses", t->nics[a].guid, t->nics[b].guid,
		     h->src_node, h->src_dev, h->dst_node, h->dst_dev);
	else
		line(o, "ibtracert <LID of %s/%s> <LID of %s/%s>   # the route of that hop",
		     h->src_node, h->src_dev, h->dst_node, h->dst_dev);
}

/* The leaf a hop end hangs off, -1 unknown. */
static int leaf_of(const struct ft_topo *t, const char *node, const char *dev)
{
	int c = topo_nic_of(t, node, dev);

	return c < 0 ? -1 : t->nics[c].leaf;
}

/*
 * A spine's ports towards the traced hop's two leaves: the hop took one of
 * their cables (which one, the connection's hash decided), so those are the
 * ports whose counters tell. Two cables of each at most: the rest alike.
 */
static void ib_spine_ports(struct out *o, const struct ft_topo *t, int spine,
			   const struct fl_hop_figures *h)
{
	int la = leaf_of(t, h->src_node, h->src_dev), lb = leaf_of(t, h->dst_node, h->dst_dev);
	char a[64];

	ib_addr(&t->sw[spine], a, sizeof(a));
	for (int u = 0; u < t->nup; u++) {
		const struct ft_uplink *up = &t->up[u];

		if (up->spine != spine || (up->leaf != la && up->leaf != lb) || !up->spine_port)
			continue;
		for (int c = 0; c < up->cables && c < 2; c++)
			line(o, "perfquery -x %s %d   # %s port %d: cable %d of %d to %s, the traced "
			     "hop's way %s if ECMP put it there", a, up->spine_port + c,
			     t->sw[spine].name, up->spine_port + c, c + 1, up->cables,
			     t->sw[up->leaf].name, up->leaf == la ? "up" : "down");
	}
}

static void ib_commands(struct out *o, const struct ft_topo *t,
			const struct fl_shared_element *el, const struct fl_hop_figures *route)
{
	int s = el->sw[0] ? ft_find_switch(t, el->sw) : -1;
	char a[64];

	if (route)
		ib_route(o, t, route);
	switch (el->kind) {
	case FL_ELEMENT_LEAF_PORT:
		if (s >= 0)
			ib_port(o, &t->sw[s], el->port, "the NIC's cable");
		break;
	case FL_ELEMENT_UPLINK:
	case FL_ELEMENT_LEAF_UPLINKS:
		for (int u = 0; u < t->nup; u++)
			if (s >= 0 && t->up[u].leaf == s &&
			    (el->kind == FL_ELEMENT_LEAF_UPLINKS || t->up[u].leaf_port == el->port))
				ib_uplink(o, t, &t->up[u]);
		break;
	default:
		for (int i = 0; i < t->nsw; i++) {
			bool spine = el->kind == FL_ELEMENT_SPINES && t->sw[i].role == FT_SPINE;

			if (i != s && !spine)
				continue;
			ib_addr(&t->sw[i], a, sizeof(a));
			line(o, "perfquery -x -a %s   # %s, every port's counters summed; then port "
			     "by port where they rise", a, t->sw[i].name);
			if (route && t->sw[i].role == FT_SPINE)
				ib_spine_ports(o, t, i, route);
		}
	}
}

static void eth_commands(struct out *o, const struct ft_topo *t,
			 const struct fl_shared_element *el, const struct fl_hop_figures *h)
{
	int c = topo_nic_of(t, h->src_node, h->src_dev);

	if (el->kind == FL_ELEMENT_LEAF_PORT && el->sw[0]) {
		for (int i = 0; i < t->nnics; i++)
			if (t->nics[i].leaf >= 0 && !strcmp(t->sw[t->nics[i].leaf].name, el->sw) &&
			    t->nics[i].leaf_port == el->port)
				c = i;
		line(o, "on %s: ethtool -S %s   # its port's counters (pause frames, drops, "
		     "errors), on a Linux NOS such as Cumulus or SONiC", el->sw,
		     c >= 0 && t->nics[c].port_name[0] ? t->nics[c].port_name : "<port>");
	} else if (el->sw[0]) {
		line(o, "on %s: its ports' counters (ethtool -S on each, or the NOS's \"show "
		     "interfaces counters\"): pause frames, drops, errors", el->sw);
	} else {
		line(o, "on each spine: its ports' counters towards the leaves (pause frames, "
		     "drops, ECN marks): LLDP does not name the spines");
	}
	if (c >= 0)
		line(o, "lldpctl %s   # on %s: the switch and port across", t->nics[c].name,
		     t->nodes[t->nics[c].node].name);
}

int topo_confirm_route(const struct ft_topo *t, const struct fl_hop_elements *e,
		       const struct fl_shared_element *el, const struct fl_hop_figures *route,
		       bool trace, char *buf, size_t len)
{
	struct out o = { .buf = buf, .len = len };

	if (len)
		buf[0] = '\0';
	if (!el->count)
		return 0;
	if (e->infiniband)
		ib_commands(&o, t, el, trace ? route : NULL);
	else
		eth_commands(&o, t, el, route);
	return o.lines;
}

int topo_confirm_commands(const struct ft_topo *t, const struct fl_hop_elements *e,
			  const struct fl_shared_element *el, const struct fl_hop_figures *hops,
			  char *buf, size_t len)
{
	if (len)
		buf[0] = '\0';
	if (!el->count)
		return 0;
	return topo_confirm_route(t, e, el, &hops[e->hops[el->first]], true, buf, len);
}
