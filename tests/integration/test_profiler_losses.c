/*
 * Nothing the profiler role saw but did not measure goes unsaid (issue 32).
 * A process drives ncclProfiler_vN as NCCL's proxy thread does (tests/player
 * drivers) and loses data every way the role can:
 *  - more steps held on one link than it has stats slots (FL_CONN_SLOTS):
 *    FL_CONN_SLOTS / FL_PROF_STEP_SLOTS + 1 ops of FL_PROF_STEP_SLOTS steps
 *    each, none stopped, leave the last op's steps unmeasured;
 *  - a step slot of an op reused while its step runs: that step is lost;
 *  - an op on a second link with FABRICLAB_PROFILER_MAX_LINKS=1: not measured;
 *  - a relayed op on a proxy thread with no context of its own yet.
 * Its final report must carry each count (`ranks[]`, `profiler_unhomed_ops`)
 * and name each in `incomplete`; `fabriclab report` must sum them. A healthy
 * process writes every count as 0, `complete` true and `incomplete` null.
 * Each process is forked: the report's tables are the process's.
 */
#include <dirent.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "plugin/base/error.h"
#include "plugin/profiler/prof_internal.h"
#include "tests/player/player_internal.h"
#include "tools/report/report.h"

#define OPS_TO_FILL (FL_CONN_SLOTS / FL_PROF_STEP_SLOTS) /* their steps hold every slot */

static char dir[256];

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "%s/fl-losses.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR")
									  : "/tmp");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[300];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd);
}

/* A child's failed check: its exit status, named on stderr. */
#define CHILD_CHECK(cond)                                                                   \
	do {                                                                                \
		if (!(cond)) {                                                              \
			fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, #cond);          \
			exit(3);                                                            \
		}                                                                           \
	} while (0)

struct scene {
	const struct player_driver *d;
	struct player_scenario s;
	void *ctx;
};

static void open_ctx(struct scene *sc, int version)
{
	void *coll = NULL;

	sc->d = player_driver(version);
	player_defaults(&sc->s, version, 4);
	CHILD_CHECK(sc->d->init(&sc->ctx, &sc->s, sc->s.comm_hash, 0) == 0 && sc->ctx);
	/* v1..v3 learn the communicator's hash from a Coll (tests/player/player_abi.c). */
	CHILD_CHECK(sc->d->start_coll(sc->ctx, &coll, sc->s.comm_hash, 0) == 0);
	if (coll)
		CHILD_CHECK(sc->d->stop(coll) == 0);
	CHILD_CHECK(sc->d->proxy_ctrl(sc->ctx) == 0);
}

static void *start_op(struct scene *sc, int peer)
{
	const struct player_link l = { 0, peer, 1, 0, getpid(), 0 };
	void *op = NULL;

	CHILD_CHECK(sc->d->start_op(sc->ctx, &op, NULL, &l, FL_PROF_STEP_SLOTS, 1 << 16) == 0);
	return op;
}

/* Another proxy thread (several GPUs per process) relays an op before it has a context. */
static void *relay_unhomed(void *arg)
{
	struct scene *sc = arg;

	return start_op(sc, 1);
}

static void child_env(const char *node)
{
	setenv("FABRICLAB_NODE_NAME", node, 1);
	setenv("FABRICLAB_REPORT_DIR", dir, 1);
	setenv("FABRICLAB_REPORT", "brief", 1);
	setenv("FABRICLAB_PROFILER_MAX_LINKS", "1", 1);
}

static void lossy_process(int version)
{
	struct scene sc;
	void *ops[OPS_TO_FILL + 1], *step = NULL;
	pthread_t relay;
	void *relayed = &sc;

	child_env("lossy");
	open_ctx(&sc, version);
	/* Every slot of the link held, then one op more: its steps find none. */
	for (int i = 0; i <= OPS_TO_FILL; i++) {
		ops[i] = start_op(&sc, 1);
		CHILD_CHECK(ops[i]);
		for (int k = 0; k < FL_PROF_STEP_SLOTS; k++) {
			step = NULL;
			CHILD_CHECK(sc.d->start_step(sc.ctx, &step, ops[i], 0, k) == 0);
			CHILD_CHECK(i < OPS_TO_FILL ? step != NULL : step == NULL);
		}
	}
	/* Step FL_PROF_STEP_SLOTS takes step 0's place while step 0 runs: step 0 is lost. */
	CHILD_CHECK(sc.d->start_step(sc.ctx, &step, ops[0], 0, FL_PROF_STEP_SLOTS) == 0 && step);
	/* A second link, past FABRICLAB_PROFILER_MAX_LINKS=1. */
	CHILD_CHECK(start_op(&sc, 2) == NULL);
	CHILD_CHECK(pthread_create(&relay, NULL, relay_unhomed, &sc) == 0);
	CHILD_CHECK(pthread_join(relay, &relayed) == 0 && relayed == NULL);
	CHILD_CHECK(sc.d->finalize(sc.ctx) == 0);
	exit(0); /* the report is written at exit */
}

/* What NCCL's proxy does on a healthy link: every step and op stopped. */
static void healthy_process(int version)
{
	struct scene sc;
	void *steps[8];

	child_env("healthy");
	open_ctx(&sc, version);
	for (int round = 0; round < 4; round++) {
		void *op = start_op(&sc, 1);

		CHILD_CHECK(op);
		for (int k = 0; k < 8; k++) {
			steps[k] = NULL;
			CHILD_CHECK(sc.d->start_step(sc.ctx, &steps[k], op, 0, round * 8 + k) == 0);
			CHILD_CHECK(steps[k]);
		}
		for (int k = 0; k < 8; k++)
			CHILD_CHECK(sc.d->stop(steps[k]) == 0);
		CHILD_CHECK(sc.d->stop(op) == 0);
	}
	CHILD_CHECK(sc.d->finalize(sc.ctx) == 0);
	exit(0);
}

