/*
 * When the per-process report is written (plugin/report_thread.c), through the
 * wrap layer over a fake transport, each case in a forked child so that every
 * one starts from a fresh process: final at the last communicator's finalize
 * and only once, final at exit without finalize, a periodic snapshot that
 * survives SIGKILL, and the brief and off modes.
 */
#include <dirent.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "plugin/base/clock.h"
#include "plugin/wrap/wrap.h"

#define MSG_BYTES (1 << 20)

/* ---- a transport whose sends complete at the first test ---- */

struct fake_req {
	uint64_t posted;
	size_t size;
};

static struct fake_req fake_reqs[64];
static int fake_next;

static int f_init(void) { return FL_OK; }
static int f_devices(int *n) { *n = 1; return FL_OK; }

static int f_props(int dev, struct fl_props *p)
{
	(void)dev;
	memset(p, 0, sizeof(*p));
	p->name = "fake0";
	p->speed_mbps = 8000;
	p->ptr_support = FL_PTR_HOST;
	return FL_OK;
}

static int f_connect(int dev, const struct fl_endpoint *self, void *handle, void **sc)
{
	(void)dev, (void)self, (void)handle;
	*sc = fake_reqs;
	return FL_OK;
}

static int f_peer(void *comm, struct fl_endpoint *peer)
{
	(void)comm;
	memset(peer, 0, sizeof(*peer));
	strcpy(peer->node, "peer");
	strcpy(peer->dev_name, "fake1");
	peer->rank = -1;
	return FL_OK;
}

static int f_isend(void *sc, void *data, size_t size, int tag, void *mh, void **req)
{
	struct fake_req *r = &fake_reqs[fake_next++ % 64];

	(void)sc, (void)data, (void)tag, (void)mh;
	r->posted = fl_clock_ns();
	r->size = size;
	*req = r;
	return FL_OK;
}

static int f_test(void *request, int *done, int *sizes, struct fl_xfer_times *t)
{
	struct fake_req *r = request;

	*done = 1;
	sizes[0] = (int)r->size;
	t->ready_ns = r->posted;
	t->wire_start_ns = r->posted;
	t->wire_end_ns = fl_clock_ns() + 1000;
	return FL_OK;
}

static int f_close(void *c) { (void)c; return FL_OK; }

static const struct fl_transport fake_transport = {
	.name = "fake", .init = f_init, .devices = f_devices, .get_properties = f_props,
	.connect = f_connect, .peer = f_peer, .isend = f_isend, .test = f_test,
	.close_send = f_close,
};

/* ---- what a child does ---- */

static void *child_ctx(void)
{
	void *ctx = NULL;

	fl_wrap_use_transport(&fake_transport);
	if (fl_wrap_init(&ctx, 77, -1, NULL) != FL_OK)
		_exit(20);
	return ctx;
}

static void *child_send(void *ctx, int messages)
{
	char handle[FL_HANDLE_SIZE] = { 0 };
	void *sc = NULL, *req;
	int done, size;

	if (fl_wrap_connect(ctx, 0, handle, &sc) != FL_OK || !sc)
		_exit(21);
	for (int i = 0; i < messages; i++) {
		if (fl_wrap_isend(sc, NULL, MSG_BYTES, 3, NULL, NULL, &req) != FL_OK || !req)
			_exit(22);
		if (fl_wrap_test(req, &done, &size) != FL_OK || !done)
			_exit(23);
	}
	return sc;
}

/* ---- the parent's side ---- */

static char dir[256], report_json[512], report_txt[512], err_path[512];

static int make_dir(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "%s/fabriclab-final.XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	assert_non_null(mkdtemp(dir));
	return 0;
}

