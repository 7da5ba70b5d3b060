/*
 * The profiler role as NCCL's loader sees it: libnccl-profiler-fabriclab.so
 * is the net plugin's object (one handle, shared state), the symbol probe
 * 2.28.9 makes (v5 first) finds our table, and the traps of reference 2.2 and
 * 2.10 hold through the real exported tables: stopEvent(NULL), records on
 * NULL handles, steps under a NULL op, a PXN op whose parent is not ours.
 * Untrusted pointers: a PXN op whose context is another process's (a
 * PROT_NONE page here, so that any read through it kills the test) and a
 * finalized context whose handles NCCL still holds (finalize twice, stop and
 * record after it: never read; ASan/valgrind would see a read of freed memory).
 */
#include <sys/mman.h>
#include <dlfcn.h>
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

#include "plugin/abi/profiler_abi.h"

static char net_path[PATH_MAX + 64], prof_path[PATH_MAX + 64];

static int find_plugin(void **state)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	(void)state;
	if (n <= 0)
		return -1;
	exe[n] = '\0';
	dirname(exe); /* in place: the tests folder, the build folder above it */
	snprintf(net_path, sizeof(net_path), "%s/../libnccl-net-fabriclab.so", exe);
	snprintf(prof_path, sizeof(prof_path), "%s/../libnccl-profiler-fabriclab.so", exe);
	setenv("FABRICLAB_REPORT", "off", 1);
	return access(prof_path, R_OK);
}

static void test_one_object_two_names(void **state)
{
	void *prof = dlopen(prof_path, RTLD_NOW | RTLD_LOCAL);
	void *net = dlopen(net_path, RTLD_NOW | RTLD_LOCAL);

	(void)state;
	assert_non_null(prof);
	assert_ptr_equal(prof, net);
	assert_non_null(dlsym(prof, "ncclNetPlugin_v11"));
	dlclose(net);
	dlclose(prof);
}

/* 2.28.9 probes ncclProfiler_v5 .. _v1, 2.30 _v6 first, 2.31 _v7: every one is there. */
static void test_probe_finds_every_version(void **state)
{
	static const char *const names[] = { "ncclProfiler_v7", "ncclProfiler_v6", "ncclProfiler_v5",
					     "ncclProfiler_v4", "ncclProfiler_v3",
					     "ncclProfiler_v2", "ncclProfiler_v1" };
	void *lib = dlopen(prof_path, RTLD_NOW | RTLD_LOCAL);

	(void)state;
	assert_non_null(lib);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		const struct fl_abi_profiler_v1 *t = dlsym(lib, names[i]);

		assert_non_null(t);
		assert_string_equal(t->name, "fabriclab");
		assert_non_null(t->init);
		assert_non_null(t->finalize);
	}
	dlclose(lib);
}

static void *start(const struct fl_abi_profiler_v5 *t, void *ctx, uint64_t type, void *parent,
		   pid_t pid)
{
	struct fl_prof_abi_descr_v5 d;
	void *h = (void *)0x1; /* NCCL does not clear it: we must */

	memset(&d, 0, sizeof(d));
	d.type = type;
	d.parent_obj = parent;
	d.rank = 0;
	d.proxy_op.pid = pid;
	d.proxy_op.peer = 1;
	d.proxy_op.nsteps = 1;
	d.proxy_op.is_send = 1;
	if (type == FL_PROF_EV_PROXY_STEP)
		d.proxy_step.step = 0;
	assert_int_equal(t->start_event(ctx, &h, &d), 0);
	return h;
}

static void test_traps_v5(void **state)
{
	void *lib = dlopen(prof_path, RTLD_NOW | RTLD_LOCAL);
	const struct fl_abi_profiler_v5 *t = lib ? dlsym(lib, "ncclProfiler_v5") : NULL;
	fl_prof_abi_state_args_v5 args = { .proxy_step = { 4096 } };
	void *ctx = NULL, *op, *step, *net;
	int mask = 0;

	(void)state;
	assert_non_null(t);
	assert_int_equal(t->init(&ctx, 0xabcULL, &mask, NULL, 1, 2, 0, NULL), 0);
	assert_non_null(ctx);
	assert_int_equal(mask, FL_PROF_EV_PROXY_OP | FL_PROF_EV_PROXY_STEP | FL_PROF_EV_PROXY_CTRL |
				       FL_PROF_EV_NET_PLUGIN);
	assert_int_equal(t->stop_event(NULL), 0);
	assert_int_equal(t->record_event_state(NULL, FL_PROF_ST_STEP_SEND_WAIT, &args), 0);
	/* Events we do not measure get no handle; steps under a NULL op neither. */
	assert_null(start(t, ctx, FL_PROF_EV_COLL, NULL, getpid()));
	assert_null(start(t, ctx, FL_PROF_EV_PROXY_STEP, NULL, getpid()));
	/* The proxy thread names its own context first (2.30.7 src/proxy.cc:864). */
	assert_null(start(t, ctx, FL_PROF_EV_PROXY_CTRL, NULL, getpid()));
	/* PXN: another pid, a parent pointer of its own address space, never read. */
	op = start(t, ctx, FL_PROF_EV_PROXY_OP, (void *)0xdeadbeefUL, getpid() + 1);
	assert_non_null(op);
	step = start(t, ctx, FL_PROF_EV_PROXY_STEP, op, getpid() + 1);
	assert_non_null(step);
	assert_int_equal(t->record_event_state(step, FL_PROF_ST_STEP_SEND_WAIT, &args), 0);
	/* A net plugin's event under the step: not measured, and NCCL stops it unguarded. */
	net = start(t, ctx, FL_PROF_EV_NET_PLUGIN, step, getpid());
	assert_null(net);
	assert_int_equal(t->record_event_state(net, FL_PROF_ST_NET_PLUGIN_UPDATE, &args), 0);
	assert_int_equal(t->stop_event(net), 0);
	/* v4's adapter passes uninitialised args with state 19 on an op: never read. */
	assert_int_equal(t->record_event_state(op, FL_PROF_ST_OP_IN_PROGRESS_V4, NULL), 0);
	assert_int_equal(t->stop_event(step), 0);
	assert_int_equal(t->stop_event(op), 0);
	assert_int_equal(t->finalize(ctx), 0);
	assert_int_equal(t->finalize(NULL), 0);
	dlclose(lib);
}

