/*
 * The calls NCCL makes, per ABI version: init's signature, the descriptor's
 * shape (uint8 type through v4, uint64 from v5; v1 names as enumerations, v2+
 * as strings; v1..v3 Coll and P2p carry the communicator's name and hash),
 * and state args:
 *  - v1..v3 (2.23-2.26): step states with NULL args (2.23.4
 *    src/misc/profiler.cc:502; 2.26.2 src/plugin/profiler.cc:497), ProxyOp
 *    states with {transSize, steps} (2.26.2 :478-489);
 *  - v4+ (2.27 on): step states with the step's transSize, stale unless the
 *    state refreshes it (reference 2.4): the player passes a wrong stale value
 *    there, so a plugin that reads it counts wrong bytes.
 * ProxyCtrl states carry appendedProxyOps (2.30.7 src/plugin/profiler.cc:734-744),
 * KernelChStop the kernel's stop pTimer (:694-705), GroupApi states NULL (:319-320).
 * The table is fabriclab's own, linked in, or another plugin's loaded as NCCL
 * loads one (scenario profiler_lib): the same calls either way.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "player_internal.h"
#include "plugin/abi/profiler_abi.h"
#include "plugin/entry/profiler_tables.h"

/* v1..v3 report no SendPeerWait (a v4 state); the player does not emit it there. */
#define STALE(size) ((size) * 3 + 7)

static const char *comm_name = "player";
static const void *table; /* this process's: set by player_load, fabriclab's until then */

static const void *own_table(int version);

#define TBL(ver) ((const struct fl_abi_profiler_##ver *)(table ? table : own_table(VER_##ver)))
#define VER_v1 1
#define VER_v2 2
#define VER_v3 3
#define VER_v4 4
#define VER_v5 5
#define VER_v6 6
#define VER_v7 7

static const void *own_table(int version)
{
	static const void *const own[] = {
		NULL, &ncclProfiler_v1, &ncclProfiler_v2, &ncclProfiler_v3, &ncclProfiler_v4,
		&ncclProfiler_v5, &ncclProfiler_v6, &ncclProfiler_v7,
	};

	return version >= 1 && version <= 7 ? own[version] : NULL;
}

int player_load(const struct player_scenario *s)
{
	char sym[32];
	void *lib;

	if (!s->profiler_lib) {
		table = own_table(s->version);
		return table ? 0 : -1;
	}
	lib = dlopen(s->profiler_lib, RTLD_NOW | RTLD_LOCAL);
	snprintf(sym, sizeof(sym), "ncclProfiler_v%d", s->version);
	table = lib ? dlsym(lib, sym) : NULL;
	if (!table)
		fprintf(stderr, "player: %s: no %s (%s)\n", s->profiler_lib, sym,
			lib ? "not exported" : dlerror());
	return table ? 0 : -1;
}

static int nnodes_of(const struct player_scenario *s)
{
	return s->nranks / s->ranks_per_node;
}

/* NCCL always hands init its logger (ncclDebugLog, 2.30.7 src/plugin/profiler.cc:250-251). */
static void quiet_log(int level, unsigned long flags, const char *file, int line, const char *fmt,
		      ...)
{
	(void)level, (void)flags, (void)file, (void)line, (void)fmt;
}

static fl_abi_logger_fn logger_of(const struct player_scenario *s)
{
	return s->logger ? (fl_abi_logger_fn)s->logger : (fl_abi_logger_fn)quiet_log;
}

#define INIT_V1(ver)                                                                       \
	static int init_mask_##ver(void **ctx, const struct player_scenario *s, uint64_t hash, \
				   int rank, int *mask)                                      \
	{                                                                                    \
		(void)s, (void)hash, (void)rank;                                             \
		return TBL(ver)->init(ctx, mask);                                            \
	}

static int init_mask_v4(void **ctx, const struct player_scenario *s, uint64_t hash, int rank,
			int *mask)
{
	return TBL(v4)->init(ctx, mask, comm_name, hash, nnodes_of(s), s->nranks, rank,
			     logger_of(s));
}

#define INIT_V5(ver)                                                                       \
	static int init_mask_##ver(void **ctx, const struct player_scenario *s, uint64_t hash, \
				   int rank, int *mask)                                      \
	{                                                                                    \
		return TBL(ver)->init(ctx, hash, mask, comm_name, nnodes_of(s), s->nranks,   \
				      rank, logger_of(s));                                   \
	}

