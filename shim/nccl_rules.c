/*
 * The rules of nccl_rules.h, each with the NCCL lines it follows. "enqueue.cc", "net.cc" and
 * the like are NCCL's src/enqueue.cc, src/transport/net.cc, ... at v2.30.7-1 unless a tag is
 * named; the rules were read at 2.23.4, 2.24.3, 2.26.2, 2.27.7, 2.28.9, 2.29.7 and 2.30.7 and
 * hold for all of them unless they say otherwise.
 */
#include "nccl_rules.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "plugin/base/fl_types.h"
#include "shim_env.h"
#include "shim_error.h"

#define RELEASE(minor, patch) (20000 + (minor) * 100 + (patch))
#define MINOR(release) ((release) / 100 % 100)
#define OLDEST_MINOR 23
#define NEWEST_MINOR 30

/*
 * Default buffers per protocol, init.cc:810-813: LL is NCCL_LL_LINES_PER_THREAD (8) x
 * NCCL_LL_MAX_NTHREADS (512) x NCCL_STEPS x 16-byte lines, LL128 NCCL_LL128_ELEMS_PER_THREAD
 * (120) x NCCL_LL128_MAX_NTHREADS (640) x NCCL_STEPS x 8 bytes (src/include/device.h:97-98,
 * 114-115); a step is an eighth (net.cc:1332, 1538: buffSizes[p] / NCCL_STEPS).
 */
#define LL_STEP (8 * 512 * 16)        /* 64 KiB */
#define LL128_STEP (120 * 640 * 8)    /* 600 KiB */
#define P2P_NET_CHUNK (128 * 1024)    /* NCCL_P2P_NET_CHUNKSIZE's default, init.cc:818 */
/* NCCL_MAX_NET_SIZE, src/include/collectives.h:16 (2.23.4 net.cc:1035 MAX_NET_SIZE) */
#define MAX_NET_SIZE ((size_t)1 << 30)
/* An LL line: 8 bytes of data and two 4-byte flags (device.h:75-89). */
#define LL_LINE 16
#define LL_LINE_DATA 8
/*
 * LL128: a warp's slice is 32 threads x NCCL_LL128_SHMEM_ELEMS_PER_THREAD (8) words of 8 bytes,
 * one word in 16 a flag (src/device/prims_ll128.h:292-294, device.h:110-117).
 */
#define LL128_SLICE_WIRE (32 * 8 * 8)
#define LL128_SLICE_DATA (LL128_SLICE_WIRE / 16 * 15)
/* ncclProtoGrainSize, device.h:328-334 */
static const size_t grain[SHIM_NPROTOS] = { 16, LL128_SLICE_DATA, 512 };

/* "2.M" or "2.M.P": the release's digits, nothing else around them. */
static int parse_release(const char *text, int *out)
{
	long minor, patch = 0;
	char *end;

	if (strncmp(text, "2.", 2) || !isdigit((unsigned char)text[2]))
		return -1;
	minor = strtol(text + 2, &end, 10);
	if (*end == '.' && isdigit((unsigned char)end[1]))
		patch = strtol(end + 1, &end, 10);
	if (*end || minor < OLDEST_MINOR || minor > NEWEST_MINOR || patch > 99)
		return -1;
	*out = RELEASE((int)minor, (int)patch);
	return 0;
}

static int read_release(struct shim_rules *r)
{
	const char *v = shim_env("FABRICLAB_SHIM_NCCL");

	r->release = SHIM_NCCL_DEFAULT;
	if (v && parse_release(v, &r->release))
		return shim_fail(FL_ERR_USAGE, "FABRICLAB_SHIM_NCCL=\"%s\": expected a release "
				 "2.%d to 2.%d, as 2.30 or 2.28.9", v, OLDEST_MINOR, NEWEST_MINOR);
	return FL_OK;
}