/* A page any read of which is a SIGSEGV: another process's context as this one sees it. */
static void *foreign_page(void)
{
	void *p = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	assert_true(p != MAP_FAILED);
	return p;
}

static void *start_in(const struct fl_abi_profiler_v5 *t, void *ctx, uint64_t type, void *parent,
		      pid_t pid)
{
	return start(t, ctx, type, parent, pid);
}

/*
 * PXN (2.30.7 src/enqueue.cc:1402, src/proxy.cc:395, src/plugin/profiler.cc:
 * 567-582): the op and its steps come with the originator's context and pid.
 * The proxy thread's own context (named by ProxyCtrl, proxy.cc:864) takes them.
 */
static void test_foreign_context_never_read(void **state)
{
	void *lib = dlopen(prof_path, RTLD_NOW | RTLD_LOCAL);
	const struct fl_abi_profiler_v5 *t = lib ? dlsym(lib, "ncclProfiler_v5") : NULL;
	fl_prof_abi_state_args_v5 args = { .proxy_step = { 4096 } };
	void *ctx = NULL, *alien = foreign_page(), *op, *step, *h = (void *)0x1;
	struct fl_prof_abi_descr_v5 d;
	int mask = 0;

	(void)state;
	assert_non_null(t);
	assert_int_equal(t->init(&ctx, 0xabdULL, &mask, NULL, 1, 2, 0, NULL), 0);
	assert_non_null(ctx);
	/* Before this thread has a context of its own, a relayed op is not measured. */
	assert_null(start_in(t, alien, FL_PROF_EV_PROXY_OP, alien, getpid() + 1));
	/* ProxyCtrl of a foreign context, a NetPlugin event under it: nothing read. */
	memset(&d, 0, sizeof(d));
	d.type = FL_PROF_EV_PROXY_CTRL;
	assert_int_equal(t->start_event(alien, &h, &d), 0);
	assert_null(h);
	assert_null(start_in(t, alien, FL_PROF_EV_NET_PLUGIN, alien, getpid()));
	/* The proxy's own context: this thread's from now on. */
	h = (void *)0x1;
	assert_int_equal(t->start_event(ctx, &h, &d), 0);
	assert_null(h);
	/* Another pid, a context and a parent of another address space. */
	op = start_in(t, alien, FL_PROF_EV_PROXY_OP, alien, getpid() + 1);
	assert_non_null(op);
	step = start_in(t, alien, FL_PROF_EV_PROXY_STEP, op, getpid() + 1);
	assert_non_null(step);
	assert_int_equal(t->record_event_state(step, FL_PROF_ST_STEP_SEND_WAIT, &args), 0);
	assert_int_equal(t->stop_event(step), 0);
	assert_int_equal(t->stop_event(op), 0);
	/* Our own pid but a context we never made: relayed all the same. */
	op = start_in(t, alien, FL_PROF_EV_PROXY_OP, NULL, getpid());
	assert_non_null(op);
	assert_int_equal(t->stop_event(op), 0);
	/* A step whose parent is not a handle of ours gets none. */
	assert_null(start_in(t, ctx, FL_PROF_EV_PROXY_STEP, alien, getpid()));
	assert_int_equal(t->finalize(alien), 0);
	assert_int_equal(t->finalize(ctx), 0);
	munmap(alien, 4096);
	dlclose(lib);
}

