/*
 * Slow loris on the listen ports: an attacker process holds 1000 connections
 * to a listener (half silent, half stopped partway through a hello; half
 * opened before the real peer connects, half while it does, and reopened when
 * the listener closes them). The real connection must still be set up long
 * before any stranger's hello deadline (30 s here) could free room for it,
 * carry data, and the drops must be summed up in one WARN naming the
 * attacker's address. Both the socket transport and the ib side channel
 * (over the fake verbs library) are attacked.
 *
 * LORIS_HOLD_S (default 1) sets how long the attacker holds on; the setup
 * times with and without the attack are printed side by side.
 */
#include <libgen.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "fabric/topo/topo_test.h"
#include "plugin/base/clock.h"
#include "plugin/base/error.h"
#include "plugin/base/log.h"
#include "plugin/transport/transport.h"
#include "tests/integration/loris.h"
#include "tests/skip.h"

#define LORIS_STREAMS 1000
#define HELLO_TIMEOUT_MS "30000"
/* far below the 30 s a stranger's deadline takes: the real peer did not wait for one */
#define SETUP_LIMIT_S 8.0

static char fake_path[PATH_MAX];
static char sysfs_root[] = "/tmp/fabriclab-loris-sysfs.XXXXXX";
static char fabric_dir[] = "/tmp/fabriclab-loris-fabric.XXXXXX";
static int warn_lines, warn_named_attacker;
static char last_warn[1024];

static void capture(int level, unsigned long flags, const char *file, int line, const char *fmt,
		    ...)
{
	char text[1024];
	va_list ap;

	(void)flags;
	(void)file;
	(void)line;
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	if (getenv("LORIS_DEBUG"))
		fprintf(stderr, "log %d: %s\n", level, text);
	if (level != FL_LOG_WARN || !strstr(text, "dropped"))
		return;
	warn_lines++;
	warn_named_attacker += strstr(text, "127.0.0.1") != NULL;
	snprintf(last_warn, sizeof(last_warn), "%s", text);
}

struct setup {
	void *listen, *send, *recv;
	double seconds;
};

static void establish(const struct fl_transport *tp, struct setup *s, char *handle)
{
	struct fl_endpoint self = { "loris-node", "lo", 0, 1, 0xabcULL };
	double start = loris_now();

	while (!s->send || !s->recv) {
		if (!s->send)
			assert_int_equal(tp->connect(0, &self, handle, &s->send), FL_OK);
		if (!s->recv)
			assert_int_equal(tp->accept(s->listen, &s->recv), FL_OK);
		if (loris_now() - start > SETUP_LIMIT_S)
			fail_msg("setup not done after %.0f s under attack", SETUP_LIMIT_S);
	}
	s->seconds = loris_now() - start;
}

static void transfer(const struct fl_transport *tp, struct setup *s)
{
	enum { SZ = 1 << 20 };
	uint8_t *src = malloc(SZ), *dst = calloc(1, SZ);
	void *sreq = NULL, *rreq = NULL, *smh = NULL, *rmh = NULL, *buf = dst;
	size_t cap = SZ;
	int tag = 7, sdone = 0, rdone = 0, sizes[FL_MAX_RECVS];
	struct fl_xfer_times times;
	double start = loris_now();

	for (int i = 0; i < SZ; i++)
		src[i] = (uint8_t)(i * 31 + 7);
	assert_int_equal(tp->reg_mr(s->send, src, SZ, FL_PTR_HOST, &smh), FL_OK);
	assert_int_equal(tp->reg_mr(s->recv, dst, SZ, FL_PTR_HOST, &rmh), FL_OK);
	while (!rreq)
		assert_int_equal(tp->irecv(s->recv, 1, &buf, &cap, &tag, &rmh, &rreq), FL_OK);
	while (!sreq)
		assert_int_equal(tp->isend(s->send, src, SZ, tag, smh, &sreq), FL_OK);
	while (!sdone || !rdone) {
		if (!sdone)
			assert_int_equal(tp->test(sreq, &sdone, sizes, &times), FL_OK);
		if (!rdone)
			assert_int_equal(tp->test(rreq, &rdone, sizes, &times), FL_OK);
		assert_true(loris_now() - start < 10.0);
	}
	assert_memory_equal(src, dst, SZ);
	assert_int_equal(tp->dereg_mr(s->send, smh), FL_OK);
	assert_int_equal(tp->dereg_mr(s->recv, rmh), FL_OK);
	free(src);
	free(dst);
}

static void teardown(const struct fl_transport *tp, struct setup *s)
{
	assert_int_equal(tp->close_listen(s->listen), FL_OK);
	assert_int_equal(tp->close_send(s->send), FL_OK);
	assert_int_equal(tp->close_recv(s->recv), FL_OK);
}

static double hold_seconds(void)
{
	const char *v = getenv("LORIS_HOLD_S");

	return v ? atof(v) : 1.0;
}

