/*
 * A fabric's wiring as a user has it, for the diagnosis (docs/report-format.md,
 * "Topology"): fabriclab's own description (fabric/README.md; the lab's
 * topology.json), `ibnetdiscover` output (InfiniBand: switches, their ports,
 * the HCAs behind them), or `lldpctl -f json` neighbours (RoCE: each host's
 * interfaces and the switch port across), read into the same model
 * (fabric/topo/topo.h); then, for a report's hops, the elements they share
 * (plugin/verdict/verdict_topology.h).
 */
#ifndef FABRICLAB_TOPOLOGY_H
#define FABRICLAB_TOPOLOGY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "fabric/topo/topo.h"
#include "plugin/verdict/verdict.h"
#include "plugin/verdict/verdict_topology.h"

/*
 * Reads path in whichever of the three forms it is (a folder: one
 * `lldpctl -f json` output per node, named <node>.json). 0, or -1 with the
 * reason in why, naming the line (ibnetdiscover), the line and column
 * (JSON) or the field.
 */
int topo_read(const char *path, struct ft_topo *t, char *why, size_t len);
/* The forms one by one (topo_ibnet.c, topo_lldp.c); text is the whole file. */
int topo_read_ibnet(const char *text, const char *name, struct ft_topo *t, char *why, size_t len);
int topo_read_lldp(const char *path, struct ft_topo *t, char *why, size_t len);

/*
 * The elements the hops share (topo_hops.c): every leaf port, uplink, leaf's
 * uplinks, spine, spine layer and leaf that two hops or more cross, each set
 * of hops once. A hop whose ends the topology does not name is a mismatch:
 * -1 with the hop and the missing end in why (the verdict then stands
 * without the topology). Hops from a node to itself cross no switch.
 */
int topo_hop_elements(const struct ft_topo *t, const struct fl_hop_figures *hops, size_t n,
		      struct fl_hop_elements *out, char *why, size_t len);
/*
 * Elements crossed by the same hops become one (topo_hops_merge.c): the most
 * specific, or where several of one kind tie, the layer above named with them.
 */
void topo_merge_equal(struct fl_hop_elements *e);
/* The NIC a hop end is: exact names, else the node's only NIC; -1 when the topology lacks it. */
int topo_nic_of(const struct ft_topo *t, const char *node, const char *dev);

/*
 * The commands that would confirm element e on the machines (topo_confirm.c):
 * perfquery and ibportstate on the switch's port, ibtracert between a slow
 * hop's ends (InfiniBand); the switch's port counters and lldpctl (RoCE).
 * One per line into buf; their number.
 */
int topo_confirm_commands(const struct ft_topo *t, const struct fl_hop_elements *e,
			  const struct fl_shared_element *el, const struct fl_hop_figures *hops,
			  char *buf, size_t len);
/*
 * The same with the hop to trace given (a verdict's slow hop; its leaves also
 * pick a spine's ports); trace false: no ibtracert (a second element of one
 * verdict, whose hop is traced already).
 */
int topo_confirm_route(const struct ft_topo *t, const struct fl_hop_elements *e,
		       const struct fl_shared_element *el, const struct fl_hop_figures *route,
		       bool trace, char *buf, size_t len);
/*
 * The commands that name the switch and its port behind verdict v
 * (topo_confirm_verdict.c): a switch verdict's element; the leaf port of a
 * device's NIC; a link's two leaf ports and its route; the leaf of a rail;
 * not enough evidence with a switch next: that switch's.
 * One per line into buf; their number, 0 where the topology says nothing more.
 */
int topo_confirm_verdict(const struct ft_topo *t, const struct fl_hop_elements *e,
			 const struct fl_verdict *v, const struct fl_hop_figures *hops,
			 size_t nhops, char *buf, size_t len);

/*
 * `fabriclab report --topology FILE` (topo_report.c): reads it and prints the
 * elements the report's hops share, the slowest first, with their commands;
 * a topology that cannot be read or does not match is said on err, and
 * nothing else changes (out NULL: only read and checked). 0, or -1 when it
 * was not used.
 */
int topo_report(const char *path, const struct fl_hop_figures *hops, size_t n, FILE *out,
		FILE *err);

#endif
