/*
 * NCCL's profiler-plugin ABI, versions v1..v7, in our own names: the event
 * descriptors, state arguments, event type bits and states NCCL passes through
 * ncclProfiler_vN. Written from the facts in reference/nccl-abi.md (sections
 * 2.2-2.6 and the corrections in 2.10), v5 and v6 from 2.28.9 and 2.30.7's
 * headers, v7 from NCCL 2.31.2's (NVIDIA/nccl 889806836097). We measure with
 * only the ProxyOp, ProxyStep and (v1-v3) Coll/P2p members; a chained next
 * profiler of an older version gets the others copied (profiler_convert.c).
 * Each union is declared in full so that the descriptor sizes, and every offset
 * read or copied, are asserted below: a wrong field fails the build instead of
 * reading garbage on NCCL's proxy thread. v1..v4 members we never read by name
 * are opaque words of the right width.
 */
#ifndef FL_PROFILER_ABI_H
#define FL_PROFILER_ABI_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "nccl_abi.h"

/* Event type bits (ncclProfile*), the same values in every version that has them. */
#define FL_PROF_EV_GROUP (1u << 0)
#define FL_PROF_EV_COLL (1u << 1)
#define FL_PROF_EV_P2P (1u << 2)
#define FL_PROF_EV_PROXY_OP (1u << 3)
#define FL_PROF_EV_PROXY_STEP (1u << 4)
#define FL_PROF_EV_PROXY_CTRL (1u << 5)
#define FL_PROF_EV_KERNEL_CH (1u << 6)   /* v3+ */
#define FL_PROF_EV_NET_PLUGIN (1u << 7)  /* v3+ */
#define FL_PROF_EV_GROUP_API (1u << 8)   /* v5+ */
#define FL_PROF_EV_COLL_API (1u << 9)    /* v5+ */
#define FL_PROF_EV_P2P_API (1u << 10)    /* v5+ */
#define FL_PROF_EV_KERNEL_LAUNCH (1u << 11)
#define FL_PROF_EV_CE_COLL (1u << 12)    /* v6+ */
#define FL_PROF_EV_CE_SYNC (1u << 13)
#define FL_PROF_EV_CE_BATCH (1u << 14)
/* v7 (2.31.2, NVIDIA/nccl 889806836097 src/include/plugin/nccl_profiler.h: "ncclProfileKernelPhase"). */
#define FL_PROF_EV_KERNEL_PHASE (1u << 15)
/* The bits each version defines: NCCL's adapters strip the newer ones from an older plugin's mask. */
#define FL_PROF_EV_BITS(ver) ((ver) <= 2 ? 0x3fu : (ver) <= 4 ? 0xffu : (ver) == 5 ? 0xfffu \
			      : (ver) == 6 ? 0x7fffu : 0xffffu)

/* ncclProfilerEventState_t: one numeric space for all versions (an int-sized enum). */
enum fl_prof_abi_state {
	/* ProxyOp states 0..7: 2.23-2.26 size the transfer here (transSize, a running total). */
	FL_PROF_ST_OP_SEND_POSTED = 0,
	FL_PROF_ST_OP_SEND_REM_FIFO_WAIT = 1,
	FL_PROF_ST_OP_SEND_TRANSMITTED = 2,
	FL_PROF_ST_OP_SEND_DONE = 3,
	FL_PROF_ST_OP_RECV_POSTED = 4,
	FL_PROF_ST_OP_RECV_RECEIVED = 5,
	FL_PROF_ST_OP_RECV_TRANSMITTED = 6,
	FL_PROF_ST_OP_RECV_DONE = 7,
	FL_PROF_ST_STEP_SEND_GPU_WAIT = 8,
	FL_PROF_ST_STEP_SEND_WAIT = 9,   /* transSize fresh: bytes of this isend */
	FL_PROF_ST_STEP_RECV_WAIT = 10,
	FL_PROF_ST_STEP_RECV_FLUSH_WAIT = 11, /* transSize fresh: bytes received */
	FL_PROF_ST_STEP_RECV_GPU_WAIT = 12,
	FL_PROF_ST_CTRL_IDLE = 13, /* ProxyCtrl states 13..18: args carry appendedProxyOps */
	FL_PROF_ST_CTRL_APPEND_END = 18,
	FL_PROF_ST_OP_IN_PROGRESS_V4 = 19, /* v4's adapter passes uninitialised args */
	FL_PROF_ST_STEP_SEND_PEER_WAIT_V4 = 20, /* recorded again on every isend retry */
	FL_PROF_ST_NET_PLUGIN_UPDATE = 21,
	FL_PROF_ST_KERNEL_CH_STOP = 22,
	FL_PROF_ST_GROUP_START_API_STOP = 23, /* v5+: GroupApi states, NULL args */
	FL_PROF_ST_GROUP_END_API_START = 24,
	FL_PROF_ST_CE_FIRST = 25, /* v6+: CE states 25..30 */
	FL_PROF_ST_CE_LAST = 30,
	FL_PROF_ST_KERNEL_PHASE_STOP = 31, /* v7 */
};

