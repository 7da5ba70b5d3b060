/*
 * mlx5 DataDirect, found as NCCL's IB finds it: libmlx5 loaded at run time (the plugin links
 * nothing but libc; FABRICLAB_MLX5_LIB names another library, as the tests name the fake NIC),
 * the HCA an mlx5 one that takes dma-bufs, and mlx5dv_get_data_direct_sysfs_path answering with
 * the DataDirect device's sysfs path (2.30.7 src/transport/net_ib/init.cc:374-394; 2.28.9
 * src/transport/net_ib.cc:745-760). NCCL then offers that device (named "<hca>_dma", its PCI
 * path the DataDirect one: init.cc:418-426) and sets forceFlush in its properties
 * (init.cc:554-557), which makes NCCL flush GPUDirect receives even on compute capability 9.0
 * and later (src/graph/paths.cc:575-596).
 */
#ifndef FL_IB_MLX5_H
#define FL_IB_MLX5_H

#include <stddef.h>

#include "verbs_load.h"

#define FL_MLX5_DEFAULT_LIB "libmlx5.so.1"

/*
 * 1 with the DataDirect device's sysfs path (relative to /sys, as libmlx5 gives it) in path;
 * 0 when the HCA has none, libmlx5 is absent or the call failed (said at INFO).
 */
int ib_mlx5_data_direct(struct ibv_device *dev, struct ibv_context *ctx, char *path,
			size_t len);

#endif
