/*
 * NCCL's descriptors and state arguments of the version NCCL took from
 * fabriclab (n), for a next profiler of an older one (m < n), shaped as that
 * NCCL's own adapters shape them for a plugin of version m (2.30.7
 * src/plugin/profiler/profiler_v1.cc .. profiler_v5.cc; NVIDIA/nccl 889806836097
 * (2.31.2) src/plugin/profiler/profiler_v6.cc for v7 -> v6), so the next sees
 * what that NCCL would have shown it alone:
 *  - v7 -> v6, v6 -> v5: each later version only appends to the earlier's
 *    members (profiler_abi.h checks the offsets), so the first 112 bytes are the
 *    older descriptor; events the older one lacks (KernelPhase, CE) go nowhere,
 *    as their states do;
 *  - v5+ -> v4 and older: no API events; a Coll's or P2p's parent is its Group
 *    (coll.parentGroup: profiler_v4.cc:37, 47; the hierarchy changed in v5);
 *    v3 and older take no name or commHash from a v4+ NCCL (profiler_v3.cc:27-28)
 *    and no kernel pTimer, v2 no KernelCh or NetPlugin and trafficBytes 0
 *    (profiler_v2.cc:37), v1 enumerations for the names (profiler_v1.cc:16-55);
 *    step states carry zeroed arguments, ProxyCtrl states appendedProxyOps, and
 *    nothing else reaches v1..v3 (profiler_v3.cc:92-109).
 * Where n == m only a translated parent needs a copy.
 */
#include <stddef.h>
#include <string.h>

#include "profiler_convert.h"

/* The events of one version that other versions also have, in neutral form. */
struct event {
	uint64_t type;
	void *parent, *group; /* group: a Coll's or P2p's Group event */
	int rank;
	const char *name; /* v1..v3 only */
	uint64_t comm_hash;
	uint64_t seq;
	const char *func, *datatype, *algo, *proto;
	const void *send_buff, *recv_buff, *buff;
	size_t count, traffic_bytes;
	int root, peer;
	uint8_t nchannels, nwarps;
	struct fl_prof_abi_proxy_op op;
	int step;
	uint8_t channel;
	uint64_t p_timer;
	struct fl_prof_abi_net_plugin net;
};

static uint64_t type_of(int n, const void *d)
{
	return n >= 5 ? *(const uint64_t *)d : *(const uint8_t *)d;
}

/* The members shared by the v4 .. v7 unions (v5+ add parentGroup at the end). */
#define DECODE_V4(e, d)                                                                    \
	do {                                                                               \
		(e)->seq = (d)->coll.seq_number;                                           \
		(e)->func = (d)->coll.func;                                                \
		(e)->send_buff = (d)->coll.send_buff;                                      \
		(e)->recv_buff = (d)->coll.recv_buff;                                      \
		(e)->count = (d)->coll.count;                                              \
		(e)->root = (d)->coll.root;                                                \
		(e)->datatype = (d)->coll.datatype;                                        \
		(e)->nchannels = (d)->coll.n_channels;                                     \
		(e)->nwarps = (d)->coll.n_warps;                                           \
		(e)->algo = (d)->coll.algo;                                                \
		(e)->proto = (d)->coll.proto;                                              \
	} while (0)

#define DECODE_P2P(e, d)                                                                   \
	do {                                                                               \
		(e)->func = (d)->p2p.func;                                                 \
		(e)->buff = (d)->p2p.buff;                                                 \
		(e)->datatype = (d)->p2p.datatype;                                         \
		(e)->count = (d)->p2p.count;                                               \
		(e)->peer = (d)->p2p.peer;                                                 \
	} while (0)

#define DECODE_COMMON(e, d)                                                                \
	do {                                                                               \
		(e)->parent = (d)->parent_obj;                                             \
		(e)->group = (d)->parent_obj;                                              \
		(e)->rank = (d)->rank;                                                     \
		(e)->op = (d)->proxy_op;                                                   \
		(e)->step = (d)->proxy_step.step;                                          \
	} while (0)

static void decode_v5(struct event *e, const struct fl_prof_abi_descr_v5 *d)
{
	DECODE_COMMON(e, d);
	e->net = d->net_plugin;
	if (e->type == FL_PROF_EV_COLL) {
		DECODE_V4(e, d);
		e->group = d->coll.parent_group;
	} else if (e->type == FL_PROF_EV_P2P) {
		DECODE_P2P(e, d);
		e->nchannels = d->p2p.n_channels;
		e->group = d->p2p.parent_group;
	} else if (e->type == FL_PROF_EV_KERNEL_CH) {
		e->channel = d->kernel_ch.channel_id;
		e->p_timer = d->kernel_ch.p_timer;
	}
}

