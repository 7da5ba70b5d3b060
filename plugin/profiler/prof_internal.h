/*
 * The objects behind the profiler layer's handles. A context owns its links
 * and a pool of op objects; each op carries its step slots, so a step handle
 * is a pointer into its op and no step is ever allocated. Everything of one
 * context is touched by one thread at a time: the proxy thread that owns it
 * (the first whose ProxyCtrl or own ProxyOp names it), the finalizing thread
 * after. Ops of any other context (PXN: another process's, or another proxy
 * thread's) go into the links of the running thread's own context.
 *
 * Nothing NCCL passes is trusted before it is found by address in our own
 * registries (prof_registry.c): contexts by their address, handles by the
 * address of the aligned chunk that holds them.
 */
#ifndef FL_PROF_INTERNAL_H
#define FL_PROF_INTERNAL_H

#include <stdint.h>
#include <sys/types.h>

#include "base/fl_types.h"
#include "profiler.h"
#include "stats/stats.h"
#include "trace/trace.h"

#define FL_PROF_MAX_LINKS 128   /* default links per context: FABRICLAB_PROFILER_MAX_LINKS */
#define FL_PROF_LINKS_LIMIT 16384 /* the most that variable may ask for */
#define FL_PROF_MAX_OPS 2048    /* ops alive at once per context */
#define FL_PROF_OP_CHUNK 64     /* ops allocated at a time while warming up */
#define FL_PROF_CHUNK_ALIGN (128u * 1024) /* a handle's chunk is handle & ~(align - 1) */
#define FL_PROF_STEP_SLOTS 16   /* NCCL keeps at most 8 steps of an op in flight */
#define FL_PROF_SLOT_WORDS (FL_CONN_SLOTS / 64)

/* The first word of every object a handle points at. */
enum fl_prof_kind {
	FL_PROF_KIND_OP = 0x4f50464c,   /* "FLPO" */
	FL_PROF_KIND_STEP = 0x5354464c, /* "FLTS" */
	FL_PROF_KIND_FREE = 0,
};

struct fl_prof_link {
	int rank, peer, is_send, channel;
	int relayed; /* PXN: ops of another process's (or thread's) rank moved by this proxy */
	uint64_t free_slots[FL_PROF_SLOT_WORDS]; /* bit set = stats slot free */
	struct fl_endpoint self, peer_end;       /* the hop's ends, as its key names them */
	struct fl_trace_conn trace;              /* LTTng events name the link as a connection */
	struct fl_conn_stats stats;
};

struct fl_prof_op;

struct fl_prof_step {
	uint32_t kind;
	int step;                /* NCCL's step number: a second start of it is a restart */
	unsigned slot;           /* the link's stats slot, held from start to stop */
	struct fl_prof_op *op;
	uint64_t start_ns;
	uint64_t at[FL_PROF_STATES]; /* first time each state was recorded, 0 = never */
	uint64_t bytes;              /* from the state where transSize is fresh */
	void *next;                  /* the next profiler's handle of this step (chaining), or NULL */
};

struct fl_prof_ctx;

struct fl_prof_op {
	uint32_t kind;
	int stopped;
	int live_steps;
	/*
	 * NCCL 2.23-2.26: steps carry no size; ProxyOp states carry transSize, a
	 * running total of the sub that is not reset between ops. Bytes are the
	 * growth since the op's first state: `pending` until a step takes them.
	 */
	int sized_by_op;
	uint64_t trans_last, pending;
	struct fl_prof_ctx *ctx;
	struct fl_prof_link *link;
	void *next;                  /* the next profiler's handle of this op (chaining), or NULL */
	struct fl_prof_op *next_free;
	struct fl_prof_step steps[FL_PROF_STEP_SLOTS];
};

/* Counts a report or a test can read; written by the context's one thread. */
struct fl_prof_counts {
	uint64_t ops, steps, other_events;
	uint64_t relayed_ops;     /* of another process's or thread's context, moved here */
	uint64_t dropped_ops;     /* no link or op object left: not measured */
	uint64_t dropped_links;   /* of those, for want of a link (the links cap) */
	uint64_t dropped_steps;   /* every stats slot of the link held: not measured */
	uint64_t abandoned_steps; /* a slot reused before its step stopped: its figures lost */
	/*
	 * A receive step started again before it was posted (irecv said "not now", or a
	 * registered buffer waits for the kernel): NCCL's own retry, not a loss (prof_event.c).
	 */
	uint64_t restarted_steps;
};

/*
 * One writer adds (a plain add on x86, no locked instruction); a reader on another thread,
 * a finalize that races the last events, reads a whole value: relaxed atomics, not a lock.
 */
static inline void fl_prof_count(uint64_t *n, uint64_t by)
{
	__atomic_store_n(n, __atomic_load_n(n, __ATOMIC_RELAXED) + by, __ATOMIC_RELAXED);
}

static inline uint64_t fl_prof_counted(const uint64_t *n)
{
	return __atomic_load_n(n, __ATOMIC_RELAXED);
}

/* The aligned block a pool grows by: a header, then its ops. */
struct fl_prof_chunk {
	uint32_t magic;
	struct fl_prof_ctx *ctx;
	size_t bytes;
};

