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
enum player_ev_kind { EV_STOP_STEP, EV_STOP_OP, EV_START_OP, EV_START_STEP, EV_STATE };

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

/* player_abi.c: one version's calls, shaped as NCCL makes them. */
struct player_driver {
	int (*init)(void **ctx, const struct player_scenario *s, uint64_t hash, int rank);
	int (*start_coll)(void *ctx, void **h, uint64_t hash, int rank);
	int (*start_op)(void *ctx, void **h, void *parent, const struct player_link *l, int nsteps,
			int chunk);
	int (*start_step)(void *ctx, void **h, void *parent, int rank, int step);
	int (*record)(void *h, int state, uint64_t size, int fresh);
	/* v1..v3: a ProxyOp state with its transSize; v4+: NULL (their op states carry nothing). */
	int (*record_op)(void *h, int state, uint64_t trans_size);
	/* A ProxyCtrl event on the proxy's own context, started and stopped. */
	int (*proxy_ctrl)(void *ctx);
	int (*stop)(void *h);
	int (*finalize)(void *ctx);
};

const struct player_driver *player_driver(int version);

#endif