static int read_proto(struct shim_rules *r)
{
	static const char *const names[SHIM_NPROTOS] = { "ll", "ll128", "simple" };
	const char *v = shim_env("FABRICLAB_SHIM_PROTO");

	r->proto = SHIM_PROTO_SIMPLE;
	for (int p = 0; v && p < SHIM_NPROTOS; p++)
		if (!strcasecmp(v, names[p]))
			return r->proto = p, FL_OK;
	return v ? shim_fail(FL_ERR_USAGE, "FABRICLAB_SHIM_PROTO=\"%s\": expected simple, ll "
			     "or ll128", v)
		 : FL_OK;
}

/*
 * p2pChunkSize (init.cc:830-843): NCCL_P2P_NET_CHUNKSIZE between nodes, never more than
 * Simple's step (the chunk times NCCL_STEPS must fit Simple's buffer).
 */
static int read_p2p(struct shim_rules *r)
{
	long optional, force, reg;
	int rc = shim_env_bytes("NCCL_P2P_NET_CHUNKSIZE", P2P_NET_CHUNK, 4, 1UL << 30,
				&r->p2p_chunk);

	if (!rc)
		rc = shim_env_bytes("NCCL_CHUNK_SIZE", 0, 0, 1UL << 30, &r->chunk_param);
	/* NCCL_NET_OPTIONAL_RECV_COMPLETION defaults to 1 (net.cc:187; 2.24.3 net.cc:177) */
	if (!rc)
		rc = shim_env_long("NCCL_NET_OPTIONAL_RECV_COMPLETION", 1, 0, 1, &optional);
	/* NCCL_NET_FORCE_FLUSH defaults to 0 (src/graph/paths.cc:572) */
	if (!rc)
		rc = shim_env_long("NCCL_NET_FORCE_FLUSH", 0, 0, 1, &force);
	if (!rc)
		rc = shim_env_long("FABRICLAB_SHIM_REG_PASSES", -1, -1, 1000000, &reg);
	if (rc)
		return rc;
	if (r->p2p_chunk > r->step[SHIM_PROTO_SIMPLE])
		r->p2p_chunk = r->step[SHIM_PROTO_SIMPLE];
	r->optional_recv = (int)optional;
	r->force_flush = (int)force;
	r->reg_passes = (int)reg;
	return FL_OK;
}

int shim_rules_read(struct shim_rules *r, size_t simple_step)
{
	int rc;

	*r = (struct shim_rules){ .step = { LL_STEP, LL128_STEP, simple_step } };
	rc = read_release(r);
	if (!rc)
		rc = read_proto(r);
	if (!rc)
		rc = read_p2p(r);
	if (rc)
		return rc;
	for (int p = 0; p < SHIM_NPROTOS; p++) {
		struct shim_coll_shape s;

		shim_rules_coll(r, p, &s);
		if (s.chunk == 0)
			return shim_fail(FL_ERR_USAGE, "FABRICLAB_SHIM_STEP=%zu: too small for a "
					 "chunk of %zu-byte grains", simple_step, grain[p]);
	}
	return FL_OK;
}

const char *shim_rules_release_name(const struct shim_rules *r, char *buf, size_t len)
{
	snprintf(buf, len, "2.%d.%d", MINOR(r->release), r->release % 100);
	return buf;
}

/*
 * The newest ncclNetPlugin_vN a release looks for (its src/plugin/net.cc and
 * src/plugin/net/net_vN.cc): 2.23 v8, 2.24-2.25 v9, 2.26-2.27 v10, 2.28-2.29 v11, 2.30 v12.
 */
int shim_rules_max_net_version(const struct shim_rules *r)
{
	int minor = MINOR(r->release);

	return minor >= 30 ? 12 : minor >= 28 ? 11 : minor >= 26 ? 10 : minor >= 24 ? 9 : 8;
}

/*
 * Ring all-reduce (enqueue.cc:2222-2227): Simple's chunk is ALLREDUCE_CHUNKSTEPS
 * (NCCL_STEPS / 2) steps cut into slices of ALLREDUCE_SLICESTEPS (NCCL_STEPS / 4)
 * (src/include/collectives.h:19-20), so 4 steps of payload in 2 slices; LL and LL128 move
 * one step per chunk, LL half of it as payload, LL128 15 words in 16; the chunk is whole
 * grains (enqueue.cc:2321). Each receive posts the whole slot its slice spans,
 * stepSize * sliceSteps (net.cc:1567-1572); 2.23-2.28 clamp it to the op's nbytes, which is
 * that same size for collectives (2.28.9 net.cc:1467, enqueue.cc:2154).
 */
