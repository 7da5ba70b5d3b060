/*
 * The calls NCCL makes, per ABI version: init's signature, the descriptor's
 * shape (uint8 type through v4, uint64 from v5), the communicator's hash in
 * v1..v3 Coll descriptors, and state args:
 *  - v1..v3 (2.23-2.26): step states with NULL args (2.23.4
 *    src/misc/profiler.cc:502; 2.26.2 src/plugin/profiler.cc:497), ProxyOp
 *    states with {transSize, steps} (2.26.2 :478-489);
 *  - v4+ (2.27 on): step states with the step's transSize, stale unless the
 *    state refreshes it (reference 2.4): the player passes a wrong stale value
 *    there, so a plugin that reads it counts wrong bytes.
 * A ProxyCtrl event on the proxy's own context comes before the ops it
 * appends (2.23.4 src/proxy.cc:757; 2.26.2 :789; 2.28.9 :807; 2.30.7 :864).
 */
#include <string.h>

#include "player_internal.h"
#include "plugin/abi/profiler_abi.h"

/* v1..v3 report no SendPeerWait (a v4 state); the player does not emit it there. */
#define STALE(size) ((size) * 3 + 7)

static const char *comm_name = "player";

#define INIT_V1(ver)                                                                       \
	static int init_##ver(void **ctx, const struct player_scenario *s, uint64_t hash,    \
			      int rank)                                                      \
	{                                                                                    \
		int mask = 0, rc;                                                            \
                                                                                             \
		(void)s, (void)hash, (void)rank;                                             \
		rc = ncclProfiler_##ver.init(ctx, &mask);                                    \
		return rc ? rc : (mask & FL_PROF_EV_PROXY_STEP) ? 0 : -1;                    \
	}

static int init_v4(void **ctx, const struct player_scenario *s, uint64_t hash, int rank)
{
	int mask = 0, nnodes = s->nranks / s->ranks_per_node;
	int rc = ncclProfiler_v4.init(ctx, &mask, comm_name, hash, nnodes, s->nranks, rank, NULL);

	return rc ? rc : (mask & FL_PROF_EV_PROXY_STEP) ? 0 : -1;
}

#define INIT_V5(ver)                                                                       \
	static int init_##ver(void **ctx, const struct player_scenario *s, uint64_t hash,    \
			      int rank)                                                      \
	{                                                                                    \
		int mask = 0, nnodes = s->nranks / s->ranks_per_node;                        \
		int rc = ncclProfiler_##ver.init(ctx, hash, &mask, comm_name, nnodes,        \
						 s->nranks, rank, NULL);                     \
                                                                                             \
		return rc ? rc : (mask & FL_PROF_EV_PROXY_STEP) ? 0 : -1;                    \
	}

/* A Group then a Coll (v1..v3 carry the hash there), both stopped at once as NCCL does. */
#define COLL_V1(ver)                                                                       \
	static int start_coll_##ver(void *ctx, void **h, uint64_t hash, int rank)           \
	{                                                                                    \
		struct fl_prof_abi_descr_##ver d;                                            \
		void *group = NULL;                                                          \
		int rc;                                                                      \
                                                                                             \
		memset(&d, 0, sizeof(d));                                                    \
		d.type = FL_PROF_EV_GROUP;                                                   \
		rc = ncclProfiler_##ver.start_event(ctx, &group, &d);                        \
		memset(&d, 0, sizeof(d));                                                    \
		d.type = FL_PROF_EV_COLL;                                                    \
		d.parent_obj = group;                                                        \
		d.rank = rank;                                                               \
		d.coll.comm_hash = hash;                                                     \
		d.coll.name = comm_name;                                                     \
		rc = rc ? rc : ncclProfiler_##ver.start_event(ctx, h, &d);                   \
		rc = rc ? rc : ncclProfiler_##ver.stop_event(group);                         \
		return rc;                                                                   \
	}

#define COLL_V4(ver)                                                                       \
	static int start_coll_##ver(void *ctx, void **h, uint64_t hash, int rank)           \
	{                                                                                    \
		struct fl_prof_abi_descr_##ver d;                                            \
		void *group = NULL;                                                          \
		int rc;                                                                      \
                                                                                             \
		(void)hash;                                                                  \
		memset(&d, 0, sizeof(d));                                                    \
		d.type = FL_PROF_EV_GROUP;                                                   \
		rc = ncclProfiler_##ver.start_event(ctx, &group, &d);                        \
		memset(&d, 0, sizeof(d));                                                    \
		d.type = FL_PROF_EV_COLL;                                                    \
		d.rank = rank;                                                               \
		rc = rc ? rc : ncclProfiler_##ver.start_event(ctx, h, &d);                   \
		rc = rc ? rc : ncclProfiler_##ver.stop_event(group);                         \
		return rc;                                                                   \
	}

