/*
 * The profiler callbacks' rules (issue 14), counted rather than timed: this
 * program interposes malloc/calloc/realloc/aligned_alloc/posix_memalign/free
 * and pthread_mutex_lock, counting the calls of the thread under test only
 * (the report thread's are its own business), and drives each exported
 * ncclProfiler_v1..v7 as NCCL's proxy thread does (tests/player drivers).
 *  - After warm-up (a send and a receive op of 8 steps, twice), 1000 more
 *    such rounds take no allocation, no free and no mutex.
 *  - The same with a next profiler chained (FABRICLAB_PROFILER_NEXT, the test
 *    profiler of tests/profnext, which allocates nothing per event): passing
 *    every event on and keeping its handles beside ours takes none either.
 *  - Memory per communicator is bounded: ops that never stop on ever more
 *    (peer, channel) pairs grow a context to its caps (FL_PROF_MAX_LINKS links,
 *    FL_PROF_MAX_OPS ops) and no further; beyond them nothing is allocated.
 * Under ASan or TSan (their own allocator and lock interceptors) it skips.
 */
#include <dlfcn.h>
#include <libgen.h>
#include <limits.h>
#include <pthread.h>
#include <sys/wait.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "plugin/base/log.h"
#include "plugin/profiler/prof_internal.h"
#include "plugin/stats/stats.h"
#include "tests/player/player_internal.h"
#include "tests/skip.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SANITIZED 1
#else
#define SANITIZED 0
#endif

#if !SANITIZED
void *__libc_malloc(size_t n);
void *__libc_calloc(size_t n, size_t size);
void *__libc_realloc(void *p, size_t n);
void *__libc_memalign(size_t align, size_t n);
void __libc_free(void *p);

static _Thread_local int counting;
static _Thread_local uint64_t allocs, frees, locks, alloc_bytes;
static int (*real_mutex_lock)(pthread_mutex_t *m);

static void count_alloc(size_t n)
{
	if (counting) {
		allocs++;
		alloc_bytes += n;
	}
}

void *malloc(size_t n)
{
	count_alloc(n);
	return __libc_malloc(n);
}

void *calloc(size_t n, size_t size)
{
	count_alloc(n * size);
	return __libc_calloc(n, size);
}

void *realloc(void *p, size_t n)
{
	count_alloc(n);
	return __libc_realloc(p, n);
}

void *aligned_alloc(size_t align, size_t n)
{
	count_alloc(n);
	return __libc_memalign(align, n);
}

int posix_memalign(void **out, size_t align, size_t n)
{
	count_alloc(n);
	*out = __libc_memalign(align, n);
	return *out ? 0 : 12; /* ENOMEM */
}

void free(void *p)
{
	if (counting && p)
		frees++;
	__libc_free(p);
}

int pthread_mutex_lock(pthread_mutex_t *m)
{
	if (!real_mutex_lock) /* a constructor's lock, before main */
		real_mutex_lock = (int (*)(pthread_mutex_t *))dlsym(RTLD_NEXT,
								     "pthread_mutex_lock");
	if (counting)
		locks++;
	return real_mutex_lock(m);
}
#endif

static void count_from_zero(void)
{
#if !SANITIZED
	allocs = frees = locks = alloc_bytes = 0;
	counting = 1;
#endif
}

static void count_stop(void)
{
#if !SANITIZED
	counting = 0;
#endif
}

static struct player_scenario scenario;

static void *init_ctx(const struct player_driver *d, int version)
{
	void *ctx = NULL;

	player_defaults(&scenario, version, 4);
	assert_int_equal(d->init(&ctx, &scenario, scenario.comm_hash, 0), 0);
	assert_non_null(ctx);
	return ctx;
}

/* One ProxyOp of 8 steps with the states NCCL records on its side, as the proxy thread makes them. */
static void one_op(const struct player_driver *d, void *ctx, const struct player_link *l)
{
	static const int send_states[] = { 8, 20, 9 }, recv_states[] = { 10, 11, 12 };
	const int *states = l->is_send ? send_states : recv_states;
	void *op = NULL, *steps[8] = { NULL };

	assert_int_equal(d->start_op(ctx, &op, NULL, l, 8, 1 << 19), 0);
	assert_non_null(op);
	for (int k = 0; k < 8; k++) {
		assert_int_equal(d->start_step(ctx, &steps[k], op, l->rank, k), 0);
		assert_non_null(steps[k]);
		for (int i = 0; i < 3; i++)
			assert_int_equal(d->record(steps[k], states[i], 1 << 19,
						   states[i] == 9 || states[i] == 11), 0);
	}
	for (int k = 0; k < 8; k++)
		assert_int_equal(d->stop(steps[k]), 0);
	assert_int_equal(d->stop(op), 0);
}

