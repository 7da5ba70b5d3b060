/*
 * One rank of the real-NCCL driver: the CUDA and NCCL calls, all of them here (the other
 * driver files build without the toolkit).
 */
#ifndef FL_GPU_DRIVER_RANK_H
#define FL_GPU_DRIVER_RANK_H

#include <stddef.h>

#include "driver_args.h"

/* Is a->device there? DRV_EXIT_OK with "GPU d: name, PCI bus" in msg, or DRV_EXIT_NO_GPU
 * with a line naming the missing device and why. */
int drv_gpu_probe(const struct drv_args *a, char *msg, size_t len);

/* NCCL's version as ncclGetVersion gives it (the library loaded), and the header's. */
int drv_nccl_version(void);
int drv_nccl_header_version(void);

/* Runs rank `rank`: communicator, every op and size, checks; rank 0 prints the table. */
int drv_rank_run(const struct drv_args *a, int rank, void *ctx, char *err, size_t errlen);

#endif
