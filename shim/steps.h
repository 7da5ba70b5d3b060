/*
 * The transfers in flight on one connection (at most SHIM_STEPS, oldest
 * first), and a watchdog that gives up when nothing completes for the world's
 * timeout. Shared by the collectives; not part of the public API.
 */
#ifndef SHIM_STEPS_H
#define SHIM_STEPS_H

#include "shim.h"

struct shim_fifo {
	struct shim_link *link;
	const char *op; /* "all_reduce", for messages */
	int send;       /* direction: 1 = sends to link->send_peer, 0 = receives */
	uint64_t posted;
	uint64_t received; /* receives: tested done, their flush maybe in flight; sends: = done */
	uint64_t done;
	void *req[SHIM_STEPS]; /* the transfer, then a receive's flush */
	/* a receive's own request, for irecvConsumed (NCCL's recvRequestsCache) */
	void *recv_req[SHIM_STEPS];
	/* a transfer is one message, or a receive of up to FL_MAX_RECVS grouped ones */
	int parts[SHIM_STEPS];
	size_t bytes[SHIM_STEPS][FL_MAX_RECVS];
	void *data[SHIM_STEPS][FL_MAX_RECVS]; /* receives into GPU memory are flushed first */
	void *mh[SHIM_STEPS];
};

struct shim_watch {
	uint64_t since_ns; /* last time something moved, as far as we looked; 0 = stale */
	uint64_t moves;    /* posted + done counters at the last pass */
	unsigned idle;     /* passes without progress */
};

void shim_fifo_init(struct shim_fifo *f, struct shim_link *link, const char *op, int send);

static inline int shim_fifo_full(const struct shim_fifo *f)
{
	return f->posted - f->done >= SHIM_STEPS;
}

static inline int shim_fifo_busy(const struct shim_fifo *f)
{
	return f->posted != f->done;
}

/* Posts one transfer; f->posted moves on unless the plugin said "not now". */
int shim_fifo_post(struct shim_world *w, struct shim_fifo *f, void *data, size_t bytes,
		   void *mhandle);
/*
 * The same with tags of the caller's: a send of one message (n 1), or one receive
 * of n grouped messages (1..FL_MAX_RECVS), each into its own buffer, as NCCL
 * groups the receives of sub-operations that share a receive comm.
 */
int shim_fifo_post_parts(struct shim_world *w, struct shim_fifo *f, int n, void **data,
			 const size_t *bytes, const int *tags, void *mhandle);
/*
 * Tests the oldest transfer; f->done moves on when it completed with the sizes
 * posted and, for a receive into GPU memory, its flush completed too. As NCCL's
 * proxy, a flush is tested on later passes, never waited for.
 */
int shim_fifo_test(struct shim_world *w, struct shim_fifo *f);

void shim_watch_init(struct shim_watch *watch);
/* Call once per pass; yields the CPU when idle, fails after w->timeout_ms without progress. */
int shim_watch_pass(struct shim_world *w, struct shim_watch *watch, const struct shim_fifo *sends,
		    const struct shim_fifo *recvs);
/* The same over n pairs (channels): progress is any of them moving; a timeout names the first busy. */
int shim_watch_pass_pairs(struct shim_world *w, struct shim_watch *watch,
			  const struct shim_fifo *const *sends, const struct shim_fifo *const *recvs,
			  int n);

#endif