static void decode_v4(struct event *e, const struct fl_prof_abi_descr_v4 *d)
{
	DECODE_COMMON(e, d);
	e->net = d->net_plugin;
	if (e->type == FL_PROF_EV_COLL) {
		DECODE_V4(e, d);
	} else if (e->type == FL_PROF_EV_P2P) {
		DECODE_P2P(e, d);
		e->nchannels = d->p2p.n_channels;
	} else if (e->type == FL_PROF_EV_KERNEL_CH) {
		e->channel = d->kernel_ch.channel_id;
		e->p_timer = d->kernel_ch.p_timer;
	}
}

/* v2 and v3: name and commHash in Coll and P2p; the names are strings (our opaque words). */
#define DECODE_V23(e, d)                                                                   \
	do {                                                                               \
		DECODE_COMMON(e, d);                                                       \
		if ((e)->type == FL_PROF_EV_COLL) {                                        \
			(e)->name = (d)->coll.name;                                        \
			(e)->comm_hash = (d)->coll.comm_hash;                              \
			(e)->seq = (d)->coll.seq_number;                                   \
			(e)->func = (d)->coll.func;                                        \
			(e)->send_buff = (d)->coll.send_buff;                              \
			(e)->recv_buff = (d)->coll.recv_buff;                              \
			(e)->count = (d)->coll.count;                                      \
			(e)->root = (d)->coll.root;                                        \
			(e)->datatype = (d)->coll.datatype;                                \
			(e)->nchannels = (d)->coll.n_max_channels;                         \
			(e)->nwarps = (d)->coll.n_warps;                                   \
			(e)->algo = (d)->coll.algo;                                        \
			(e)->proto = (d)->coll.proto;                                      \
		} else if ((e)->type == FL_PROF_EV_P2P) {                                  \
			(e)->name = (d)->p2p.name;                                         \
			(e)->comm_hash = (d)->p2p.comm_hash;                               \
			DECODE_P2P(e, d);                                                  \
		}                                                                          \
	} while (0)

static void decode_v3(struct event *e, const struct fl_prof_abi_descr_v3 *d)
{
	DECODE_V23(e, d);
	e->net = d->net_plugin;
	if (e->type == FL_PROF_EV_KERNEL_CH)
		e->channel = d->kernel_ch.channel_id;
}

static void decode_v2(struct event *e, const struct fl_prof_abi_descr_v2 *d)
{
	DECODE_V23(e, d);
	if (e->type == FL_PROF_EV_COLL)
		e->traffic_bytes = d->coll.traffic_bytes;
}

static void decode(int n, const void *d, struct event *e)
{
	memset(e, 0, sizeof(*e));
	e->type = type_of(n, d);
	if (n >= 5)
		decode_v5(e, d); /* v6 and v7 begin with v5's members */
	else if (n == 4)
		decode_v4(e, d);
	else if (n == 3)
		decode_v3(e, d);
	else
		decode_v2(e, d);
}

#define ENCODE_COMMON(b, e)                                                                \
	do {                                                                               \
		(b)->type = (uint8_t)(e)->type;                                            \
		(b)->parent_obj = (e)->type == FL_PROF_EV_COLL || (e)->type == FL_PROF_EV_P2P \
					  ? (e)->group                                     \
					  : (e)->parent;                                   \
		(b)->rank = (e)->rank;                                                     \
		if ((e)->type == FL_PROF_EV_PROXY_OP)                                      \
			(b)->proxy_op = (e)->op;                                           \
		else if ((e)->type == FL_PROF_EV_PROXY_STEP)                               \
			(b)->proxy_step.step = (e)->step;                                  \
	} while (0)

/* Coll members every version has (v1 encodes func and datatype itself). */
#define ENCODE_COLL(b, e)                                                                  \
	do {                                                                               \
		(b)->coll.seq_number = (e)->seq;                                           \
		(b)->coll.send_buff = (e)->send_buff;                                      \
		(b)->coll.recv_buff = (e)->recv_buff;                                      \
		(b)->coll.count = (e)->count;                                              \
		(b)->coll.root = (e)->root;                                                \
		(b)->coll.n_warps = (e)->nwarps;                                           \
	} while (0)

#define ENCODE_P2P(b, e)                                                                   \
	do {                                                                               \
		(b)->p2p.buff = (e)->buff;                                                 \
		(b)->p2p.count = (e)->count;                                               \
		(b)->p2p.peer = (e)->peer;                                                 \
	} while (0)

