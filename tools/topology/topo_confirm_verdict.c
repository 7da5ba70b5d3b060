/*
 * The commands that name the switch and its port behind a verdict, where the
 * topology says which: the verdict's own commands check the NICs at its ends
 * (plugin/verdict/verdict_commands.c, which has no topology); these read the
 * switch's side. A switch verdict is one of the elements its hops share (by
 * name); a device's NIC hangs off one leaf port; a link crosses its two ends'
 * leaf ports (and, between leaves, a spine the route names); a rail's NICs
 * hang off one leaf in a rail-optimised fabric. Where the evidence is not
 * enough and a switch ranks next, its counters are what tells the two apart.
 */
#include <stdio.h>
#include <string.h>

#include "topology.h"

/* The leaf port NIC c hangs off, as an element of its own; 0 when it hangs off none known. */
static int leaf_port(const struct ft_topo *t, int c, struct fl_shared_element *el)
{
	memset(el, 0, sizeof(*el));
	if (c < 0 || t->nics[c].leaf < 0 || !t->nics[c].leaf_port)
		return 0;
	el->kind = FL_ELEMENT_LEAF_PORT;
	snprintf(el->sw, sizeof(el->sw), "%.*s", (int)sizeof(el->sw) - 1,
		 t->sw[t->nics[c].leaf].name);
	el->port = t->nics[c].leaf_port;
	el->count = 1;
	return 1;
}

/* The leaf every NIC named dev hangs off (a rail's, rail-optimised); 0 when they are not one. */
static int rail_leaf(const struct ft_topo *t, const char *dev, struct fl_shared_element *el)
{
	int leaf = -1;

	memset(el, 0, sizeof(*el));
	for (int c = 0; c < t->nnics; c++) {
		if (strcmp(t->nics[c].name, dev))
			continue;
		if (t->nics[c].leaf < 0 || (leaf >= 0 && t->nics[c].leaf != leaf))
			return 0;
		leaf = t->nics[c].leaf;
	}
	if (leaf < 0)
		return 0;
	el->kind = FL_ELEMENT_LEAF;
	snprintf(el->sw, sizeof(el->sw), "%.*s", (int)sizeof(el->sw) - 1, t->sw[leaf].name);
	el->count = 1;
	return 1;
}

static const struct fl_shared_element *by_name(const struct fl_hop_elements *e, const char *name)
{
	for (size_t i = 0; i < e->nel; i++)
		if (!strcmp(e->el[i].name, name))
			return &e->el[i];
	return NULL;
}

/* Appends the element's commands to buf; the lines added. */
static int append(const struct ft_topo *t, const struct fl_hop_elements *e,
		  const struct fl_shared_element *el, const struct fl_hop_figures *route,
		  bool trace, char *buf, size_t len)
{
	size_t used = strlen(buf);

	return used + 1 < len ? topo_confirm_route(t, e, el, route, trace, buf + used, len - used)
			      : 0;
}

int topo_confirm_verdict(const struct ft_topo *t, const struct fl_hop_elements *e,
			 const struct fl_verdict *v, const struct fl_hop_figures *hops,
			 size_t nhops, char *buf, size_t len)
{
	const struct fl_hop_figures *h = v->hop >= 0 && (size_t)v->hop < nhops ? &hops[v->hop]
									      : NULL;
	const struct fl_shared_element *named;
	struct fl_shared_element el;
	int n = 0;

	if (!len)
		return 0;
	buf[0] = '\0';
	switch (v->kind) {
	case FL_VERDICT_SWITCH:
		named = by_name(e, v->node);
		if (named && named->count)
			n = append(t, e, named, h ? h : &hops[e->hops[named->first]], true, buf, len);
		break;
	case FL_VERDICT_DEVICE:
		if (h && leaf_port(t, topo_nic_of(t, v->node, v->dev), &el))
			n = append(t, e, &el, h, true, buf, len);
		break;
	case FL_VERDICT_LINK:
		if (!h)
			break;
		if (leaf_port(t, topo_nic_of(t, h->src_node, h->src_dev), &el))
			n = append(t, e, &el, h, true, buf, len);
		if (leaf_port(t, topo_nic_of(t, h->dst_node, h->dst_dev), &el))
			n += append(t, e, &el, h, n == 0, buf, len);
		break;
	case FL_VERDICT_UNSURE:
		/* a switch next behind the likeliest: its counters tell the two apart */
		named = v->runner_up.kind == FL_VERDICT_SWITCH ? by_name(e, v->runner_up.culprit)
							       : NULL;
		if (named && named->count)
			n = append(t, e, named, h ? h : &hops[e->hops[named->first]], true, buf, len);
		break;
	case FL_VERDICT_RAIL:
		if (h && rail_leaf(t, v->dev, &el))
			n = append(t, e, &el, h, true, buf, len);
		break;
	default:
		break;
	}
	return n;
}
