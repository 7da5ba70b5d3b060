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

/* The route of the element's first hop, between its NICs' GUIDs. */
static void ib_route(struct out *o, const struct ft_topo *t, const struct fl_hop_elements *e,
		     const struct fl_shared_element *el, const struct fl_hop_figures *hops)
{
	const struct fl_hop_figures *h = &hops[e->hops[el->first]];
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

static void ib_commands(struct out *o, const struct ft_topo *t, const struct fl_hop_elements *e,
			const struct fl_shared_element *el, const struct fl_hop_figures *hops)
{
	int s = el->sw[0] ? ft_find_switch(t, el->sw) : -1;
	char a[64];

	ib_route(o, t, e, el, hops);
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
		}
	}
}

static void eth_commands(struct out *o, const struct ft_topo *t, const struct fl_hop_elements *e,
			 const struct fl_shared_element *el, const struct fl_hop_figures *hops)
{
	const struct fl_hop_figures *h = &hops[e->hops[el->first]];
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

int topo_confirm_commands(const struct ft_topo *t, const struct fl_hop_elements *e,
			  const struct fl_shared_element *el, const struct fl_hop_figures *hops,
			  char *buf, size_t len)
{
	struct out o = { .buf = buf, .len = len };

	if (len)
		buf[0] = '\0';
	if (!el->count)
		return 0;
	if (e->infiniband)
		ib_commands(&o, t, e, el, hops);
	else
		eth_commands(&o, t, e, el, hops);
	return o.lines;
}
