/*
 * The transfers in flight on one connection for one sub-operation (at most its depth, oldest
 * first), as NCCL's proxy keeps them per sub (src/transport/net.cc:1304-1468 sends,
 * 1470-1765 receives): posted, received (test done), landed (flushed where NCCL flushes),
 * done (a send completed; a receive consumed, then irecvConsumed). And a watchdog that gives
 * up when nothing moves for the world's timeout. Shared by the collectives; not part of the
 * public API. Sizes, depths and decisions come from nccl_rules.h.
 */
#ifndef SHIM_STEPS_H
#define SHIM_STEPS_H

#include "shim.h"
#include "nccl_rules.h"

struct shim_fifo {
	struct shim_link *link;
	const char *op; /* "all_reduce", for messages */
	int send;       /* direction: 1 = sends to link->send_peer, 0 = receives */
	int depth;      /* transfers in flight at most (shim_rules_depth), <= SHIM_STEPS */
	int proto;      /* the op's protocol: flushes and the receive hint depend on it */
	int gdr_flush;  /* receives: GPUDirect with NCCL's needFlush (shim_world.gdr_flush) */
	uint64_t posted;
	uint64_t received; /* receives: tested done; sends: = done */
	uint64_t landed;   /* receives: and flushed: the consumer may read them */
	uint64_t done;
	void *req[SHIM_STEPS]; /* the transfer, then a receive's flush */
	/* a receive's own request, for irecvConsumed (NCCL's recvRequestsCache) */
	void *recv_req[SHIM_STEPS];
	/* a transfer is one message, or a receive of up to FL_MAX_RECVS grouped ones */
	int parts[SHIM_STEPS];
	size_t bytes[SHIM_STEPS][FL_MAX_RECVS];  /* posted: a receive's whole slot */
	size_t expect[SHIM_STEPS][FL_MAX_RECVS]; /* receives: what the peer sends into it */
	int got[SHIM_STEPS][FL_MAX_RECVS];       /* receives: what test said (0: unwritten) */
	void *data[SHIM_STEPS][FL_MAX_RECVS];
	void *mh[SHIM_STEPS];
	struct shim_phandle ph[SHIM_STEPS][FL_MAX_RECVS]; /* what each part's pHandle points to */
	uint64_t restarts; /* receive steps started again before they could be posted */
};

struct shim_watch {
	uint64_t since_ns; /* last time something moved, as far as we looked; 0 = stale */
	uint64_t moves;    /* posted + done counters at the last pass */
	unsigned idle;     /* passes without progress */
};

/* Depth SHIM_STEPS, Simple, no flush: callers set depth, proto and gdr_flush from the rules. */
void shim_fifo_init(struct shim_fifo *f, struct shim_link *link, const char *op, int send);

static inline int shim_fifo_full(const struct shim_fifo *f)
{
	return f->posted - f->done >= (uint64_t)f->depth;
}

static inline int shim_fifo_busy(const struct shim_fifo *f)
{
	return f->posted != f->done;
}

/* Receives tested and flushed, not yet consumed: the oldest is in slot f->done % SHIM_STEPS. */
static inline int shim_fifo_landed(const struct shim_fifo *f)
{
	return f->landed > f->done;
}

/* A send of one message; f->posted moves on unless the plugin said "not now". */
int shim_fifo_send(struct shim_world *w, struct shim_fifo *f, void *data, size_t bytes, int tag,
		   void *mhandle);
/*
 * One receive of n grouped buffers (1..FL_MAX_RECVS), each posted with bytes[i] (NCCL's whole
 * slot) for a message of expect[i] bytes, as NCCL groups the receives of sub-operations that
 * share a receive comm; with the optional-completion hint where NCCL passes it.
 */
int shim_fifo_recv(struct shim_world *w, struct shim_fifo *f, int n, void **data,
		   const size_t *bytes, const size_t *expect, const int *tags, void *mhandle);
/*
 * The next receive's part `part` was started and cannot be posted yet (a registered buffer
 * waiting for the kernel): NCCL starts its step again on the next pass, its pHandle then naming
 * the new start (2.30.7 src/plugin/profiler.cc:611-614); counted in f->restarts.
 */
void shim_fifo_restart(struct shim_fifo *f, int part);
/*
 * Tests the oldest transfer: a send is done when test says so; a receive is received when test
 * says so with each size what was sent (or unwritten: 0), then landed once its flush (where
 * NCCL flushes) completed. As NCCL's proxy, a flush is tested on later passes, never waited for.
 */
int shim_fifo_test(struct shim_world *w, struct shim_fifo *f);
/* The oldest landed receive was read: irecvConsumed where the plugin has it, then done. */
int shim_fifo_consume(struct shim_world *w, struct shim_fifo *f);
/* An op's last word: rc, or the first size test() reported wrong (shim_fifo_test). */
int shim_op_end(struct shim_world *w, int rc);

void shim_watch_init(struct shim_watch *watch);
/* Call once per pass; yields the CPU when idle, fails after w->timeout_ms without progress. */
int shim_watch_pass(struct shim_world *w, struct shim_watch *watch, const struct shim_fifo *sends,
		    const struct shim_fifo *recvs);
/* The same over n pairs (channels): progress is any of them moving; a timeout names the first busy. */
int shim_watch_pass_pairs(struct shim_world *w, struct shim_watch *watch,
			  const struct shim_fifo *const *sends, const struct shim_fifo *const *recvs,
			  int n);
/* The same over any fifos (a NULL entry is skipped): a timeout names the first busy one. */
int shim_watch_pass_fifos(struct shim_world *w, struct shim_watch *watch,
			  const struct shim_fifo *const *fifos, int n);

#endif