/* Opaque words: members of the unions we never read. */
typedef const void *fl_prof_ptr;

/* proxyOp, identical in every version (at descriptor offset 24). */
struct fl_prof_abi_proxy_op {
	pid_t pid;          /* the originating process: another one means PXN */
	uint8_t channel_id;
	int peer;           /* a rank of the communicator, not a top-parent rank */
	int nsteps;
	int chunk_size;
	int is_send;
};

struct fl_prof_abi_proxy_step {
	int step;
};

struct fl_prof_abi_net_plugin {
	int64_t id;
	fl_prof_ptr data;
};

/* ---- v1 (2.23): uint8 type, integer func/datatype/algo/proto in coll ---- */
struct fl_prof_abi_descr_v1 {
	uint8_t type;
	void *parent_obj;
	int rank; /* the originating rank */
	union {
		struct {
			const char *name;
			uint64_t comm_hash;
			uint64_t seq_number;
			uint8_t func;
			fl_prof_ptr send_buff, recv_buff;
			size_t count;
			int root;
			uint8_t datatype;
			uint32_t op;
			size_t traffic_bytes;
			uint8_t n_max_channels, n_warps, algo, proto;
			int is_collnet, is_nvls;
		} coll;
		struct {
			const char *name;
			uint64_t comm_hash;
			uint8_t func;
			fl_prof_ptr buff;
			uint8_t datatype;
			size_t count;
			int peer;
		} p2p;
		struct fl_prof_abi_proxy_op proxy_op;
		struct fl_prof_abi_proxy_step proxy_step;
	};
};

/* ---- v2 (2.24): coll names become strings; op, isCollnet, isNvls gone ---- */
struct fl_prof_abi_descr_v2 {
	uint8_t type;
	void *parent_obj;
	int rank;
	union {
		struct {
			const char *name;
			uint64_t comm_hash;
			uint64_t seq_number;
			fl_prof_ptr func, send_buff, recv_buff;
			size_t count;
			int root;
			fl_prof_ptr datatype;
			size_t traffic_bytes;
			uint8_t n_max_channels, n_warps;
			fl_prof_ptr algo, proto;
		} coll;
		struct {
			const char *name;
			uint64_t comm_hash;
			fl_prof_ptr func, buff, datatype;
			size_t count;
			int peer;
		} p2p;
		struct fl_prof_abi_proxy_op proxy_op;
		struct fl_prof_abi_proxy_step proxy_step;
	};
};

/* ---- v3 (2.26): trafficBytes gone; KernelCh and NetPlugin events ---- */
struct fl_prof_abi_descr_v3 {
	uint8_t type;
	void *parent_obj;
	int rank;
	union {
		struct {
			const char *name;
			uint64_t comm_hash;
			uint64_t seq_number;
			fl_prof_ptr func, send_buff, recv_buff;
			size_t count;
			int root;
			fl_prof_ptr datatype;
			uint8_t n_max_channels, n_warps;
			fl_prof_ptr algo, proto;
		} coll;
		struct {
			const char *name;
			uint64_t comm_hash;
			fl_prof_ptr func, buff, datatype;
			size_t count;
			int peer;
		} p2p;
		struct fl_prof_abi_proxy_op proxy_op;
		struct fl_prof_abi_proxy_step proxy_step;
		struct {
			uint8_t channel_id;
		} kernel_ch;
		struct fl_prof_abi_net_plugin net_plugin;
	};
};

