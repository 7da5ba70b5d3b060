/*
 * What NCCL finds in fabriclab's library besides the net tables, with
 * FABRICLAB_TRANSPORT=ext:<plugin> (plugin/transport/ext/ext_forward.c): the
 * wrapped library's own tuner, CollNet and GIN tables, looked up as NCCL looks
 * them up (dlsym on the net plugin's handle, before its init for CollNet and
 * GIN), and nothing at all when the wrapped library has none or fabriclab runs
 * its own transports. The tuner is then driven as NCCL drives it: the decisions
 * of the fixture's tuner (tests/inner/flsock_extras.h) must come back through
 * fabriclab exactly as from the fixture itself. Each case runs in a child: the
 * wrapped library is chosen once per process.
 */
#include <dlfcn.h>
#include <libgen.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "plugin/abi/nccl_abi.h"
#include "plugin/abi/tuner_abi.h"

static char build_dir[PATH_MAX];

static const char *const forwarded[] = {
	"ncclTunerPlugin_v2",    "ncclTunerPlugin_v3",    "ncclTunerPlugin_v4",
	"ncclTunerPlugin_v5",    "ncclTunerPlugin_v6",    "ncclCollNetPlugin_v5",
	"ncclCollNetPlugin_v6",  "ncclCollNetPlugin_v7",  "ncclCollNetPlugin_v8",
	"ncclCollNetPlugin_v9",  "ncclCollNetPlugin_v10", "ncclCollNetPlugin_v11",
	"ncclCollNetPlugin_v12", "ncclGinPlugin_v11",     "ncclGinPlugin_v13",
	"ncclGinPlugin_v14",     "ncclRmaPlugin_v13",     "ncclRmaPlugin_v14",
};
#define NFORWARDED (sizeof(forwarded) / sizeof(forwarded[0]))

static void path_of(char *out, size_t len, const char *rel)
{
	snprintf(out, len, "%s/%s", build_dir, rel);
}

static void *open_lib(const char *rel)
{
	char path[PATH_MAX + 64];

	path_of(path, sizeof(path), rel);
	return dlopen(path, RTLD_NOW | RTLD_LOCAL);
}

static void wrap(const char *inner_rel)
{
	char path[PATH_MAX + 64], env[PATH_MAX + 80];

	if (!inner_rel) {
		unsetenv("FABRICLAB_TRANSPORT");
		return;
	}
	path_of(path, sizeof(path), inner_rel);
	snprintf(env, sizeof(env), "ext:%s", path);
	setenv("FABRICLAB_TRANSPORT", env, 1);
}