/* v1: NCCL 2.23's enumerations (src/include/nccl_common.h and nccl_tuner.h of 2.23.4). */
static uint8_t func_enum(const char *f)
{
	return !strcmp(f, "Send") ? 6 : !strcmp(f, "Recv") ? 7 : 4 /* AllReduce */;
}

/* The members each version shares: header, proxy events. */
#define FILL_HEAD(d, pd)                                                                   \
	do {                                                                               \
		memset(&(d), 0, sizeof(d));                                                \
		(d).type = (pd)->type;                                                     \
		(d).parent_obj = (pd)->parent;                                             \
		(d).rank = (pd)->rank;                                                     \
		if ((pd)->type == FL_PROF_EV_PROXY_OP) {                                   \
			(d).proxy_op.pid = (pd)->link->pid;                                \
			(d).proxy_op.channel_id = (uint8_t)(pd)->link->channel;            \
			(d).proxy_op.peer = (pd)->link->peer;                              \
			(d).proxy_op.nsteps = (pd)->nsteps;                                \
			(d).proxy_op.chunk_size = (pd)->chunk;                             \
			(d).proxy_op.is_send = (pd)->link->is_send;                        \
		} else if ((pd)->type == FL_PROF_EV_PROXY_STEP) {                          \
			(d).proxy_step.step = (pd)->step;                                  \
		}                                                                          \
	} while (0)

static int start_v1(void *ctx, void **h, const struct player_descr *pd)
{
	struct fl_prof_abi_descr_v1 d;

	FILL_HEAD(d, pd);
	if (pd->type == FL_PROF_EV_COLL) {
		d.coll.name = comm_name;
		d.coll.comm_hash = pd->comm_hash;
		d.coll.seq_number = pd->seq;
		d.coll.func = func_enum(pd->func);
		d.coll.count = pd->count;
		d.coll.datatype = 7; /* ncclFloat32 */
		d.coll.n_max_channels = pd->nchannels;
		d.coll.algo = 1;  /* RING */
		d.coll.proto = 2; /* SIMPLE */
	} else if (pd->type == FL_PROF_EV_P2P) {
		d.p2p.name = comm_name;
		d.p2p.comm_hash = pd->comm_hash;
		d.p2p.func = func_enum(pd->func);
		d.p2p.count = pd->count;
		d.p2p.datatype = 7;
		d.p2p.peer = pd->peer;
	}
	return TBL(v1)->start_event(ctx, h, &d);
}

/* v2, v3: the names as strings, the communicator still in Coll and P2p. */
#define START_V23(ver)                                                                     \
	static int start_##ver(void *ctx, void **h, const struct player_descr *pd)          \
	{                                                                                    \
		struct fl_prof_abi_descr_##ver d;                                            \
                                                                                             \
		FILL_HEAD(d, pd);                                                            \
		if (pd->type == FL_PROF_EV_COLL) {                                           \
			d.coll.name = comm_name;                                             \
			d.coll.comm_hash = pd->comm_hash;                                    \
			d.coll.seq_number = pd->seq;                                         \
			d.coll.func = pd->func;                                              \
			d.coll.count = pd->count;                                            \
			d.coll.datatype = "ncclFloat32";                                     \
			d.coll.n_max_channels = pd->nchannels;                               \
			d.coll.algo = "RING";                                                \
			d.coll.proto = "SIMPLE";                                             \
		} else if (pd->type == FL_PROF_EV_P2P) {                                     \
			d.p2p.name = comm_name;                                              \
			d.p2p.comm_hash = pd->comm_hash;                                     \
			d.p2p.func = pd->func;                                               \
			d.p2p.count = pd->count;                                             \
			d.p2p.datatype = "ncclFloat32";                                      \
			d.p2p.peer = pd->peer;                                               \
		}                                                                            \
		return TBL(ver)->start_event(ctx, h, &d);                                    \
	}