/* One setup without strangers, one under attack; both must carry data. */
static void attack(const struct fl_transport *tp, const char *what)
{
	char handle[FL_HANDLE_SIZE];
	struct fl_endpoint self = { "loris-node", "lo", 0, 0, 0xabcULL };
	struct loris_plan plan = { .before = LORIS_STREAMS / 2, .during = LORIS_STREAMS / 2,
				   .spread_s = 0.5, .hold_s = 600.0 };
	struct setup calm = { 0 }, attacked = { 0 };
	struct sock_handle h;
	struct loris lo = { 0 };
	double start;
	int opened;

	assert_int_equal(tp->listen(0, &self, handle, &calm.listen), FL_OK);
	establish(tp, &calm, handle);
	transfer(tp, &calm);
	teardown(tp, &calm);
	assert_int_equal(warn_lines, 0);

	assert_int_equal(tp->listen(0, &self, handle, &attacked.listen), FL_OK);
	assert_int_equal(sock_handle_decode(handle, &h), FL_OK);
	plan.addr = h.addr;
	plan.addrlen = h.addrlen;
	opened = loris_start(&lo, &plan);
	assert_true(opened > LORIS_STREAMS / 2 - 10);
	loris_go(&lo);
	start = loris_now();
	establish(tp, &attacked, handle);
	/* the connection keeps working while the attacker holds on */
	do {
		transfer(tp, &attacked);
		usleep(100000);
	} while (loris_now() - start < hold_seconds());
	printf("%s: setup %.3f s alone, %.3f s with %d strangers opened before and %d during\n",
	       what, calm.seconds, attacked.seconds, opened, plan.during);
	teardown(tp, &attacked);
	loris_stop(&lo);
	assert_int_equal(warn_lines, 1);
	assert_int_equal(warn_named_attacker, 1);
	printf("%s: %s\n", what, last_warn);
	warn_lines = warn_named_attacker = 0;
}

static void test_socket_listener(void **state)
{
	int ndev = 0;

	(void)state;
	assert_int_equal(fl_socket_transport.init(), FL_OK);
	assert_int_equal(fl_socket_transport.devices(&ndev), FL_OK);
	assert_true(ndev >= 1);
	attack(&fl_socket_transport, "socket");
}

static int ib_env(const char *argv0)
{
	char self[PATH_MAX], cmd[PATH_MAX + 100];

	snprintf(self, sizeof(self), "%s", argv0);
	snprintf(fake_path, sizeof(fake_path), "%s/../libfabriclab-fakeverbs.so", dirname(self));
	if (access(fake_path, R_OK) || !mkdtemp(sysfs_root) || !mkdtemp(fabric_dir))
		return -1;
	snprintf(cmd, sizeof(cmd), "mkdir -p %s/class/infiniband", sysfs_root);
	if (system(cmd))
		return -1;
	setenv("FABRICLAB_IBVERBS_LIB", fake_path, 1);
	setenv("FABRICLAB_SYSFS_ROOT", sysfs_root, 1);
	return ft_test_describe(fabric_dir, NULL, NULL);
}

static void test_ib_side_channel(void **state)
{
	int ndev = 0;

	(void)state;
	if (!fake_path[0])
		skip();
	assert_int_equal(fl_ib_transport.init(), FL_OK);
	assert_int_equal(fl_ib_transport.devices(&ndev), FL_OK);
	assert_true(ndev >= 1);
	attack(&fl_ib_transport, "ib");
}

static int cleanup(void **state)
{
	char cmd[PATH_MAX];

	(void)state;
	if (!fake_path[0])
		return 0;
	snprintf(cmd, sizeof(cmd), "rm -rf %s %s", sysfs_root, fabric_dir);
	return system(cmd) ? -1 : 0;
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_socket_listener),
		cmocka_unit_test(test_ib_side_channel),
	};
	struct rlimit rl;

	(void)argc;
	/* the common default soft limit: the listener may hold only 256 strangers */
	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur > 1024) {
		rl.rlim_cur = 1024;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	setenv("FABRICLAB_SOCKET_IFNAME", "lo", 1);
	setenv("FABRICLAB_SOCKET_HELLO_TIMEOUT_MS", HELLO_TIMEOUT_MS, 1);
	setenv("FABRICLAB_SOCKET_NSTREAMS", "2", 1);
	unsetenv("NCCL_IB_HCA");
	unsetenv("FABRICLAB_IB_HCA");
	if (ib_env(argv[0]))
		fake_path[0] = '\0';
	fl_clock_init();
	fl_log_set_logger(capture);
	/* cmocka counts a skip() as a pass: the suite is told with 77 and the reason (tests/skip.h) */
	return fl_test_status(cmocka_run_group_tests(tests, NULL, cleanup),
			      fake_path[0] ? NULL
					   : "the ib side channel was not attacked: no fake verbs "
					     "(libfabriclab-fakeverbs.so next to the tests; make builds it)");
}