static void one_round(const struct player_driver *d, void *ctx)
{
	const struct player_link send = { 0, 1, 1, 0, getpid(), 0 },
				 recv = { 0, 3, 0, 0, getpid(), 0 };

	one_op(d, ctx, &send);
	one_op(d, ctx, &recv);
}

static void test_steady_state_takes_no_allocation_or_lock(void **state)
{
	int version = *(int *)*state;
	const struct player_driver *d = player_driver(version);
	void *ctx = init_ctx(d, version);

	one_round(d, ctx); /* warm-up: the links and a chunk of ops */
	one_round(d, ctx);
	count_from_zero();
	for (int i = 0; i < 1000; i++)
		one_round(d, ctx);
	count_stop();
#if !SANITIZED
	if (allocs || frees || locks)
		fail_msg("v%d: 1000 rounds after warm-up: %llu allocations, %llu frees, %llu "
			 "mutex locks", version, (unsigned long long)allocs,
			 (unsigned long long)frees, (unsigned long long)locks);
#endif
	assert_int_equal(((struct fl_prof_ctx *)ctx)->counts.steps, 1002 * 2 * 8);
	assert_int_equal(d->finalize(ctx), 0);
}

/*
 * Chained: in a fresh process (this program again), as the next is chosen once
 * per process at its first init. Its exit status says what it counted (0:
 * nothing, 2: not chained).
 */
static int chained_child(int version, const char *next)
{
	const struct player_driver *d = player_driver(version);
	void *ctx;

	setenv("FABRICLAB_PROFILER_NEXT", next, 1);
	ctx = init_ctx(d, version);
	if (!fl_prof_next_on())
		return 2;
	one_round(d, ctx);
	one_round(d, ctx);
	count_from_zero();
	for (int i = 0; i < 1000; i++)
		one_round(d, ctx);
	count_stop();
#if !SANITIZED
	if (allocs || frees || locks)
		return 1;
#endif
	return d->finalize(ctx) ? 3 : 0;
}

static void test_chained_steady_state(void **state)
{
	char exe[PATH_MAX], dir[PATH_MAX], next[PATH_MAX + 64], arg[8];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	int version = *(int *)*state, status;
	pid_t pid;

	assert_true(n > 0);
	exe[n] = '\0';
	memcpy(dir, exe, (size_t)n + 1);
	/* the tests folder; the test profilers are in the build folder above it */
	snprintf(next, sizeof(next), "%s/../profnext/libnccl-profiler-count.so", dirname(dir));
	snprintf(arg, sizeof(arg), "%d", version);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		execl(exe, exe, "--chained", arg, next, (char *)NULL);
		_exit(4);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		fail_msg("v%d chained: %s", version,
			 !WIFEXITED(status) ? "the child died" : WEXITSTATUS(status) == 1
			 ? "allocations, frees or mutex locks after warm-up" : WEXITSTATUS(status) == 2
			 ? "no next profiler chained" : "finalize failed, or no exec");
}

/* Ops that never stop, each on a new (peer, channel) until the links run out. */
static void start_held_ops(const struct player_driver *d, void *ctx, int from, int to)
{
	for (int i = from; i < to; i++) {
		const struct player_link l = { 0, 1 + i % 200, i & 1, (i / 200) % 2, getpid(),
					       0 };
		void *op = NULL;

		assert_int_equal(d->start_op(ctx, &op, NULL, &l, 8, 1 << 19), 0);
	}
}

