/*
 * What NCCL (or a caller with a bug) may hand the profiler role besides what
 * it gave out, and how one context's failure reaches the others (issues 45,
 * 49). Every call goes through the exported ncclProfiler_vN tables:
 *  - handles below 128 KiB, small integers, pointers into the middle of an op
 *    or a step or into a chunk's header: stopEvent, recordEventState and
 *    startEvent (as a parent) ignore them; nothing is read through them;
 *  - a context of 0x1 (a tombstone's value in the registry) or another small
 *    integer after many contexts came and went: startEvent and finalize
 *    ignore it;
 *  - finalize while another thread still records on the context's handles:
 *    no use after free (run under ASan: make SAN=-fsanitize=address,undefined);
 *  - one context that cannot be made (the registry of contexts full) must not
 *    switch off the others: NCCL keeps one event mask for the process, which
 *    every init writes (2.30.7 src/plugin/profiler.cc:219, 250; 2.28.9 :185,
 *    192; 2.23.4 src/misc/profiler.cc:215, 223).
 */
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "plugin/abi/profiler_abi.h"
#include "plugin/entry/profiler_tables.h"
#include "plugin/profiler/prof_internal.h"

#define WANTED (FL_PROF_EV_PROXY_OP | FL_PROF_EV_PROXY_STEP | FL_PROF_EV_PROXY_CTRL | \
		FL_PROF_EV_NET_PLUGIN)
#define MAX_CTXS 1200 /* more than the registry's 1024 slots */
#define RACE_ROUNDS 200

static const uintptr_t small_handles[] = { 1, 8, 0x1000, 0x10000, 0x1ffff, 64 * 1024 - 1 };

static void *new_ctx(uint64_t hash, int *mask)
{
	void *ctx = NULL;

	*mask = -1;
	assert_int_equal(ncclProfiler_v7.init(&ctx, hash, mask, "garbage", 1, 2, 0, NULL), 0);
	return ctx;
}

static void *start_op(void *ctx)
{
	struct fl_prof_abi_descr_v7 d = { .type = FL_PROF_EV_PROXY_OP, .rank = 0 };
	void *op = NULL;

	d.proxy_op = (struct fl_prof_abi_proxy_op){ .pid = getpid(), .peer = 1, .nsteps = 8,
						    .chunk_size = 1 << 16, .is_send = 1 };
	assert_int_equal(ncclProfiler_v7.start_event(ctx, &op, &d), 0);
	return op;
}

static void *start_step(void *ctx, void *parent, int step)
{
	struct fl_prof_abi_descr_v7 d = { .type = FL_PROF_EV_PROXY_STEP, .parent_obj = parent };
	void *h = (void *)0x1;

	d.proxy_step.step = step;
	ncclProfiler_v7.start_event(ctx, &h, &d);
	return h;
}

/* Every table's stop and record on h: ignored (a crash fails the test). */
static void poke(void *h)
{
	union fl_prof_abi_state_args_v1 a1 = { 0 };
	union fl_prof_abi_state_args_v4 a4 = { .proxy_step.trans_size = 4096 };

	assert_int_equal(ncclProfiler_v7.record_event_state(h, FL_PROF_ST_STEP_SEND_WAIT, &a4), 0);
	assert_int_equal(ncclProfiler_v4.record_event_state(h, FL_PROF_ST_STEP_RECV_WAIT, &a4), 0);
	assert_int_equal(ncclProfiler_v1.record_event_state(h, FL_PROF_ST_OP_SEND_POSTED, &a1), 0);
	assert_int_equal(ncclProfiler_v3.record_event_state(h, FL_PROF_ST_STEP_SEND_GPU_WAIT,
							    &a1), 0);
	assert_int_equal(ncclProfiler_v7.stop_event(h), 0);
	assert_int_equal(ncclProfiler_v1.stop_event(h), 0);
}

