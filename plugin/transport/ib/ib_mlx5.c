/* libmlx5's DataDirect query, loaded once per process (ib_mlx5.h). */
#include "ib_mlx5.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static int (*is_supported)(struct ibv_device *dev);
static int (*data_direct_path)(struct ibv_context *ctx, char *buf, size_t len);

/*
 * NCCL opens libmlx5.so, then libmlx5.so.1 (2.30.7 src/misc/mlx5dvsymbols.cc:41-45) and binds
 * mlx5dv_get_data_direct_sysfs_path at MLX5_1.25 (:73-74); a library without it (rdma-core
 * before 51) has no DataDirect. The library stays loaded: its functions are kept.
 */
static void load(void)
{
	const char *path = getenv("FABRICLAB_MLX5_LIB");
	void *lib = dlopen(path && *path ? path : FL_MLX5_DEFAULT_LIB, RTLD_NOW | RTLD_LOCAL);

	if (!lib) {
		FL_INFO("ib: no libmlx5 (%s): no mlx5 DataDirect devices", dlerror());
		return;
	}
	*(void **)&is_supported = dlsym(lib, "mlx5dv_is_supported");
	*(void **)&data_direct_path = dlsym(lib, "mlx5dv_get_data_direct_sysfs_path");
	if (!is_supported || !data_direct_path)
		FL_INFO("ib: libmlx5 has no mlx5dv_get_data_direct_sysfs_path: no DataDirect");
}

int ib_mlx5_data_direct(struct ibv_device *dev, struct ibv_context *ctx, char *path,
			size_t len)
{
	int rc;

	pthread_once(&load_once, load);
	if (!is_supported || !data_direct_path || !is_supported(dev))
		return 0;
	memset(path, 0, len);
	rc = data_direct_path(ctx, path, len);
	/* ENODEV: an mlx5 device without DataDirect, not an error (2.30.7
	 * src/misc/mlx5dvwrap.cc:64-69) */
	if (rc && rc != ENODEV)
		FL_INFO("ib: mlx5dv_get_data_direct_sysfs_path failed: %s", strerror(rc));
	return rc == 0 && path[0];
}
