/*
 * The net role beside the player, for tests that load both roles in one
 * process: each rank thread opens ncclNetPlugin_v12 the way NCCL does around
 * its profiler context (init before the profiler's, then listen/connect/accept
 * of its ring neighbours over loopback, one connection per channel, and the
 * teardown after the profiler's finalize). Ranks swap listen handles through
 * files of one folder, so they may sit in any process.
 */
#ifndef PLAYER_NET_H
#define PLAYER_NET_H

#include <stddef.h>

#include "prof_player.h"

#define PLAYER_NET_MAX_CHANNELS 8

struct player_net {
	char handles[320]; /* the folder the handles go through */
	int nranks, nchannels;
	/*
	 * Forces, in each process, an even rank's net init, then the odd ranks'
	 * net and profiler inits, then the even ranks' profiler inits: a join keyed
	 * by the hash alone would give an odd rank an even rank's ctx.
	 */
	int force_order;
	struct player_rank_hooks hooks; /* for player_scenario.hooks */
};

/* Fills n; its hooks point back at it, so n must outlive the runs that use them. */
void player_net_init(struct player_net *n, const char *handles_dir, int nranks, int nchannels,
		     int force_order);
/* Device 0's name as the net role gives it, asked in a child (no state left here); 0 on success. */
int player_net_device_name(char *buf, size_t len);

#endif