static void test_small_handles_ignored(void **state)
{
	int mask;
	void *ctx = new_ctx(0x6a7b, &mask), *op;

	(void)state;
	assert_non_null(ctx);
	op = start_op(ctx);
	assert_non_null(op);
	for (size_t i = 0; i < sizeof(small_handles) / sizeof(small_handles[0]); i++) {
		poke((void *)small_handles[i]);
		/* A step under a garbage parent: no handle, nothing read. */
		assert_null(start_step(ctx, (void *)small_handles[i], 0));
	}
	ncclProfiler_v7.stop_event(op);
	assert_int_equal(ncclProfiler_v7.finalize(ctx), 0);
}

/*
 * Addresses inside memory of ours that are not a handle we gave: the chunk's
 * header, the middle of an op, the middle of a step. A live step must keep its
 * figures (nothing written through the stray pointers) and stop cleanly.
 */
static void test_pointers_inside_objects_ignored(void **state)
{
	int mask;
	void *ctx = new_ctx(0x6a7c, &mask), *op, *step;
	uintptr_t chunk;
	uint64_t stale = fl_prof_stale_events();

	(void)state;
	op = start_op(ctx);
	step = start_step(ctx, op, 3);
	assert_non_null(op);
	assert_non_null(step);
	chunk = (uintptr_t)op & ~((uintptr_t)FL_PROF_CHUNK_ALIGN - 1);
	poke((void *)chunk);
	poke((void *)(chunk + 8));
	poke((char *)op + 4);
	poke((char *)step + 4);
	poke((char *)step + sizeof(struct fl_prof_step) / 2);
	assert_null(start_step(ctx, (char *)op + 4, 0));
	assert_null(start_step(ctx, (void *)chunk, 0));
	assert_true(fl_prof_stale_events() > stale); /* outside any op: said, never read */
	/* The step is intact: a stray stop went nowhere, so it is still running. */
	assert_int_equal(((struct fl_prof_step *)step)->kind, FL_PROF_KIND_STEP);
	assert_int_equal(ncclProfiler_v7.stop_event(step), 0);
	assert_int_equal(ncclProfiler_v7.stop_event(op), 0);
	assert_int_equal(ncclProfiler_v7.finalize(ctx), 0);
}

/*
 * Contexts that cannot be made (the registry of contexts full) next to one
 * that is measured: the mask NCCL keeps for the process stays what the
 * measured one asked for, and its ops are still measured. With none measured
 * any more, a failed one asks for nothing.
 */
static void test_failing_context_keeps_others_measured(void **state)
{
	static void *ctxs[MAX_CTXS];
	int mask, failed_mask = -1, n = 0, failed = 0;
	void *measured = new_ctx(0x5000, &mask), *op;

	(void)state;
	assert_non_null(measured);
	assert_int_equal(mask, WANTED);
	while (n < MAX_CTXS && !failed) {
		ctxs[n] = new_ctx(0x5001 + (uint64_t)n, &mask);
		failed = ctxs[n] == NULL;
		failed_mask = mask;
		n++;
	}
	op = start_op(measured);
	assert_non_null(op);
	assert_non_null(start_step(measured, op, 0));
	ncclProfiler_v7.stop_event(op);
	for (int i = 0; i < n; i++) /* first: a failure below leaves the registry empty */
		if (ctxs[i])
			assert_int_equal(ncclProfiler_v7.finalize(ctxs[i]), 0);
	assert_int_equal(ncclProfiler_v7.finalize(measured), 0);
	assert_true(failed);
	if (failed_mask != WANTED)
		fail_msg("a failed context wrote the process's mask %#x (wanted %#x): every "
			 "communicator would lose its events", failed_mask, WANTED);
	assert_int_equal(fl_prof_live_contexts(), 0);
	/* Nothing measured any more: an init that fails asks for no events at all. */
	setenv("FABRICLAB_PROFILER", "off", 1);
	assert_null(new_ctx(0x6000, &mask));
	unsetenv("FABRICLAB_PROFILER");
	assert_int_equal(mask, 0);
}

