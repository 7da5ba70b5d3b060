/*
 * The order of the joined hops: by source node, source device, destination
 * node, destination device (each in natural order, strverscmp: n9 before
 * n10), then source and destination rank, then communicator. Without
 * comparing names per compare:
 * 10^6 hops took 2 x 10^7 compares of four names each by strverscmp, a cache
 * miss into a 568-byte hop per name (as it was then). Each distinct name is ranked once; the
 * hops are then sorted on small keys of ranks and numbers, in the same order.
 */
#ifndef FABRICLAB_REPORT_HOP_ORDER_H
#define FABRICLAB_REPORT_HOP_ORDER_H

#include <stddef.h>

#include "report.h"

/*
 * order[0..nhops): the hops' indices in that order, as qsort_r comparing
 * the hops' names by strverscmp would leave them; *nodes: how many distinct node names the hops name
 * (either end). The hops' names are one pointer per text, as the merge keeps
 * them (report_names.h). FL_ERR_SYSTEM when out of memory.
 */
int report_hop_order(const struct report_hop *hops, size_t nhops, size_t *order, size_t *nodes);

#endif
