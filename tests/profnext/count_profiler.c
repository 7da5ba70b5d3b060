/*
 * A small third-party profiler plugin for the chaining tests and the cost
 * bench (never installed): it counts, per event type, the starts, stops and
 * state records NCCL (or fabriclab in front of it) gives it, and checks what
 * it is handed: a context it made, parents and handles of its own. Each
 * process writes its counts to COUNT_PROFILER_OUT/count-<pid>.txt at its last
 * finalize; without COUNT_PROFILER_OUT it writes nothing (the bench's minimal
 * profiler). Built per version range: COUNT_MIN..COUNT_MAX tables exported.
 *   COUNT_PROFILER_MASK  the event bits it asks for (default: every one its version has)
 *   COUNT_PROFILER_MODE  ok (default) | initfail (init returns ncclInternalError) |
 *                        null (every handle and the context NULL)
 * Handles are slots of a static ring, taken with one atomic add: no allocation per event.
 */
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "plugin/abi/profiler_abi.h"

#ifndef COUNT_MIN
#define COUNT_MIN 1
#endif
#ifndef COUNT_MAX
#define COUNT_MAX 7
#endif

#define NTYPES 16
#define NSTATES 32
#define RING (1u << 16)
#define MAX_CTX 256
#define SLOT_MAGIC 0x53544e43u /* "CNTS" */

struct slot {
	uint32_t magic;
	int type;
};

struct ctx {
	uint32_t magic;
	int rank;
};

static struct slot ring[RING];
static _Atomic unsigned ring_next;
static struct ctx ctxs[MAX_CTX];
static _Atomic int nctx, live;
static _Atomic uint64_t starts[NTYPES], stops[NTYPES], records[NTYPES], states[NSTATES];
static _Atomic uint64_t foreign_parents[NTYPES], null_handles, bad_ctx, bad_handles,
	null_stops, inits, finalizes;
/* set by every init (each rank's thread), read by every event: atomics */
static _Atomic int mode_null, mode_fail, version_used;

static int own_slot(const void *p)
{
	return (const char *)p >= (const char *)ring && (const char *)p < (const char *)(ring + RING)
	       && ((const char *)p - (const char *)ring) % sizeof(struct slot) == 0 &&
	       ((const struct slot *)p)->magic == SLOT_MAGIC;
}

static int own_ctx(const void *p)
{
	return (const char *)p >= (const char *)ctxs && (const char *)p < (const char *)(ctxs + MAX_CTX);
}

static int type_index(uint64_t type)
{
	return type && !(type & (type - 1)) && type < (1u << NTYPES) ? __builtin_ctzll(type) : -1;
}

static void count(_Atomic uint64_t *c)
{
	atomic_fetch_add_explicit(c, 1, memory_order_relaxed);
}

static void write_counts(void)
{
	const char *dir = getenv("COUNT_PROFILER_OUT");
	char path[512];
	FILE *f;

	if (!dir)
		return;
	snprintf(path, sizeof(path), "%s/count-%d.txt", dir, (int)getpid());
	f = fopen(path, "w");
	if (!f)
		return;
	fprintf(f, "version %d\ninits %llu\nfinalizes %llu\n", version_used,
		(unsigned long long)inits, (unsigned long long)finalizes);
	for (int t = 0; t < NTYPES; t++)
		if (starts[t] || stops[t] || records[t] || foreign_parents[t])
			fprintf(f, "type %d starts %llu stops %llu records %llu foreign_parents %llu\n",
				1 << t, (unsigned long long)starts[t], (unsigned long long)stops[t],
				(unsigned long long)records[t],
				(unsigned long long)foreign_parents[t]);
	for (int s = 0; s < NSTATES; s++)
		if (states[s])
			fprintf(f, "state %d %llu\n", s, (unsigned long long)states[s]);
	fprintf(f, "null_handles %llu\nnull_stops %llu\nbad_ctx %llu\nbad_handles %llu\n",
		(unsigned long long)null_handles, (unsigned long long)null_stops,
		(unsigned long long)bad_ctx, (unsigned long long)bad_handles);
	fclose(f);
}

static int init_common(void **context, int *mask, int version)
{
	const char *m = getenv("COUNT_PROFILER_MODE"), *bits = getenv("COUNT_PROFILER_MASK");
	int i;

	mode_null = m && !strcmp(m, "null");
	mode_fail = m && !strcmp(m, "initfail");
	version_used = version;
	*context = NULL;
	if (mode_fail)
		return 3; /* ncclInternalError */
	count(&inits);
	/*
	 * One int for every communicator, whose inits may run at once on their threads: NCCL
	 * passes its global ncclProfilerEventMask and reads it relaxed (2.30.7
	 * src/plugin/profiler.cc:250, 280), as fabriclab does its own for the next profiler.
	 */
	__atomic_store_n(mask, bits ? (int)strtol(bits, NULL, 0) : (int)FL_PROF_EV_BITS(version),
			 __ATOMIC_RELAXED);
	i = atomic_fetch_add(&nctx, 1);
	atomic_fetch_add(&live, 1);
	if (i >= MAX_CTX || mode_null)
		return 0;
	ctxs[i].magic = SLOT_MAGIC;
	*context = &ctxs[i];
	return 0;
}