static int remove_dir(void **state)
{
	char cmd[300];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

/* Runs body in a child with the given report settings; returns its wait status. */
static int in_child(const char *name, const char *mode, const char *interval,
		    void (*body)(void))
{
	char sub[300];
	pid_t pid;
	int status;

	snprintf(sub, sizeof(sub), "%s/%s", dir, name);
	snprintf(err_path, sizeof(err_path), "%s/%s.stderr", dir, name);
	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		if (!freopen(err_path, "w", stderr))
			_exit(30);
		setenv("FABRICLAB_NODE_NAME", name, 1);
		setenv("FABRICLAB_REPORT_DIR", sub, 1);
		setenv("FABRICLAB_REPORT", mode, 1);
		setenv("FABRICLAB_REPORT_INTERVAL", interval, 1);
		unsetenv("FABRICLAB_RANK");
		unsetenv("RANK");
		body();
		exit(0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	snprintf(report_json, sizeof(report_json), "%s/%s-%d.json", sub, name, (int)pid);
	snprintf(report_txt, sizeof(report_txt), "%s/%s-%d.txt", sub, name, (int)pid);
	return status;
}

static int count_lines_with(const char *path, const char *needle)
{
	FILE *f = fopen(path, "r");
	char line[4096];
	int n = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		n += strstr(line, needle) != NULL;
	fclose(f);
	return n;
}

static json_t *load_report(void)
{
	json_error_t err;
	json_t *root = json_load_file(report_json, 0, &err);

	if (!root)
		fail_msg("%s: %s", report_json, err.text);
	return root;
}

static json_int_t hop_int(json_t *root, const char *key)
{
	json_t *h = json_array_get(json_object_get(root, "hops"), 0);

	assert_non_null(h);
	return json_integer_value(json_object_get(h, key));
}

static int file_exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

static json_int_t report_hop_bytes(const char *path);

/* Exit codes say which check failed inside the child. */
static void finalize_twice(void)
{
	void *a = child_ctx(), *b = child_ctx();
	char path[600];

	fl_wrap_close_send(child_send(a, 10));
	fl_wrap_finalize(a);
	snprintf(path, sizeof(path), "%s/%s-%d.json", getenv("FABRICLAB_REPORT_DIR"),
		 getenv("FABRICLAB_NODE_NAME"), (int)getpid());
	if (file_exists(path))
		_exit(10); /* written before the last communicator went */
	fl_wrap_finalize(b);
	if (!file_exists(path))
		_exit(11);
}

static void test_final_at_the_last_finalize_and_only_once(void **state)
{
	json_t *root;

	(void)state;
	assert_int_equal(in_child("fin", "full", "0", finalize_twice), 0);
	root = load_report();
	assert_true(json_is_true(json_object_get(root, "final")));
	assert_int_equal(json_integer_value(json_object_get(root, "rank")), 3); /* the tag */
	assert_int_equal(hop_int(root, "bytes"), 10 * MSG_BYTES);
	assert_int_equal(hop_int(root, "messages"), 10);
	assert_int_equal(hop_int(root, "connections"), 1);
	assert_true(file_exists(report_txt));
	/* exit() came after the final report: nothing more was written or printed. */
	assert_int_equal(count_lines_with(err_path, "fabriclab: "), 1);
	assert_int_equal(count_lines_with(err_path, "fabriclab: fin slowest hop fin/fake0 -> "
						    "peer/fake1 "), 1);
	json_decref(root);
}

/*
 * NCCL with NCCL_NET_PLUGIN_REF_COUNT=1 keeps the plugin loaded after the last finalize
 * (v2.28.9-1 src/plugin/net.cc:307, :344-346) and inits it again for the next communicator
 * (:178): init, traffic, finalize, init, traffic, finalize.
 */
static void comm_after_the_final(void)
{
	void *a = child_ctx(), *b;
	char path[600];
	json_t *root;

	fl_wrap_close_send(child_send(a, 10));
	fl_wrap_finalize(a);
	snprintf(path, sizeof(path), "%s/%s-%d.json", getenv("FABRICLAB_REPORT_DIR"),
		 getenv("FABRICLAB_NODE_NAME"), (int)getpid());
	root = json_load_file(path, 0, NULL);
	if (!root || !json_is_true(json_object_get(root, "final")))
		_exit(12); /* the first communicator's final report */
	json_decref(root);
	if (report_hop_bytes(path) != 10 * MSG_BYTES)
		_exit(13);
	b = child_ctx();
	fl_wrap_close_send(child_send(b, 5));
	fl_wrap_finalize(b);
}

static void test_comm_after_the_final_is_reported_too(void **state)
{
	json_t *root;

	(void)state;
	assert_int_equal(in_child("again", "full", "0", comm_after_the_final), 0);
	root = load_report();
	assert_true(json_is_true(json_object_get(root, "final")));
	/* both communicators' traffic: the second final report replaced the first with more */
	assert_int_equal(hop_int(root, "bytes"), 15 * MSG_BYTES);
	assert_int_equal(hop_int(root, "messages"), 15);
	assert_int_equal(hop_int(root, "connections"), 2);
	/* one summary line per final report, none at exit */
	assert_int_equal(count_lines_with(err_path, "fabriclab: again slowest hop"), 2);
	json_decref(root);
}

/* Still reachable at exit (volatile: the stores must stay), so leak checkers do not count them. */
static void *volatile left_open[2];

static void exit_without_finalize(void)
{
	left_open[0] = child_ctx();
	left_open[1] = child_send(left_open[0], 4); /* as a job that never cleans up */
}

static void test_final_at_exit_without_finalize(void **state)
{
	json_t *root;

	(void)state;
	assert_int_equal(in_child("atexit", "full", "10", exit_without_finalize), 0);
	root = load_report();
	assert_true(json_is_true(json_object_get(root, "final")));
	assert_int_equal(hop_int(root, "bytes"), 4 * MSG_BYTES);
	assert_int_equal(count_lines_with(err_path, "fabriclab: atexit slowest hop"), 1);
	json_decref(root);
}

/* The bytes of the first hop of the report at path, or -1 while there is none to read. */
static json_int_t report_hop_bytes(const char *path)
{
	json_t *root = json_load_file(path, 0, NULL);
	json_t *hop = json_array_get(json_object_get(root, "hops"), 0);
	json_int_t bytes = hop ? json_integer_value(json_object_get(hop, "bytes")) : -1;

	json_decref(root);
	return bytes;
}

#define SNAPSHOT_DEADLINE_S 30

/*
 * Killed once a periodic snapshot (every 1 s) holding all 6 messages is on disk: polled, with a
 * deadline far beyond a loaded machine's delay, instead of assuming it is there 1.6 s later.
 * No snapshot by the deadline: exit 24, which the parent reports as not killed.
 */
static void snapshot_then_sigkill(void)
{
	struct timespec poll_every = { 0, 10000000 };
	uint64_t deadline;
	char path[600];

	child_send(child_ctx(), 6);
	snprintf(path, sizeof(path), "%s/%s-%d.json", getenv("FABRICLAB_REPORT_DIR"),
		 getenv("FABRICLAB_NODE_NAME"), (int)getpid());
	deadline = fl_clock_mono_ns() + SNAPSHOT_DEADLINE_S * 1000000000ULL;
	while (report_hop_bytes(path) != 6 * MSG_BYTES) {
		if (fl_clock_mono_ns() > deadline)
			_exit(24);
		nanosleep(&poll_every, NULL);
	}
	raise(SIGKILL);
}

static void test_snapshot_survives_sigkill(void **state)
{
	json_t *root;
	int status;

	(void)state;
	status = in_child("killed", "full", "1", snapshot_then_sigkill);
	if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGKILL)
		fail_msg("the child was not killed after a snapshot (exit %d: 24 = no snapshot "
			 "of the 6 messages within %d s)", WIFEXITED(status) ? WEXITSTATUS(status) : -1,
			 SNAPSHOT_DEADLINE_S);
	root = load_report();
	assert_true(json_is_false(json_object_get(root, "final")));
	assert_int_equal(hop_int(root, "bytes"), 6 * MSG_BYTES);
	assert_int_equal(count_lines_with(err_path, "fabriclab: "), 0);
	json_decref(root);
}

static void test_brief_and_off_modes(void **state)
{
	(void)state;
	assert_int_equal(in_child("brief", "brief", "0", finalize_twice), 0);
	assert_true(file_exists(report_json));
	assert_false(file_exists(report_txt));
	assert_int_equal(count_lines_with(err_path, "fabriclab: brief slowest hop"), 1);
	/* off: finalize_twice would exit 11 without a file; run a plain job instead. */
	assert_int_equal(in_child("off", "off", "1", exit_without_finalize), 0);
	assert_false(file_exists(report_json));
	assert_int_equal(count_lines_with(err_path, "fabriclab"), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_final_at_the_last_finalize_and_only_once),
		cmocka_unit_test(test_final_at_exit_without_finalize),
		cmocka_unit_test(test_comm_after_the_final_is_reported_too),
		cmocka_unit_test(test_snapshot_survives_sigkill),
		cmocka_unit_test(test_brief_and_off_modes),
	};

	return cmocka_run_group_tests(tests, make_dir, remove_dir);
}