/* Only a v1..v3 NCCL names the communicator in its events (n <= 3). */
#define ENCODE_NAMES(b, e, n)                                                              \
	do {                                                                               \
		if ((e)->type == FL_PROF_EV_COLL) {                                        \
			(b)->coll.name = (n) <= 3 ? (e)->name : NULL;                      \
			(b)->coll.comm_hash = (n) <= 3 ? (e)->comm_hash : 0;               \
			(b)->coll.n_max_channels = (e)->nchannels;                         \
		} else if ((e)->type == FL_PROF_EV_P2P) {                                  \
			(b)->p2p.name = (n) <= 3 ? (e)->name : NULL;                       \
			(b)->p2p.comm_hash = (n) <= 3 ? (e)->comm_hash : 0;                \
		}                                                                          \
	} while (0)

static void encode_v4(const struct event *e, struct fl_prof_abi_descr_v4 *b)
{
	ENCODE_COMMON(b, e);
	if (e->type == FL_PROF_EV_COLL) {
		ENCODE_COLL(b, e);
		b->coll.func = e->func;
		b->coll.datatype = e->datatype;
		b->coll.n_channels = e->nchannels;
		b->coll.algo = e->algo;
		b->coll.proto = e->proto;
	} else if (e->type == FL_PROF_EV_P2P) {
		ENCODE_P2P(b, e);
		b->p2p.func = e->func;
		b->p2p.datatype = e->datatype;
		b->p2p.n_channels = e->nchannels;
	} else if (e->type == FL_PROF_EV_KERNEL_CH) {
		b->kernel_ch.channel_id = e->channel;
		b->kernel_ch.p_timer = e->p_timer;
	} else if (e->type == FL_PROF_EV_NET_PLUGIN) {
		b->net_plugin = e->net;
	}
}

#define ENCODE_V23(b, e, n)                                                                \
	do {                                                                               \
		ENCODE_COMMON(b, e);                                                       \
		ENCODE_NAMES(b, e, n);                                                     \
		if ((e)->type == FL_PROF_EV_COLL) {                                        \
			ENCODE_COLL(b, e);                                                 \
			(b)->coll.func = (e)->func;                                        \
			(b)->coll.datatype = (e)->datatype;                                \
			(b)->coll.algo = (e)->algo;                                        \
			(b)->coll.proto = (e)->proto;                                      \
		} else if ((e)->type == FL_PROF_EV_P2P) {                                  \
			ENCODE_P2P(b, e);                                                  \
			(b)->p2p.func = (e)->func;                                         \
			(b)->p2p.datatype = (e)->datatype;                                 \
		}                                                                          \
	} while (0)

static void encode_v3(const struct event *e, int n, struct fl_prof_abi_descr_v3 *b)
{
	ENCODE_V23(b, e, n);
	if (e->type == FL_PROF_EV_KERNEL_CH)
		b->kernel_ch.channel_id = e->channel;
	else if (e->type == FL_PROF_EV_NET_PLUGIN)
		b->net_plugin = e->net;
}

static void encode_v2(const struct event *e, int n, struct fl_prof_abi_descr_v2 *b)
{
	ENCODE_V23(b, e, n);
	if (e->type == FL_PROF_EV_COLL)
		b->coll.traffic_bytes = n == 2 ? e->traffic_bytes : 0;
}

/*
 * v1's enumerations, as NCCL's v1 adapter maps the names (2.30.7
 * src/plugin/profiler/profiler_v1.cc:16-55, its fallback last): ncclFunc_t
 * (src/include/nccl_common.h:74-81), NCCL_ALGO_* and NCCL_PROTO_*
 * (src/include/plugin/nccl_tuner.h:28-40), ncclDataType_t (src/nccl.h.in:382-391).
 */
static uint8_t enum_of(const char *name, const char *const *names, const uint8_t *values,
		       uint8_t fallback)
{
	for (int i = 0; name && names[i]; i++)
		if (!strcmp(name, names[i]))
			return values[i];
	return fallback;
}

static uint8_t func_enum(const char *name)
{
	static const char *const names[] = { "AllGather", "AllReduce", "Broadcast", "Recv",
					     "Reduce", "ReduceScatter", "SendRecv", NULL };
	static const uint8_t values[] = { 2, 4, 0, 7, 1, 3, 5 };

	return enum_of(name, names, values, 6 /* Send */);
}

static uint8_t algo_enum(const char *name)
{
	static const char *const names[] = { "TREE", "RING", "COLLNET_DIRECT", "COLLNET_CHAIN",
					     "NVLS", "NVLS_TREE", NULL };
	static const uint8_t values[] = { 0, 1, 2, 3, 4, 5 };

	return enum_of(name, names, values, 6 /* PAT */);
}

static uint8_t proto_enum(const char *name)
{
	static const char *const names[] = { "LL", "LL128", NULL };
	static const uint8_t values[] = { 0, 1 };

	return enum_of(name, names, values, 2 /* SIMPLE */);
}