/* v1..v3 state args: proxyOp {transSize, steps} | proxyCtrl {appendedProxyOps}. */
union fl_prof_abi_state_args_v1 {
	struct {
		size_t trans_size;
		int steps;
	} proxy_op;
	struct {
		int appended_proxy_ops;
	} proxy_ctrl;
};

/* ---- v4 (2.27): name and commHash move to init; kernelCh gains pTimer ---- */
struct fl_prof_abi_descr_v4 {
	uint8_t type;
	void *parent_obj;
	int rank;
	union {
		struct {
			uint64_t seq_number;
			fl_prof_ptr func, send_buff, recv_buff;
			size_t count;
			int root;
			fl_prof_ptr datatype;
			uint8_t n_channels, n_warps;
			fl_prof_ptr algo, proto;
		} coll;
		struct {
			fl_prof_ptr func, buff, datatype;
			size_t count;
			int peer;
			uint8_t n_channels;
		} p2p;
		struct fl_prof_abi_proxy_op proxy_op;
		struct fl_prof_abi_proxy_step proxy_step;
		struct {
			uint8_t channel_id;
			uint64_t p_timer;
		} kernel_ch;
		struct fl_prof_abi_net_plugin net_plugin;
	};
};

/* v4+ state args (8 bytes): proxyStep.transSize | appendedProxyOps | netPlugin.data | pTimer. */
union fl_prof_abi_state_args_v4 {
	struct {
		size_t trans_size;
	} proxy_step;
	struct {
		int appended_proxy_ops;
	} proxy_ctrl;
	struct {
		fl_prof_ptr data;
	} net_plugin;
	struct {
		uint64_t p_timer;
	} kernel_ch;
};

/* ---- v5 (2.28) and v6 (2.29): uint64 type, API events, parentGroup ---- */
/* The members v5, v6 and v7 share: each later version only appends (checked below). */
#define FL_PROF_V5_MEMBERS                                                                 \
	struct {                                                                           \
		_Bool graph_captured;                                                      \
		int group_depth;                                                           \
	} group_api;                                                                       \
	struct {                                                                           \
		const char *func;                                                          \
		size_t count;                                                              \
		const char *datatype;                                                      \
		int root;                                                                  \
		fl_prof_ptr stream;                                                        \
		_Bool graph_captured;                                                      \
	} coll_api;                                                                        \
	struct {                                                                           \
		const char *func;                                                          \
		size_t count;                                                              \
		const char *datatype;                                                      \
		fl_prof_ptr stream;                                                        \
		_Bool graph_captured;                                                      \
	} p2p_api;                                                                         \
	struct {                                                                           \
		fl_prof_ptr stream;                                                        \
	} kernel_launch;                                                                   \
	struct {                                                                           \
		uint64_t seq_number;                                                       \
		const char *func;                                                          \
		fl_prof_ptr send_buff, recv_buff;                                          \
		size_t count;                                                              \
		int root;                                                                  \
		const char *datatype;                                                      \
		uint8_t n_channels, n_warps;                                               \
		const char *algo, *proto;                                                  \
		void *parent_group;                                                        \
	} coll;                                                                            \
	struct {                                                                           \
		const char *func;                                                          \
		fl_prof_ptr buff;                                                          \
		const char *datatype;                                                      \
		size_t count;                                                              \
		int peer;                                                                  \
		uint8_t n_channels;                                                        \
		void *parent_group;                                                        \
	} p2p;                                                                             \
	struct fl_prof_abi_proxy_op proxy_op;                                              \
	struct fl_prof_abi_proxy_step proxy_step;                                          \
	struct {                                                                           \
		uint8_t channel_id;                                                        \
		uint64_t p_timer;                                                          \
	} kernel_ch;                                                                       \
	struct fl_prof_abi_net_plugin net_plugin

