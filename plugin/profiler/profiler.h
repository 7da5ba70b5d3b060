/*
 * Profiler mode: per-hop figures from NCCL's own transports, measured through
 * NCCL's profiler events (docs/profiler.md). One native interface the ABI
 * adapters (abi/profiler_abi.c) translate every ncclProfiler_vN into.
 *
 * A context is one communicator as seen by one rank. Its ProxyOp events open
 * "links" (peer, direction, channel), each owning one fl_conn_stats attached to
 * the hop of (local rank -> peer rank) in the shared hop table; a link's
 * counters are written only by the thread that drives the communicator's proxy
 * (NCCL's proxy thread), so no lock is taken per event. Op and step objects
 * come from per-context pools that grow while warming up and are bounded.
 */
#ifndef FL_PROFILER_H
#define FL_PROFILER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/log.h"

/* What init learns of the communicator; v1..v3 learn the hash and rank later. */
struct fl_prof_comm_info {
	uint64_t comm_hash; /* 0 until known */
	const char *comm_name; /* may be NULL */
	int nnodes, nranks;    /* -1 unknown */
	int rank;              /* -1 until known */
};

struct fl_prof_op_descr {
	int rank; /* the originating rank */
	pid_t pid;
	int channel;
	int peer; /* a rank of the communicator */
	int nsteps;
	int chunk_size;
	int is_send;
};

/* The step states NCCL records (reference 2.4), in our numbering. */
enum fl_prof_state {
	FL_PROF_SEND_GPU_WAIT,
	FL_PROF_SEND_PEER_WAIT,
	FL_PROF_SEND_WAIT,
	FL_PROF_RECV_WAIT,
	FL_PROF_RECV_FLUSH_WAIT,
	FL_PROF_RECV_GPU_WAIT,
	FL_PROF_STATES
};

int fl_prof_init(void **ctx, const struct fl_prof_comm_info *info, fl_logger_fn logger);
/* v1..v3: the communicator's hash and rank, from the first Coll or P2p event. */
void fl_prof_learn_comm(void *ctx, uint64_t comm_hash, int rank);
/* *handle is NULL when the op is not one we measure (or on overload). */
int fl_prof_op_start(void *ctx, void **handle, const struct fl_prof_op_descr *d);
/* op may be NULL (NCCL starts steps under a NULL ProxyOp handle): *handle is then NULL. */
int fl_prof_step_start(void *ctx, void **handle, void *op, int step);
/* trans_size: the bytes NCCL passed, only where they are fresh; else NULL. */
int fl_prof_record(void *handle, enum fl_prof_state state, const size_t *trans_size);
/* Any handle this layer returned, or NULL. */
int fl_prof_stop(void *handle);
/* Events we do not measure (Group, Coll, NetPlugin, ...): counted, no handle. */
void fl_prof_note_other(void *ctx);
int fl_prof_finalize(void *ctx);

/* Tests: a clock of their own (NULL restores the real one). */
void fl_prof_set_clock(uint64_t (*now)(void));

#endif
