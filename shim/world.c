#include "shim.h"
#include "watchdog.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "shim_env.h"

static int read_settings(struct shim_world *w)
{
	long dev, timeout_s, idle_us, group, channels;
	size_t step;
	int rc;

	rc = shim_env_long("FABRICLAB_SHIM_DEV", 0, 0, 1023, &dev);
	if (!rc)
		rc = shim_env_long("FABRICLAB_SHIM_TIMEOUT", SHIM_TIMEOUT_DEFAULT_S, 1, 86400,
				   &timeout_s);
	if (!rc)
		rc = shim_env_long("FABRICLAB_SHIM_IDLE_US", 0, 0, 100000, &idle_us);
	if (!rc)
		rc = shim_env_bytes("FABRICLAB_SHIM_STEP", SHIM_STEP_DEFAULT, 4, 1UL << 30, &step);
	if (!rc)
		rc = shim_env_long("FABRICLAB_SHIM_RECV_GROUP", 1, 1, FL_MAX_RECVS, &group);
	if (!rc)
		rc = shim_env_long("FABRICLAB_SHIM_CHANNELS", 1, 1, SHIM_MAX_CHANNELS, &channels);
	if (rc)
		return rc;
	if (step % sizeof(float))
		return shim_fail(FL_ERR_USAGE, "FABRICLAB_SHIM_STEP=%zu: expected a multiple of 4",
				 step);
	w->dev = (int)dev;
	w->timeout_ms = (int)timeout_s * 1000;
	w->idle_ns = idle_us * 1000;
	w->step_bytes = step;
	w->recv_group = (int)group;
	w->channels = (int)channels;
	return FL_OK;
}

/* Rank 0 draws the communicator id; everyone takes its value, as NCCL's commHash. */
static int agree_comm_id(struct shim_world *w)
{
	uint64_t mine = 0, *all;
	int rc;

	if (w->rank == 0 && getrandom(&mine, sizeof(mine), 0) != sizeof(mine))
		mine = (uint64_t)time(NULL) * 2654435761u ^ (uint64_t)getpid();
	all = calloc((size_t)w->nranks, sizeof(*all));
	if (!all)
		return shim_fail(FL_ERR_SYSTEM, "out of memory");
	rc = shim_boot_allgather(&w->boot, &mine, all, sizeof(mine));
	w->comm_id = all[0];
	free(all);
	return rc;
}

static int pick_device(struct shim_world *w)
{
	int ndev = 0, rc;

	rc = shim_net_devices(&w->net, &ndev);
	if (rc)
		return shim_fail(rc, "net plugin devices() failed: %s (%d)", shim_result_name(rc),
				 rc);
	if (w->dev >= ndev)
		return shim_fail(FL_ERR_USAGE, "FABRICLAB_SHIM_DEV=%d but the plugin has %d "
				 "device%s", w->dev, ndev, ndev == 1 ? "" : "s");
	rc = shim_net_properties(&w->net, w->dev, &w->props);
	if (rc)
		return shim_fail(rc, "net plugin getProperties(%d) failed: %s (%d)", w->dev,
				 shim_result_name(rc), rc);
	if (w->props.max_p2p_bytes && w->step_bytes > w->props.max_p2p_bytes)
		return shim_fail(FL_ERR_USAGE, "FABRICLAB_SHIM_STEP=%zu exceeds the device's limit "
				 "of %zu bytes per transfer", w->step_bytes,
				 w->props.max_p2p_bytes);
	return FL_OK;
}

/* The id first: NCCL inits each plugin of NCCL_NET_PLUGIN for a communicator it already has. */
static int open_net(struct shim_world *w, const char *fallback_dir)
{
	int rc = agree_comm_id(w);

	if (!rc)
		rc = shim_net_choose(w, fallback_dir);
	if (!rc)
		rc = pick_device(w);
	if (!rc)
		rc = shim_mem_plan(w);
	if (rc)
		return rc;
	SHIM_INFO(SHIM_LOG_INIT | SHIM_LOG_NET, "shim: rank %d of %d: net plugin \"%s\" "
		  "(ncclNetPlugin_v%d), device %d \"%s\" (%d Mbps), step %zu bytes", w->rank,
		  w->nranks, w->net.name, w->net.version, w->dev,
		  w->props.name ? w->props.name : "?", w->props.speed_mbps, w->step_bytes);
	return FL_OK;
}

int shim_world_open(struct shim_world *w, const char *fallback_dir)
{
	int rc;

	*w = (struct shim_world){ .boot = { .root_fd = -1 } };
	rc = read_settings(w);
	if (!rc)
		rc = shim_boot_init_env(&w->boot, w->timeout_ms);
	if (rc)
		return rc;
	w->rank = w->boot.rank;
	w->nranks = w->boot.nranks;
	shim_log_set_rank(w->rank);
	rc = shim_mem_open(w);
	if (!rc)
		rc = open_net(w, fallback_dir);
	for (int c = 0; !rc && c < w->channels; c++)
		rc = shim_link_open(w, (w->rank + 1) % w->nranks,
				    (w->rank + w->nranks - 1) % w->nranks, &w->ring[c]);
	if (rc) {
		w->broken = 1;
		shim_world_close(w);
	}
	return rc;
}

void shim_world_close(struct shim_world *w)
{
	/* Nobody closes a connection its peer may still be reading. */
	if (!w->broken && shim_boot_barrier(&w->boot))
		w->broken = 1;
	if (!w->broken) {
		for (int c = 0; c < w->channels; c++)
			shim_link_close(w, &w->ring[c]);
		if (w->net_loaded)
			shim_net_close(&w->net);
		w->net_loaded = 0;
	}
	shim_boot_close(&w->boot);
	shim_mem_close(w);
}
