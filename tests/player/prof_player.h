/*
 * The profiler-event player: drives the exported ncclProfiler_vN tables the
 * way NCCL does (init with the version's signature; per collective the API
 * events of 2.28+, GroupApi, CollApi or P2pApi and KernelLaunch, then Group and
 * Coll or P2p; ProxyCtrl, ProxyOp and ProxyStep starts, state records with
 * that version's state arguments, KernelCh from 2.27, stops, finalize), each
 * only when NCCL would emit it for the mask init asked for, from a ring
 * all-reduce generated on a virtual clock with known answers: which link is
 * slow, which NIC, which GPU straggles.
 *
 * Ranks are spread over processes (one per node, forked, FABRICLAB_NODE_NAME
 * set) and threads (one per rank of the node); each process writes its final
 * report when its last communicator finalizes.
 */
#ifndef PROF_PLAYER_H
#define PROF_PLAYER_H

#include <stdint.h>

/*
 * What else a rank thread does around each of its profiler contexts, in NCCL's
 * order: the net role's init comes before the profiler's (commAlloc), its
 * connections after (ring connect), its teardown after the profiler's finalize.
 * NULL members are skipped.
 */
struct player_rank_hooks {
	int (*before_init)(void *arg, uint64_t comm_hash, int rank, void **state);
	int (*after_init)(void *state);
	int (*after_finalize)(void *state);
	void *arg;
};

struct player_scenario {
	int version;         /* ABI v1..v7: NCCL 2.23, 2.24-2.25, 2.26, 2.27, 2.28, 2.29-2.30, 2.31-2.32 */
	int nranks;
	int ranks_per_node;
	int nchannels;
	int nsteps;          /* steps per ProxyOp */
	int ops;             /* ProxyOps per channel and link */
	uint64_t chunk;      /* bytes per step */
	uint64_t wire_ns;    /* a healthy link's time per step */
	uint64_t comm_hash;
	/* Faults, -1 when absent. */
	int slow_src, slow_dst; /* one slow link: its SendWait stretched */
	int slow_nic_rank;      /* both directions of one node's NIC */
	int straggler_rank;     /* a slow GPU: its SendGPUWait long */
	double slow_factor;
	/*
	 * PXN: odd ranks' channel-1 ops run by their node-mate's proxy thread, with
	 * the originator's context and pid (2.30.7 src/enqueue.cc:1402, src/proxy.cc:
	 * 395, src/plugin/profiler.cc:567-582). By default the originator is another
	 * process: its context is a PROT_NONE page (a read through it kills the
	 * test) and its pid another one; pxn_same_process: the node-mate thread's
	 * real context and our pid (several GPUs per process, several proxy threads).
	 */
	int pxn;
	int pxn_same_process;
	/*
	 * Receive steps NCCL starts again before it posts them, over the handle it
	 * kept, with no stop in between (2.30.7 src/transport/net.cc:1536 starts the
	 * step's event, then `continue`s while a registered buffer waits for the
	 * kernel, :1546 and :1561, or skips RecvWait while irecv gives no request,
	 * :1592; 2.28.9 :1432, :1442, :1455, :1483; 2.23.4 :1261, :1271, :1296):
	 * recv_reg_passes: user-registered buffers (CUDA graphs, ncclCommRegister),
	 *   each op's first step started that many extra times, one per proxy pass
	 *   until the kernel starts (regBufferReady then holds for the op's other steps);
	 * recv_not_now: every receive step's irecv says "not now" that many times.
	 */
	int recv_reg_passes;
	int recv_not_now;
	int comms; /* communicators per rank (each its own hash), 1 or more */
	/*
	 * Odd-numbered ops are a grouped ncclSend to the next rank and ncclRecv from the
	 * previous one (P2p events, and P2pApi from v5) instead of an all-reduce: the
	 * same proxy traffic under other parents.
	 */
	int p2p;
	/*
	 * The profiler the stand-in loads: NULL, fabriclab's own tables (linked in);
	 * else a library whose ncclProfiler_v<version> it drives alone, as NCCL would.
	 */
	const char *profiler_lib;
	/* NCCL's logger, handed to init (v4+); NULL: none. */
	void (*logger)(int level, unsigned long flags, const char *file, int line,
		       const char *fmt, ...);
	int split; /* odd communicators number their ranks backwards (a split, renumbered) */
	const struct player_rank_hooks *hooks; /* NULL: the profiler role alone */
};

void player_defaults(struct player_scenario *s, int version, int nranks);
/* Node name of a rank: "node<k>" with k = rank / ranks_per_node. */
void player_node_name(const struct player_scenario *s, int rank, char *buf, unsigned len);
/*
 * Plays the scenario: forks one process per node, waits for them; their
 * reports land in dir. Returns 0 when every process exited cleanly.
 */
int player_run(const struct player_scenario *s, const char *dir);
/* The rank a process's rank `rank` (of communicator 0) has in communicator `comm`; its own inverse. */
int player_comm_rank(const struct player_scenario *s, int comm, int rank);

#endif