static void run_child(void (*body)(int), int version)
{
	int status;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		body(version);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		fail_msg("v%d: the profiled process failed (status %d)", version, status);
}

/* The one JSON report of the folder. */
static json_t *load_report(void)
{
	DIR *dd = opendir(dir);
	struct dirent *e;
	json_t *root = NULL;
	int found = 0;

	assert_non_null(dd);
	while ((e = readdir(dd))) {
		char path[600];

		if (!strstr(e->d_name, ".json"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		root = json_load_file(path, 0, NULL);
		found++;
	}
	closedir(dd);
	assert_int_equal(found, 1);
	assert_non_null(root);
	return root;
}

/* A count the report must hold (absent fails: an older writer said nothing). */
static uint64_t count(json_t *obj, const char *key)
{
	json_t *v = json_object_get(obj, key);

	if (!json_is_integer(v))
		fail_msg("no count `%s` in the report", key);
	return (uint64_t)json_integer_value(v);
}

static json_t *the_rank(json_t *root)
{
	json_t *ranks = json_object_get(root, "ranks");

	assert_int_equal(json_array_size(ranks), 1);
	return json_array_get(ranks, 0);
}

static void says(const char *why, const char *what)
{
	if (!why)
		fail_msg("`incomplete` is null, it should say \"%s\"", what);
	else if (!strstr(why, what))
		fail_msg("`incomplete` does not say \"%s\": %s", what, why);
}

static void test_losses_reach_the_report(void **state)
{
	int version = *(int *)*state;
	struct fl_verdict_params p;
	struct report_set set;
	json_t *root, *rank, *gaps;
	const char *why;
	char text[128];

	run_child(lossy_process, version);
	root = load_report();
	rank = the_rank(root);
	assert_int_equal(count(rank, "profiler_ops"), OPS_TO_FILL + 2);
	assert_int_equal(count(rank, "dropped_steps"), FL_PROF_STEP_SLOTS);
	assert_int_equal(count(rank, "abandoned_steps"), 1);
	assert_int_equal(count(rank, "dropped_ops"), 1);
	assert_int_equal(count(rank, "dropped_links"), 1);
	assert_int_equal(count(root, "profiler_unhomed_ops"), 1);
	assert_true(json_is_false(json_object_get(root, "complete")));
	why = json_string_value(json_object_get(root, "incomplete"));
	assert_non_null(why);
	snprintf(text, sizeof(text), "%d profiler step(s) not measured (no free stats slot)",
		 FL_PROF_STEP_SLOTS);
	says(why, text);
	says(why, "1 profiler step(s) lost (slot reused before their stop)");
	says(why, "1 profiler op(s) not measured (1 past the links cap)");
	says(why, "1 relayed (PXN) op(s) not measured (no context on their proxy thread)");
	json_decref(root);

	/* `fabriclab report` reads the file whole and sums what it lost. */
	memset(&set, 0, sizeof(set));
	fl_verdict_default_params(&p);
	if (report_add_path(&set, dir) || report_merge(&set, &p))
		fail_msg("merge: %s", fl_error_text());
	gaps = report_gaps_json(&set);
	assert_int_equal(count(gaps, "dropped_steps"), FL_PROF_STEP_SLOTS);
	assert_int_equal(count(gaps, "abandoned_steps"), 1);
	assert_int_equal(count(gaps, "dropped_ops"), 1);
	assert_int_equal(count(gaps, "dropped_links"), 1);
	assert_int_equal(count(gaps, "unhomed_ops"), 1);
	assert_int_equal(json_array_size(json_object_get(gaps, "incomplete_reports")), 1);
	json_decref(gaps);
	report_free(&set);
}

static void test_healthy_run_loses_nothing(void **state)
{
	int version = *(int *)*state;
	json_t *root, *rank;

	run_child(healthy_process, version);
	root = load_report();
	rank = the_rank(root);
	assert_int_equal(count(rank, "profiler_ops"), 4);
	assert_int_equal(count(rank, "dropped_ops"), 0);
	assert_int_equal(count(rank, "dropped_links"), 0);
	assert_int_equal(count(rank, "dropped_steps"), 0);
	assert_int_equal(count(rank, "abandoned_steps"), 0);
	assert_int_equal(count(root, "profiler_unhomed_ops"), 0);
	assert_true(json_is_true(json_object_get(root, "complete")));
	assert_true(json_is_null(json_object_get(root, "incomplete")));
	json_decref(root);
}

static int versions[] = { 1, 2, 3, 4, 5, 6, 7 };

#define VERSION_TESTS(i)                                                                    \
	cmocka_unit_test_prestate_setup_teardown(test_losses_reach_the_report, setup, teardown, \
						 &versions[i]),                               \
	cmocka_unit_test_prestate_setup_teardown(test_healthy_run_loses_nothing, setup,       \
						 teardown, &versions[i])

int main(void)
{
	const struct CMUnitTest tests[] = {
		VERSION_TESTS(0), VERSION_TESTS(1), VERSION_TESTS(2), VERSION_TESTS(3),
		VERSION_TESTS(4), VERSION_TESTS(5), VERSION_TESTS(6),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
