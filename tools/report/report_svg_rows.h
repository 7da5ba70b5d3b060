/*
 * What `--svg` puts on its axes and around its ring: one row per node up to
 * REPORT_SVG_ALL_NODES nodes; beyond, blocks of neighbouring nodes (in natural
 * order) drawn as one, each cell the slowest hop between two blocks, while
 * the nodes the findings name, the ends of the hops they blame and the peers
 * of a named node keep a row of their own. 16 384 nodes drawn one per row
 * made 16 384 cells of 0.03 px (issue 48): a fleet's picture must still show
 * where it is slow, and who.
 */
#ifndef FABRICLAB_REPORT_SVG_ROWS_H
#define FABRICLAB_REPORT_SVG_ROWS_H

#include <stdbool.h>
#include <stddef.h>

#include "report.h"

#define REPORT_SVG_ALL_NODES 256 /* up to this many nodes, each has its own row */
#define REPORT_SVG_BLOCKS 32     /* beyond, about this many blocks of the others */
#define REPORT_SVG_MAX_ALONE 24  /* and at most this many nodes alone (a rail blames all) */

struct report_svg_row {
	size_t first, count; /* nodes [first, first + count) in natural order */
	bool alone;          /* aggregated picture: a node the findings touch, drawn by itself */
	char name[2 * FL_NODE_NAME_LEN + 16]; /* "node3", or "node00000..00255" */
};

struct report_svg_axis {
	const char **nodes; /* every node name of the hops once, natural order (strverscmp) */
	size_t nnodes;
	size_t *hop_src, *hop_dst;    /* each hop's ends as indices into nodes */
	size_t *row_of;               /* each node's row */
	struct report_svg_row *rows;
	size_t nrows;
	bool aggregated;              /* blocks drawn: nnodes > REPORT_SVG_ALL_NODES */
};

/* Fills axis from the set's hops; FL_ERR_SYSTEM when out of memory. */
int report_svg_axis_build(const struct report_set *set, struct report_svg_axis *axis);
void report_svg_axis_free(struct report_svg_axis *axis);

#endif
