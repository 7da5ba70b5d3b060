/*
 * Whether a report's figures rest on everything that was measured. Memory is bounded on the
 * data path (interval rings, the reader's pending runs, the hop table) and in the report (its
 * device and rank tables); where a bound was hit,
 * the figures stay bounded too (bridged time is an upper bound on the overstatement, hops past
 * the table are counted together), and the report says so here rather than not at all. So do
 * the profiler role's ops and steps that were seen but not measured, figures that fail the
 * physics checks, and requests a stopped job left outstanding.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/clock.h"
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

/*
 * No wire carries ten times its line rate: a hop measured above that rests on
 * timing or byte counts that cannot be true. Timing quirks of real transports
 * (a receive whose bytes sat in a socket buffer) stay well under it.
 */
#define FL_REPORT_LINE_MULTIPLE 10.0

static void hop_name(const struct fl_hop_snapshot *h, char *out, size_t len)
{
	snprintf(out, len, "%s/%s -> %s/%s (%s)", h->key.src_node, h->key.src_dev,
		 h->key.dst_node, h->key.dst_dev, h->key.view == FL_HOP_SEND ? "send" : "recv");
}

/*
 * Figures checked against physics, and what a stopped job left undone, said per hop:
 * completions whose sizes cannot be true (left out of the figures: stats.h), a wire rate
 * above FL_REPORT_LINE_MULTIPLE times the line, requests that were out when the final report
 * was written or when their connection closed (a job stopped while it hung).
 */
static size_t physics(const struct fl_report *r, char *why, size_t len, size_t at)
{
	uint64_t now = fl_clock_ns();

	for (int i = 0; i < r->nhops; i++) {
		const struct fl_hop_snapshot *h = &r->hops[i];
		double line = r->figs ? r->figs[i].line_rate_gbs : 0.0, gbs = fl_report_wire_gbs(h);
		char name[2 * (FL_NODE_NAME_LEN + FL_DEV_NAME_LEN) + 16];

		hop_name(h, name, sizeof(name));
		if (h->t.impossible)
			at = say(why, len, at, "hop %s: %llu completion(s) with sizes that cannot be "
				 "true left out of its figures (the first said %lld bytes of %llu "
				 "posted)", name, (unsigned long long)h->t.impossible,
				 (long long)h->t.impossible_claimed,
				 (unsigned long long)h->t.impossible_posted);
		if (line > 0 && gbs > FL_REPORT_LINE_MULTIPLE * line)
			at = say(why, len, at, "hop %s: wire rate %.3f GB/s is more than %.0f times "
				 "its line rate %.3f GB/s: not physical", name, gbs,
				 FL_REPORT_LINE_MULTIPLE, line);
		if (r->final && h->t.outstanding)
			at = say(why, len, at, "hop %s: %llu request(s) outstanding when the job "
				 "stopped, the oldest posted %.1f s before", name,
				 (unsigned long long)h->t.outstanding,
				 now > h->t.oldest_post_ns ? (double)(now - h->t.oldest_post_ns) / 1e9
							   : 0.0);
		if (h->t.abandoned)
			at = say(why, len, at, "hop %s: %llu request(s) still outstanding when their "
				 "connection closed", name, (unsigned long long)h->t.abandoned);
	}
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
	at = physics(r, why, len, at);
	return at != 0;
}