void shim_rules_coll(const struct shim_rules *r, int proto, struct shim_coll_shape *s)
{
	int simple = proto == SHIM_PROTO_SIMPLE;
	size_t chunk;

	s->step = r->step[proto];
	s->slice_steps = simple ? SHIM_NCCL_STEPS / 4 : 1;
	chunk = s->step * (simple ? SHIM_NCCL_STEPS / 2 : 1);
	if (proto == SHIM_PROTO_LL)
		chunk /= 2;
	else if (proto == SHIM_PROTO_LL128)
		chunk = chunk / 16 * 15;
	s->chunk = chunk / grain[proto] * grain[proto];
	s->slices_per_chunk = simple ? 2 : 1;
	s->recv_bytes = s->step * (size_t)s->slice_steps;
}

/*
 * Ring all-reduce's loops (src/device/all_reduce.h:34-80): a channel's part goes round in loops
 * of nranks chunks; the last loop shares what is left evenly, rounded up to 16 bytes (:38).
 */
size_t shim_rules_loop_chunk(size_t rem, int nranks, size_t chunk, size_t elem_size)
{
	size_t n = (size_t)nranks, per = (rem + n - 1) / n, align = 16 / elem_size;

	return rem < n * chunk ? (per + align - 1) / align * align : chunk;
}

/*
 * Ring step s of a loop sends chunk (ring index - s - 1) and receives the previous rank's,
 * (index - s - 2): step 0 pushes, steps 1..n-2 reduce and push, n-1 reduces to the result and
 * pushes, the rest copy and push (all_reduce.h:42-79). The shim's ring index is the rank.
 */
int shim_rules_ring_chunk(int rank, int nranks, int step, int recv)
{
	int c = (rank - step - 1 - recv) % nranks;

	return c < 0 ? c + nranks : c;
}

/*
 * Simple's slices of a chunk (src/device/prims_simple.h:183-184): half the chunk rounded up
 * to 16 elements, never under a 32nd of a slice's steps; the slices after the data are
 * empty and still sent, as 0 bytes (:282-299; net.cc:1362-1414 sends connFifo's size as it
 * is).
 */
size_t shim_rules_simple_slice(const struct shim_coll_shape *s, size_t nelem, size_t elem_size)
{
	size_t per = s->slices_per_chunk, half = (nelem + 16 * per - 1) / (16 * per) * 16;
	size_t floor = s->step * (size_t)s->slice_steps / elem_size / 32;

	return half > floor ? half : floor;
}

/*
 * What goes on the wire for a step's payload: LL 16-byte lines of 8 data bytes
 * (src/device/prims_ll.h:253), LL128 2 KiB slices of 1920 data bytes
 * (src/device/prims_ll128.h:306); Simple the payload itself.
 */
size_t shim_rules_wire_bytes(int proto, size_t payload)
{
	if (proto == SHIM_PROTO_LL)
		return (payload + LL_LINE_DATA - 1) / LL_LINE_DATA * LL_LINE;
	if (proto == SHIM_PROTO_LL128)
		return (payload + LL128_SLICE_DATA - 1) / LL128_SLICE_DATA * LL128_SLICE_WIRE;
	return payload;
}

/*
 * maxDepth = min(NCCL_STEPS, NCCL_SHARED_STEPS / nsubs) steps posted ahead of the oldest not
 * done, sends and receives alike (net.cc:1323 and 1335, 1519 and 1532); a transfer spans
 * slice_steps of them. Only shared (point-to-point) ops of one round share an args, so a
 * collective's connection has nsubs 1 (src/proxy.cc:438-447).
 */
int shim_rules_depth(int nsubs, int slice_steps)
{
	int steps = SHIM_NCCL_SHARED_STEPS / (nsubs > 0 ? nsubs : 1);

	if (steps > SHIM_NCCL_STEPS)
		steps = SHIM_NCCL_STEPS;
	steps /= slice_steps > 0 ? slice_steps : 1;
	return steps > 0 ? steps : 1;
}

