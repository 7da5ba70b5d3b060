/*
 * Names for profiler-mode hops from the net role's connections, when both
 * roles run in one process (reference 2.9 a, 2.10). A profiler hop knows only
 * (commHash, rank, peer rank); the net role knows nodes and devices.
 *
 * The join: NCCL calls v11+ net init (commId = the communicator's hash) and
 * profiler init of one communicator on the same thread, net init first. The
 * pair binds that net ctx to the profiler's rank (several ranks of a process
 * share one hash, so the thread tells them apart). Listen and connect on that
 * ctx then put the rank into the handle and the hello, so every connection
 * knows (commHash, own rank, peer rank) with the node and device of both ends,
 * and a profiler link created later takes its names from it.
 *
 * Setup paths only (init, connect, accept, close, a link's first op), under
 * one lock; bounded tables, nothing allocated.
 */
#ifndef FL_HOP_NAMES_H
#define FL_HOP_NAMES_H

#include <stdint.h>

#include "base/fl_types.h"

#define FL_NAMES_MAX_CTXS 256   /* net communicators alive at once */
#define FL_NAMES_MAX_PENDING 64 /* profiler inits waiting for their net init */
#define FL_NAMES_MAX_CONNS 1024 /* net connections with both ranks known */

/* Net role, v11+ init and finalize of one communicator (on NCCL's init thread). */
void fl_names_net_init(const void *net_ctx, uint64_t comm_id);
void fl_names_net_fini(const void *net_ctx);
/* Profiler role: this thread's communicator comm_hash is rank `rank`. */
void fl_names_prof_init(uint64_t comm_hash, int rank);
/* The rank the profiler role gave this net ctx, -1 when none did. */
int fl_names_rank_of(const void *net_ctx);

/* A connection up (both ranks known, else ignored) and down. */
void fl_names_conn_up(const void *conn, int is_send, const struct fl_endpoint *self,
		      const struct fl_endpoint *peer);
void fl_names_conn_down(const void *conn);
/*
 * The ends of the net connection for (comm_hash, rank -> peer, direction):
 * 0 and both filled when one exists, -1 otherwise. Several (one per channel):
 * the channel-th in the order they came up, modulo their number, since NCCL
 * connects a peer's channels in channel order.
 */
int fl_names_find(uint64_t comm_hash, int rank, int peer, int is_send, int channel,
		  struct fl_endpoint *self, struct fl_endpoint *peer_out);

/* Tests: forget everything. */
void fl_names_reset(void);

#endif
