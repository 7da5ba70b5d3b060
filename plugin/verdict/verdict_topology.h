/*
 * The fabric's shared elements and the hops that cross each: what a
 * topology (`fabriclab report --topology`, the lab's topology.json) adds to
 * the diagnosis. Several slow hops that share one element (a leaf, a leaf's
 * uplinks, a spine, the spine layer) are one explanation of the model's, a
 * "switch" candidate, as a device is one for the hops through one NIC.
 *
 * Pure data, filled by tools/topology/topo_hops.c (topo_hop_elements) from a
 * topology and the hops' figures; the plugin never builds one (one process
 * has no topology). How the model takes them:
 *
 *   for each element e of kind other than FL_ELEMENT_LEAF_PORT:
 *       one candidate of kind switch whose hops are
 *       set->hops[e->first .. e->first + e->count), every one in part 0;
 *       its culprit's name is e->name, its switch e->sw.
 *
 * Every set has two hops or more and no two sets are equal (elements that
 * every hop crosses alike are one, named together: with ECMP over two
 * spines, "spine0" and "spine1" are crossed by the same hops as far as the
 * reports can tell, so they are one element, "the spine layer (spine0,
 * spine1)"). A leaf port's hops are its NIC's: it is the device candidate,
 * listed for the commands that name the switch and its port.
 */
#ifndef FL_VERDICT_TOPOLOGY_H
#define FL_VERDICT_TOPOLOGY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/fl_types.h"

enum fl_element_kind {
	FL_ELEMENT_LEAF_PORT,   /* the leaf port a NIC hangs off: its hops both ways */
	FL_ELEMENT_UPLINK,      /* the cables between one leaf and one spine */
	FL_ELEMENT_LEAF_UPLINKS, /* every cable between a leaf and the spines: hops leaving or
				  * entering the leaf from other leaves */
	FL_ELEMENT_SPINE,       /* one spine: every hop that crosses it */
	FL_ELEMENT_SPINES,      /* the spine layer: every hop between leaves */
	FL_ELEMENT_LEAF,        /* a leaf switch: every hop with an end on it */
	FL_ELEMENT_KINDS,
};

#define FL_ELEMENT_NAME_LEN 128

/* One shared element and where its hops are. */
struct fl_shared_element {
	enum fl_element_kind kind;
	char name[FL_ELEMENT_NAME_LEN]; /* for people: "spine1", "leaf0-spine1",
					 * "the spine layer (spine0, spine1)", "leaf2 port 5" */
	char sw[FL_NODE_NAME_LEN];      /* the switch to look at; "" for a layer */
	int port;                       /* that switch's port (a leaf port; an uplink's first
					 * cable on the leaf), 0 none */
	int cables;                     /* an uplink's cables, else 0 */
	int lid;                        /* the switch's LID where the topology knows it, else 0 */
	uint64_t guid;                  /* and its GUID, else 0 */
	/*
	 * Every hop listed crosses it. False where a hop takes one of several
	 * spines by its hash (ECMP), which the reports do not say: a spine's
	 * hops are then the hops that may cross it.
	 */
	bool certain;
	size_t first, count;            /* hops[first .. first + count) */
	size_t nslow;                   /* scratch for the caller (0 as filled) */
};

struct fl_hop_elements {
	struct fl_shared_element *el;
	size_t nel;
	size_t *hops;    /* indices into the hop array the elements were made from */
	size_t nhops;
	char layout[96]; /* the topology's, as it names itself ("fat-tree:leaves=4,spines=2",
			  * "ibnetdiscover", "lldp") */
	bool infiniband; /* its switches are InfiniBand's (LIDs, perfquery) rather than Ethernet */
};

/* Frees what topo_hop_elements filled; e is then empty. */
void fl_hop_elements_free(struct fl_hop_elements *e);
const char *fl_element_kind_name(enum fl_element_kind k);

#endif
