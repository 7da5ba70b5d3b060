/*
 * The ncclProfiler_v1..v7 tables NCCL looks up (2.26.2 probes v3 first, 2.28.9
 * v5, 2.29-2.30 v6, 2.31-2.32 v7), each a thin adapter from its version's descriptors, states and init
 * signature to the profiler layer's one native interface. Only ProxyOp and
 * ProxyStep are measured; every other event gets a NULL handle, which NCCL
 * allows (its children then start under a NULL parent).
 * With a next profiler chained (profiler_next.h) each call also goes to it,
 * after fabriclab's own work; while none is, one relaxed load per call is all
 * chaining costs.
 */
#include "profiler_tables.h"

#include "base/fl_types.h"
#include "profiler/profiler.h"
#include "profiler_next.h"

#define FL_ABI_EXPORT __attribute__((visibility("default")))
#define FL_PROF_NAME "fabriclab"

/*
 * ProxyStep implies its ancestors; NetPlugin events exist from v3 on. ProxyCtrl
 * tells each proxy thread which context is its own: NCCL starts it with the
 * proxy's communicator's context before the ops it appends (2.23.4
 * src/proxy.cc:757; 2.26.2 :789; 2.28.9 :807; 2.30.7 :864), once per batch.
 */
#define MASK_V1 (FL_PROF_EV_PROXY_OP | FL_PROF_EV_PROXY_STEP | FL_PROF_EV_PROXY_CTRL)
#define MASK_V3 (MASK_V1 | FL_PROF_EV_NET_PLUGIN)

static int init_common(void **ctx, int *mask, const struct fl_prof_comm_info *info,
		       fl_abi_logger_fn logger, int wanted)
{
	int rc, next_bits, own;

	if (ctx)
		*ctx = NULL;
	if (!ctx || !mask)
		return FL_ERR_INTERNAL; /* NCCL always passes both */
	rc = fl_prof_init(ctx, info, logger);
	/*
	 * A context of NULL means "measure nothing" for this communicator. Success
	 * even then: NCCL drops the profiler on an error (2.23.4
	 * src/misc/profiler.cc:224-227; 2.30.7 src/plugin/profiler.cc:252-254 unloads it).
	 * The mask is NCCL's one for the whole process, not this communicator's:
	 * every init writes it (2.23.4 src/misc/profiler.cc:215, 223; 2.26.2
	 * src/plugin/profiler.cc:158, 165; 2.28.9 :185, 192; 2.30.7 :219, 250) and
	 * every task copies it at enqueue (2.30.7 src/enqueue.cc:2795). So a context
	 * that failed asks for nothing only when no other context of this process
	 * is measured; else an empty mask would silence them all. Its own events
	 * then come with a NULL context, which every entry point ignores.
	 */
	own = rc == 0 && (*ctx || fl_prof_live_contexts() > 0) ? wanted : 0;
	/* The next profiler's init, with NCCL's arguments; its mask joins ours. */
	next_bits = rc == 0 ? fl_abi_next_init(info->abi_version, ctx, info, logger) : 0;
	/* one store: communicators may init at once on their threads, and NCCL reads it relaxed
	 * (2.30.7 src/plugin/profiler.cc:280) */
	__atomic_store_n(mask, own | next_bits, __ATOMIC_RELAXED);
	return rc;
}

static int init_v1(void **ctx, int *mask)
{
	struct fl_prof_comm_info info = { 0, NULL, -1, -1, -1, 1 };

	return init_common(ctx, mask, &info, NULL, MASK_V1);
}

static int init_v2(void **ctx, int *mask)
{
	struct fl_prof_comm_info info = { 0, NULL, -1, -1, -1, 2 };

	return init_common(ctx, mask, &info, NULL, MASK_V1);
}

static int init_v3(void **ctx, int *mask)
{
	struct fl_prof_comm_info info = { 0, NULL, -1, -1, -1, 3 };

	return init_common(ctx, mask, &info, NULL, MASK_V3);
}

