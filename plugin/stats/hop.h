/*
 * The hops of this process: a hop is a directed link src node/dev -> dst
 * node/dev, seen from one end (this process sends on it or receives on it).
 * Every connection is attached to one hop at setup and detached at close; the
 * table is bounded and lives as long as the process. All of it runs under one
 * lock taken on setup paths and by the report thread, never on the data path.
 */
#ifndef FL_HOP_H
#define FL_HOP_H

#include <stddef.h>
#include <stdint.h>

#include "base/fl_types.h"
#include "stats.h"

#define FL_MAX_HOPS 256
#define FL_HOP_OTHER "*" /* node and device of the hop that takes connections past the table */

enum fl_hop_view { FL_HOP_SEND, FL_HOP_RECV };

/* What measured a hop: our own transport (net mode) or NCCL's profiler events. */
enum fl_hop_mode { FL_HOP_NET, FL_HOP_PROFILER };

struct fl_hop_key {
	char src_node[FL_NODE_NAME_LEN];
	char src_dev[FL_DEV_NAME_LEN];
	char dst_node[FL_NODE_NAME_LEN];
	char dst_dev[FL_DEV_NAME_LEN];
	int view;
	int mode;           /* enum fl_hop_mode */
	uint64_t comm_hash; /* profiler mode: ranks name hops only within a communicator */
	/* Profiler mode: hops are per rank pair even where two pairs share node and device. */
	int32_t src_rank, dst_rank; /* 0 in net mode: its hops join every rank pair of a link */
};

/* What a report needs of one hop, copied out under the lock. */
struct fl_hop_snapshot {
	struct fl_hop_key key;
	int src_rank, dst_rank; /* -1 where unknown */
	int local_dev;          /* this process's device index on the hop */
	int connections;        /* attached since the start, closed ones included */
	int mem_types;          /* FL_PTR_* */
	uint64_t wire_ns;       /* union of wire intervals */
	uint64_t wire_runs;     /* its disjoint runs: stretches of back-to-back requests */
	uint64_t active_ns;     /* union of posted -> done */
	struct fl_conn_totals t;
};

/* The hop of a connection: send view self -> peer, receive view peer -> self. */
void fl_hop_key_make(struct fl_hop_key *key, enum fl_hop_view view,
		     const struct fl_endpoint *self, const struct fl_endpoint *peer);
/* Profiler mode: the rank pair into the key (net mode keeps rank pairs of one link together). */
void fl_hop_key_ranks(struct fl_hop_key *key, int src_rank, int dst_rank);
/*
 * Adds a connection to its hop, creating the hop if new. Never fails: when the
 * table is full (or memory is short) the connection joins the "other" hop of its
 * view, with one warning.
 */
void fl_hop_attach(struct fl_conn_stats *s, const struct fl_hop_key *key, int local_dev,
		   int src_rank, int dst_rank);
/* Folds a closing connection's figures into its hop. */
void fl_hop_detach(struct fl_conn_stats *s);
/*
 * Moves the connections' closed runs into their hops, so rings do not fill.
 * Returns the most ring slots any one connection had filled.
 */
size_t fl_hops_drain(void);
/* Every hop's figures so far into a malloc'd array; returns the count, -1 without memory. */
int fl_hops_snapshot(struct fl_hop_snapshot **out);
/* Forgets every hop (tests; no connection may be attached). */
void fl_hops_reset(void);
/*
 * Frees the table when the plugin unloads (after the final report); connections
 * still attached are cut loose, and closing them later touches nothing freed.
 */
void fl_hops_teardown(void);

#endif
