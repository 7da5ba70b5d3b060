/*
 * The driver's processes: one per rank, forked before anything touches CUDA or NCCL (a CUDA
 * context does not survive fork, and NCCL reads NCCL_HOSTID once per process), each given its
 * own NCCL_HOSTID so that NCCL takes the ranks for separate hosts. The parent only waits: the
 * first rank to fail or the timeout ends the others, so a rank left waiting for a dead peer
 * never hangs the run. No CUDA or NCCL here.
 */
#ifndef FL_GPU_DRIVER_LAUNCH_H
#define FL_GPU_DRIVER_LAUNCH_H

#include <stddef.h>

#include "driver_args.h"

/* What a rank runs: an enum drv_exit, with a message in err when it is not DRV_EXIT_OK. */
typedef int (*drv_rank_fn)(const struct drv_args *a, int rank, void *ctx, char *err,
			   size_t errlen);

/* What the probe runs in its child: an enum drv_exit, and a line of text in msg either way. */
typedef int (*drv_probe_fn)(const struct drv_args *a, char *msg, size_t len);

/* Sets rank's environment in this process: NCCL_HOSTID = a->hostid_prefix<rank> when
 * set_hostid, and each --rank-env. 0, or -1 with a message. */
int drv_rank_environment(const struct drv_args *a, int rank, int set_hostid, char *err,
			 size_t errlen);

/* Runs fn in a child process (so that this one stays free of CUDA) and returns its status,
 * with its line of text in msg; DRV_EXIT_FAILED when it died or outlived timeout_s. */
int drv_probe(const struct drv_args *a, drv_probe_fn fn, char *msg, size_t len,
	      double timeout_s);

/* Forks a->ranks ranks running fn and waits for them (a->timeout_s in all). Each child prints
 * its own failure on stderr. The first rank to fail ends the others (SIGTERM, SIGKILL after a
 * grace), unless it only found wrong elements. Returns the status of the first rank to fail
 * (DRV_EXIT_FAILED for a signal or the timeout) or DRV_EXIT_OK, with what happened in err. */
int drv_launch(const struct drv_args *a, drv_rank_fn fn, void *ctx, char *err, size_t errlen);

#endif
