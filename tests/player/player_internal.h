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
};

/* One ProxyOp stream a thread plays: its own rank's, or another process's (PXN). */
struct player_link {
	int rank, peer, is_send, channel;
	pid_t pid;
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
	int (*stop)(void *h);
	int (*finalize)(void *ctx);
};

const struct player_driver *player_driver(int version);

#endif
