/*
 * The real-NCCL driver's parts that need no GPU: its command line, the unique id's file (written
 * whole, a stale one refused, a late one waited for, a missing one timed out), the data pattern
 * and its check, and the rank processes (each its own NCCL_HOSTID, the first failure or the
 * timeout ending the others). Built and run everywhere, with or without the CUDA toolkit.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tests/gpu/driver_args.h"
#include "tests/gpu/driver_check.h"
#include "tests/gpu/driver_launch.h"
#include "tests/gpu/driver_uid.h"

#define ARGV(...) ((char *[]){ "nccl_driver", __VA_ARGS__, NULL })
#define ARGC(...) ((int)(sizeof((char *[]){ "nccl_driver", __VA_ARGS__ }) / sizeof(char *)))
#define PARSE(a, err, ...) drv_args_parse(ARGC(__VA_ARGS__), ARGV(__VA_ARGS__), a, err, sizeof(err))

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* ---- command line ---- */

static void test_defaults(void **state)
{
	struct drv_args a;
	char err[256];
	char *argv[] = { "nccl_driver", NULL };

	(void)state;
	assert_int_equal(drv_args_parse(1, argv, &a, err, sizeof(err)), 0);
	assert_int_equal(a.ranks, 2);
	assert_int_equal(a.rank, -1);
	assert_int_equal(a.min_bytes, 1 << 20);
	assert_int_equal(a.max_bytes, 256 << 20);
	assert_int_equal(a.step_factor, 4);
	assert_int_equal(a.iters, 10);
	assert_int_equal(a.warmup, 2);
	assert_int_equal(a.ops, DRV_OP_ALL_REDUCE | DRV_OP_SENDRECV);
	assert_string_equal(a.id_file, "");
	assert_string_equal(a.hostid_prefix, "fabriclab-gpu-host-");
}

static void test_options(void **state)
{
	struct drv_args a;
	char err[256];

	(void)state;
	assert_int_equal(PARSE(&a, err, "--ranks", "4", "-b", "64K", "-e=1M", "-f", "2", "-n", "5",
			       "-w", "0", "-o", "sendrecv", "--device", "1", "--timeout", "30",
			       "--id-file", "/tmp/x", "--rank-env", "A=n%r", "--hostid=h",
			       "--id-timeout", "0.5", "--rank", "3", "--dry-run"), 0);
	assert_int_equal(a.ranks, 4);
	assert_int_equal(a.min_bytes, 64 << 10);
	assert_int_equal(a.max_bytes, 1 << 20);
	assert_int_equal(a.step_factor, 2);
	assert_int_equal(a.iters, 5);
	assert_int_equal(a.warmup, 0);
	assert_int_equal(a.ops, DRV_OP_SENDRECV);
	assert_int_equal(a.device, 1);
	assert_true(a.timeout_s == 30);
	assert_true(a.id_timeout_s == 0.5);
	assert_string_equal(a.id_file, "/tmp/x");
	assert_int_equal(a.n_rank_env, 1);
	assert_string_equal(a.rank_env[0], "A=n%r");
	assert_string_equal(a.hostid_prefix, "h");
	assert_int_equal(a.rank, 3);
	assert_true(a.dry_run);
	assert_int_equal(PARSE(&a, err, "--ranks=3", "-o", "all_reduce,sendrecv"), 0);
	assert_int_equal(a.ranks, 3);
	assert_int_equal(a.ops, DRV_OP_ALL_REDUCE | DRV_OP_SENDRECV);
	assert_int_equal(PARSE(&a, err, "--ranks", "0", "--help"), -1); /* bad values still fail */
	assert_int_equal(PARSE(&a, err, "--help"), 0);
	assert_true(a.help);
}

