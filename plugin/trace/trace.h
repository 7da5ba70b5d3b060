/*
 * LTTng-UST tracing of the plugin (docs/tracing.md). The `fabriclab` provider
 * lives in its own shared object, build/libfabriclab-lttng.so, which
 * fl_trace_start() loads when liblttng-ust is installed; the plugin never links
 * liblttng-ust nor includes an LTTng header (plugin/trace/lttng/fabriclab_tp_api.h
 * is the whole interface). Until the provider is loaded and a session enables
 * an event, a hook costs one load and a branch not taken. Built with
 * -DFABRICLAB_NO_TRACING, every hook is compiled out.
 *
 * Every event carries the connection id and the hop id (fl_trace_hop_id of
 * the hop's names), so a trace joins with the report. The tracer sees a
 * connection only through struct fl_trace_conn, which its owner (the wrap)
 * keeps inside each comm: it never reaches into the owner's objects.
 */
#ifndef FL_TRACE_H
#define FL_TRACE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "base/fl_types.h"
#include "transport/transport.h"
#include "trace/lttng/fabriclab_tp_api.h"

#include "stats/stats.h"

struct fl_report;
struct fl_live_finding;

/* What a connection's events name; filled by its owner when the connection is up. */
struct fl_trace_conn {
	uint32_t id;
	uint32_t hop_id; /* set by fl_trace_conn_up */
	int send;        /* a send comm (the hop's sender), else a receive comm */
	const char *transport;
	const struct fl_endpoint *self;
	const struct fl_endpoint *peer;
	const struct fl_conn_stats *stats; /* post times per slot, totals at close */
	/*
	 * Profiler mode: a link (rank, peer, direction, channel) in place of a
	 * connection; its hop id holds the rank pair and communicator as its hop does.
	 */
	int profiler;
};

struct fl_hop_key;

/* The device's properties as NCCL sees them, asked only when conn_up is enabled. */
typedef int (*fl_trace_props_fn)(int dev, struct fl_props *props);

#ifndef FABRICLAB_NO_TRACING

/*
 * The plugin's tracepoint records: attached to lttng-ust through the provider,
 * which sets an event's state while a session enables it; detached before the
 * plugin can be unloaded.
 */
extern struct fl_tp_point fl_trace_points[FL_TP_EVENTS];

static inline int fl_trace_on(enum fl_tp_event event)
{
	return __builtin_expect(__atomic_load_n(&fl_trace_points[event].state, __ATOMIC_RELAXED),
				0);
}

/*
 * Loads the provider once (first init): FABRICLAB_LTTNG_PROVIDER names it
 * ("off" skips it), else libfabriclab-lttng.so next to the plugin. Says once at
 * INFO whether tracing is available. FL_ERR_USAGE when
 * FABRICLAB_TRACE_INTERVAL_MS is not a number of ms from 10 to 3600000.
 */
int fl_trace_start(void);
/* Stops emitting for good: the final report is written, the plugin may unload. */
void fl_trace_stop(void);
/* The hop's id in every event: FNV-1a 32 of "src_node/src_dev>dst_node/dst_dev". */
uint32_t fl_trace_hop_id(const char *src_node, const char *src_dev, const char *dst_node,
			 const char *dst_dev);
/*
 * A profiler-mode hop's id: the names' FNV-1a 32 continued over
 * "|<src_rank>><dst_rank>@<comm_hash, 16 hex>", so it never equals the id of the
 * net-mode hop the same names give when both roles are loaded.
 */
uint32_t fl_trace_profiler_hop_id(const char *src_node, const char *src_dev, const char *dst_node,
				  const char *dst_dev, int src_rank, int dst_rank,
				  uint64_t comm_hash);
/* The id of the hop a key names, in either mode. */
uint32_t fl_trace_key_hop_id(const struct fl_hop_key *k);
/* A connection is up and has joined its hop: sets c->hop_id, emits conn_up. */
void fl_trace_conn_up(struct fl_trace_conn *c, fl_trace_props_fn props_of);
void fl_trace_conn_down(const struct fl_trace_conn *c);
/* An operation failed; c may be NULL (listen, connect, accept). */
void fl_trace_error(const struct fl_trace_conn *c, const char *op, int code, const char *text);
/*
 * A fault rule applied to connection conn_id (fl_trace_conn.id): action name
 * ("throttle", "slow", ...), the rule in canonical form, the delay added (ns, 0 if
 * none) and the pacing rate (bytes/s, 0 if none).
 */