/* Runs fn in a child; the case fails when the child does. */
static void in_child(void (*fn)(void))
{
	int status = -1;
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		fn();
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

#define EXPECT(cond)                                                                 \
	do {                                                                         \
		if (!(cond)) {                                                       \
			fprintf(stderr, "%s:%d: not true: %s\n", __FILE__, __LINE__, #cond); \
			_exit(1);                                                    \
		}                                                                    \
	} while (0)

/* ---- the wrapped library exports a tuner, CollNet and GIN ---- */

/* A collective as NCCL asks about it: a fresh cost table, every cell available. */
struct decision {
	float cost[FL_TUNER_ALGOS_V5][FL_TUNER_PROTOS_V5];
	int nchannels, rc;
};

static void decide(const struct fl_abi_tuner_v5 *t, void *ctx, int coll, size_t bytes,
		   struct decision *d)
{
	float *rows[FL_TUNER_ALGOS_V5];

	for (int a = 0; a < FL_TUNER_ALGOS_V5; a++) {
		rows[a] = d->cost[a];
		for (int p = 0; p < FL_TUNER_PROTOS_V5; p++)
			d->cost[a][p] = 100.0f + (float)(a * 10 + p);
	}
	d->nchannels = 0;
	d->rc = t->get_coll_info(ctx, coll, bytes, 1, rows, FL_TUNER_ALGOS_V5,
				 FL_TUNER_PROTOS_V5, 0, &d->nchannels);
}

static void forwarded_case(void)
{
	void *fab, *inner;
	const struct fl_abi_tuner_v5 *via, *own;
	void *via_ctx = NULL, *own_ctx = NULL;
	int changed = 0;

	wrap("inner/libnccl-net-flsock-extras.so");
	fab = open_lib("libnccl-net-fabriclab.so");
	EXPECT(fab != NULL);
	/* before any init, as NCCL looks up CollNet and GIN at load */
	via = dlsym(fab, "ncclTunerPlugin_v5");
	inner = open_lib("inner/libnccl-net-flsock-extras.so");
	EXPECT(inner != NULL);
	own = dlsym(inner, "ncclTunerPlugin_v5");
	EXPECT(own != NULL && via == own);
	EXPECT(dlsym(fab, "ncclCollNetPlugin_v11") == dlsym(inner, "ncclCollNetPlugin_v11"));
	EXPECT(dlsym(fab, "ncclGinPlugin_v11") == dlsym(inner, "ncclGinPlugin_v11"));
	EXPECT(dlsym(inner, "ncclCollNetPlugin_v11") != NULL);
	/* what the wrapped library lacks stays absent: NCCL falls to the next version */
	for (size_t i = 0; i < NFORWARDED; i++)
		EXPECT(!!dlsym(fab, forwarded[i]) == !!dlsym(inner, forwarded[i]));
	EXPECT(dlsym(fab, "ncclTunerPlugin_v6") == NULL);
	EXPECT(strcmp(via->name, "flsock-tuner") == 0);

	/* driven as NCCL drives it: the same calls through both give the same decisions */
	EXPECT(via->init(&via_ctx, 0xabc, 16, 2, NULL, NULL, NULL) == 0);
	EXPECT(own->init(&own_ctx, 0xabc, 16, 2, NULL, NULL, NULL) == 0);
	for (int coll = 0; coll < 5; coll++) {
		for (size_t bytes = 1024; bytes <= (64u << 20); bytes *= 4) {
			struct decision a, b;

			decide(via, via_ctx, coll, bytes, &a);
			decide(own, own_ctx, coll, bytes, &b);
			EXPECT(a.rc == 0 && b.rc == 0);
			EXPECT(a.nchannels == b.nchannels && a.nchannels >= 1);
			EXPECT(memcmp(a.cost, b.cost, sizeof(a.cost)) == 0);
			for (int al = 0; al < FL_TUNER_ALGOS_V5; al++)
				for (int p = 0; p < FL_TUNER_PROTOS_V5; p++)
					changed += a.cost[al][p] == 0.0f;
		}
	}
	EXPECT(changed > 0); /* the tuner did decide: a cost NCCL would compare was set */
	EXPECT(via->finalize(via_ctx) == 0);
}

static void test_inner_tables_forwarded(void **state)
{
	(void)state;
	in_child(forwarded_case);
}

/* ---- a list: the library whose init won, as NCCL_NET_PLUGIN=a,b (2.28.9 src/plugin/net.cc:269-290) ---- */

static void wrap_list(const char *first_rel, const char *second_rel)
{
	char a[PATH_MAX + 64], b[PATH_MAX + 64], env[2 * PATH_MAX + 200];

	path_of(a, sizeof(a), first_rel);
	path_of(b, sizeof(b), second_rel);
	snprintf(env, sizeof(env), "ext:%s,%s", a, b);
	setenv("FABRICLAB_TRANSPORT", env, 1);
}

static void silent(int level, unsigned long flags, const char *file, int line, const char *fmt,
		   ...)
{
	(void)level, (void)flags, (void)file, (void)line, (void)fmt;
}

/* Before init the list's first library that opens answers; once init chose, the winner's does. */
static void list_case(void)
{
	struct fl_abi_comm_config cfg = { .traffic_class = -1 };
	const struct fl_abi_net_v12 *net;
	void *fab, *inner, *ctx = NULL;

	wrap_list("inner/libnccl-net-flsock-initfail.so", "inner/libnccl-net-flsock-extras.so");
	fab = open_lib("libnccl-net-fabriclab.so");
	inner = open_lib("inner/libnccl-net-flsock-extras.so");
	EXPECT(fab != NULL && inner != NULL);
	EXPECT(dlsym(fab, "ncclTunerPlugin_v5") == NULL); /* initfail's library: none */
	net = dlsym(fab, "ncclNetPlugin_v12");
	EXPECT(net != NULL && net->init(&ctx, 7, &cfg, silent, NULL) == 0);
	EXPECT(dlsym(fab, "ncclTunerPlugin_v5") == dlsym(inner, "ncclTunerPlugin_v5"));
	EXPECT(dlsym(fab, "ncclCollNetPlugin_v11") == dlsym(inner, "ncclCollNetPlugin_v11"));
	EXPECT(dlsym(fab, "ncclGinPlugin_v11") == dlsym(inner, "ncclGinPlugin_v11"));
	EXPECT(dlsym(inner, "ncclTunerPlugin_v5") != NULL);
}

/* A name that does not open is passed over, as NCCL's loader passes it over. */
static void list_unopenable_first_case(void)
{
	void *fab, *inner;

	wrap_list("inner/libnccl-net-absent.so", "inner/libnccl-net-flsock-extras.so");
	fab = open_lib("libnccl-net-fabriclab.so");
	inner = open_lib("inner/libnccl-net-flsock-extras.so");
	EXPECT(fab != NULL && inner != NULL);
	EXPECT(dlsym(inner, "ncclGinPlugin_v11") != NULL);
	EXPECT(dlsym(fab, "ncclGinPlugin_v11") == dlsym(inner, "ncclGinPlugin_v11"));
}

static void test_list_takes_the_winner(void **state)
{
	(void)state;
	in_child(list_case);
	in_child(list_unopenable_first_case);
}

/* ---- nothing to forward: NCCL sees no table at all ---- */

static void expect_none(void)
{
	void *fab = open_lib("libnccl-net-fabriclab.so");

	EXPECT(fab != NULL);
	for (size_t i = 0; i < NFORWARDED; i++)
		if (dlsym(fab, forwarded[i])) {
			fprintf(stderr, "%s found\n", forwarded[i]);
			_exit(1);
		}
	EXPECT(dlsym(fab, "ncclNetPlugin_v12") != NULL);
}

static void inner_without_case(void)
{
	wrap("inner/libnccl-net-flsock-v12.so");
	expect_none();
}

static void own_transport_case(void)
{
	wrap(NULL);
	expect_none();
}

static void missing_inner_case(void)
{
	setenv("FABRICLAB_TRANSPORT", "ext:/nonexistent/libnccl-net-none.so", 1);
	expect_none();
}

static void test_inner_without_tables(void **state)
{
	(void)state;
	in_child(inner_without_case);
}

static void test_own_transport_has_none(void **state)
{
	(void)state;
	in_child(own_transport_case);
}

static void test_missing_inner_has_none(void **state)
{
	(void)state;
	in_child(missing_inner_case);
}

int main(int argc, char **argv)
{
	char self[PATH_MAX];
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_inner_tables_forwarded),
		cmocka_unit_test(test_inner_without_tables),
		cmocka_unit_test(test_list_takes_the_winner),
		cmocka_unit_test(test_own_transport_has_none),
		cmocka_unit_test(test_missing_inner_has_none),
	};

	(void)argc;
	snprintf(self, sizeof(self), "%s", argv[0]);
	snprintf(build_dir, sizeof(build_dir), "%s/..", dirname(self));
	setenv("FABRICLAB_REPORT", "off", 1);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