/* Each bad argument fails with a message naming the option and what it accepts. */
static void test_bad_arguments(void **state)
{
	static const struct {
		const char *argv[6];
		const char *says;
	} bad[] = {
		{ { "--ranks", "0" }, "--ranks: expected 1-64, got '0'" },
		{ { "--ranks", "two" }, "--ranks: expected 1-64" },
		{ { "--ranks", "65" }, "--ranks: expected 1-64" },
		{ { "--ranks" }, "--ranks: expected 1-64, got ''" },
		{ { "-b", "3X" }, "-b: expected a size" },
		{ { "-e", "1.5M" }, "-e: expected a size" },
		{ { "-b", "2M", "-e", "1M" }, "-b/-e: expected 4 <= -b <= -e" },
		{ { "-b", "2" }, "-b/-e: expected 4 <= -b" },
		{ { "-e", "9G" }, "-e: at most 8G" },
		{ { "-f", "1" }, "-f: expected a step factor 2-1024" },
		{ { "-n", "0" }, "-n: expected 1-100000" },
		{ { "-w", "-1" }, "-w: expected 0-100000" },
		{ { "-o", "bcast" }, "-o: expected all_reduce, sendrecv or all, got 'bcast'" },
		{ { "-o", "" }, "-o: expected all_reduce" },
		{ { "--timeout", "-1" }, "--timeout: expected seconds" },
		{ { "--timeout", "nan" }, "--timeout: expected seconds" },
		{ { "--device", "x" }, "--device: expected 0-1023" },
		{ { "--rank", "1" }, "--rank 1: needs --id-file" },
		{ { "--rank", "2", "--ranks", "2", "--id-file", "f" }, "--rank: expected 0-1 for --ranks 2" },
		{ { "--rank-env", "NOEQUALS" }, "--rank-env: expected NAME=VALUE" },
		{ { "--rank-env", "=v" }, "--rank-env: expected NAME=VALUE" },
		{ { "--id-file", "" }, "--id-file: expected a path" },
		{ { "--bogus" }, "unknown argument '--bogus'" },
		{ { "extra" }, "unknown argument 'extra'" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char *argv[8] = { "nccl_driver" }, err[256] = "";
		struct drv_args a;
		int argc = 1;

		for (int k = 0; k < 6 && bad[i].argv[k]; k++)
			argv[argc++] = (char *)bad[i].argv[k];
		if (drv_args_parse(argc, argv, &a, err, sizeof(err)) != -1 ||
		    !strstr(err, bad[i].says))
			fail_msg("case %zu (%s): got '%s', expected '%s'", i, argv[1], err,
				 bad[i].says);
	}
}

static void test_too_many_rank_envs(void **state)
{
	struct drv_args a;
	char err[256];

	(void)state;
	assert_int_equal(PARSE(&a, err, "--rank-env", "A=1", "--rank-env", "B=1", "--rank-env",
			       "C=1", "--rank-env", "D=1", "--rank-env", "E=1", "--rank-env", "F=1",
			       "--rank-env", "G=1", "--rank-env", "H=1", "--rank-env", "I=1"), -1);
	assert_non_null(strstr(err, "--rank-env: at most 8"));
}

static void test_bytes(void **state)
{
	size_t v;

	(void)state;
	assert_int_equal(drv_parse_bytes("1048576", &v), 0);
	assert_int_equal(v, 1048576);
	assert_int_equal(drv_parse_bytes("64K", &v), 0);
	assert_int_equal(v, 65536);
	assert_int_equal(drv_parse_bytes("256M", &v), 0);
	assert_int_equal(v, 256 << 20);
	assert_int_equal(drv_parse_bytes("2g", &v), 0);
	assert_int_equal(v, 2ULL << 30);
	static const char *bad[] = { "", "M", "-1", "1MB", "1.5M", " 1", "99999999999999999999" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(drv_parse_bytes(bad[i], &v), -1);
	assert_int_equal(drv_parse_bytes(NULL, &v), -1);
}

static void test_sizes(void **state)
{
	struct drv_args a;
	char err[256];
	size_t s[64];

	(void)state;
	assert_int_equal(PARSE(&a, err, "-n", "1"), 0);
	assert_int_equal(drv_sizes(&a, s, 64), 5);
	assert_int_equal(s[0], 1 << 20);
	assert_int_equal(s[4], 256 << 20);
	assert_int_equal(PARSE(&a, err, "-b", "1M", "-e", "1M"), 0);
	assert_int_equal(drv_sizes(&a, s, 64), 1);
	/* Whole float32 elements, as nccl-tests rounds. */
	assert_int_equal(PARSE(&a, err, "-b", "6", "-e", "100", "-f", "2"), 0);
	assert_int_equal(drv_sizes(&a, s, 64), 5);
	assert_int_equal(s[0], 4);
	assert_int_equal(s[1], 12);
	assert_int_equal(s[4], 96);
	/* The largest sizes end the loop without overflowing. */
	assert_int_equal(PARSE(&a, err, "-b", "4", "-e", "8G", "-f", "1024"), 0);
	assert_int_equal(drv_sizes(&a, s, 64), 4);
	assert_int_equal(drv_sizes(&a, s, 2), 2);
}

static void test_expand_rank(void **state)
{
	char out[32];

	(void)state;
	assert_int_equal(drv_expand_rank("N=node%r-%r", 12, out, sizeof(out)), 0);
	assert_string_equal(out, "N=node12-12");
	assert_int_equal(drv_expand_rank("N=%p.%h", 1, out, sizeof(out)), 0);
	assert_string_equal(out, "N=%p.%h"); /* NCCL_DEBUG_FILE's own %p and %h stay */
	assert_int_equal(drv_expand_rank("N=0123456789", 1, out, 13), 0);
	assert_int_equal(drv_expand_rank("N=0123456789", 1, out, 12), -1);
	assert_int_equal(drv_expand_rank("N=%r", 100, out, 5), -1);
}

/* ---- the unique id's file ---- */

static char dir[] = "/tmp/fabriclab-gpu-unit.XXXXXX";

static int make_dir(void **state)
{
	(void)state;
	return mkdtemp(dir) ? 0 : -1;
}

static int remove_dir(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static void some_id(unsigned char *id, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		id[i] = (unsigned char)(i * 131 + seed * 7 + (i >> 3));
}

static void test_uid_text(void **state)
{
	unsigned char id[128], back[128];
	char text[600];

	(void)state;
	some_id(id, sizeof(id), 1);
	assert_int_equal(drv_uid_encode(id, sizeof(id), text, sizeof(text)), 0);
	assert_int_equal(strncmp(text, "fabriclab-nccl-uid 1 ", 21), 0);
	assert_int_equal(strlen(text), 21 + 256 + 1);
	assert_int_equal(drv_uid_decode(text, back, sizeof(back)), 0);
	assert_memory_equal(id, back, sizeof(id));
	assert_int_equal(drv_uid_encode(id, sizeof(id), text, 21 + 256 + 1), -1); /* no room */
	assert_int_equal(drv_uid_encode(id, sizeof(id), text, sizeof(text)), 0);
	text[21 + 100] = 'G';
	assert_int_equal(drv_uid_decode(text, back, sizeof(back)), -1);
	assert_int_equal(drv_uid_encode(id, sizeof(id), text, sizeof(text)), 0);
	text[21 + 255] = '\0'; /* one hex digit short */
	assert_int_equal(drv_uid_decode(text, back, sizeof(back)), -1);
	assert_int_equal(drv_uid_encode(id, sizeof(id), text, sizeof(text)), 0);
	strcpy(text + 21 + 256, "00\n"); /* one byte too many */
	assert_int_equal(drv_uid_decode(text, back, sizeof(back)), -1);
	assert_int_equal(drv_uid_decode("fabriclab-nccl-uid 2 00", back, 1), -1);
	assert_int_equal(drv_uid_decode("fabriclab-nccl-uid 1 ab", back, 1), 0);
	assert_int_equal(back[0], 0xab);
}

static void test_uid_file(void **state)
{
	unsigned char id[128], back[128];
	char path[128], tmp[160], err[512];
	double t0;

	(void)state;
	snprintf(path, sizeof(path), "%s/id", dir);
	unlink(path);
	some_id(id, sizeof(id), 2);
	assert_int_equal(drv_uid_publish(path, id, sizeof(id), err, sizeof(err)), 0);
	assert_int_equal(drv_uid_wait(path, back, sizeof(back), 1, err, sizeof(err)), 0);
	assert_memory_equal(id, back, sizeof(id));
	/* A second publish (a stale file) is refused, the file kept, no temporary left. */
	assert_int_equal(drv_uid_publish(path, back, sizeof(back), err, sizeof(err)), -1);
	assert_non_null(strstr(err, "exists"));
	snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long)getpid());
	assert_int_equal(access(tmp, F_OK), -1);
	unlink(path);
	/* Nothing there: a bounded wait and a message saying what to check. */
	t0 = now_s();
	assert_int_equal(drv_uid_wait(path, back, sizeof(back), 0.2, err, sizeof(err)), -1);
	assert_true(now_s() - t0 < 2);
	assert_non_null(strstr(err, "no unique id after"));
	assert_non_null(strstr(err, "did rank 0 start"));
	/* Something else there: refused with the form it expects. */
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs("hello\n", f);
	fclose(f);
	assert_int_equal(drv_uid_wait(path, back, sizeof(back), 1, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "not a unique id"));
	unlink(path);
	/* A folder that does not exist: the publish says so. */
	assert_int_equal(drv_uid_publish("/nonexistent-fabriclab/id", id, sizeof(id), err,
					 sizeof(err)), -1);
	assert_non_null(strstr(err, "/nonexistent-fabriclab/id"));
}

/* Rank 0 publishing late: the waiter gets the id as soon as it is there. */
static void test_uid_late(void **state)
{
	unsigned char id[128], back[128];
	char path[128], err[512];
	pid_t pid;
	int st;

	(void)state;
	snprintf(path, sizeof(path), "%s/late", dir);
	unlink(path);
	some_id(id, sizeof(id), 3);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		usleep(200000);
		_exit(drv_uid_publish(path, id, sizeof(id), err, sizeof(err)) ? 1 : 0);
	}
	assert_int_equal(drv_uid_wait(path, back, sizeof(back), 10, err, sizeof(err)), 0);
	assert_memory_equal(id, back, sizeof(id));
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

/* ---- the pattern and its check ---- */

static void test_pattern(void **state)
{
	(void)state;
	for (int r = 0; r < DRV_MAX_RANKS; r++)
		for (size_t i = 0; i < 600; i++) {
			float v = drv_value(r, i);

			assert_true(v >= 1 && v <= DRV_PATTERN_PERIOD);
			assert_true(v == drv_value(r, i + DRV_PATTERN_PERIOD));
			assert_true(v != drv_value(r + 1, i)); /* a neighbour's data is wrong */
		}
	assert_true(drv_value(0, 0) != drv_value(0, 1)); /* a shifted chunk is wrong */
}

static void test_check_all_reduce(void **state)
{
	enum { N = 1000, RANKS = 4 };
	float in[RANKS][N], out[N];
	size_t first;

	(void)state;
	for (int r = 0; r < RANKS; r++)
		drv_fill(in[r], N, r);
	for (size_t i = 0; i < N; i++) {
		out[i] = 0;
		for (int r = RANKS - 1; r >= 0; r--)
			out[i] += in[r][i];
	}
	assert_int_equal(drv_wrong_all_reduce(out, N, RANKS, &first), 0);
	assert_int_equal(first, N);
	out[777] += 1;
	out[900] = NAN;
	assert_int_equal(drv_wrong_all_reduce(out, N, RANKS, &first), 2);
	assert_int_equal(first, 777);
	/* A rank's share missing: every element wrong. */
	assert_int_equal(drv_wrong_all_reduce(out, N, RANKS + 1, &first), N);
	assert_int_equal(first, 0);
}

static void test_check_sendrecv(void **state)
{
	enum { N = 777 };
	float buf[N];
	size_t first;

	(void)state;
	drv_fill(buf, N, 5);
	assert_int_equal(drv_wrong_from(buf, N, 5, &first), 0);
	assert_int_equal(drv_wrong_from(buf, N, 4, &first), N); /* from the wrong rank */
	memset(buf + 500, 0xff, 4 * sizeof(float)); /* never written: NaN */
	assert_int_equal(drv_wrong_from(buf, N, 5, &first), 4);
	assert_int_equal(first, 500);
}

/* ---- rank processes ---- */

/* Each rank checks its own environment; behaviour picked by ctx. */
static int rank_fn(const struct drv_args *a, int rank, void *ctx, char *err, size_t len)
{
	const char *mode = ctx, *host = getenv("NCCL_HOSTID"), *node = getenv("NODE_FOR_TEST");
	char want[64];

	snprintf(want, sizeof(want), "%s%d", a->hostid_prefix, rank);
	if (!host || strcmp(host, want))
		return snprintf(err, len, "NCCL_HOSTID %s", host ? host : "unset"), 9;
	snprintf(want, sizeof(want), "n%d", rank);
	if (!node || strcmp(node, want))
		return snprintf(err, len, "NODE_FOR_TEST %s", node ? node : "unset"), 9;
	if (!strcmp(mode, "fail1") && rank == 1)
		return snprintf(err, len, "failing on purpose"), DRV_EXIT_FAILED;
	if (!strcmp(mode, "fail1") || !strcmp(mode, "hang"))
		sleep(60); /* rank 0 would wait for a dead peer: the launcher ends it */
	if (!strcmp(mode, "wrong1") && rank == 1)
		return DRV_EXIT_WRONG;
	if (!strcmp(mode, "wrong1")) { /* still printing its table: left to finish */
		char path[128];
		FILE *f;

		usleep(300000);
		snprintf(path, sizeof(path), "%s/rank%d-done", dir, rank);
		if (!(f = fopen(path, "w")))
			return DRV_EXIT_FAILED;
		fclose(f);
	}
	if (!strcmp(mode, "crash") && rank == 1) {
		signal(SIGSEGV, SIG_DFL); /* cmocka's handler, inherited, would catch it */
		raise(SIGSEGV);
	}
	return DRV_EXIT_OK;
}

static int launch(const char *mode, int ranks, double timeout_s, char *err, size_t len)
{
	struct drv_args a;
	char e[256];

	assert_int_equal(PARSE(&a, e, "--rank-env", "NODE_FOR_TEST=n%r"), 0);
	a.ranks = ranks;
	a.timeout_s = timeout_s;
	return drv_launch(&a, rank_fn, (void *)mode, err, len);
}

static void test_launch_ok(void **state)
{
	char err[256];

	(void)state;
	assert_int_equal(launch("ok", 4, 30, err, sizeof(err)), DRV_EXIT_OK);
	assert_string_equal(err, "");
	assert_int_equal(launch("ok", 1, 30, err, sizeof(err)), DRV_EXIT_OK);
}

static void test_launch_first_failure_ends_the_rest(void **state)
{
	char err[256];
	double t0 = now_s();

	(void)state;
	assert_int_equal(launch("fail1", 3, 30, err, sizeof(err)), DRV_EXIT_FAILED);
	assert_true(now_s() - t0 < 10);
	assert_non_null(strstr(err, "rank 1 exited with status 4"));
}

static void test_launch_wrong_lets_the_rest_finish(void **state)
{
	char err[256], path[128];

	(void)state;
	assert_int_equal(launch("wrong1", 3, 30, err, sizeof(err)), DRV_EXIT_WRONG);
	assert_non_null(strstr(err, "rank 1 exited with status 1"));
	for (int r = 0; r < 3; r += 2) {
		snprintf(path, sizeof(path), "%s/rank%d-done", dir, r);
		assert_int_equal(access(path, F_OK), 0);
	}
}

static void test_launch_crash(void **state)
{
	char err[256];

	(void)state;
	assert_int_equal(launch("crash", 2, 30, err, sizeof(err)), DRV_EXIT_FAILED);
	assert_non_null(strstr(err, "rank 1 died of signal 11"));
}

static void test_launch_timeout(void **state)
{
	char err[256];
	double t0 = now_s();

	(void)state;
	assert_int_equal(launch("hang", 2, 0.3, err, sizeof(err)), DRV_EXIT_FAILED);
	assert_true(now_s() - t0 < 10);
	assert_non_null(strstr(err, "timed out after"));
}

static int probe_fn(const struct drv_args *a, char *msg, size_t len)
{
	snprintf(msg, len, "no GPU: CUDA device %d is not available (test)", a->device);
	return DRV_EXIT_NO_GPU;
}

static int probe_crash(const struct drv_args *a, char *msg, size_t len)
{
	(void)a;
	(void)msg;
	(void)len;
	signal(SIGABRT, SIG_DFL);
	raise(SIGABRT);
	return 0;
}

static void test_probe(void **state)
{
	struct drv_args a;
	char err[256], msg[256];

	(void)state;
	assert_int_equal(PARSE(&a, err, "--device", "7"), 0);
	assert_int_equal(drv_probe(&a, probe_fn, msg, sizeof(msg), 10), DRV_EXIT_NO_GPU);
	assert_string_equal(msg, "no GPU: CUDA device 7 is not available (test)");
	assert_int_equal(drv_probe(&a, probe_crash, msg, sizeof(msg), 10), DRV_EXIT_FAILED);
	assert_non_null(strstr(msg, "died of signal 6"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_options),
		cmocka_unit_test(test_bad_arguments),
		cmocka_unit_test(test_too_many_rank_envs),
		cmocka_unit_test(test_bytes),
		cmocka_unit_test(test_sizes),
		cmocka_unit_test(test_expand_rank),
		cmocka_unit_test(test_uid_text),
		cmocka_unit_test(test_uid_file),
		cmocka_unit_test(test_uid_late),
		cmocka_unit_test(test_pattern),
		cmocka_unit_test(test_check_all_reduce),
		cmocka_unit_test(test_check_sendrecv),
		cmocka_unit_test(test_launch_ok),
		cmocka_unit_test(test_launch_first_failure_ends_the_rest),
		cmocka_unit_test(test_launch_wrong_lets_the_rest_finish),
		cmocka_unit_test(test_launch_crash),
		cmocka_unit_test(test_launch_timeout),
		cmocka_unit_test(test_probe),
	};

	return cmocka_run_group_tests(tests, make_dir, remove_dir);
}
