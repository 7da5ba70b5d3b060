/* Objects the wrap layer hands to NCCL in place of the transport's own. */
#ifndef FL_WRAP_INTERNAL_H
#define FL_WRAP_INTERNAL_H

#include <stdint.h>

#include "stats/stats.h"
#include "trace/trace.h"
#include "transport/forward.h"
#include "transport/transport.h"

/* Enough for 32 multi-receives of 8 on the send side (NCCL's budget). */
#define FL_WRAP_POOL (FL_MAX_REQUESTS * FL_MAX_RECVS)

enum fl_comm_kind { FL_COMM_SEND, FL_COMM_RECV };

struct fl_wrap_ctx {
	uint64_t comm_id;
	int traffic_class;
	int process_wide; /* the v6-v10 ctx: never freed by finalize */
	void *tctx;       /* the transport's per-communicator state (open_ctx), else NULL */
};

struct fl_wlisten {
	const struct fl_transport *tp;
	void *tcomm;
	struct fl_endpoint self;
};

struct fl_wcomm;
struct fl_fault_conn;

/*
 * One test on the fast path for all of it: the transport names the peer later (join at a
 * later isend/irecv/test), NCCL's tag has not been seen yet (counting only), the transport
 * may yet hand the data path over (struct fl_direct; asked at a later isend/irecv).
 */
enum { FL_LATE_PEER = 1, FL_LATE_TAG = 2, FL_LATE_DIRECT = 4 };

/* Built with -DFABRICLAB_NO_COUNTING only so `make bench` can measure what counting costs. */
#ifdef FABRICLAB_NO_COUNTING
#define COUNTING 0
#else
#define COUNTING 1
#endif

/* Whose request a pooled one carries, which says how it is tested and what rules size it. */
enum { FL_VIA_TRANSPORT, FL_VIA_DIRECT, FL_VIA_FORWARD };

/*
 * The one object a request is, whichever way it goes: through the transport (which may keep
 * an object of its own: sockets, verbs), straight to the plugin behind a forwarding transport
 * (struct fl_direct), or through that transport's forward data path, whose state it carries
 * (fwd). A request's post time lives in comm->stats.posted[slot], where reports read it. The
 * slot is its index in the comm's pool, kept so that no call divides by the request's size to
 * find it.
 */
struct fl_wreq {
	struct fl_wcomm *comm;
	void *treq; /* the transport's request, or the plugin's own (FL_VIA_DIRECT, _FORWARD) */
	short n;
	short via; /* FL_VIA_* */
	int next_free;
	unsigned slot;
	uint64_t posted_bytes; /* what isend/irecv posted: no completion moves more */
	struct fl_fwd_req fwd; /* the forward path's state; hinted on the direct path too */
};

_Static_assert(FL_WRAP_POOL == FL_CONN_SLOTS, "one stats slot per pooled request");

/* Allocated 64-byte aligned: the stats keep the reader's words on lines of their own. */
struct fl_wcomm {
	const struct fl_transport *tp;
	void *tcomm;
	enum fl_comm_kind kind;
	uint32_t id;
	struct fl_trace_conn trace; /* what trace events name: points at self, peer, stats */
	struct fl_endpoint self;
	struct fl_endpoint peer;
	int failed;      /* an error was logged; do not flood the log */
	unsigned late;   /* FL_LATE_*: work left for a later isend/irecv (test: FL_LATE_PEER only) */
	int joined;      /* in its hop, the names, the trace and the fault rules */
	int hold_consumed; /* done receives wait for irecvConsumed (fl_wrap_offload) */
	struct fl_fault_conn *fault; /* FABRICLAB_FAULT state; NULL when no rule applies */
	struct fl_direct direct; /* the transport's data path handed over; comm NULL when not */
	const struct fl_forward *fwd; /* the transport's forward data path, or NULL */
	int free_head;   /* pool slots given back, last in first out; -1 when none */
	int fresh;       /* slots from fresh on were never handed out */
	struct fl_wreq reqs[FL_WRAP_POOL];
	struct fl_conn_stats stats; /* memory types registered: stats.mem_types */
};

/* The transport every comm of this process uses (chosen at first init). */
const struct fl_transport *fl_wrap_transport(void);
void fl_wrap_log_summary(const struct fl_wcomm *c);
/* A request back to its comm's pool (wrap_data.c). */
void fl_wrap_req_put(struct fl_wcomm *c, struct fl_wreq *r);
/* Receives wait for irecvConsumed after test said done (wrap_offload.c). */
int fl_wrap_holds_for_consumed(void);
/* Joins the hop etc. once the transport knows the peer (wrap_conn.c); cheap to call again. */
void fl_wrap_join_late(struct fl_wcomm *c);
/* Asks the transport for its data path once the comm joined (FL_LATE_DIRECT; wrap_conn.c). */
void fl_wrap_ask_direct(struct fl_wcomm *c);
/* Logs the thread's last error once per comm, returns err. */
int fl_wrap_report_error(struct fl_wcomm *c, const char *op, int err);

#endif
