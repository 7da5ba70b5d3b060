/*
 * NCCL_NET_PLUGIN as NCCL takes it: a name, a soname, a path, or several of
 * them separated by commas, the first whose init succeeds with at least one
 * device being the communicator's (plugin/host/host_find.c cites NCCL's rules).
 * The version bound is the highest the plugin exports up to the highest the
 * emulated release knows (FABRICLAB_SHIM_NCCL, nccl_rules.h; or
 * FABRICLAB_SHIM_NET_MAX_VERSION), or exactly one (FABRICLAB_SHIM_NET_VERSION).
 * The tool adds its own folder as a fallback.
 */
#include "shim.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

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

struct choice {
	struct shim_world *w;
	const struct bind_opts *o;
	const char *fallback_dir;
	char why[1024]; /* "[a] why; [b] why" */
	int failed;
};

static int try_listed(const char *name, void *arg)
{
	struct choice *c = arg;
	int rc = try_one(c->w, name, c->o, c->fallback_dir);
	size_t used = strlen(c->why);

	if (rc) {
		snprintf(c->why + used, sizeof(c->why) - used, "%s[%s] %s", c->failed ? "; " : "",
			 name, shim_error_text());
		c->failed++;
	}
	return rc;
}

int shim_net_choose(struct shim_world *w, const char *fallback_dir)
{
	const char *list = shim_env("NCCL_NET_PLUGIN");
	struct bind_opts o;
	struct choice c = { .w = w, .o = &o, .fallback_dir = fallback_dir };
	int rc, tried = 0;

	if (!list)
		list = DEFAULT_PLUGIN;
	if (fl_host_is_none(list))
		return shim_fail(FL_ERR_USAGE, "NCCL_NET_PLUGIN=none: the shim needs a net plugin");
	if (strlen(list) >= sizeof(c.why))
		return shim_fail(FL_ERR_USAGE, "NCCL_NET_PLUGIN: longer than %zu bytes",
				 sizeof(c.why) - 1);
	rc = read_opts(w, &o);
	if (rc)
		return rc;
	rc = fl_host_each(list, try_listed, &c, &tried);
	if (!rc) {
		w->net_loaded = 1;
		return FL_OK;
	}
	if (!tried)
		return shim_fail(FL_ERR_USAGE, "NCCL_NET_PLUGIN=%s: no plugin named", list);
	if (tried == 1)
		return rc; /* its own message, as without a list */
	return shim_fail(rc, "NCCL_NET_PLUGIN=%s: none of the %d plugins initialised: %s", list,
			 tried, c.why);
}
