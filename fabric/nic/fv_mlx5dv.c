/*
 * The part of libmlx5 that tells an mlx5 DataDirect NIC (NCCL's IB asks it: 2.30.7
 * src/transport/net_ib/init.cc:376-394), so a test can present one. Which NICs have a
 * DataDirect DMA engine is the description's (a NIC's "data_direct": true, fabric/README.md),
 * or FABRICLAB_FAKEVERBS_DATA_DIRECT's over it (fv_config.c). Every fake device is an mlx5
 * one; one with the engine answers with its DataDirect device's sysfs path (relative to /sys,
 * as rdma-core gives it), the others with ENODEV, as libmlx5 answers for an mlx5 device
 * without one (src/misc/mlx5dvwrap.cc:64-66).
 */
#include <errno.h>
#include <stdio.h>

#include "fv_internal.h"

int mlx5dv_is_supported(struct ibv_device *device);
int mlx5dv_get_data_direct_sysfs_path(struct ibv_context *context, char *buf, size_t buf_len);

int mlx5dv_is_supported(struct ibv_device *device)
{
	return device != NULL;
}

int
mlx5dv_get_data_direct_sysfs_path(struct ibv_context *context, char *buf, size_t buf_len)
{
	struct fv_device *d = context ? fv_ctx(context)->dev : NULL;
	int n;

	if (!d || !buf)
		return EINVAL;
	if (!d->data_direct)
		return ENODEV;
	/* a PCI function of its own, next to nothing the NIC's sysfs tree publishes */
	n = snprintf(buf, buf_len, "/devices/pci0000:d0/0000:d0:00.%d/data_direct", d->index);
	return n < 0 || (size_t)n >= buf_len ? ENOSPC : 0;
}