/* v4 .. v7: Coll and P2p without the communicator; KernelCh with its pTimer. */
#define FILL_V4(d, pd)                                                                     \
	do {                                                                               \
		if ((pd)->type == FL_PROF_EV_COLL) {                                       \
			(d).coll.seq_number = (pd)->seq;                                   \
			(d).coll.func = (pd)->func;                                        \
			(d).coll.count = (pd)->count;                                      \
			(d).coll.datatype = "ncclFloat32";                                 \
			(d).coll.n_channels = (pd)->nchannels;                             \
			(d).coll.algo = "RING";                                            \
			(d).coll.proto = "SIMPLE";                                         \
		} else if ((pd)->type == FL_PROF_EV_P2P) {                                 \
			(d).p2p.func = (pd)->func;                                         \
			(d).p2p.count = (pd)->count;                                       \
			(d).p2p.datatype = "ncclFloat32";                                  \
			(d).p2p.peer = (pd)->peer;                                         \
			(d).p2p.n_channels = (pd)->nchannels;                              \
		} else if ((pd)->type == FL_PROF_EV_KERNEL_CH) {                           \
			(d).kernel_ch.channel_id = (pd)->channel;                          \
			(d).kernel_ch.p_timer = (pd)->p_timer;                             \
		}                                                                          \
	} while (0)

static int start_v4(void *ctx, void **h, const struct player_descr *pd)
{
	struct fl_prof_abi_descr_v4 d;

	FILL_HEAD(d, pd);
	FILL_V4(d, pd);
	return TBL(v4)->start_event(ctx, h, &d);
}

/* v5 .. v7 add the API events and a Coll's or P2p's Group beside its API parent. */
#define START_V5(ver)                                                                      \
	static int start_##ver(void *ctx, void **h, const struct player_descr *pd)          \
	{                                                                                    \
		struct fl_prof_abi_descr_##ver d;                                            \
                                                                                             \
		FILL_HEAD(d, pd);                                                            \
		FILL_V4(d, pd);                                                              \
		if (pd->type == FL_PROF_EV_COLL) {                                           \
			d.coll.parent_group = pd->parent_group;                              \
		} else if (pd->type == FL_PROF_EV_P2P) {                                     \
			d.p2p.parent_group = pd->parent_group;                               \
		} else if (pd->type == FL_PROF_EV_GROUP_API) {                               \
			d.group_api.group_depth = pd->group_depth;                           \
		} else if (pd->type == FL_PROF_EV_COLL_API) {                                \
			d.coll_api.func = pd->func;                                          \
			d.coll_api.count = pd->count;                                        \
			d.coll_api.datatype = "ncclFloat32";                                 \
			d.coll_api.root = pd->root;                                          \
		} else if (pd->type == FL_PROF_EV_P2P_API) {                                 \
			d.p2p_api.func = pd->func;                                           \
			d.p2p_api.count = pd->count;                                         \
			d.p2p_api.datatype = "ncclFloat32";                                  \
		}                                                                            \
		return TBL(ver)->start_event(ctx, h, &d);                                    \
	}

#define RECORD_V1(ver)                                                                     \
	static int record_##ver(void *h, int state, uint64_t size, int fresh)               \
	{                                                                                    \
		(void)size, (void)fresh;                                                     \
		return TBL(ver)->record_event_state(h, state, NULL);                         \
	}                                                                                    \
	static int record_op_##ver(void *h, int state, uint64_t trans_size)                 \
	{                                                                                    \
		union fl_prof_abi_state_args_v1 a;                                           \
                                                                                             \
		memset(&a, 0, sizeof(a));                                                    \
		a.proxy_op.trans_size = trans_size;                                          \
		return TBL(ver)->record_event_state(h, state, &a);                           \
	}                                                                                    \
	static int record_arg_##ver(void *h, int state, uint64_t value)                     \
	{                                                                                    \
		union fl_prof_abi_state_args_v1 a;                                           \
                                                                                             \
		memset(&a, 0, sizeof(a));                                                    \
		a.proxy_ctrl.appended_proxy_ops = (int)value;                                \
		return TBL(ver)->record_event_state(h, state, &a);                           \
	}

