/*
 * The objects behind the profiler layer's handles. A context owns its links
 * and a pool of op objects; each op carries its step slots, so a step handle
 * is a pointer into its op and no step is ever allocated. Everything of one
 * context is touched by one thread at a time: NCCL's proxy thread while the
 * communicator runs, the finalizing thread after.
 */
#ifndef FL_PROF_INTERNAL_H
#define FL_PROF_INTERNAL_H

#include <stdint.h>
#include <sys/types.h>

#include "base/fl_types.h"
#include "profiler.h"
#include "stats/stats.h"
#include "trace/trace.h"

#define FL_PROF_MAX_LINKS 128   /* (rank, peer, direction, channel) per context */
#define FL_PROF_MAX_OPS 2048    /* ops alive at once per context */
#define FL_PROF_OP_CHUNK 64     /* ops allocated at a time while warming up */
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
	uint64_t free_slots[FL_PROF_SLOT_WORDS]; /* bit set = stats slot free */
	struct fl_endpoint self, peer_end;       /* the hop's ends, as its key names them */
	struct fl_trace_conn trace;              /* LTTng events name the link as a connection */
	struct fl_conn_stats stats;
};

struct fl_prof_op;

struct fl_prof_step {
	uint32_t kind;
	unsigned slot;           /* the link's stats slot, held from start to stop */
	struct fl_prof_op *op;
	uint64_t start_ns;
	uint64_t at[FL_PROF_STATES]; /* first time each state was recorded, 0 = never */
	uint64_t bytes;              /* from the state where transSize is fresh */
};

struct fl_prof_ctx;

struct fl_prof_op {
	uint32_t kind;
	int stopped;
	int live_steps;
	struct fl_prof_ctx *ctx;
	struct fl_prof_link *link;
	struct fl_prof_op *next_free;
	struct fl_prof_step steps[FL_PROF_STEP_SLOTS];
};

/* Counts a report or a test can read; written by the context's one thread. */
struct fl_prof_counts {
	uint64_t ops, steps, pxn_ops, other_events;
	uint64_t dropped_ops;     /* no link or op object left: not measured */
	uint64_t abandoned_steps; /* a slot reused before its step stopped */
};

struct fl_prof_ctx {
	uint32_t magic;
	uint64_t comm_hash;
	int rank, nranks, nnodes;
	pid_t pid;
	char node[FL_NODE_NAME_LEN];
	char comm_name[64];
	int nlinks;
	struct fl_prof_link *links[FL_PROF_MAX_LINKS];
	struct fl_prof_op *free_ops;
	int nops_allocated;
	void *chunks[FL_PROF_MAX_OPS / FL_PROF_OP_CHUNK];
	int nchunks;
	struct fl_prof_counts counts;
};

#define FL_PROF_CTX_MAGIC 0x58544346u /* "FCTX" */

extern uint64_t (*fl_prof_now)(void);

/* prof_link.c */
struct fl_prof_link *fl_prof_link_get(struct fl_prof_ctx *c, int rank, int peer, int is_send,
				      int channel);
/* A free stats slot of the link, or -1 when every one is held. */
int fl_prof_slot_take(struct fl_prof_link *l);
void fl_prof_slot_give(struct fl_prof_link *l, unsigned slot);
void fl_prof_links_close(struct fl_prof_ctx *c);

/* prof_event.c: the op objects go when their context does. */
void fl_prof_pool_free(struct fl_prof_ctx *c);

/* prof_step.c: a stopped step's figures into its link. */
void fl_prof_step_account(struct fl_prof_step *s, uint64_t stop_ns);

#endif
