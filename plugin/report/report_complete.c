/*
 * Whether a report's figures rest on everything that was measured. Memory is bounded on the
 * data path (interval rings, the reader's pending runs, the hop table) and in the report (its
 * device and rank tables); where a bound was hit,
 * the figures stay bounded too (bridged time is an upper bound on the overstatement, hops past
 * the table are counted together), and the report says so here rather than not at all.
 */
#include <stdio.h>
#include <string.h>

#include "report_model.h"
#include "stats/hop.h"

int fl_report_incomplete(const struct fl_report *r, char *why, size_t len)
{
	uint64_t overflows = 0, bridges = 0, wire_ns = 0, active_ns = 0;
	int over_table = 0;
	size_t at = 0;

	why[0] = '\0';
	for (int i = 0; i < r->nhops; i++) {
		const struct fl_hop_snapshot *h = &r->hops[i];

		overflows += h->t.ring_overflows;
		bridges += h->t.union_bridges;
		wire_ns += h->t.wire_bridged_ns;
		active_ns += h->t.active_bridged_ns;
		over_table += !strcmp(h->key.src_node, FL_HOP_OTHER) ? h->connections : 0;
	}
	if (overflows && at < len)
		at += (size_t)snprintf(why + at, len - at, "%s%llu interval ring overflow(s)",
				       at ? "; " : "", (unsigned long long)overflows);
	if (bridges && at < len)
		at += (size_t)snprintf(why + at, len - at, "%s%llu bridging(s) by the report thread",
				       at ? "; " : "", (unsigned long long)bridges);
	if ((wire_ns || active_ns) && at < len)
		at += (size_t)snprintf(why + at, len - at,
				       "%swire time overstated by at most %.6f s, active time by at "
				       "most %.6f s", at ? "; " : "", (double)wire_ns / 1e9,
				       (double)active_ns / 1e9);
	if (over_table && at < len)
		at += (size_t)snprintf(why + at, len - at,
				       "%s%d connection(s) past the %d-hop table counted together as "
				       "hop %s", at ? "; " : "", over_table, FL_MAX_HOPS, FL_HOP_OTHER);
	if (r->devs_left_out && at < len)
		at += (size_t)snprintf(why + at, len - at, "%s%d device(s) past the report's %d not "
				       "listed", at ? "; " : "", r->devs_left_out, FL_REPORT_MAX_DEVS);
	if (r->ranks_left_out && at < len)
		at += (size_t)snprintf(why + at, len - at, "%s%d rank(s) past the report's %d not "
				       "named", at ? "; " : "", r->ranks_left_out, FL_REPORT_MAX_RANKS);
	return at != 0;
}
