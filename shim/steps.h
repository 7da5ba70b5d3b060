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
	uint64_t done;
	void *req[SHIM_STEPS];
	size_t bytes[SHIM_STEPS];
	void *data[SHIM_STEPS]; /* receives into GPU memory are flushed before they are read */
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
/* Tests the oldest transfer; f->done moves on when it completed with the size posted. */
int shim_fifo_test(struct shim_world *w, struct shim_fifo *f);

void shim_watch_init(struct shim_watch *watch);
/* Call once per pass; yields the CPU when idle, fails after w->timeout_ms without progress. */
int shim_watch_pass(struct shim_world *w, struct shim_watch *watch, const struct shim_fifo *sends,
		    const struct shim_fifo *recvs);

#endif