void fl_trace_fault(uint32_t conn_id, const char *action, const char *rule, uint64_t delay_ns,
		    uint64_t rate_bytes_per_s);
/* Report thread, at every drain: a hop_snapshot per hop once per trace period. */
void fl_trace_tick(uint64_t now_ns);
/* A report was built: its hops as snapshots and, when final, its verdict. */
void fl_trace_report(const struct fl_report *r);

/* A live finding appeared, changed or cleared (state: enum fl_live_state): live_finding. */
void fl_trace_live(int state, const struct fl_live_finding *f);

/* Out of line: what an enabled request event costs stays off the caller's code. */
void fl_trace_emit_posted(const struct fl_trace_conn *c, unsigned slot, int n,
			  const size_t *sizes, const int *tags);
void fl_trace_emit_done(const struct fl_trace_conn *c, unsigned slot, uint64_t bytes,
			const struct fl_xfer_times *t);
void fl_trace_emit_done_at(const struct fl_trace_conn *c, unsigned slot, uint64_t bytes,
			   const struct fl_xfer_times *t, uint64_t posted_ns, uint64_t done_ns);

/*
 * A request of n buffers was taken by the transport (slot: its index in the
 * comm's pool); tags may be NULL.
 */
static inline void fl_trace_posted(const struct fl_trace_conn *c, unsigned slot, int n,
				   const size_t *sizes, const int *tags)
{
	if (fl_trace_on(FL_TP_REQUEST_POSTED))
		fl_trace_emit_posted(c, slot, n, sizes, tags);
}

/* Before the stats free the slot (its post time is read here): ready, then done. */
static inline void fl_trace_done(const struct fl_trace_conn *c, unsigned slot, uint64_t bytes,
				 const struct fl_xfer_times *t)
{
	if (fl_trace_on(FL_TP_REQUEST_DONE) || fl_trace_on(FL_TP_REQUEST_READY))
		fl_trace_emit_done(c, slot, bytes, t);
}

/*
 * Profiler mode: a step stopped, with the post and done times its hop counts
 * (fl_stats_account's), so the trace adds up to the report as in net mode.
 */
static inline void fl_trace_step_done(const struct fl_trace_conn *c, unsigned slot,
				      uint64_t bytes, const struct fl_xfer_times *t,
				      uint64_t posted_ns, uint64_t done_ns)
{
	if (fl_trace_on(FL_TP_REQUEST_DONE) || fl_trace_on(FL_TP_REQUEST_READY))
		fl_trace_emit_done_at(c, slot, bytes, t, posted_ns, done_ns);
}

#else /* FABRICLAB_NO_TRACING */

static inline int fl_trace_start(void) { return 0; }
static inline void fl_trace_stop(void) {}
static inline void fl_trace_conn_up(struct fl_trace_conn *c, fl_trace_props_fn props_of)
{
	(void)c, (void)props_of;
}
static inline void fl_trace_conn_down(const struct fl_trace_conn *c) { (void)c; }
static inline void fl_trace_error(const struct fl_trace_conn *c, const char *op, int code,
				  const char *text)
{
	(void)c, (void)op, (void)code, (void)text;
}
static inline void fl_trace_fault(uint32_t conn_id, const char *action, const char *rule,
				  uint64_t delay_ns, uint64_t rate_bytes_per_s)
{
	(void)conn_id, (void)action, (void)rule, (void)delay_ns, (void)rate_bytes_per_s;
}
static inline void fl_trace_tick(uint64_t now_ns) { (void)now_ns; }
static inline void fl_trace_report(const struct fl_report *r) { (void)r; }
static inline void fl_trace_live(int state, const struct fl_live_finding *f)
{
	(void)state, (void)f;
}
static inline void fl_trace_posted(const struct fl_trace_conn *c, unsigned slot, int n,
				   const size_t *sizes, const int *tags)
{
	(void)c, (void)slot, (void)n, (void)sizes, (void)tags;
}
static inline void fl_trace_done(const struct fl_trace_conn *c, unsigned slot, uint64_t bytes,
				 const struct fl_xfer_times *t)
{
	(void)c, (void)slot, (void)bytes, (void)t;
}
static inline void fl_trace_step_done(const struct fl_trace_conn *c, unsigned slot,
				      uint64_t bytes, const struct fl_xfer_times *t,
				      uint64_t posted_ns, uint64_t done_ns)
{
	(void)c, (void)slot, (void)bytes, (void)t, (void)posted_ns, (void)done_ns;
}

#endif /* FABRICLAB_NO_TRACING */

#endif