/*
 * After many contexts were made and finalized, the registry's slots hold
 * tombstones: a context of 0x1 (a tombstone's own value) or any small integer
 * must not be taken for one of ours, by any event or by finalize.
 */
static void test_small_contexts_after_tombstones(void **state)
{
	static void *ctxs[MAX_CTXS];
	struct fl_prof_abi_descr_v7 coll = { .type = FL_PROF_EV_COLL };
	int mask, n = 0;

	(void)state;
	for (int round = 0; round < 2; round++) {
		for (n = 0; n < MAX_CTXS; n++)
			ctxs[n] = new_ctx(0x7000 + (uint64_t)n, &mask);
		for (n = 0; n < MAX_CTXS; n++)
			if (ctxs[n])
				ncclProfiler_v7.finalize(ctxs[n]);
	}
	for (size_t i = 0; i < sizeof(small_handles) / sizeof(small_handles[0]); i++) {
		void *ctx = (void *)small_handles[i], *h = (void *)0x2;

		assert_false(fl_prof_reg_ctx_has(ctx));
		assert_null(start_op(ctx));
		h = (void *)0x2;
		assert_int_equal(ncclProfiler_v7.start_event(ctx, &h, &coll), 0);
		assert_null(h);
		assert_null(start_step(ctx, NULL, 0));
		assert_int_equal(ncclProfiler_v7.finalize(ctx), 0);
		assert_int_equal(ncclProfiler_v1.finalize(ctx), 0);
	}
}

/* ---- finalize while another thread records ---- */

struct recorder {
	void *ctx;
	atomic_int started, stop;
};

/* The proxy thread: its own context's op, then steps started, recorded and stopped in a loop. */
static void *record_loop(void *arg)
{
	struct recorder *r = arg;
	union fl_prof_abi_state_args_v4 a = { .proxy_step.trans_size = 4096 };
	void *op = start_op(r->ctx);

	atomic_store(&r->started, 1);
	for (int i = 0; !atomic_load(&r->stop) && i < 50000000; i++) {
		void *step = start_step(r->ctx, op, i);

		ncclProfiler_v7.record_event_state(step, FL_PROF_ST_STEP_SEND_GPU_WAIT, &a);
		ncclProfiler_v7.record_event_state(step, FL_PROF_ST_STEP_SEND_WAIT, &a);
		ncclProfiler_v7.stop_event(step);
		if ((i & 63) == 63) { /* a new op now and then: op starts and stops race too */
			ncclProfiler_v7.stop_event(op);
			op = start_op(r->ctx);
		}
	}
	ncclProfiler_v7.stop_event(op);
	return NULL;
}

static void test_finalize_while_recording(void **state)
{
	(void)state;
	for (int round = 0; round < RACE_ROUNDS; round++) {
		struct recorder r = { 0 };
		pthread_t t;
		int mask;

		r.ctx = new_ctx(0x8000 + (uint64_t)round, &mask);
		assert_non_null(r.ctx);
		assert_int_equal(pthread_create(&t, NULL, record_loop, &r), 0);
		while (!atomic_load(&r.started))
			sched_yield();
		for (volatile int spin = 0; spin < (round % 16) * 500; spin++)
			;
		assert_int_equal(ncclProfiler_v7.finalize(r.ctx), 0);
		/* Let it run on the finalized context's handles a while: all ignored. */
		for (volatile int spin = 0; spin < 20000; spin++)
			;
		atomic_store(&r.stop, 1);
		assert_int_equal(pthread_join(t, NULL), 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_small_handles_ignored),
		cmocka_unit_test(test_pointers_inside_objects_ignored),
		cmocka_unit_test(test_failing_context_keeps_others_measured),
		cmocka_unit_test(test_small_contexts_after_tombstones),
		cmocka_unit_test(test_finalize_while_recording),
	};

	setenv("FABRICLAB_REPORT", "off", 1);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
