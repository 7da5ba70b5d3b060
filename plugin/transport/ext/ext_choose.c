/*
 * FABRICLAB_TRANSPORT=ext:LIST: the plugin fabriclab wraps, chosen the way NCCL
 * chooses among NCCL_NET_PLUGIN=a,b,c (host/host_find.c says NCCL's rules): the
 * same list given to NCCL_NET_PLUGIN without fabriclab therefore gives the same
 * plugin here. A plugin that fails is closed and named, with its own error
 * code, in the message of the whole list's failure.
 */
#include "ext_inner.h"

#include <stdio.h>
#include <string.h>

#include "base/error.h"
#include "ext_lib.h"

#define EXT_ENV "FABRICLAB_TRANSPORT=ext:"

/* The inner's ncclResult_t in words: what failed is its code, never ours. */
static const char *result_name(int rc)
{
	static const char *const names[] = { "success", "unhandled cuda error", "system error",
					     "internal error", "invalid argument",
					     "invalid usage", "remote error", "in progress" };

	return rc >= 0 && rc < (int)(sizeof(names) / sizeof(names[0])) ? names[rc] : "unknown";
}

/* After a successful init: the slots, then at least one device, as NCCL requires. */
static int check_inited(struct fl_host_net *in)
{
	int ndev = 0, rc = ext_inner_bind(in);

	if (rc)
		return rc;
	rc = in->devices(&ndev);
	if (rc)
		return fl_fail(rc, EXT_ENV "%s: devices() of %s (ncclNetPlugin_v%d) from %s "
			       "failed: its error %d (%s)", in->spec, in->name, in->version,
			       in->path, rc, result_name(rc));
	if (ndev <= 0)
		return fl_fail(FL_ERR_SYSTEM, EXT_ENV "%s: %s (ncclNetPlugin_v%d) from %s has %d "
			       "devices (NCCL would not use it either)", in->spec, in->name,
			       in->version, in->path, ndev);
	return FL_OK;
}

struct choice {
	fl_logger_fn logger;
	fl_prof_fn prof;
	struct fl_host_net *in;
	struct ext_ctx *ctx;
	char why[FL_ERROR_LEN]; /* "[a] why; [b] why" */
	int failed;
};

/* The reason without "FABRICLAB_TRANSPORT=ext:NAME: ", which the list's message says once. */
static const char *reason(const char *name)
{
	const char *text = fl_error_text();
	size_t len = strlen(EXT_ENV), nlen = strlen(name);

	if (strncmp(text, EXT_ENV, len))
		return text;
	text += len;
	return !strncmp(text, name, nlen) && !strncmp(text + nlen, ": ", 2) ? text + nlen + 2 :
									       text;
}

static int try_one(const char *spec, void *arg)
{
	struct choice *c = arg;
	struct fl_host_net *in = c->in;
	int rc = ext_inner_load(spec, in);

	if (!rc) {
		rc = ext_inner_init(in, c->logger, c->prof, c->ctx);
		if (rc) {
			rc = fl_fail(rc, EXT_ENV "%s: init of %s (ncclNetPlugin_v%d) from %s "
				     "failed: its error %d (%s)", in->spec, in->name, in->version,
				     in->path, rc, result_name(rc));
		} else {
			rc = check_inited(in);
			if (rc) /* as NCCL finalizes a plugin whose devices fail */
				ext_inner_close_ctx(in, c->ctx);
		}
		if (rc)
			fl_host_unload(in);
	}
	if (rc) {
		size_t used = strlen(c->why);

		snprintf(c->why + used, sizeof(c->why) - used, "%s[%s] %s", c->failed ? "; " : "",
			 spec, reason(spec));
		c->failed++;
	}
	return rc;
}

int ext_inner_choose(const char *list, fl_logger_fn logger, fl_prof_fn prof,
		     struct fl_host_net *in, struct ext_ctx *ctx)
{
	struct choice c = { .logger = logger, .prof = prof, .in = in, .ctx = ctx };
	int rc, tried;

	if (!list || !*list)
		return fl_fail(FL_ERR_USAGE, EXT_ENV ": no plugin named (a path, or NAME for "
			       "libnccl-net-NAME.so; a comma-separated list tries each in turn)");
	if (strlen(list) >= EXT_PATH_LEN)
		return fl_fail(FL_ERR_USAGE, EXT_ENV "...: plugin list longer than %d bytes",
			       EXT_PATH_LEN - 1);
	rc = fl_host_each(list, try_one, &c, &tried);
	if (!rc) { /* its tuner, CollNet and GIN are the ones NCCL finds through us */
		ext_lib_chosen(in->lib);
		return FL_OK;
	}
	if (!tried)
		return fl_fail(FL_ERR_USAGE, EXT_ENV "%s: no plugin named", list);
	if (tried == 1)
		return rc; /* its own message names it */
	return fl_fail(rc, EXT_ENV "%s: none of the %d plugins initialised: %s", list, tried,
		       c.why);
}
