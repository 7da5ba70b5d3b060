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

static const char *const proto_names[SHIM_NPROTOS] = { "LL", "LL128", "Simple" };

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
	return shim_rules_read(&w->rules, step);
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

/* A collective's receive posts its whole slot: that must fit what the device takes at once. */
static int check_transfer_size(const struct shim_world *w)
{
	struct shim_coll_shape c;

	shim_rules_coll(&w->rules, w->rules.proto, &c);
	if (w->props.max_p2p_bytes && c.recv_bytes > w->props.max_p2p_bytes)
		return shim_fail(FL_ERR_USAGE, "FABRICLAB_SHIM_STEP=%zu: transfers of %zu bytes "
				 "exceed the device's limit of %zu bytes per transfer",
				 w->step_bytes, c.recv_bytes, w->props.max_p2p_bytes);
	return FL_OK;
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
	return check_transfer_size(w);
}

/* LL and LL128 lines are packed and read on the host: one chunk's payload to read them into. */
static int alloc_unpack(struct shim_world *w)
{
	struct shim_coll_shape c;

	if (w->rules.proto == SHIM_PROTO_SIMPLE)
		return FL_OK;
	if (w->mem.kind != SHIM_MEM_HOST)
		return shim_fail(FL_ERR_USAGE, "FABRICLAB_SHIM_PROTO=%s: the shim packs LL and "
				 "LL128 lines in host memory only", proto_names[w->rules.proto]);
	shim_rules_coll(&w->rules, w->rules.proto, &c);
	if (posix_memalign((void **)&w->unpack, 64, c.chunk))
		return shim_fail(FL_ERR_SYSTEM, "out of memory for %zu bytes of LL lines", c.chunk);
	return FL_OK;
}

/* The id first: NCCL inits each plugin of NCCL_NET_PLUGIN for a communicator it already has. */
static int open_net(struct shim_world *w, const char *fallback_dir)
{
	char release[16];
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
		  "(ncclNetPlugin_v%d), device %d \"%s\" (%d Mbps), step %zu bytes, as NCCL %s's "
		  "proxy, all_reduce in %s", w->rank, w->nranks, w->net.name, w->net.version,
		  w->dev, w->props.name ? w->props.name : "?", w->props.speed_mbps, w->step_bytes,
		  shim_rules_release_name(&w->rules, release, sizeof(release)),
		  proto_names[w->rules.proto]);
	return alloc_unpack(w);
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

/* What the plugin did with NCCL's profiler callback: nothing, unless it says otherwise. */
static void report_profiler_events(const struct shim_world *w)
{
	struct shim_prof_counts c;

	shim_nccl_profiler_counts(&c);
	if (c.starts || c.stops || c.updates)
		SHIM_INFO(SHIM_LOG_INIT | SHIM_LOG_NET, "shim: the plugin's profiler events: %lu "
			  "started, %lu stopped, %lu updated", c.starts, c.stops, c.updates);
	if (c.foreign)
		SHIM_WARN("shim: rank %d: the plugin started %lu profiler event(s) on a handle "
			  "NCCL never passed (NCCL reads it as its ProxyStep: 2.30.7 "
			  "src/plugin/profiler.cc:786-788)", w->rank, c.foreign);
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
	report_profiler_events(w);
	shim_boot_close(&w->boot);
	shim_mem_close(w);
	free(w->unpack);
	w->unpack = NULL;
}
