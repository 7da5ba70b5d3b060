/*
 * Memory registrations of one device, shared by every comm on it (regIsGlobal):
 * page-aligned, refcounted, so NCCL registering the same buffer through many
 * comms costs one ibv_reg_mr. dma-buf registrations are never shared (the fd
 * names the memory, not the address).
 */
#ifndef FL_IB_MR_H
#define FL_IB_MR_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

struct ib_mr {
	uintptr_t addr; /* page-aligned span registered */
	size_t len;
	int refs;
	int cached; /* in the cache's list (not dma-buf) */
	int type;   /* FL_PTR_HOST or FL_PTR_CUDA, as first registered */
	uint32_t lkey, rkey;
	void *mr; /* struct ibv_mr *, or the test's token */
};

/* What the cache needs from verbs; a unit test supplies its own. */
struct ib_mr_ops {
	/* Registers [addr, addr+len); fills mr, lkey, rkey; fl_fail text on error. */
	int (*reg)(void *ctx, uintptr_t addr, size_t len, struct ib_mr *out);
	int (*dereg)(void *ctx, struct ib_mr *m);
};

struct ib_mr_cache {
	pthread_mutex_t lock;
	const struct ib_mr_ops *ops;
	void *ctx;
	size_t page;
	int n, cap;
	struct ib_mr **items; /* sorted by addr */
};

void ib_mr_cache_init(struct ib_mr_cache *c, const struct ib_mr_ops *ops, void *ctx);
/* Drops what is left (a comm that never deregistered); returns how many were left. */
int ib_mr_cache_destroy(struct ib_mr_cache *c);
/* A registration covering [data, data+size), shared when one exists. */
int ib_mr_get(struct ib_mr_cache *c, void *data, size_t size, struct ib_mr **out);
int ib_mr_put(struct ib_mr_cache *c, struct ib_mr *m);
/* 1 when [data, data+size) lies inside m: a posted buffer must. */
static inline int ib_mr_covers(const struct ib_mr *m, const void *data, size_t size)
{
	uintptr_t a = (uintptr_t)data;

	return a >= m->addr && a - m->addr <= m->len && size <= m->len - (a - m->addr);
}

#endif
