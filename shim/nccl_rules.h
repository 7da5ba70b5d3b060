/*
 * What the shim models of NCCL's proxy driving a net plugin, in one place: one
 * function per rule, each citing the lines of NCCL it follows (tag v2.30.7-1
 * unless said; the release emulated is FABRICLAB_SHIM_NCCL, and where releases
 * differ the rule says which does what). The collectives (allreduce.c,
 * sendrecv.c) and the transfer queue (steps.c) take every size, depth and
 * decision from here and keep none of their own. One rule is their control
 * flow rather than a value: each pass is one call of NCCL's proxy progress per
 * connection, posting at most one transfer per sub and testing only when it
 * posted nothing (src/transport/net.cc:1424-1426 for sends, :1609 for
 * receives): allreduce.c ar_pass and sendrecv.c sr_pass follow it.
 *
 * Environment (NCCL's own names where NCCL reads one):
 *   FABRICLAB_SHIM_NCCL   the release emulated, 2.23 .. 2.30[.P] (2.30.7)
 *   FABRICLAB_SHIM_PROTO  all_reduce's protocol: simple (default), ll, ll128
 *   FABRICLAB_SHIM_STEP   Simple's step: NCCL_BUFFSIZE / NCCL_STEPS (512K)
 *   FABRICLAB_SHIM_REG_PASSES  user buffers registered with NCCL (ncclCommRegister, CUDA
 *                         graphs): point-to-point goes straight to and from them where NCCL
 *                         registers them (shim_rules_p2p_reg), each op's first receive started
 *                         again on this many proxy passes before the kernel is there; unset: off
 *   NCCL_P2P_NET_CHUNKSIZE, NCCL_CHUNK_SIZE, NCCL_NET_OPTIONAL_RECV_COMPLETION,
 *   NCCL_NET_FORCE_FLUSH  as NCCL reads them
 */
#ifndef SHIM_NCCL_RULES_H
#define SHIM_NCCL_RULES_H

#include <stddef.h>
#include <stdint.h>

#define SHIM_NCCL_STEPS 8         /* NCCL_STEPS, src/include/device.h:26 */
#define SHIM_NCCL_SHARED_STEPS 16 /* NCCL_SHARED_STEPS, src/transport/net.cc:646 */
#define SHIM_NCCL_DEFAULT 23007   /* 2.30.7 */

/* NCCL_PROTO_LL, NCCL_PROTO_LL128, NCCL_PROTO_SIMPLE in NCCL's order. */
enum shim_proto { SHIM_PROTO_LL = 0, SHIM_PROTO_LL128 = 1, SHIM_PROTO_SIMPLE = 2 };
#define SHIM_NPROTOS 3

struct shim_rules {
	int release;          /* 2.M.P as M * 100 + P + 20000, e.g. 23007 */
	int proto;            /* all_reduce's */
	size_t step[SHIM_NPROTOS]; /* bytes of one step per protocol (buffSizes / NCCL_STEPS) */
	size_t p2p_chunk;     /* p2pChunkSize */
	size_t chunk_param;   /* NCCL_CHUNK_SIZE; 0: unset */
	int optional_recv;    /* NCCL_NET_OPTIONAL_RECV_COMPLETION */
	int force_flush;      /* NCCL_NET_FORCE_FLUSH */
	int reg_passes;       /* FABRICLAB_SHIM_REG_PASSES; -1: user buffers not registered */
};

/* A collective's pipeline on one connection, for one protocol. */
struct shim_coll_shape {
	int slice_steps;     /* steps one transfer spans (its receive slot) */
	int slices_per_chunk;
	size_t step;         /* bytes of a step */
	size_t chunk;        /* bytes of payload per chunk (a ring step's share of a loop) */
	size_t recv_bytes;   /* what each receive posts */
};

/* One point-to-point operation's pipeline (one sub in NCCL's proxy). */
struct shim_p2p_shape {
	size_t chunk;        /* bytes per step */
	uint64_t nsteps;
	size_t recv_bytes;   /* what each receive posts for it */
};