/* 2.28.9 src/include/plugin/profiler/profiler_v5.h:10-89 (unchanged at 2.30.7). */
struct fl_prof_abi_descr_v5 {
	uint64_t type;
	void *parent_obj; /* a Coll's parent is its CollApi event (NULL when not enabled) */
	int rank;
	union {
		FL_PROF_V5_MEMBERS;
	};
};

/* v6 adds the copy-engine events (2.30.7 src/include/plugin/profiler/profiler_v6.h:14-122). */
#define FL_PROF_V6_CE_MEMBERS                                                              \
	struct {                                                                           \
		uint64_t seq_number;                                                       \
		const char *func;                                                          \
		fl_prof_ptr send_buff, recv_buff;                                          \
		size_t count;                                                              \
		int root;                                                                  \
		const char *datatype, *sync_strategy;                                      \
		_Bool intra_batch_sync;                                                    \
		uint32_t batch_size, num_batches, ce_seq_num;                              \
		fl_prof_ptr stream;                                                        \
	} ce_coll;                                                                         \
	struct {                                                                           \
		_Bool is_complete;                                                         \
		int nranks;                                                                \
	} ce_sync;                                                                         \
	struct {                                                                           \
		int num_ops;                                                               \
		size_t total_bytes;                                                        \
		_Bool use_intra_sync;                                                      \
	} ce_batch

struct fl_prof_abi_descr_v6 {
	uint64_t type;
	void *parent_obj;
	int rank;
	union {
		FL_PROF_V5_MEMBERS;
		FL_PROF_V6_CE_MEMBERS;
	};
};

typedef union fl_prof_abi_state_args_v4 fl_prof_abi_state_args_v5;

/*
 * v7 as NCCL 2.31.2 defines it (NVIDIA/nccl 889806836097, makefiles/version.mk 2.31.2;
 * src/include/plugin/profiler/profiler_v7.h:13-136; "Use v7 as default" in nccl_profiler.h):
 * v6's members, each with a userTag appended to collApi (:31), p2pApi (:40), coll (after
 * kernelVariant and isSymColl, :60-62), p2p (:73) and ceColl (:114), and a new kernelPhase
 * event (:128-134). Every v6 member is thus a prefix of its v7 member: the first 112 bytes of
 * a v7 descriptor are a v6 descriptor of the same event (NCCL's own v6 adapter copies those
 * fields one by one, 889806836097 src/plugin/profiler/profiler_v6.cc, ncclProfiler_startEvent).
 */
struct fl_prof_abi_descr_v7 {
	uint64_t type;
	void *parent_obj;
	int rank;
	union {
		FL_PROF_V5_MEMBERS;
		FL_PROF_V6_CE_MEMBERS;
		struct {
			fl_prof_ptr f[6];
			uint64_t user_tag;
		} coll_api_v7;
		struct {
			fl_prof_ptr f[5];
			uint64_t user_tag;
		} p2p_api_v7;
		struct {
			fl_prof_ptr f[11];
			const char *kernel_variant;
			_Bool is_sym_coll;
			uint64_t user_tag;
		} coll_v7;
		struct {
			fl_prof_ptr f[6];
			uint64_t user_tag;
		} p2p_v7;
		struct {
			fl_prof_ptr f[11];
			uint64_t user_tag;
		} ce_coll_v7;
		struct {
			uint8_t channel_id, phase_id;
			const char *phase_name;
			uint64_t p_timer;
		} kernel_phase;
	};
};

/* The function tables: the same six slots (48 bytes) in every version; init differs. */
#define FL_PROF_TABLE(ver, init_args, descr, args)                                        \
	struct fl_abi_profiler_##ver {                                                     \
		const char *name;                                                          \
		int (*init) init_args;                                                     \
		int (*start_event)(void *context, void **handle, struct descr *d);        \
		int (*stop_event)(void *handle);                                           \
		int (*record_event_state)(void *handle, int state, args *a);               \
		int (*finalize)(void *context);                                            \
	}

#define FL_PROF_INIT_V1 (void **context, int *activation_mask)
#define FL_PROF_INIT_V4                                                                   \
	(void **context, int *activation_mask, const char *comm_name, uint64_t comm_hash,  \
	 int nnodes, int nranks, int rank, fl_abi_logger_fn logger)