/* finalize twice; stop and record on handles of a finalized context: ignored. */
static void test_after_finalize(void **state)
{
	void *lib = dlopen(prof_path, RTLD_NOW | RTLD_LOCAL);
	const struct fl_abi_profiler_v6 *t = lib ? dlsym(lib, "ncclProfiler_v6") : NULL;
	fl_prof_abi_state_args_v5 args = { .proxy_step = { 4096 } };
	void *ctx = NULL, *op, *step;
	int mask = 0;

	(void)state;
	assert_non_null(t);
	assert_int_equal(t->init(&ctx, 0xabeULL, &mask, NULL, 1, 2, 0, NULL), 0);
	op = start((const struct fl_abi_profiler_v5 *)t, ctx, FL_PROF_EV_PROXY_OP, NULL, getpid());
	assert_non_null(op);
	step = start((const struct fl_abi_profiler_v5 *)t, ctx, FL_PROF_EV_PROXY_STEP, op,
		     getpid());
	assert_non_null(step);
	assert_int_equal(t->finalize(ctx), 0);
	assert_int_equal(t->finalize(ctx), 0);
	assert_int_equal(t->record_event_state(step, FL_PROF_ST_STEP_SEND_WAIT, &args), 0);
	assert_int_equal(t->stop_event(step), 0);
	assert_int_equal(t->stop_event(op), 0);
	assert_null(start((const struct fl_abi_profiler_v5 *)t, ctx, FL_PROF_EV_PROXY_STEP, op,
			  getpid()));
	dlclose(lib);
}

static int warns, warns_naming;

static void capture_log(int level, unsigned long flags, const char *file, int line,
			const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	(void)flags, (void)file, (void)line;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (level == 2) { /* NCCL_LOG_WARN */
		warns++;
		warns_naming += strstr(msg, "FABRICLAB_PROFILER") && strstr(msg, "maybe") != NULL;
	}
}

/*
 * A bad FABRICLAB_PROFILER: success and an empty mask, never an error (NCCL
 * would drop the profiler: 2.30.7 src/plugin/profiler.cc:250-254), and one
 * WARN naming the variable for the process, however many communicators.
 */
static void test_bad_value_is_not_an_error(void **state)
{
	void *lib = dlopen(prof_path, RTLD_NOW | RTLD_LOCAL);
	const struct fl_abi_profiler_v7 *t = lib ? dlsym(lib, "ncclProfiler_v7") : NULL;
	void *ctx = (void *)0x1;
	int mask = -1;

	(void)state;
	assert_non_null(t);
	setenv("FABRICLAB_PROFILER", "maybe", 1);
	for (int comm = 0; comm < 3; comm++) {
		assert_int_equal(t->init(&ctx, 0x1ULL + (uint64_t)comm, &mask, "c", 1, 2, 0,
					 capture_log), 0);
		assert_null(ctx);
		assert_int_equal(mask, 0);
	}
	unsetenv("FABRICLAB_PROFILER");
	assert_int_equal(warns, 1);
	assert_int_equal(warns_naming, 1);
	dlclose(lib);
}

/* What `fabriclab doctor` says an NCCL takes: its own newest table (nccl-conformance.md). */
static void test_table_per_nccl(void **state)
{
	(void)state;
	assert_int_equal(fl_prof_abi_for_nccl(22203), 0);
	assert_int_equal(fl_prof_abi_for_nccl(22304), 1);
	assert_int_equal(fl_prof_abi_for_nccl(22503), 2);
	assert_int_equal(fl_prof_abi_for_nccl(22602), 3);
	assert_int_equal(fl_prof_abi_for_nccl(22707), 4);
	assert_int_equal(fl_prof_abi_for_nccl(22809), 5);
	assert_int_equal(fl_prof_abi_for_nccl(23007), 6);
	assert_int_equal(fl_prof_abi_for_nccl(23102), 7);
	assert_int_equal(fl_prof_abi_for_nccl(23200), 7);
}

static void test_off_asks_for_nothing(void **state)
{
	void *lib = dlopen(prof_path, RTLD_NOW | RTLD_LOCAL);
	const struct fl_abi_profiler_v4 *t = lib ? dlsym(lib, "ncclProfiler_v4") : NULL;
	void *ctx = (void *)0x1;
	int mask = -1;

	(void)state;
	assert_non_null(t);
	setenv("FABRICLAB_PROFILER", "off", 1);
	assert_int_equal(t->init(&ctx, &mask, "c", 0x1ULL, 1, 2, 0, NULL), 0);
	unsetenv("FABRICLAB_PROFILER");
	assert_null(ctx);
	assert_int_equal(mask, 0);
	dlclose(lib);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_object_two_names),
		cmocka_unit_test(test_probe_finds_every_version),
		cmocka_unit_test(test_traps_v5),
		cmocka_unit_test(test_off_asks_for_nothing),
		cmocka_unit_test(test_foreign_context_never_read),
		cmocka_unit_test(test_after_finalize),
		cmocka_unit_test(test_bad_value_is_not_an_error),
		cmocka_unit_test(test_table_per_nccl),
	};

	return cmocka_run_group_tests(tests, find_plugin, NULL);
}
