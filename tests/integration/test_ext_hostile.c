/*
 * Issue 49, findings 7 and 10: what an inner plugin that lies in its getProperties
 * (tests/inner/hostile_net.c over flsock-v12) makes NCCL see through FABRICLAB_TRANSPORT=ext.
 *  - maxRecvs 1000 reaches NCCL as FL_MAX_RECVS: NCCL would group that many receives into one
 *    irecv (2.30.7 src/transport/net.cc:1476-1502, 1590), which the wrap refuses past 8.
 *  - a device name with ESC, a newline and U+202E reaches NCCL escaped, printable.
 *  - a failing getProperties is logged naming the inner and its file.
 * Each case runs in a child of its own: the plugin's process-wide state is bound once.
 */
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

#include "plugin/entry/net_abi.h"
#include "plugin/base/fl_text.h"
#include "plugin/base/fl_types.h"

static char inner_dir[PATH_MAX];
static char logged[4096];

static void keep_log(int level, unsigned long flags, const char *file, int line, const char *fmt,
		     ...)
{
	size_t used = strlen(logged);
	va_list ap;

	(void)level, (void)flags, (void)file, (void)line;
	va_start(ap, fmt);
	vsnprintf(logged + used, sizeof(logged) - used, fmt, ap);
	va_end(ap);
}

/* In a child: the plugin over the hostile inner; props of device 0 and getProperties' code. */
static int hostile_props(const char *attack, struct fl_abi_props_v12 *p)
{
	char env[PATH_MAX + 64];
	struct fl_abi_comm_config cfg = { .traffic_class = -1 };
	void *ctx = NULL;
	int ndev = 0;

	snprintf(env, sizeof(env), "ext:%s/libnccl-net-hostile.so", inner_dir);
	setenv("FABRICLAB_TRANSPORT", env, 1);
	snprintf(env, sizeof(env), "%s/libnccl-net-flsock-v12.so", inner_dir);
	setenv("FABRICLAB_FORWARD_INNER", env, 1);
	setenv("FABRICLAB_HOSTILE", attack, 1);
	if (ncclNetPlugin_v12.init(&ctx, 7, &cfg, (fl_abi_logger_fn)keep_log, NULL) ||
	    ncclNetPlugin_v12.devices(&ndev) || ndev < 1)
		return -1;
	memset(p, 0, sizeof(*p));
	return ncclNetPlugin_v12.get_properties(0, p);
}

static void in_child(void (*check)(void))
{
	int status = 0;
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		check();
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

#define CHILD_ASSERT(c)                                                                   \
	do {                                                                              \
		if (!(c)) {                                                               \
			fprintf(stderr, "%s:%d: %s failed (log: %s)\n", __FILE__, __LINE__, #c, \
				logged);                                                  \
			_exit(1);                                                         \
		}                                                                         \
	} while (0)

static void max_recvs_capped(void)
{
	struct fl_abi_props_v12 p;

	CHILD_ASSERT(hostile_props("maxrecvs", &p) == 0);
	CHILD_ASSERT(p.max_recvs == FL_MAX_RECVS);
	CHILD_ASSERT(strstr(logged, "maxRecvs 1000"));
}

static void name_escaped(void)
{
	struct fl_abi_props_v12 p;

	CHILD_ASSERT(hostile_props("name", &p) == 0);
	CHILD_ASSERT(p.name && !fl_text_needs_escape(p.name));
	CHILD_ASSERT(!strcmp(p.name, "ev\\x1b[31mil\\x0an\\xe2\\x80\\xaeame"));
}

static void failure_names_inner(void)
{
	struct fl_abi_props_v12 p;

	CHILD_ASSERT(hostile_props("propsfail", &p) != 0);
	CHILD_ASSERT(strstr(logged, "hostile"));
	CHILD_ASSERT(strstr(logged, "libnccl-net-hostile.so"));
	CHILD_ASSERT(strstr(logged, "getProperties(0)"));
}

static void test_max_recvs_capped(void **state)
{
	(void)state;
	in_child(max_recvs_capped);
}

static void test_name_escaped(void **state)
{
	(void)state;
	in_child(name_escaped);
}

static void test_failure_names_inner(void **state)
{
	(void)state;
	in_child(failure_names_inner);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_max_recvs_capped),
		cmocka_unit_test(test_name_escaped),
		cmocka_unit_test(test_failure_names_inner),
	};
	char self[PATH_MAX];

	(void)argc;
	/* build/tests/test_ext_hostile -> build/inner */
	snprintf(self, sizeof(self), "%s", argv[0]);
	snprintf(inner_dir, sizeof(inner_dir), "%s/../inner", dirname(self));
	return cmocka_run_group_tests(tests, NULL, NULL);
}