#define FL_PROF_CHUNK_MAGIC 0x4b4e4843u /* "CHNK" */

struct fl_prof_ctx {
	uint32_t magic;
	uint64_t comm_hash;
	int rank, nranks, nnodes;
	pid_t pid;
	char node[FL_NODE_NAME_LEN];
	char comm_name[64];
	int abi_version;            /* the ncclProfiler_vN NCCL took */
	void *next_ctx;             /* the next profiler's context made beside this one, or NULL */
	_Atomic uintptr_t owner;    /* the proxy thread writing it; 0 until one claims it */
	int nlinks, max_links, warned_links;
	struct fl_prof_link **links;  /* max_links */
	int32_t *link_index;          /* open addressing over links, 2 x max_links, -1 empty */
	unsigned link_index_mask;
	struct fl_prof_op *free_ops;
	int nops_allocated;
	struct fl_prof_chunk *chunks[FL_PROF_MAX_OPS / FL_PROF_OP_CHUNK];
	int nchunks;
	struct fl_prof_counts counts;
	/* Finalized: out of the registries, waiting out its grace before it is freed (prof_grave.c). */
	struct fl_prof_ctx *next_dead;
	uint64_t dead_at_ns;
};

#define FL_PROF_CTX_MAGIC 0x58544346u /* "FCTX" */

extern uint64_t (*fl_prof_now)(void);

/* prof_registry.c: addresses we own, found without reading through them (lock-free). */
int fl_prof_reg_ctx_add(const struct fl_prof_ctx *c);
int fl_prof_reg_ctx_has(const void *p);
void fl_prof_reg_ctx_del(const struct fl_prof_ctx *c);
/* A context, or a handle's chunk, that was ours and is removed (its tombstone is still there). */
int fl_prof_reg_ctx_dead(const void *p);
/*
 * Whether a handle lies in a chunk that is or was ours (a live one, or one of a finalized
 * context whose tombstone is still there): asked only of a handle fl_prof_chunk_of refused.
 */
int fl_prof_chunk_known(const void *handle);
int fl_prof_reg_chunk_add(const struct fl_prof_chunk *k);
void fl_prof_reg_chunk_del(const struct fl_prof_chunk *k);
/* The chunk holding a handle we gave out, or NULL (never ours, or its context is gone). */
struct fl_prof_chunk *fl_prof_chunk_of(const void *handle);
/* Events on handles or contexts that are not (or no longer) ours: ignored, counted. */
void fl_prof_note_stale(void);
uint64_t fl_prof_stale_events(void);
/* Relayed ops that came before this thread had a context of its own: not measured. */
void fl_prof_note_unhomed(void);
uint64_t fl_prof_unhomed_ops(void);

/*
 * prof_event.c: whose a pointer NCCL passes as a handle is. OURS: an op or a
 * step we gave (*obj set); OURS_BAD: inside an op of ours but at no object's
 * start; OURS_STALE: in a chunk of a finalized context, or a live chunk's
 * header or tail; FOREIGN: never ours (with a next profiler chained, one of its
 * handles, which NCCL got from us as they were). Nothing is read through any
 * but OURS, and only FOREIGN goes to the next profiler.
 */
enum fl_prof_whose { FL_PROF_FOREIGN, FL_PROF_OURS, FL_PROF_OURS_BAD, FL_PROF_OURS_STALE };
enum fl_prof_whose fl_prof_whose(void *handle, void **obj);

/* prof_next_forward.c: the next profiler's handle kept beside an object of ours. */
void *fl_prof_kept_next(void *obj);
/* A step's, for its states: NULL when the next got no handle for its op (NCCL records none then). */
static inline void *fl_prof_step_next(const struct fl_prof_step *s)
{
	return s->op->next ? s->next : NULL;
}

/* prof_link.c */
int fl_prof_links_alloc(struct fl_prof_ctx *c, int max_links);
struct fl_prof_link *fl_prof_link_get(struct fl_prof_ctx *c, int rank, int peer, int is_send,
				      int channel, int relayed);
/* A free stats slot of the link, or -1 when every one is held. */
int fl_prof_slot_take(struct fl_prof_link *l);
void fl_prof_slot_give(struct fl_prof_link *l, unsigned slot);
/* Detaches the links from the hop table and the tracer; their memory stays until links_free. */
void fl_prof_links_close(struct fl_prof_ctx *c);
void fl_prof_links_free(struct fl_prof_ctx *c);

/*
 * prof_event.c: the op objects go when their context does: first out of the
 * registry (no handle of theirs is found any more), their memory after the grace.
 */
void fl_prof_pool_close(struct fl_prof_ctx *c);
void fl_prof_pool_free(struct fl_prof_ctx *c);

/*
 * prof_grave.c: a finalized context (out of every registry, its links detached)
 * is freed only once a grace has passed, so an event that found it in a registry
 * just before its finalize still writes into memory that is ours. prof_comm.c's
 * fl_prof_ctx_destroy frees it then.
 */
void fl_prof_bury(struct fl_prof_ctx *c);
void fl_prof_ctx_destroy(struct fl_prof_ctx *c);

/* prof_step.c: a stopped step's figures into its link. */
void fl_prof_step_account(struct fl_prof_step *s, uint64_t stop_ns);

#endif