/* ncclChunkDataSize's 8-bit float (src/include/bitops.h:470-487): the 4 leading bits kept. */
static size_t fp8_round(size_t x)
{
	int top = 63 - __builtin_clzll((unsigned long long)x | 1);

	return top <= 3 ? x : x >> (top - 3) << (top - 3);
}

/*
 * Point-to-point over the network is Simple: LL needs buffers NCCL allocates only with
 * NCCL_ALLOC_P2P_NET_LL_BUFFERS (net.cc:930-934, enqueue.cc:891). Its step is p2pChunkSize
 * (enqueue.cc:935-936); the chunk is NCCL_CHUNK_SIZE when set, else a quarter of the step for
 * ops under a step, half for ops under 8 steps (:937-944), kept to 4 significant bits
 * (:948-949); an op moves in ceil(bytes / chunk) steps, one step of 0 bytes when empty
 * (enqueue.cc:1073-1088). Receives land in the shared pool's p2pChunkSize slots
 * (net.cc:1550-1554, 688-694: NCCL_NET_SHARED_BUFFERS defaults to on for p2p, :302-304); from
 * 2.29 the whole slot is posted (net.cc:1574 leaves the clamp commented out), 2.23-2.28 clamp
 * it to the op's nbytes, min(bytes, chunk) (2.28.9 net.cc:1467, enqueue.cc:996-997).
 */
void shim_rules_p2p(const struct shim_rules *r, size_t bytes, struct shim_p2p_shape *s)
{
	size_t step = r->p2p_chunk, chunk = step;

	if (r->chunk_param)
		chunk = r->chunk_param;
	else if (bytes < step)
		chunk /= 4;
	else if (bytes < 8 * step)
		chunk /= 2;
	chunk = fp8_round(chunk ? chunk : 1);
	s->chunk = chunk;
	s->nsteps = bytes ? (bytes + chunk - 1) / chunk : 1;
	s->recv_bytes = step;
	if (MINOR(r->release) <= 28) {
		size_t nbytes = bytes < chunk ? bytes : chunk;

		if (nbytes < s->recv_bytes)
			s->recv_bytes = nbytes;
	}
}

/*
 * User buffers (ncclCommRegister, CUDA graphs: allowUB) are registered for a point-to-point op
 * over the network when it has bytes, runs Simple in the proxy's own process without PXN, and
 * the connection reaches GPU memory directly (NCCL_DIRECT_NIC) (enqueue.cc:953-971; 2.23.4
 * enqueue.cc). The shim is its own proxy, runs no PXN and sends Simple point-to-point, so what
 * is left is the user's asking and GPUDirect; NCCL falls back to its own buffers otherwise.
 */
int shim_rules_p2p_registered(const struct shim_rules *r, int gdr, size_t bytes)
{
	return r->reg_passes >= 0 && gdr && bytes > 0;
}

/*
 * A registered op moves in NCCL_MAX_NET_SIZE steps (enqueue.cc:1080-1085), each receive posting
 * the user's buffer for just what is left of it (net.cc:1543-1545: min(NCCL_MAX_NET_SIZE,
 * nbytes - posted * NCCL_MAX_NET_SIZE)), never a slot; 2.23 posts the whole op, at most
 * MAX_NET_SIZE, one step at a time (2.23.4 net.cc:1262, 1271-1273).
 */
void shim_rules_p2p_reg(const struct shim_rules *r, size_t bytes, struct shim_p2p_shape *s)
{
	(void)r;
	s->chunk = MAX_NET_SIZE;
	s->nsteps = (bytes + MAX_NET_SIZE - 1) / MAX_NET_SIZE;
	s->recv_bytes = bytes < MAX_NET_SIZE ? bytes : MAX_NET_SIZE;
}

/*
 * The receive proxy starts a registered op's step (its ProxyStep event: net.cc:1534), then
 * `continue`s without posting it while the kernel has not started (connFifo[base].size is
 * still -1: :1544 shared, :1558 not), and starts the same step again on the next pass; once the
 * kernel is there regBufferReady holds for the op's other steps (:1545). 2.24-2.29 the same
 * (2.28.9 net.cc:1432-1443); 2.23 waits the same way on every step of its one-step ops
 * (2.23.4 net.cc:1261, 1270-1271). How long the kernel takes is the setting.
 */