#define FL_PROF_INIT_V5                                                                   \
	(void **context, uint64_t comm_id, int *activation_mask, const char *comm_name,    \
	 int nnodes, int nranks, int rank, fl_abi_logger_fn logger)

FL_PROF_TABLE(v1, FL_PROF_INIT_V1, fl_prof_abi_descr_v1, union fl_prof_abi_state_args_v1);
FL_PROF_TABLE(v2, FL_PROF_INIT_V1, fl_prof_abi_descr_v2, union fl_prof_abi_state_args_v1);
FL_PROF_TABLE(v3, FL_PROF_INIT_V1, fl_prof_abi_descr_v3, union fl_prof_abi_state_args_v1);
FL_PROF_TABLE(v4, FL_PROF_INIT_V4, fl_prof_abi_descr_v4, union fl_prof_abi_state_args_v4);
FL_PROF_TABLE(v5, FL_PROF_INIT_V5, fl_prof_abi_descr_v5, fl_prof_abi_state_args_v5);
FL_PROF_TABLE(v6, FL_PROF_INIT_V5, fl_prof_abi_descr_v6, fl_prof_abi_state_args_v5);
FL_PROF_TABLE(v7, FL_PROF_INIT_V5, fl_prof_abi_descr_v7, fl_prof_abi_state_args_v5);

/* The ncclProfiler_vN tables fabriclab exports are declared in entry/profiler_tables.h. */

/*
 * The table an NCCL takes (its version code: major*10000 + minor*100 + patch),
 * 0 when it has no profiler interface: 2.23 v1, 2.24-2.25 v2, 2.26 v3, 2.27 v4,
 * 2.28 v5, 2.29-2.30 v6, 2.31 on v7 (reference nccl-conformance.md, Profiler plugins).
 */
static inline int fl_prof_abi_for_nccl(int code)
{
	int minor = code >= 20000 && code < 30000 ? code / 100 % 100 : -1;

	if (minor < 23)
		return 0;
	return minor == 23 ? 1 : minor <= 25 ? 2 : minor == 26 ? 3 : minor == 27 ? 4
	       : minor == 28 ? 5 : minor <= 30 ? 6 : 7;
}