/* Reads the release, protocol and NCCL's parameters; simple_step is FABRICLAB_SHIM_STEP. */
int shim_rules_read(struct shim_rules *r, size_t simple_step);
/* The release as text, "2.30.7". */
const char *shim_rules_release_name(const struct shim_rules *r, char *buf, size_t len);
/* The highest ncclNetPlugin_vN the release binds. */
int shim_rules_max_net_version(const struct shim_rules *r);

/* Ring all-reduce's steps, chunk and receive size for a protocol. */
void shim_rules_coll(const struct shim_rules *r, int proto, struct shim_coll_shape *s);
/* A loop's chunk, in elements, with rem elements of the part left (the last loop shares them). */
size_t shim_rules_loop_chunk(size_t rem, int nranks, size_t chunk, size_t elem_size);
/* The chunk a rank sends at ring step s of a loop (recv 1: the one it receives). */
int shim_rules_ring_chunk(int rank, int nranks, int step, int recv);
/* Simple: elements of each slice of a chunk of nelem (the last slices may be short or empty). */
size_t shim_rules_simple_slice(const struct shim_coll_shape *s, size_t nelem, size_t elem_size);
/* Bytes on the wire for `payload` bytes of a step in a protocol (LL and LL128 carry flags). */
size_t shim_rules_wire_bytes(int proto, size_t payload);
/* Transfers in flight on one connection when nsubs operations share the proxy's args. */
int shim_rules_depth(int nsubs, int slice_steps);

/* A point-to-point operation of `bytes` (always Simple over the network). */
void shim_rules_p2p(const struct shim_rules *r, size_t bytes, struct shim_p2p_shape *s);
/*
 * Whether NCCL moves a point-to-point operation of `bytes` straight from and into the user's
 * registered buffers (gdr: the NIC reaches them, NCCL's direct NIC); then its shape.
 */
int shim_rules_p2p_registered(const struct shim_rules *r, int gdr, size_t bytes);
void shim_rules_p2p_reg(const struct shim_rules *r, size_t bytes, struct shim_p2p_shape *s);
/* Proxy passes a registered receive op waits for the kernel, each starting its step again. */
int shim_rules_reg_wait(const struct shim_rules *r);

/* Whether sub-operations to one peer share a comm (else each has a connection of its own). */
int shim_rules_subs_share_comm(int max_recvs);

/* Whether an irecv of sub_count buffers in this protocol starts with the hint preset. */
int shim_rules_recv_hint(const struct shim_rules *r, int proto, int sub_count);
/*
 * Whether receives over GPUDirect RDMA need iflush at all (NCCL's needFlush), for a GPU of
 * compute capability cc (major * 10 + minor; 0 unknown) and a plugin's forceFlush.
 */
int shim_rules_need_flush(const struct shim_rules *r, int cc, int prop_force_flush);
/* Whether a received step is flushed: Simple, GPUDirect, needFlush, and bytes reported. */
int shim_rules_flush_step(int proto, int gdr_need_flush, size_t bytes_reported);

/*
 * What NCCL hands a plugin with each isend and each buffer of an irecv as the step's profiler
 * handle: the address of a per-sub, per-slot record (net.cc:1412, 1577), never NULL. The shim's
 * records say they are the shim's, so its callback can tell them from anything else.
 */
struct shim_phandle {
	const void *mark;  /* &shim_phandle_mark */
	void *step_event;  /* the ProxyStep's event: NULL, no profiler is loaded */
};
extern const char shim_phandle_mark;

struct shim_prof_counts {
	unsigned long starts, stops, updates;
	unsigned long foreign; /* starts on a handle the shim never passed (NULL included) */
};

/*
 * ncclProfilerCallback, which NCCL passes to every v10+ init (src/plugin/net.cc:173; 2.27.7
 * :143; 2.26.2 :179): with no profiler loaded it does nothing and succeeds
 * (src/plugin/profiler.cc:782-811); with one, a start reads the handle as NCCL's own
 * (:786-788). The shim counts what it is given and flags a start on a foreign handle.
 */
int shim_nccl_profiler_callback(void **event, int type, void *phandle, int64_t plugin_id,
				void *ext_data);
void shim_nccl_profiler_counts(struct shim_prof_counts *out);

#endif
