/*
 * Cold caches for a benchmark: a buffer written one byte per 64-byte line between the timed
 * calls, as NCCL's proxy thread does other work between its calls, so that each call finds its
 * code and data out of L1 and L2 (an upper bound "all in"; a hot loop is the lower one).
 * Header-only: each benchmark is one .c file.
 */
#ifndef FL_BENCH_EVICT_H
#define FL_BENCH_EVICT_H

#include <stddef.h>
#include <stdlib.h>

struct bench_evict {
	unsigned char *buf;
	size_t len; /* 0: nothing is evicted */
};

/* kb <= 0 evicts nothing. -1 when the buffer cannot be had. */
static inline int bench_evict_init(struct bench_evict *e, long kb)
{
	e->len = kb > 0 ? (size_t)kb << 10 : 0;
	e->buf = e->len ? calloc(1, e->len) : NULL;
	return e->len && !e->buf ? -1 : 0;
}

static inline void bench_evict(const struct bench_evict *e)
{
	for (size_t i = 0; i < e->len; i += 64)
		e->buf[i]++;
}

#endif