static void test_memory_per_communicator_is_bounded(void **state)
{
	int version = *(int *)*state;
	const struct player_driver *d = player_driver(version);
	void *ctx = init_ctx(d, version);
	const struct fl_prof_ctx *c = ctx;
	uint64_t first_bytes = 0;

	(void)first_bytes; /* read only where allocations are counted */
	count_from_zero();
	start_held_ops(d, ctx, 0, 3 * FL_PROF_MAX_OPS);
#if !SANITIZED
	first_bytes = alloc_bytes;
	print_message("v%d: %llu bytes in %llu allocations for one context at its caps\n",
		      version, (unsigned long long)first_bytes, (unsigned long long)allocs);
	count_from_zero();
#endif
	start_held_ops(d, ctx, 3 * FL_PROF_MAX_OPS, 6 * FL_PROF_MAX_OPS);
	count_stop();
	assert_int_equal(c->nlinks, FL_PROF_MAX_LINKS);
	assert_int_equal(c->nops_allocated, FL_PROF_MAX_OPS);
	assert_int_equal(c->counts.dropped_ops, 6 * FL_PROF_MAX_OPS - FL_PROF_MAX_OPS);
#if !SANITIZED
	/*
	 * The caps, and a hop per link's rank pair where the process's hop table had
	 * none yet (that table is bounded by FL_MAX_HOPS): a hop is its totals (two
	 * wire-time histograms, all requests and those alone on their wire: 10 KB)
	 * and under 3 KB of name, unions and their first runs.
	 */
	if (first_bytes > FL_PROF_MAX_LINKS * (sizeof(struct fl_prof_link) +
					       sizeof(struct fl_conn_totals) + 3072) +
				  (size_t)FL_PROF_MAX_OPS * sizeof(struct fl_prof_op))
		fail_msg("v%d: %llu bytes for one context", version,
			 (unsigned long long)first_bytes);
	if (allocs)
		fail_msg("v%d: %llu allocations (%llu bytes) past the caps", version,
			 (unsigned long long)allocs, (unsigned long long)alloc_bytes);
#endif
	assert_int_equal(d->finalize(ctx), 0);
}

/* The WARNs the layer logs, as NCCL's logger would get them. */
static int warns_naming_the_variable, warns;

static void capture_log(int level, unsigned long flags, const char *file, int line,
			const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	(void)flags, (void)file, (void)line;
	if (level != 2) /* NCCL_LOG_WARN */
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	warns++;
	warns_naming_the_variable += strstr(msg, "FABRICLAB_PROFILER_MAX_LINKS") &&
				     strstr(msg, "more than 128 links");
}

/* An all-to-all over 1024 peers: one op per (peer, direction) on one channel. */
static void all_to_all(const struct player_driver *d, void *ctx)
{
	for (int i = 0; i < 2048; i++) {
		const struct player_link l = { 0, 1 + i / 2, i & 1, 0, getpid(), 0 };
		void *op = NULL;

		assert_int_equal(d->start_op(ctx, &op, NULL, &l, 8, 1 << 19), 0);
		assert_int_equal(d->stop(op), 0);
	}
}

/*
 * No silent cap: past FABRICLAB_PROFILER_MAX_LINKS (128 by default) ops are
 * counted as dropped (and a WARN names the variable); raised, 1024 peers fit.
 */
static void test_all_to_all_1024_peers(void **state)
{
	const struct player_driver *d = player_driver(6);
	const struct fl_prof_ctx *c;
	void *ctx;

	(void)state;
	ctx = init_ctx(d, 6);
	c = ctx;
	fl_log_set_logger(capture_log);
	all_to_all(d, ctx);
	fl_log_set_logger(NULL);
	assert_int_equal(warns, 1);
	assert_int_equal(warns_naming_the_variable, 1);
	assert_int_equal(c->nlinks, FL_PROF_MAX_LINKS);
	assert_int_equal(c->counts.dropped_ops, 2048 - FL_PROF_MAX_LINKS);
	assert_int_equal(c->counts.dropped_links, 2048 - FL_PROF_MAX_LINKS);
	assert_int_equal(d->finalize(ctx), 0);
	setenv("FABRICLAB_PROFILER_MAX_LINKS", "2048", 1);
	ctx = init_ctx(d, 6);
	unsetenv("FABRICLAB_PROFILER_MAX_LINKS");
	c = ctx;
	all_to_all(d, ctx);
	assert_int_equal(c->nlinks, 2048);
	assert_int_equal(c->counts.dropped_ops, 0);
	assert_int_equal(c->counts.ops, 2048);
	assert_int_equal(d->finalize(ctx), 0);
}

static int versions[] = { 1, 2, 3, 4, 5, 6, 7 };

#define CASES(i)                                                                           \
	cmocka_unit_test_prestate(test_steady_state_takes_no_allocation_or_lock, &versions[i]), \
	cmocka_unit_test_prestate(test_memory_per_communicator_is_bounded, &versions[i]), \
	cmocka_unit_test_prestate(test_chained_steady_state, &versions[i])

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = { CASES(0), CASES(1), CASES(2), CASES(6),
					    cmocka_unit_test(test_all_to_all_1024_peers),
					    CASES(3), CASES(4), CASES(5) };
	int failed;

	setenv("FABRICLAB_REPORT", "off", 1);
	if (argc == 4 && !strcmp(argv[1], "--chained"))
		return chained_child(atoi(argv[2]), argv[3]);
	failed = cmocka_run_group_tests(tests, NULL, NULL);
	return fl_test_status(failed, SANITIZED ? "allocations and locks not counted under "
						  "ASan/TSan (their own interceptors); the caps were checked"
						: NULL);
}
