/* The player's pieces: the generated events of one rank thread, and the per-version drivers. */
#ifndef PLAYER_INTERNAL_H
#define PLAYER_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "prof_player.h"

/*
 * At equal times NCCL stops a step before it reuses the slot for the next one, and
 * starts a step before it records the step's first state.
 */
enum player_ev_kind {
	EV_STOP_STEP, EV_STOP_OP, EV_KCH_STOP, EV_START_OP, EV_KCH_START, EV_START_STEP, EV_STATE
};

struct player_event {
	uint64_t t;
	int kind;
	int link, op, step;
	int state;     /* ABI state number */
	uint64_t size; /* bytes for the states where NCCL refreshes transSize */
	int seq;       /* generation order, for a stable sort */
	/*
	 * v1..v3 (NCCL 2.23-2.26): a ProxyOp state on the op's handle, whose
	 * transSize is the sub's running total. `grow` bytes are added to it
	 * before the record, or after it where 2.23 does (grow_after).
	 */
	int on_op, grow_after;
	uint64_t grow;
};

/* One ProxyOp stream a thread plays: its own rank's, or another process's (PXN). */
struct player_link {
	int rank, peer, is_send, channel;
	pid_t pid;
	int relayed; /* PXN: the op's context is its originator's, not this thread's */
};

#define PLAYER_MAX_LINKS 16

struct player_thread {
	int rank;
	int nlinks;
	struct player_link links[PLAYER_MAX_LINKS];
	struct player_event *ev;
	size_t nev, cap;
};

/* player_gen.c: the events of every link a thread plays, sorted by time. */
int player_generate(const struct player_scenario *s, struct player_thread *th, uint64_t t0);
void player_thread_free(struct player_thread *th);

/* One event as NCCL describes it, in neutral form: each version's driver fills its own. */
struct player_descr {
	uint64_t type;
	void *parent, *parent_group; /* parent_group: a Coll's or P2p's Group (v5+) */
	int rank;
	uint64_t comm_hash; /* v1..v3 Coll and P2p carry it */
	uint64_t seq;
	const char *func;   /* "AllReduce", "Send", "Recv" */
	size_t count;
	int root, peer, group_depth;
	uint8_t nchannels;
	const struct player_link *link; /* ProxyOp */
	int nsteps, chunk;
	int step;        /* ProxyStep */
	uint8_t channel; /* KernelCh */
	uint64_t p_timer;
};

/* player_abi.c: one version's calls, shaped as NCCL makes them, through the loaded table. */
struct player_driver {
	/* *mask: what init wrote into NCCL's one mask; fails when the table cannot be called. */
	int (*init_mask)(void **ctx, const struct player_scenario *s, uint64_t hash, int rank,
			 int *mask);
	/* fabriclab's init, which must ask for ProxyStep (its own tables, the tests of them). */
	int (*init)(void **ctx, const struct player_scenario *s, uint64_t hash, int rank);
	int (*start)(void *ctx, void **h, const struct player_descr *pd);
	/* Shorthands of start for the tests that drive single events. */
	int (*start_coll)(void *ctx, void **h, uint64_t hash, int rank); /* a Group, then its Coll */
	int (*start_op)(void *ctx, void **h, void *parent, const struct player_link *l, int nsteps,
			int chunk);
	int (*start_step)(void *ctx, void **h, void *parent, int rank, int step);
	/* A step state with its transSize (v4+: stale unless fresh; v1..v3: NULL args). */
	int (*record)(void *h, int state, uint64_t size, int fresh);
	/* v1..v3: a ProxyOp state with its transSize; v4+: NULL (their op states carry nothing). */
	int (*record_op)(void *h, int state, uint64_t trans_size);
	/* ProxyCtrl (appendedProxyOps), KernelChStop (pTimer) or GroupApi (NULL args) states. */
	int (*record_arg)(void *h, int state, uint64_t value);
	/* A ProxyCtrl event on the proxy's own context, started and stopped. */
	int (*proxy_ctrl)(void *ctx);
	int (*stop)(void *h);
	int (*finalize)(void *ctx);
};

/*
 * The table this process drives: fabriclab's own (linked in, also before any
 * call) or, with s->profiler_lib, that library's ncclProfiler_v<version>
 * (dlopen, as NCCL would load it alone). 0, or -1 when it is missing.
 */
int player_load(const struct player_scenario *s);
const struct player_driver *player_driver(int version);

/* player_mask.c: whether NCCL emits an event of type for the process's mask. */
int player_emits(int mask, uint64_t type);
/*
 * player_tasks.c: the application thread's events of each task (op number k:
 * an all-reduce, or with s->p2p for odd k a grouped send and receive), in
 * NCCL's order; tasks[k] keeps the Coll (or P2p send, P2p receive) handles the
 * task's ProxyOps hang under.
 */
int player_tasks(const struct player_scenario *s, void *ctx, int rank, int mask,
		 void *tasks[][2]);

#endif