#define OP(ver)                                                                            \
	static int start_op_##ver(void *ctx, void **h, void *parent,                        \
				  const struct player_link *l, int nsteps, int chunk)       \
	{                                                                                    \
		struct fl_prof_abi_descr_##ver d;                                            \
                                                                                             \
		memset(&d, 0, sizeof(d));                                                    \
		d.type = FL_PROF_EV_PROXY_OP;                                                \
		d.parent_obj = parent;                                                       \
		d.rank = l->rank;                                                            \
		d.proxy_op.pid = l->pid;                                                     \
		d.proxy_op.channel_id = (uint8_t)l->channel;                                 \
		d.proxy_op.peer = l->peer;                                                   \
		d.proxy_op.nsteps = nsteps;                                                  \
		d.proxy_op.chunk_size = chunk;                                               \
		d.proxy_op.is_send = l->is_send;                                             \
		return ncclProfiler_##ver.start_event(ctx, h, &d);                           \
	}                                                                                    \
                                                                                             \
	static int start_step_##ver(void *ctx, void **h, void *parent, int rank, int step)   \
	{                                                                                    \
		struct fl_prof_abi_descr_##ver d;                                            \
                                                                                             \
		memset(&d, 0, sizeof(d));                                                    \
		d.type = FL_PROF_EV_PROXY_STEP;                                              \
		d.parent_obj = parent;                                                       \
		d.rank = rank;                                                               \
		d.proxy_step.step = step;                                                    \
		return ncclProfiler_##ver.start_event(ctx, h, &d);                           \
	}

#define RECORD_V1(ver)                                                                     \
	static int record_##ver(void *h, int state, uint64_t size, int fresh)               \
	{                                                                                    \
		(void)size, (void)fresh;                                                     \
		return ncclProfiler_##ver.record_event_state(h, state, NULL);                \
	}                                                                                    \
	static int record_op_##ver(void *h, int state, uint64_t trans_size)                 \
	{                                                                                    \
		union fl_prof_abi_state_args_v1 a;                                           \
                                                                                             \
		memset(&a, 0, sizeof(a));                                                    \
		a.proxy_op.trans_size = trans_size;                                          \
		return ncclProfiler_##ver.record_event_state(h, state, &a);                  \
	}

#define RECORD_V4(ver)                                                                     \
	static int record_##ver(void *h, int state, uint64_t size, int fresh)               \
	{                                                                                    \
		union fl_prof_abi_state_args_v4 a;                                           \
                                                                                             \
		a.proxy_step.trans_size = fresh ? size : STALE(size);                        \
		return ncclProfiler_##ver.record_event_state(h, state, &a);                  \
	}                                                                                    \
	/* The generator emits no op states from v4 on: reaching this is a player bug. */    \
	static int record_op_##ver(void *h, int state, uint64_t trans_size)                 \
	{                                                                                    \
		(void)h, (void)state, (void)trans_size;                                      \
		return -1;                                                                   \
	}

#define DRIVER(ver)                                                                        \
	static int stop_##ver(void *h)                                                       \
	{                                                                                    \
		return ncclProfiler_##ver.stop_event(h);                                     \
	}                                                                                    \
	static int proxy_ctrl_##ver(void *ctx)                                               \
	{                                                                                    \
		struct fl_prof_abi_descr_##ver d;                                            \
		void *h = NULL;                                                              \
		int rc;                                                                      \
                                                                                             \
		memset(&d, 0, sizeof(d));                                                    \
		d.type = FL_PROF_EV_PROXY_CTRL;                                              \
		rc = ncclProfiler_##ver.start_event(ctx, &h, &d);                            \
		return rc ? rc : h ? ncclProfiler_##ver.stop_event(h) : 0;                   \
	}                                                                                    \
	static int finalize_##ver(void *ctx)                                                 \
	{                                                                                    \
		return ncclProfiler_##ver.finalize(ctx);                                     \
	}                                                                                    \
	static const struct player_driver driver_##ver = {                                   \
		init_##ver, start_coll_##ver, start_op_##ver, start_step_##ver,              \
		record_##ver, record_op_##ver, proxy_ctrl_##ver, \
		stop_##ver, finalize_##ver,                                                  \
	}

INIT_V1(v1)
INIT_V1(v2)
INIT_V1(v3)
INIT_V5(v5)
INIT_V5(v6)
INIT_V5(v7)
COLL_V1(v1)
COLL_V1(v2)
COLL_V1(v3)
COLL_V4(v4)
COLL_V4(v5)
COLL_V4(v6)
COLL_V4(v7)
OP(v1)
OP(v2)
OP(v3)
OP(v4)
OP(v5)
OP(v6)
OP(v7)
RECORD_V1(v1)
RECORD_V1(v2)
RECORD_V1(v3)
RECORD_V4(v4)
RECORD_V4(v5)
RECORD_V4(v6)
RECORD_V4(v7)
DRIVER(v1);
DRIVER(v2);
DRIVER(v3);
DRIVER(v4);
DRIVER(v5);
DRIVER(v6);
DRIVER(v7);

const struct player_driver *player_driver(int version)
{
	static const struct player_driver *const drivers[] = {
		NULL, &driver_v1, &driver_v2, &driver_v3, &driver_v4, &driver_v5, &driver_v6,
		&driver_v7,
	};

	return version >= 1 && version <= 7 ? drivers[version] : NULL;
}