static uint8_t datatype_enum(const char *name)
{
	static const char *const names[] = { "ncclInt8", "ncclInt32", "ncclUint32", "ncclInt64",
					     "ncclUint64", "ncclFloat16", "ncclFloat32",
					     "ncclBfloat16", NULL };
	static const uint8_t values[] = { 0, 2, 3, 4, 5, 6, 7, 9 };

	return enum_of(name, names, values, 8 /* Float64 */);
}

static void encode_v1(const struct event *e, int n, struct fl_prof_abi_descr_v1 *b)
{
	ENCODE_COMMON(b, e);
	ENCODE_NAMES(b, e, n);
	if (e->type == FL_PROF_EV_COLL) {
		ENCODE_COLL(b, e);
		b->coll.func = func_enum(e->func);
		b->coll.datatype = datatype_enum(e->datatype);
		b->coll.traffic_bytes = n == 2 ? e->traffic_bytes : 0;
		b->coll.algo = algo_enum(e->algo);
		b->coll.proto = proto_enum(e->proto);
	} else if (e->type == FL_PROF_EV_P2P) {
		ENCODE_P2P(b, e);
		b->p2p.func = func_enum(e->func);
		b->p2p.datatype = datatype_enum(e->datatype);
	}
}

/* NCCL's own descriptor, or a copy with the parent the next knows. */
static const void *same_version(int n, const void *d, void *parent, union fl_abi_descr_buf *buf)
{
	/* parentObj is at 8 in every version; the proxy members end at 48. */
	static const size_t sizes[] = { 0, sizeof(buf->v1), sizeof(buf->v2), sizeof(buf->v3),
					sizeof(buf->v4), sizeof(buf->v5), sizeof(buf->v6),
					sizeof(buf->v7) };
	uint64_t type = type_of(n, d);
	size_t len = type == FL_PROF_EV_PROXY_STEP || type == FL_PROF_EV_NET_PLUGIN ? 48 : sizes[n];

	if (*(void *const *)((const char *)d + 8) == parent)
		return d;
	memcpy(buf, d, len);
	buf->v5.parent_obj = parent;
	return buf;
}

const void *fl_abi_descr_for(int n, const void *d, int m, void *parent,
			     union fl_abi_descr_buf *buf)
{
	uint64_t type = type_of(n, d);
	struct event e;

	if (m == n)
		return same_version(n, d, parent, buf);
	if (!(type & FL_PROF_EV_BITS(m)) || m > n)
		return NULL; /* an event the next's version does not have */
	if (m >= 5) { /* v6 or v7 for a v5 or v6: the older descriptor is the prefix */
		memcpy(buf, d, sizeof(buf->v5));
		buf->v5.parent_obj = parent;
		return buf;
	}
	decode(n, d, &e);
	e.parent = parent; /* a Coll's or P2p's is its group, never one of ours */
	memset(buf, 0, sizeof(*buf));
	if (m == 4)
		encode_v4(&e, &buf->v4);
	else if (m == 3)
		encode_v3(&e, n, &buf->v3);
	else if (m == 2)
		encode_v2(&e, n, &buf->v2);
	else
		encode_v1(&e, n, &buf->v1);
	return buf;
}

/* The states version m has (nccl_profiler.h: 23-24 from v5, 25-30 from v6, 31 from v7). */
static int known_state(int m, int state)
{
	if (state == FL_PROF_ST_KERNEL_PHASE_STOP)
		return m >= 7;
	if (state >= FL_PROF_ST_CE_FIRST && state <= FL_PROF_ST_CE_LAST)
		return m >= 6;
	if (state == FL_PROF_ST_GROUP_START_API_STOP || state == FL_PROF_ST_GROUP_END_API_START)
		return m >= 5;
	return 1;
}

int fl_abi_args_for(int n, int state, const void *args, int m, union fl_abi_args_buf *buf,
		    const void **out)
{
	const union fl_prof_abi_state_args_v4 *a = args;

	*out = args;
	if (m == n || n <= 3)
		return 0; /* the same args, or v1..v3's one layout (NULL on steps, as NCCL gives) */
	if (m >= 4)
		return known_state(m, state) ? 0 : -1; /* v4..v7 args: one 8-byte layout */
	memset(buf, 0, sizeof(*buf));
	*out = buf;
	if (state >= FL_PROF_ST_CTRL_IDLE && state <= FL_PROF_ST_CTRL_APPEND_END) {
		buf->v1.proxy_ctrl.appended_proxy_ops = a ? a->proxy_ctrl.appended_proxy_ops : 0;
		return 0;
	}
	return state >= FL_PROF_ST_STEP_SEND_GPU_WAIT && state <= FL_PROF_ST_STEP_RECV_GPU_WAIT
		       ? 0 : -1;
}