/* ---- the facts, checked: reference 2.2, 2.5, 2.10 (x86-64 / LP64) ---- */
#define FL_PROF_CHECK_PREFIX(T, type_size)                                                \
	_Static_assert(sizeof(((struct T *)0)->type) == (type_size), #T " type width");    \
	_Static_assert(offsetof(struct T, parent_obj) == 8, #T " parentObj");              \
	_Static_assert(offsetof(struct T, rank) == 16, #T " rank");                        \
	_Static_assert(offsetof(struct T, proxy_op.pid) == 24, #T " proxyOp.pid");         \
	_Static_assert(offsetof(struct T, proxy_op.channel_id) == 28, #T " channelId");    \
	_Static_assert(offsetof(struct T, proxy_op.peer) == 32, #T " proxyOp.peer");       \
	_Static_assert(offsetof(struct T, proxy_op.nsteps) == 36, #T " proxyOp.nSteps");   \
	_Static_assert(offsetof(struct T, proxy_op.chunk_size) == 40, #T " chunkSize");    \
	_Static_assert(offsetof(struct T, proxy_op.is_send) == 44, #T " proxyOp.isSend");  \
	_Static_assert(offsetof(struct T, proxy_step.step) == 24, #T " proxyStep.step")

FL_PROF_CHECK_PREFIX(fl_prof_abi_descr_v1, 1);
FL_PROF_CHECK_PREFIX(fl_prof_abi_descr_v2, 1);
FL_PROF_CHECK_PREFIX(fl_prof_abi_descr_v3, 1);
FL_PROF_CHECK_PREFIX(fl_prof_abi_descr_v4, 1);
FL_PROF_CHECK_PREFIX(fl_prof_abi_descr_v5, 8);
FL_PROF_CHECK_PREFIX(fl_prof_abi_descr_v6, 8);
FL_PROF_CHECK_PREFIX(fl_prof_abi_descr_v7, 8);
_Static_assert(offsetof(struct fl_prof_abi_descr_v7, net_plugin.data) == 32, "v7 netPlugin");

/* Sizes: v1..v3 from their members' layout, v4 104, v5 and v6 112 (reference 2.10). */
_Static_assert(sizeof(struct fl_prof_abi_descr_v1) == 120, "v1 descriptor size");
_Static_assert(sizeof(struct fl_prof_abi_descr_v2) == 128, "v2 descriptor size");
_Static_assert(sizeof(struct fl_prof_abi_descr_v3) == 120, "v3 descriptor size");
_Static_assert(sizeof(struct fl_prof_abi_descr_v4) == 104, "v4 descriptor size");
_Static_assert(sizeof(struct fl_prof_abi_descr_v5) == 112, "v5 descriptor size");
_Static_assert(sizeof(struct fl_prof_abi_descr_v6) == 112, "v6 descriptor size");
/* The members v1..v3 read to learn the communicator (init does not tell them). */
_Static_assert(offsetof(struct fl_prof_abi_descr_v1, coll.comm_hash) == 32, "v1 coll.commHash");
_Static_assert(offsetof(struct fl_prof_abi_descr_v1, p2p.comm_hash) == 32, "v1 p2p.commHash");
_Static_assert(offsetof(struct fl_prof_abi_descr_v2, coll.comm_hash) == 32, "v2 coll.commHash");
_Static_assert(offsetof(struct fl_prof_abi_descr_v3, p2p.comm_hash) == 32, "v3 p2p.commHash");
_Static_assert(offsetof(struct fl_prof_abi_descr_v4, net_plugin.data) == 32, "v4 netPlugin");
_Static_assert(offsetof(struct fl_prof_abi_descr_v5, net_plugin.data) == 32, "v5 netPlugin");
_Static_assert(offsetof(struct fl_prof_abi_descr_v5, coll.parent_group) == 104, "v5 parentGroup");
_Static_assert(offsetof(struct fl_prof_abi_descr_v5, p2p.parent_group) == 64, "v5 p2p.parentGroup");
_Static_assert(offsetof(struct fl_prof_abi_descr_v5, p2p.n_channels) == 60, "v5 p2p.nChannels");
_Static_assert(offsetof(struct fl_prof_abi_descr_v5, coll.algo) == 88, "v5 coll.algo");
_Static_assert(offsetof(struct fl_prof_abi_descr_v5, coll_api.graph_captured) == 64, "v5 collApi");
_Static_assert(offsetof(struct fl_prof_abi_descr_v5, group_api.group_depth) == 28, "v5 groupApi");
_Static_assert(offsetof(struct fl_prof_abi_descr_v5, kernel_ch.p_timer) == 32, "v5 kernelCh.pTimer");
_Static_assert(offsetof(struct fl_prof_abi_descr_v4, kernel_ch.p_timer) == 32, "v4 kernelCh.pTimer");
_Static_assert(offsetof(struct fl_prof_abi_descr_v4, p2p.n_channels) == 60, "v4 p2p.nChannels");
_Static_assert(offsetof(struct fl_prof_abi_descr_v4, coll.proto) == 96, "v4 coll.proto");
_Static_assert(offsetof(struct fl_prof_abi_descr_v3, coll.proto) == 112, "v3 coll.proto");
_Static_assert(offsetof(struct fl_prof_abi_descr_v3, kernel_ch.channel_id) == 24, "v3 kernelCh");
_Static_assert(offsetof(struct fl_prof_abi_descr_v2, coll.traffic_bytes) == 96, "v2 trafficBytes");
_Static_assert(offsetof(struct fl_prof_abi_descr_v1, coll.proto) == 107, "v1 coll.proto");
/* v6: v5's members in place, the CE ones within the same 88-byte union (profiler_v6.h:95-120). */
_Static_assert(offsetof(struct fl_prof_abi_descr_v6, coll.parent_group) == 104, "v6 parentGroup");
_Static_assert(offsetof(struct fl_prof_abi_descr_v6, ce_coll.stream) == 104, "v6 ceColl.stream");
_Static_assert(offsetof(struct fl_prof_abi_descr_v6, ce_batch.use_intra_sync) == 40, "v6 ceBatch");
/*
 * v7, every offset read or copied, against 889806836097 src/include/plugin/profiler/profiler_v7.h
 * (line of the member): collApi.userTag :31 @72, p2pApi.userTag :40 @64, coll.kernelVariant :60
 * @112, coll.isSymColl :61 @120, coll.userTag :62 @128, p2p.userTag :73 @72, ceColl.userTag :114
 * @112, kernelPhase :128-134 (channelId @24, phaseId @25, phaseName @32, pTimer @40); the
 * descriptor (:13-136) 136 bytes, its state args (:138-157) v6's 8.
 */
_Static_assert(offsetof(struct fl_prof_abi_descr_v7, coll_api_v7.user_tag) == 72, "v7 collApi.userTag");
_Static_assert(offsetof(struct fl_prof_abi_descr_v7, coll_api.graph_captured) == 64, "v7 collApi");
_Static_assert(offsetof(struct fl_prof_abi_descr_v7, p2p_api_v7.user_tag) == 64, "v7 p2pApi.userTag");
_Static_assert(offsetof(struct fl_prof_abi_descr_v7, coll.parent_group) == 104, "v7 parentGroup");
_Static_assert(offsetof(struct fl_prof_abi_descr_v7, coll_v7.kernel_variant) == 112, "v7 kernelVariant");
_Static_assert(offsetof(struct fl_prof_abi_descr_v7, coll_v7.is_sym_coll) == 120, "v7 isSymColl");
_Static_assert(offsetof(struct fl_prof_abi_descr_v7, coll_v7.user_tag) == 128, "v7 coll.userTag");
_Static_assert(offsetof(struct fl_prof_abi_descr_v7, p2p_v7.user_tag) == 72, "v7 p2p.userTag");
_Static_assert(offsetof(struct fl_prof_abi_descr_v7, ce_coll_v7.user_tag) == 112, "v7 ceColl.userTag");
_Static_assert(offsetof(struct fl_prof_abi_descr_v7, kernel_phase.phase_id) == 25, "v7 phaseId");
_Static_assert(offsetof(struct fl_prof_abi_descr_v7, kernel_phase.phase_name) == 32, "v7 phaseName");
_Static_assert(offsetof(struct fl_prof_abi_descr_v7, kernel_phase.p_timer) == 40, "v7 kernelPhase.pTimer");
_Static_assert(sizeof(struct fl_prof_abi_descr_v7) == 136, "v7 descriptor size");
/* State args: transSize first in every version; 16 bytes in v1..v3, 8 from v4. */
_Static_assert(offsetof(union fl_prof_abi_state_args_v1, proxy_op.trans_size) == 0, "v1 args");
_Static_assert(sizeof(union fl_prof_abi_state_args_v1) == 16, "v1 state args size");
_Static_assert(sizeof(union fl_prof_abi_state_args_v4) == 8, "v4 state args size");
/* Function tables: 48 bytes, init @8, start @16, stop @24, record @32, finalize @40. */
#define FL_PROF_CHECK_TABLE(ver)                                                          \
	_Static_assert(sizeof(struct fl_abi_profiler_##ver) == 48, #ver " table size");      \
	_Static_assert(offsetof(struct fl_abi_profiler_##ver, init) == 8, #ver " init");     \
	_Static_assert(offsetof(struct fl_abi_profiler_##ver, start_event) == 16, #ver);     \
	_Static_assert(offsetof(struct fl_abi_profiler_##ver, stop_event) == 24, #ver);      \
	_Static_assert(offsetof(struct fl_abi_profiler_##ver, record_event_state) == 32, #ver); \
	_Static_assert(offsetof(struct fl_abi_profiler_##ver, finalize) == 40, #ver)

FL_PROF_CHECK_TABLE(v1);
FL_PROF_CHECK_TABLE(v2);
FL_PROF_CHECK_TABLE(v3);
FL_PROF_CHECK_TABLE(v4);
FL_PROF_CHECK_TABLE(v5);
FL_PROF_CHECK_TABLE(v6);
FL_PROF_CHECK_TABLE(v7);

#endif
