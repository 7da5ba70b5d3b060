/*
 * The part of libmlx5 that tells an mlx5 DataDirect NIC (NCCL's IB asks it: 2.30.7
 * src/transport/net_ib/init.cc:376-394), so a test can present one:
 * FABRICLAB_FAKEVERBS_DATA_DIRECT=NAME[,NAME...] names the fake devices that have a DataDirect
 * DMA engine. Every fake device is an mlx5 one; a named one answers with its DataDirect device's
 * sysfs path (relative to /sys, as rdma-core gives it), the others with ENODEV, as libmlx5
 * answers for an mlx5 device without one (src/misc/mlx5dvwrap.cc:64-66).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fv_internal.h"

int mlx5dv_is_supported(struct ibv_device *device);
int mlx5dv_get_data_direct_sysfs_path(struct ibv_context *context, char *buf, size_t buf_len);

int mlx5dv_is_supported(struct ibv_device *device)
{
	return device != NULL;
}

/* Whether name is one of the comma-separated names of FABRICLAB_FAKEVERBS_DATA_DIRECT. */
static int named(const char *name)
{
	const char *list = getenv("FABRICLAB_FAKEVERBS_DATA_DIRECT"), *p = list;
	size_t n = strlen(name);

	while (p && *p) {
		size_t len = strcspn(p, ",");

		if (len == n && !strncmp(p, name, n))
			return 1;
		p += len + (p[len] == ',');
	}
	return 0;
}

int
mlx5dv_get_data_direct_sysfs_path(struct ibv_context *context, char *buf, size_t buf_len)
{
	struct fv_device *d = context ? fv_ctx(context)->dev : NULL;
	int n;

	if (!d || !buf)
		return EINVAL;
	if (!named(d->ibdev.name))
		return ENODEV;
	/* a PCI function of its own, next to nothing the NIC's sysfs tree publishes */
	n = snprintf(buf, buf_len, "/devices/pci0000:d0/0000:d0:00.%d/data_direct", d->index);
	return n < 0 || (size_t)n >= buf_len ? ENOSPC : 0;
}
