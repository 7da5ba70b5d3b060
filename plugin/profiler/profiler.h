/*
 * Profiler mode: per-hop figures from NCCL's own transports, measured through
 * NCCL's profiler events (docs/profiler.md). One native interface the ABI
 * adapters (abi/profiler_abi.c) translate every ncclProfiler_vN into.
 *
 * A context is one communicator as seen by one rank. Its ProxyOp events open
 * "links" (peer, direction, channel), each owning one fl_conn_stats attached to
 * the hop of (local rank -> peer rank) in the shared hop table; a link's
 * counters are written only by the thread that drives the communicator's proxy
 * (NCCL's proxy thread), so no lock is taken per event. Op and step objects
 * come from per-context pools that grow while warming up and are bounded.
 */
#ifndef FL_PROFILER_H
#define FL_PROFILER_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/log.h"

/* What init learns of the communicator; v1..v3 learn the hash and rank later. */
struct fl_prof_comm_info {
	uint64_t comm_hash; /* 0 until known */
	const char *comm_name; /* may be NULL */
	int nnodes, nranks;    /* -1 unknown */
	int rank;              /* -1 until known */
	int abi_version;       /* the ncclProfiler_vN whose init NCCL called */
};

struct fl_prof_op_descr {
	int rank; /* the originating rank */
	pid_t pid;
	int channel;
	int peer; /* a rank of the communicator */
	int nsteps;
	int chunk_size;
	int is_send;
};

/* The step states NCCL records (reference 2.4), in our numbering. */
enum fl_prof_state {
	FL_PROF_SEND_GPU_WAIT,
	FL_PROF_SEND_PEER_WAIT,
	FL_PROF_SEND_WAIT,
	FL_PROF_RECV_WAIT,
	FL_PROF_RECV_FLUSH_WAIT,
	FL_PROF_RECV_GPU_WAIT,
	FL_PROF_STATES
};

/*
 * Never fails for a recoverable reason (a bad FABRICLAB_PROFILER value, a report
 * that cannot start): one WARN and *ctx NULL, which the adapters turn into an
 * empty mask. NCCL drops the profiler for the whole job on an error (2.23.4
 * src/misc/profiler.cc:223-227; 2.30.7 src/plugin/profiler.cc:250-254).
 */
int fl_prof_init(void **ctx, const struct fl_prof_comm_info *info, fl_logger_fn logger);
/*
 * Contexts of this process measured now (initialized, not yet finalized). NCCL
 * keeps one event mask for the whole process, which every communicator's init
 * writes: a context that could not be made asks for nothing only when this is 0.
 */
int fl_prof_live_contexts(void);
/* v1..v3: the communicator's hash and rank, from the first Coll or P2p event. */
void fl_prof_learn_comm(void *ctx, uint64_t comm_hash, int rank);
/*
 * ctx is untrusted: it is read only once found in our registry. An op whose
 * context is not ours, whose pid is another process's, or whose context
 * another proxy thread owns is relayed (PXN): measured in the running thread's
 * own context under the rank it names. *handle is NULL when the op is not one
 * we measure (or on overload).
 */
int fl_prof_op_start(void *ctx, void **handle, const struct fl_prof_op_descr *d);
/*
 * A ProxyCtrl event: NCCL starts it on the proxy thread with the context of
 * the communicator that owns that proxy (2.30.7 src/proxy.cc:864, 2077), before
 * the ops it appends: that context becomes the thread's own.
 */
void fl_prof_proxy_ctrl(void *ctx);
/* op may be NULL (NCCL starts steps under a NULL ProxyOp handle): *handle is then NULL. */
int fl_prof_step_start(void *ctx, void **handle, void *op, int step);
/*
 * A step state. fresh: a state where the step's size is known (SendWait,
 * RecvFlushWait); trans_size: the bytes NCCL passed there, or NULL where its
 * steps carry none (2.23-2.26): then the op's states sized it.
 */