static int init_v4(void **ctx, int *mask, const char *comm_name, uint64_t comm_hash, int nnodes,
		   int nranks, int rank, fl_abi_logger_fn logger)
{
	struct fl_prof_comm_info info = { comm_hash, comm_name, nnodes, nranks, rank, 4 };

	return init_common(ctx, mask, &info, logger, MASK_V3);
}

/* v5, v6 and v7 share init's signature; the version is told to the layer for its log. */
#define INIT_V5(ver, n)                                                                    \
	static int init_##ver(void **ctx, uint64_t comm_id, int *mask, const char *comm_name, \
			      int nnodes, int nranks, int rank, fl_abi_logger_fn logger)     \
	{                                                                                    \
		struct fl_prof_comm_info info = { comm_id, comm_name, nnodes, nranks, rank, n }; \
                                                                                             \
		return init_common(ctx, mask, &info, logger, MASK_V3);                       \
	}

INIT_V5(v5, 5)
INIT_V5(v6, 6)
INIT_V5(v7, 7)

/* ---- events: one body per descriptor shape, the same for every version ---- */

#define OP_DESCR(d)                                                                       \
	((struct fl_prof_op_descr){ .rank = (d)->rank, .pid = (d)->proxy_op.pid,           \
				    .channel = (d)->proxy_op.channel_id,                   \
				    .peer = (d)->proxy_op.peer,                            \
				    .nsteps = (d)->proxy_op.nsteps,                        \
				    .chunk_size = (d)->proxy_op.chunk_size,                \
				    .is_send = (d)->proxy_op.is_send })

/* Proxy events, or -1 when the type is another one. ctx is untrusted (PXN). */
#define START_PROXY(ctx, handle, d)                                                       \
	((d)->type == FL_PROF_EV_PROXY_OP                                                  \
		 ? fl_prof_op_start(ctx, handle, &OP_DESCR(d))                             \
	 : (d)->type == FL_PROF_EV_PROXY_STEP                                              \
		 ? fl_prof_step_start(ctx, handle, (d)->parent_obj, (d)->proxy_step.step)  \
	 : (d)->type == FL_PROF_EV_PROXY_CTRL ? (fl_prof_proxy_ctrl(ctx), 0)               \
					      : -1)

/*
 * Chained: ours, and the parent the next knows: a step's op (found in the
 * step's own lookup), a NetPlugin event's step (the net plugin passes the step
 * handle NCCL holds, 2.30.7 src/plugin/profiler.cc:786-795); any other event's
 * parent is never one of ours (a Coll's, the next's own; a PXN op's, another
 * process's).
 */
#define OURS_CHAINED(OURS, ctx, handle, d, np)                                           \
	do {                                                                               \
		if ((d)->type == FL_PROF_EV_PROXY_STEP && (ctx)) {                         \
			fl_prof_step_start_chained(ctx, handle, (d)->parent_obj,           \
						   (d)->proxy_step.step, &(np));            \
			break;                                                             \
		}                                                                          \
		(np) = (d)->type == FL_PROF_EV_NET_PLUGIN || (d)->type == FL_PROF_EV_PROXY_STEP \
			       ? fl_prof_next_parent((d)->parent_obj)                      \
			       : (d)->parent_obj;                                          \
		if (ctx)                                                                   \
			OURS(ctx, handle, d);                                              \
	} while (0)

/* Ours: measured events get a handle; v1..v3 Coll and P2p name the communicator. */
#define OURS_V1(ctx, handle, d)                                                          \
	do {                                                                               \
		if (START_PROXY(ctx, handle, d) >= 0)                                      \
			break;                                                             \
		if ((d)->type == FL_PROF_EV_COLL)                                          \
			fl_prof_learn_comm(ctx, (d)->coll.comm_hash, (d)->rank);           \
		else if ((d)->type == FL_PROF_EV_P2P)                                      \
			fl_prof_learn_comm(ctx, (d)->p2p.comm_hash, (d)->rank);            \
		fl_prof_note_other(ctx);                                                   \
	} while (0)