int shim_rules_reg_wait(const struct shim_rules *r)
{
	return r->reg_passes > 0 ? r->reg_passes : 0;
}

/*
 * NCCL shares one comm among the subs to one peer (PXN) only for a plugin taking several
 * buffers per irecv (src/transport/net.cc:862, 1048: maxRecvs > 1 and NCCL_NET_SHARED_COMMS,
 * on by default, :172).
 */
int shim_rules_subs_share_comm(int max_recvs)
{
	return max_recvs > 1;
}

/*
 * NCCL presets *request = NCCL_NET_OPTIONAL_RECV_COMPLETION before irecv when the parameter
 * is on (its default), the protocol LL or LL128 and the irecv takes one buffer
 * (net.cc:1585-1589); from 2.24 (2.24.3 net.cc:1333). Its v6-v8 adapters clear it again
 * (src/plugin/net/net_v6.cc:82, net_v7.cc:78, net_v8.cc:73): net_load.c does the same.
 */
int shim_rules_recv_hint(const struct shim_rules *r, int proto, int sub_count)
{
	return MINOR(r->release) >= 24 && r->optional_recv &&
	       (proto == SHIM_PROTO_LL || proto == SHIM_PROTO_LL128) && sub_count == 1;
}

/*
 * ncclTopoNeedFlush (src/graph/paths.cc:575-596): always on compute capability below 9.0; on
 * 9.0 and later only when the plugin's getProperties sets forceFlush or NCCL_NET_FORCE_FLUSH
 * is 1 (from 2.24: 2.24.3 paths.cc:480; 2.23.4 paths.cc:420-425 reads only the parameter).
 * Not modelled: 2.26+ also flushes on 9.0+ where the NIC sits under the GPU's PCI switch and
 * the CPU is reached over C2C (paths.cc:589-593), a topology the shim does not have.
 */
int shim_rules_need_flush(const struct shim_rules *r, int cc, int prop_force_flush)
{
	if (cc < 90)
		return 1;
	if (r->force_flush)
		return 1;
	return MINOR(r->release) >= 24 && prop_force_flush == 1;
}

/*
 * A received step is flushed only for Simple, over GPUDirect with needFlush, and when test
 * reported bytes (net.cc:1637-1641: useGdr && needFlush, totalSize > 0, NCCL_PROTO_SIMPLE).
 */
int shim_rules_flush_step(int proto, int gdr_need_flush, size_t bytes_reported)
{
	return proto == SHIM_PROTO_SIMPLE && gdr_need_flush && bytes_reported > 0;
}

/* ---- the profiler callback NCCL passes to the plugin ---- */

const char shim_phandle_mark;
/* ncclProfilerNetEventStart .. UpdateAndStop (src/include/nccl_common.h:63-66) */
enum { NET_EVENT_START, NET_EVENT_STOP, NET_EVENT_UPDATE, NET_EVENT_UPDATE_AND_STOP };

/* Plugins call it from their own threads: counters only, no lock. */
static _Atomic unsigned long prof_starts, prof_stops, prof_updates, prof_foreign;

int shim_nccl_profiler_callback(void **event, int type, void *phandle, int64_t plugin_id,
				void *ext_data)
{
	const struct shim_phandle *ph = phandle;

	(void)event, (void)plugin_id, (void)ext_data;
	if (type == NET_EVENT_START) {
		prof_starts++;
		if (!ph || ph->mark != &shim_phandle_mark)
			prof_foreign++;
	} else if (type == NET_EVENT_STOP) {
		prof_stops++;
	} else {
		prof_updates++;
		if (type == NET_EVENT_UPDATE_AND_STOP)
			prof_stops++;
	}
	return FL_OK;
}

void shim_nccl_profiler_counts(struct shim_prof_counts *out)
{
	*out = (struct shim_prof_counts){ .starts = prof_starts, .stops = prof_stops,
					  .updates = prof_updates, .foreign = prof_foreign };
}
