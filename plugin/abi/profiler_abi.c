/*
 * The ncclProfiler_v1..v7 tables NCCL looks up (2.26.2 probes v3 first, 2.28.9
 * v5, 2.29-2.30 v6, 2.31-2.32 v7), each a thin adapter from its version's descriptors, states and init
 * signature to the profiler layer's one native interface. Only ProxyOp and
 * ProxyStep are measured; every other event gets a NULL handle, which NCCL
 * allows (its children then start under a NULL parent).
 */
#include "profiler_abi.h"

#include "base/fl_types.h"
#include "profiler/profiler.h"

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
	int rc;

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
	*mask = rc == 0 && (*ctx || fl_prof_live_contexts() > 0) ? wanted : 0;
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

/* v1..v3 init does not name the communicator: its Coll and P2p events do. */
#define START_V1(ver)                                                                    \
	static int start_##ver(void *ctx, void **handle, struct fl_prof_abi_descr_##ver *d) \
	{                                                                                  \
		int rc;                                                                    \
                                                                                           \
		if (!handle)                                                               \
			return 0;                                                          \
		*handle = NULL;                                                            \
		if (!ctx || !d)                                                            \
			return 0;                                                          \
		rc = START_PROXY(ctx, handle, d);                                          \
		if (rc >= 0)                                                               \
			return rc;                                                         \
		if (d->type == FL_PROF_EV_COLL)                                            \
			fl_prof_learn_comm(ctx, d->coll.comm_hash, d->rank);               \
		else if (d->type == FL_PROF_EV_P2P)                                        \
			fl_prof_learn_comm(ctx, d->p2p.comm_hash, d->rank);                \
		fl_prof_note_other(ctx);                                                   \
		return 0;                                                                  \
	}

#define START_V4(ver)                                                                    \
	static int start_##ver(void *ctx, void **handle, struct fl_prof_abi_descr_##ver *d) \
	{                                                                                  \
		int rc;                                                                    \
                                                                                           \
		if (!handle)                                                               \
			return 0;                                                          \
		*handle = NULL;                                                            \
		if (!ctx || !d)                                                            \
			return 0;                                                          \
		rc = START_PROXY(ctx, handle, d);                                          \
		if (rc >= 0)                                                               \
			return rc;                                                         \
		fl_prof_note_other(ctx);                                                   \
		return 0;                                                                  \
	}

START_V1(v1)
START_V1(v2)
START_V1(v3)
START_V4(v4)
START_V4(v5)
START_V4(v6)
START_V4(v7)

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

static int record_args(void *handle, int state, const size_t *trans_size)
{
	int native = native_state(state);

	if (!handle || native < 0)
		return 0;
	return fl_prof_record(handle, (enum fl_prof_state)native,
			      fresh_size(state) ? trans_size : NULL, fresh_size(state));
}

/*
 * v1..v3 (2.23-2.26): step states come with NULL args (2.23.4
 * src/misc/profiler.cc:502; 2.26.2 src/plugin/profiler.cc:497); the sizes come
 * on ProxyOp states 0..7 as transSize (2.26.2 :478-489).
 */
static int record_v1(void *handle, int state, union fl_prof_abi_state_args_v1 *a)
{
	if (state >= FL_PROF_ST_OP_SEND_POSTED && state <= FL_PROF_ST_OP_RECV_DONE)
		return handle && a ? fl_prof_record_op(handle, a->proxy_op.trans_size) : 0;
	return record_args(handle, state, a ? &a->proxy_op.trans_size : NULL);
}

static int record_v4(void *handle, int state, union fl_prof_abi_state_args_v4 *a)
{
	return record_args(handle, state, a ? &a->proxy_step.trans_size : NULL);
}

/* NetPlugin stops call stopEvent(*eHandle) unguarded: NULL must be fine (it is). */
static int stop_any(void *handle)
{
	return fl_prof_stop(handle);
}

static int finalize_any(void *ctx)
{
	return fl_prof_finalize(ctx);
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
TABLE(v2, init_v2, record_v1);
TABLE(v3, init_v3, record_v1);
TABLE(v4, init_v4, record_v4);
TABLE(v5, init_v5, record_v4);
TABLE(v6, init_v6, record_v4);
TABLE(v7, init_v7, record_v4);