#define OURS_V4(ctx, handle, d)                                                          \
	do {                                                                               \
		if (START_PROXY(ctx, handle, d) < 0)                                       \
			fl_prof_note_other(ctx);                                           \
	} while (0)

/*
 * Ours (a NULL context is none of ours: ours failed, or the next's stands in),
 * then, chained, the next's with its parent looked up first.
 */
#define START(ver, n, OURS)                                                              \
	static __attribute__((noinline)) int start_chained_##ver(                           \
		void *ctx, void **handle, struct fl_prof_abi_descr_##ver *d)                \
	{                                                                                  \
		void *np;                                                                  \
                                                                                           \
		OURS_CHAINED(OURS, ctx, handle, d, np);                                    \
		fl_abi_next_start(n, ctx, handle, d, d->type, np);                         \
		return 0;                                                                  \
	}                                                                                  \
	static int start_##ver(void *ctx, void **handle, struct fl_prof_abi_descr_##ver *d) \
	{                                                                                  \
		if (!handle)                                                               \
			return 0;                                                          \
		*handle = NULL;                                                            \
		if (!d)                                                                    \
			return 0;                                                          \
		if (__builtin_expect(fl_prof_next_on(), 0))                                \
			return start_chained_##ver(ctx, handle, d);                        \
		if (ctx)                                                                   \
			OURS(ctx, handle, d);                                              \
		return 0;                                                                  \
	}

#define START_V1(ver, n) START(ver, n, OURS_V1)
#define START_V4(ver, n) START(ver, n, OURS_V4)

START_V1(v1, 1)
START_V1(v2, 2)
START_V1(v3, 3)
START_V4(v4, 4)
START_V4(v5, 5)
START_V4(v6, 6)
START_V4(v7, 7)

/* NCCL's state numbers to ours; -1 for the states we do not use. */
static int native_state(int state)
{
	switch (state) {
	case FL_PROF_ST_STEP_SEND_GPU_WAIT:
		return FL_PROF_SEND_GPU_WAIT;
	case FL_PROF_ST_STEP_SEND_PEER_WAIT_V4:
		return FL_PROF_SEND_PEER_WAIT;
	case FL_PROF_ST_STEP_SEND_WAIT:
		return FL_PROF_SEND_WAIT;
	case FL_PROF_ST_STEP_RECV_WAIT:
		return FL_PROF_RECV_WAIT;
	case FL_PROF_ST_STEP_RECV_FLUSH_WAIT:
		return FL_PROF_RECV_FLUSH_WAIT;
	case FL_PROF_ST_STEP_RECV_GPU_WAIT:
		return FL_PROF_RECV_GPU_WAIT;
	default:
		return -1;
	}
}

/* transSize is fresh only at SendWait and RecvFlushWait; elsewhere it is the last step's. */
static int fresh_size(int state)
{
	return state == FL_PROF_ST_STEP_SEND_WAIT || state == FL_PROF_ST_STEP_RECV_FLUSH_WAIT;
}

/* Ours; *next (when chained): the handle the next knows this event as. */
static inline __attribute__((always_inline)) void record_ours(void *handle, int state,
							      const size_t *trans_size, void **next)
{
	int native = native_state(state);

	if (next) /* chained: the next's handle found in the same lookup */
		fl_prof_record_chained(handle, native, fresh_size(state) ? trans_size : NULL,
				       fresh_size(state), next);
	else if (native >= 0)
		fl_prof_record(handle, (enum fl_prof_state)native,
			       fresh_size(state) ? trans_size : NULL, fresh_size(state));
}

/*
 * v1..v3 (2.23-2.26): step states come with NULL args (2.23.4
 * src/misc/profiler.cc:502; 2.26.2 src/plugin/profiler.cc:497); the sizes come
 * on ProxyOp states 0..7 as transSize (2.26.2 :478-489).
 */