#define RECORD_V4(ver)                                                                     \
	static int record_##ver(void *h, int state, uint64_t size, int fresh)               \
	{                                                                                    \
		union fl_prof_abi_state_args_v4 a;                                           \
                                                                                             \
		a.proxy_step.trans_size = fresh ? size : STALE(size);                        \
		return TBL(ver)->record_event_state(h, state, &a);                           \
	}                                                                                    \
	/* The generator emits no op states from v4 on: reaching this is a player bug. */    \
	static int record_op_##ver(void *h, int state, uint64_t trans_size)                 \
	{                                                                                    \
		(void)h, (void)state, (void)trans_size;                                      \
		return -1;                                                                   \
	}                                                                                    \
	static int record_arg_##ver(void *h, int state, uint64_t value)                     \
	{                                                                                    \
		union fl_prof_abi_state_args_v4 a;                                           \
                                                                                             \
		if (state == FL_PROF_ST_GROUP_START_API_STOP ||                              \
		    state == FL_PROF_ST_GROUP_END_API_START)                                 \
			return TBL(ver)->record_event_state(h, state, NULL);                 \
		memset(&a, 0, sizeof(a));                                                    \
		if (state == FL_PROF_ST_KERNEL_CH_STOP)                                      \
			a.kernel_ch.p_timer = value;                                         \
		else                                                                         \
			a.proxy_ctrl.appended_proxy_ops = (int)value;                        \
		return TBL(ver)->record_event_state(h, state, &a);                           \
	}

#define DRIVER(ver)                                                                        \
	static int init_##ver(void **ctx, const struct player_scenario *s, uint64_t hash,    \
			      int rank)                                                      \
	{                                                                                    \
		int mask = 0, rc = init_mask_##ver(ctx, s, hash, rank, &mask);               \
                                                                                             \
		return rc ? rc : (mask & FL_PROF_EV_PROXY_STEP) ? 0 : -1;                    \
	}                                                                                    \
	static int start_coll_##ver(void *ctx, void **h, uint64_t hash, int rank)           \
	{                                                                                    \
		struct player_descr pd = { .type = FL_PROF_EV_GROUP };                       \
		void *group = NULL;                                                          \
		int rc = start_##ver(ctx, &group, &pd);                                      \
                                                                                             \
		pd = (struct player_descr){ .type = FL_PROF_EV_COLL, .parent = group,        \
					    .parent_group = group, .rank = rank,             \
					    .comm_hash = hash, .func = "AllReduce" };        \
		rc = rc ? rc : start_##ver(ctx, h, &pd);                                     \
		return rc ? rc : group ? TBL(ver)->stop_event(group) : 0;                    \
	}                                                                                    \
	static int start_op_##ver(void *ctx, void **h, void *parent,                        \
				  const struct player_link *l, int nsteps, int chunk)       \
	{                                                                                    \
		struct player_descr pd = { .type = FL_PROF_EV_PROXY_OP, .parent = parent,    \
					   .rank = l->rank, .link = l, .nsteps = nsteps,     \
					   .chunk = chunk };                                 \
                                                                                             \
		return start_##ver(ctx, h, &pd);                                             \
	}                                                                                    \
	static int start_step_##ver(void *ctx, void **h, void *parent, int rank, int step)   \
	{                                                                                    \
		struct player_descr pd = { .type = FL_PROF_EV_PROXY_STEP, .parent = parent,  \
					   .rank = rank, .step = step };                     \
                                                                                             \
		return start_##ver(ctx, h, &pd);                                             \
	}                                                                                    \
	static int proxy_ctrl_##ver(void *ctx)                                               \
	{                                                                                    \
		struct player_descr pd = { .type = FL_PROF_EV_PROXY_CTRL };                  \
		void *h = NULL;                                                              \
		int rc = start_##ver(ctx, &h, &pd);                                          \
                                                                                             \
		return rc ? rc : h ? TBL(ver)->stop_event(h) : 0;                            \
	}                                                                                    \
	static int stop_##ver(void *h)                                                       \
	{                                                                                    \
		return TBL(ver)->stop_event(h);                                              \
	}                                                                                    \
	static int finalize_##ver(void *ctx)                                                 \
	{                                                                                    \
		return TBL(ver)->finalize(ctx);                                              \
	}                                                                                    \
	static const struct player_driver driver_##ver = {                                   \
		.init_mask = init_mask_##ver, .init = init_##ver, .start = start_##ver,      \
		.start_coll = start_coll_##ver, .start_op = start_op_##ver,                  \
		.start_step = start_step_##ver, .record = record_##ver,                      \
		.record_op = record_op_##ver, .record_arg = record_arg_##ver,                \
		.proxy_ctrl = proxy_ctrl_##ver, .stop = stop_##ver,                          \
		.finalize = finalize_##ver,                                                  \
	}

INIT_V1(v1)
INIT_V1(v2)
INIT_V1(v3)
INIT_V5(v5)
INIT_V5(v6)
INIT_V5(v7)
START_V23(v2)
START_V23(v3)
START_V5(v5)
START_V5(v6)
START_V5(v7)
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