static int start_common(void *context, void **handle, uint64_t type, void *parent)
{
	int t = type_index(type);
	struct slot *s;

	*handle = NULL;
	if (t < 0)
		return 0;
	count(&starts[t]);
	if (context ? !own_ctx(context) : !mode_null)
		count(&bad_ctx);
	/* PXN ops come with another process's parent: counted as foreign, alone and chained alike. */
	if (parent && !own_slot(parent))
		count(&foreign_parents[t]);
	if (mode_null) {
		count(&null_handles);
		return 0;
	}
	s = &ring[atomic_fetch_add_explicit(&ring_next, 1, memory_order_relaxed) % RING];
	s->magic = SLOT_MAGIC;
	s->type = t;
	*handle = s;
	return 0;
}

static int stop_any(void *handle)
{
	if (!handle) {
		count(&null_stops);
		return 0;
	}
	if (!own_slot(handle)) {
		count(&bad_handles);
		return 0;
	}
	count(&stops[((struct slot *)handle)->type]);
	return 0;
}

static int record_common(void *handle, int state)
{
	if (!own_slot(handle)) {
		count(&bad_handles);
		return 0;
	}
	count(&records[((struct slot *)handle)->type]);
	if (state >= 0 && state < NSTATES)
		count(&states[state]);
	return 0;
}

static int finalize_any(void *context)
{
	if (context && !own_ctx(context))
		count(&bad_ctx);
	count(&finalizes);
	if (atomic_fetch_sub(&live, 1) == 1)
		write_counts();
	return 0;
}

#define EXPORT __attribute__((visibility("default")))

#define V1_INIT(ver, n)                                                                   \
	static int init_##ver(void **context, int *mask)                                   \
	{                                                                                  \
		return init_common(context, mask, n);                                      \
	}
#define V4_INIT(ver, n)                                                                   \
	static int init_##ver(void **context, int *mask, const char *name, uint64_t hash,  \
			      int nnodes, int nranks, int rank, fl_abi_logger_fn log)      \
	{                                                                                  \
		(void)name, (void)hash, (void)nnodes, (void)nranks, (void)rank, (void)log; \
		return init_common(context, mask, n);                                      \
	}
#define V5_INIT(ver, n)                                                                   \
	static int init_##ver(void **context, uint64_t id, int *mask, const char *name,    \
			      int nnodes, int nranks, int rank, fl_abi_logger_fn log)      \
	{                                                                                  \
		(void)name, (void)id, (void)nnodes, (void)nranks, (void)rank, (void)log;   \
		return init_common(context, mask, n);                                      \
	}
#define TABLE(ver, args_t)                                                                \
	static int start_##ver(void *context, void **handle, struct fl_prof_abi_descr_##ver *d) \
	{                                                                                  \
		return start_common(context, handle, d->type, d->parent_obj);              \
	}                                                                                  \
	static int record_##ver(void *handle, int state, args_t *a)                        \
	{                                                                                  \
		(void)a;                                                                   \
		return record_common(handle, state);                                       \
	}                                                                                  \
	EXPORT const struct fl_abi_profiler_##ver ncclProfiler_##ver = {                   \
		"count", init_##ver, start_##ver, stop_any, record_##ver, finalize_any,    \
	}

#if COUNT_MIN <= 1 && COUNT_MAX >= 1
V1_INIT(v1, 1)
TABLE(v1, union fl_prof_abi_state_args_v1);
#endif
#if COUNT_MIN <= 2 && COUNT_MAX >= 2
V1_INIT(v2, 2)
TABLE(v2, union fl_prof_abi_state_args_v1);
#endif
#if COUNT_MIN <= 3 && COUNT_MAX >= 3
V1_INIT(v3, 3)
TABLE(v3, union fl_prof_abi_state_args_v1);
#endif
#if COUNT_MIN <= 4 && COUNT_MAX >= 4
V4_INIT(v4, 4)
TABLE(v4, union fl_prof_abi_state_args_v4);
#endif
#if COUNT_MIN <= 5 && COUNT_MAX >= 5
V5_INIT(v5, 5)
TABLE(v5, fl_prof_abi_state_args_v5);
#endif
#if COUNT_MIN <= 6 && COUNT_MAX >= 6
V5_INIT(v6, 6)
TABLE(v6, fl_prof_abi_state_args_v5);
#endif
#if COUNT_MIN <= 7 && COUNT_MAX >= 7
V5_INIT(v7, 7)
TABLE(v7, fl_prof_abi_state_args_v5);
#endif

/* A process that never finalized all it made still says what it saw. */
__attribute__((destructor)) static void counts_at_exit(void)
{
	if (atomic_load(&live) > 0)
		write_counts();
}
