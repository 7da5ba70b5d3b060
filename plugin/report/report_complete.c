/*
 * Whether a report's figures rest on everything that was measured. Memory is bounded on the
 * data path (interval rings, the reader's pending runs, the hop table) and in the report (its
 * device and rank tables); where a bound was hit,
 * the figures stay bounded too (bridged time is an upper bound on the overstatement, hops past
 * the table are counted together), and the report says so here rather than not at all. So do
 * the profiler role's ops and steps that were seen but not measured.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "report_model.h"
#include "stats/hop.h"

/* A clause more, "; "-separated, while the buffer has room. */
static size_t say(char *why, size_t len, size_t at, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static size_t say(char *why, size_t len, size_t at, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (at >= len)
		return at;
	if (at)
		at += (size_t)snprintf(why + at, len - at, "; ");
	if (at >= len)
		return at;
	va_start(ap, fmt);
	n = vsnprintf(why + at, len - at, fmt, ap);
	va_end(ap);
	return at + (n > 0 ? (size_t)n : 0);
}

/*
 * The profiler role's measured data that no figure holds: ops and steps it saw but could not
 * measure (a cap, every stats slot held, no context on the relaying thread) and steps whose
 * figures were lost (their slot reused before their stop). Ranks count once their context
 * finalized; relayed ops with no home are the process's.
 */
static size_t prof_losses(const struct fl_report *r, char *why, size_t len, size_t at)
{
	struct fl_report_prof_counts t = { 0 };

	for (int i = 0; i < r->nranks_held; i++) {
		const struct fl_report_prof_counts *n = &r->ranks[i].prof;

		t.dropped_ops += n->dropped_ops;
		t.dropped_links += n->dropped_links;
		t.dropped_steps += n->dropped_steps;
		t.abandoned_steps += n->abandoned_steps;
	}
	if (t.dropped_ops)
		at = say(why, len, at, "%llu profiler op(s) not measured (%llu past the links cap)",
			 (unsigned long long)t.dropped_ops, (unsigned long long)t.dropped_links);
	if (t.dropped_steps)
		at = say(why, len, at, "%llu profiler step(s) not measured (no free stats slot)",
			 (unsigned long long)t.dropped_steps);
	if (t.abandoned_steps)
		at = say(why, len, at, "%llu profiler step(s) lost (slot reused before their stop)",
			 (unsigned long long)t.abandoned_steps);
	if (r->prof_unhomed_ops)
		at = say(why, len, at, "%llu relayed (PXN) op(s) not measured (no context on their "
			 "proxy thread)", (unsigned long long)r->prof_unhomed_ops);
	return at;
}

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
	at = prof_losses(r, why, len, at);
	return at != 0;
}