static inline __attribute__((always_inline)) void record_ours_v1(
	void *handle, int state, union fl_prof_abi_state_args_v1 *a, void **next)
{
	if (state >= FL_PROF_ST_OP_SEND_POSTED && state <= FL_PROF_ST_OP_RECV_DONE) {
		if (next)
			fl_prof_record_op_chained(handle, a ? &a->proxy_op.trans_size : NULL, next);
		else if (a)
			fl_prof_record_op(handle, a->proxy_op.trans_size);
	} else {
		record_ours(handle, state, a ? &a->proxy_op.trans_size : NULL, next);
	}
}

/* Chained: ours, then the next's in its version (out of the unchained path's way). */
static __attribute__((noinline)) int record_chained_v1(int n, void *handle, int state,
							union fl_prof_abi_state_args_v1 *a)
{
	void *next = NULL;

	record_ours_v1(handle, state, a, &next);
	fl_abi_next_record(n, next, state, a);
	return 0;
}

static __attribute__((noinline)) int record_chained_v4(int n, void *handle, int state,
							union fl_prof_abi_state_args_v4 *a)
{
	void *next = NULL;

	record_ours(handle, state, a ? &a->proxy_step.trans_size : NULL, &next);
	fl_abi_next_record(n, next, state, a);
	return 0;
}

#define RECORD_V1(ver, n)                                                                 \
	static int record_##ver(void *handle, int state, union fl_prof_abi_state_args_v1 *a) \
	{                                                                                  \
		if (!handle)                                                               \
			return 0;                                                          \
		if (__builtin_expect(fl_prof_next_on(), 0))                                \
			return record_chained_v1(n, handle, state, a);                     \
		record_ours_v1(handle, state, a, NULL);                                    \
		return 0;                                                                  \
	}

#define RECORD_V4(ver, n)                                                                 \
	static int record_##ver(void *handle, int state, union fl_prof_abi_state_args_v4 *a) \
	{                                                                                  \
		if (!handle)                                                               \
			return 0;                                                          \
		if (__builtin_expect(fl_prof_next_on(), 0))                                \
			return record_chained_v4(n, handle, state, a);                     \
		record_ours(handle, state, a ? &a->proxy_step.trans_size : NULL, NULL);    \
		return 0;                                                                  \
	}

RECORD_V1(v1, 1)
RECORD_V1(v2, 2)
RECORD_V1(v3, 3)
RECORD_V4(v4, 4)
RECORD_V4(v5, 5)
RECORD_V4(v6, 6)
RECORD_V4(v7, 7)

/* NetPlugin stops call stopEvent(*eHandle) unguarded: NULL must be fine (it is). */
static int stop_any(void *handle)
{
	void *next = NULL;

	if (!fl_prof_next_on())
		return fl_prof_stop(handle);
	fl_prof_stop_chained(handle, &next);
	fl_abi_next_stop(next, handle == NULL);
	return 0;
}

/*
 * The next's context is looked up before ours goes (ours keeps it); a context
 * fabriclab never made is the next's own, returned to NCCL in ours' place.
 */
static int finalize_any(void *ctx)
{
	void *next_ctx;

	if (!fl_prof_next_on())
		return fl_prof_finalize(ctx);
	next_ctx = fl_prof_next_ctx(ctx);
	/* ours, or ours once (finalized: counted stale there), but never the next's own */
	if (fl_prof_ctx_ours(ctx) || !next_ctx)
		fl_prof_finalize(ctx);
	fl_abi_next_finalize(next_ctx);
	return 0;
}

#define TABLE(ver, init_fn, record_fn)                                                    \
	FL_ABI_EXPORT const struct fl_abi_profiler_##ver ncclProfiler_##ver = {            \
		.name = FL_PROF_NAME,                                                      \
		.init = init_fn,                                                           \
		.start_event = start_##ver,                                                \
		.stop_event = stop_any,                                                    \
		.record_event_state = record_fn,                                           \
		.finalize = finalize_any,                                                  \
	}

TABLE(v1, init_v1, record_v1);
TABLE(v2, init_v2, record_v2);
TABLE(v3, init_v3, record_v3);
TABLE(v4, init_v4, record_v4);
TABLE(v5, init_v5, record_v5);
TABLE(v6, init_v6, record_v6);
TABLE(v7, init_v7, record_v7);
