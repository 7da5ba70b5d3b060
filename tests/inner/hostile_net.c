/*
 * A test artifact: a net plugin (ncclNetPlugin_v12) that forwards to the plugin named by
 * FABRICLAB_FORWARD_INNER (flsock-v12) and lies in one way, chosen by FABRICLAB_HOSTILE, so that
 * the tests can check fabriclab flags what cannot be true instead of counting it
 * (test_ext_hostile.sh, issue 49):
 *
 *   oversize   test reports 0x7fffffff bytes for every buffer, whatever was posted
 *   negative   test reports -4096 bytes for every buffer
 *   hang       after FABRICLAB_HOSTILE_AFTER completions (default 8) of this process, test
 *              never says done again
 *   name       getProperties names the device with ESC, a newline and U+202E in it
 *   maxrecvs   getProperties advertises maxRecvs 1000
 *   propsfail  getProperties fails (error 3, ncclInternalError)
 */
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugin/abi/nccl_abi.h"

__attribute__((visibility("default"))) struct fl_abi_net_v12 ncclNetPlugin_v12;
static struct fl_abi_net_v12 inner;
static const struct fl_abi_net_v12 *inner_table;
static char attack[32];
static long after = 8;
static atomic_long completions;

static int is(const char *what)
{
	return !strcmp(attack, what);
}

static int hostile_props(int dev, struct fl_abi_props_v12 *props)
{
	/* ESC [ 3 1 m, a newline and U+202E (right-to-left override) in UTF-8 */
	static char evil[] = "ev\x1b[31mil\nn\xe2\x80\xae" "ame";
	int rc;

	if (is("propsfail"))
		return 3;
	rc = inner.get_properties(dev, props);
	if (rc)
		return rc;
	if (is("name"))
		props->name = evil;
	if (is("maxrecvs"))
		props->max_recvs = 1000;
	return 0;
}

static void lie_about_sizes(int *sizes, int n)
{
	for (int i = 0; sizes && i < n; i++)
		sizes[i] = is("oversize") ? 0x7fffffff : -4096;
}

static int hostile_test(void *request, int *done, int *sizes)
{
	int rc;

	if (is("hang") && atomic_load(&completions) >= after) {
		*done = 0;
		return 0;
	}
	rc = inner.test(request, done, sizes);
	if (rc || !*done)
		return rc;
	atomic_fetch_add(&completions, 1);
	if (is("oversize") || is("negative"))
		lie_about_sizes(sizes, 1); /* one buffer: what fabriclab's receives post over ext */
	return 0;
}

static void take_inner_table(void)
{
	inner = *inner_table;
	ncclNetPlugin_v12 = inner;
	ncclNetPlugin_v12.name = "hostile";
	ncclNetPlugin_v12.get_properties = hostile_props;
	ncclNetPlugin_v12.test = hostile_test;
}

static int hostile_init(void **ctx, uint64_t comm_id, struct fl_abi_comm_config *config,
			fl_abi_logger_fn logger, fl_abi_prof_callback_fn prof)
{
	int rc = inner_table->init(ctx, comm_id, config, logger, prof);

	if (memcmp(&inner, inner_table, sizeof(inner))) {
		take_inner_table();
		ncclNetPlugin_v12.init = hostile_init;
	}
	return rc;
}

static int hostile_init_fails(void **ctx, uint64_t comm_id, struct fl_abi_comm_config *config,
			      fl_abi_logger_fn logger, fl_abi_prof_callback_fn prof)
{
	(void)ctx, (void)comm_id, (void)config, (void)logger, (void)prof;
	fprintf(stderr, "hostile: FABRICLAB_FORWARD_INNER names no ncclNetPlugin_v12\n");
	return 5;
}

__attribute__((constructor)) static void hostile_load(void)
{
	const char *path = getenv("FABRICLAB_FORWARD_INNER");
	const char *what = getenv("FABRICLAB_HOSTILE");
	const char *n = getenv("FABRICLAB_HOSTILE_AFTER");
	void *lib = path ? dlopen(path, RTLD_NOW | RTLD_LOCAL) : NULL;
	void *table = lib ? dlsym(lib, "ncclNetPlugin_v12") : NULL;

	snprintf(attack, sizeof(attack), "%s", what ? what : "");
	if (n)
		after = atol(n);
	ncclNetPlugin_v12.name = "hostile";
	if (!table) {
		ncclNetPlugin_v12.init = hostile_init_fails;
		return;
	}
	inner_table = table;
	take_inner_table();
	ncclNetPlugin_v12.init = hostile_init;
}
