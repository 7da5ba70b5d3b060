/*
 * NCCL_NET_PLUGIN as NCCL takes it: a name, a soname, a path, or several of
 * them separated by commas (2.28.9 src/plugin/net.cc:269-290 splits the list;
 * ncclNetPluginInit, :172-186, calls each one's init, then devices, and the
 * first whose init succeeds with at least one device is the communicator's).
 * The version bound is the highest the plugin exports up to the highest the
 * emulated release knows (FABRICLAB_SHIM_NCCL, nccl_rules.h; or
 * FABRICLAB_SHIM_NET_MAX_VERSION), or exactly one (FABRICLAB_SHIM_NET_VERSION).
 * The tool adds its own folder as a fallback.
 */
#include "shim.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "plugin/abi/nccl_abi.h"
#include "shim_env.h"
#include "watchdog.h"

#define DEFAULT_PLUGIN "fabriclab"

struct bind_opts {
	long version;       /* 0: the highest up to max_version */
	long max_version;   /* 12 (NCCL 2.30), 11 (2.28, 2.29), 10 (2.26, 2.27), 9, 8 */
	long traffic_class; /* ncclConfig_t.trafficClass; -1 (UNDEF) as NCCL's default */
};

static int read_opts(const struct shim_world *w, struct bind_opts *o)
{
	int rc = shim_env_long("FABRICLAB_SHIM_NET_VERSION", 0, 0, 12, &o->version);

	if (rc)
		return rc;
	if (o->version && o->version < 6)
		return shim_fail(FL_ERR_USAGE, "FABRICLAB_SHIM_NET_VERSION=%ld: expected 0 "
				 "(highest) or 6 to 12", o->version);
	rc = shim_env_long("FABRICLAB_SHIM_NET_MAX_VERSION", shim_rules_max_net_version(&w->rules),
			   6, 12, &o->max_version);
	if (!rc)
		rc = shim_env_long("FABRICLAB_SHIM_TRAFFIC_CLASS", FL_ABI_TRAFFIC_CLASS_UNDEF, -1,
				   INT_MAX, &o->traffic_class);
	return rc;
}

static int load(const char *name, const struct bind_opts *o, struct shim_net *net, char *err,
		size_t errlen)
{
	int rc = o->version ? shim_net_load(name, (int)o->version, net, err, errlen) :
			      shim_net_load_upto(name, (int)o->max_version, net, err, errlen);

	net->traffic_class = (int)o->traffic_class;
	return rc;
}

/* The name as given, else (not a path) the same name in the tool's folder. */
static int load_one(const char *name, const struct bind_opts *o, const char *fallback_dir,
		    struct shim_net *net)
{
	char err[256], err2[256], path[PATH_MAX];

	if (!load(name, o, net, err, sizeof(err)))
		return FL_OK;
	if (!fallback_dir || strchr(name, '/'))
		return shim_fail(FL_ERR_USAGE, "%s", err);
	if (!strncmp(name, "lib", 3) && strstr(name, ".so"))
		snprintf(path, sizeof(path), "%s/%s", fallback_dir, name);
	else
		snprintf(path, sizeof(path), "%s/libnccl-net-%s.so", fallback_dir, name);
	if (!load(path, o, net, err2, sizeof(err2)))
		return FL_OK;
	return shim_fail(FL_ERR_USAGE, "%s; %s", err, err2);
}

/* init, then devices: NCCL takes a plugin with at least one device, else the next. */
static int init_one(struct shim_world *w)
{
	struct shim_net *net = &w->net;
	int ndev = 0, rc = SHIM_WATCHED(w, "init()", -1, shim_net_init(net, w->comm_id));

	if (rc)
		return shim_fail(rc, "net plugin %s: init failed: %s (%d)", net->name,
				 shim_result_name(rc), rc);
	rc = SHIM_WATCHED(w, "devices()", -1, shim_net_devices(net, &ndev));
	if (rc)
		return shim_fail(rc, "net plugin %s: devices() failed: %s (%d)", net->name,
				 shim_result_name(rc), rc);
	if (ndev <= 0)
		return shim_fail(FL_ERR_SYSTEM, "net plugin %s has %d devices", net->name, ndev);
	return FL_OK;
}

static int try_one(struct shim_world *w, const char *name, const struct bind_opts *o,
		   const char *fallback_dir)
{
	int rc = load_one(name, o, fallback_dir, &w->net);

	if (rc)
		return rc;
	shim_net_logger = shim_log;
	rc = init_one(w);
	if (rc)
		shim_net_close(&w->net);
	return rc;
}

int shim_net_choose(struct shim_world *w, const char *fallback_dir)
{
	const char *list = shim_env("NCCL_NET_PLUGIN");
	char names[1024], why[1024] = "";
	char *save = NULL, *name;
	struct bind_opts o;
	int rc, tried = 0;

	if (!list)
		list = DEFAULT_PLUGIN;
	if (!strcasecmp(list, "none"))
		return shim_fail(FL_ERR_USAGE, "NCCL_NET_PLUGIN=none: the shim needs a net plugin");
	if (strlen(list) >= sizeof(names))
		return shim_fail(FL_ERR_USAGE, "NCCL_NET_PLUGIN: longer than %zu bytes",
				 sizeof(names) - 1);
	rc = read_opts(w, &o);
	if (rc)
		return rc;
	snprintf(names, sizeof(names), "%s", list);
	for (name = strtok_r(names, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
		rc = try_one(w, name, &o, fallback_dir);
		if (!rc) {
			w->net_loaded = 1;
			return FL_OK;
		}
		tried++;
		snprintf(why + strlen(why), sizeof(why) - strlen(why), "%s[%s] %s",
			 tried > 1 ? "; " : "", name, shim_error_text());
	}
	if (!tried)
		return shim_fail(FL_ERR_USAGE, "NCCL_NET_PLUGIN=%s: no plugin named", list);
	if (tried == 1)
		return rc; /* its own message, as without a list */
	return shim_fail(rc, "NCCL_NET_PLUGIN=%s: none of the %d plugins initialised: %s", list,
			 tried, why);
}