int fl_prof_record(void *handle, enum fl_prof_state state, const size_t *trans_size, int fresh);
/* A ProxyOp state of 2.23-2.26: transSize, the sub's running total. */
int fl_prof_record_op(void *handle, size_t trans_size);
/* Any handle this layer returned, or NULL. */
int fl_prof_stop(void *handle);
/* Events we do not measure (Group, Coll, NetPlugin, ...): counted, no handle. */
void fl_prof_note_other(void *ctx);
/* A context not (or no longer) ours is left alone: a second finalize is a no-op. */
int fl_prof_finalize(void *ctx);
/* Tests and logs: events on stale handles, relayed ops with no context here. */
uint64_t fl_prof_stale_events(void);
uint64_t fl_prof_unhomed_ops(void);

/*
 * ---- Chaining: the profiler the job already ran, behind this one ----
 * prof_next_load.c finds and opens it (FABRICLAB_PROFILER_NEXT, else the
 * wrapped net plugin's library); the ABI layer calls it in its own version
 * (entry/profiler_next.c); prof_next_forward.c keeps its handles and contexts
 * beside ours and tells, for whatever NCCL passes, what the next knows it as.
 * NCCL holds our handle where we measure the event, the next's own where we
 * do not (it is then no address of ours: FOREIGN in our registries).
 */
/* Opened at the first init (NCCL took ncclProfiler_v<nccl_version>): its table, or NULL. */
const void *fl_prof_next_open(int nccl_version, int *version);
/* Whether one is chained and live: one relaxed load, on every callback. */
extern _Atomic int fl_prof_next_is_on __attribute__((visibility("hidden")));
extern const void *fl_prof_next_table __attribute__((visibility("hidden")));
extern int fl_prof_next_version __attribute__((visibility("hidden")));
static inline int fl_prof_next_on(void)
{
	return atomic_load_explicit(&fl_prof_next_is_on, memory_order_relaxed);
}

/* The table while it is live (not dropped), else NULL; both set before it turns live. */
static inline const void *fl_prof_next_live(int *version)
{
	if (!atomic_load_explicit(&fl_prof_next_is_on, memory_order_acquire))
		return NULL;
	*version = fl_prof_next_version;
	return fl_prof_next_table;
}
/* One WARN naming it and why; it gets no event after. */
void fl_prof_next_drop(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
const char *fl_prof_next_label(void);
/*
 * The calls above when a next is chained: the same work, and in the same lookup
 * what the next knows the handle (a step's parent) as, as fl_prof_next_of says.
 * record: state < 0 is a state we do not use (only *next is found); record_op:
 * trans_size NULL when NCCL passed no args.
 */
int fl_prof_step_start_chained(void *ctx, void **handle, void *parent, int step,
			       void **next_parent);
int fl_prof_record_chained(void *handle, int state, const size_t *trans_size, int fresh,
			   void **next);
int fl_prof_record_op_chained(void *handle, const size_t *trans_size, void **next);
int fl_prof_stop_chained(void *handle, void **next);
/* The next's handle for an op or step this layer just returned (never another pointer). */
void fl_prof_keep_next(void *ours, void *next);
/*
 * What the next knows a handle NCCL passes as: ours -> the next's kept beside it;
 * never ours -> the handle itself; a stale or mangled one of ours -> NULL. for_record:
 * a step's states go to the next only when it got a handle for the step's op
 * (NCCL records step states only under a non-NULL op handle, 2.30.7
 * src/plugin/profiler.cc:718-727).
 */
void *fl_prof_next_of(void *handle, int for_record);
/* A parent: as next_of, without the rule for states. */
void *fl_prof_next_parent(void *handle);
/* The next's context made beside ours at init (ctx: the one returned to NCCL). */
void fl_prof_keep_next_ctx(void *ctx, void *next_ctx);
/* ours (live) -> the next's kept beside it; once ours but finalized -> NULL; else ctx. */
void *fl_prof_next_ctx(void *ctx);
/* Whether ctx is a live context of ours. */
int fl_prof_ctx_ours(const void *ctx);

/* Tests: a clock of their own (NULL restores the real one). */
void fl_prof_set_clock(uint64_t (*now)(void));

#endif
