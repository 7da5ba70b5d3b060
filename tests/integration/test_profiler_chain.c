/*
 * fabriclab's profiler role in front of the profiler the job already runs
 * (FABRICLAB_PROFILER_NEXT, docs/profiler.md#chaining), driven by the NCCL
 * stand-in (tests/player: 2.28+'s API events, P2p tasks, KernelCh, PXN over
 * processes and threads). The next profiler is tests/profnext/count_profiler.c,
 * which counts what it is given per event type and checks that every context,
 * parent and handle it gets is its own. The oracle is the same stand-in
 * loading that profiler alone (as NCCL would, for the mask it asks):
 *  - chained, its counts are those it has alone, for any mask, in its own
 *    version or an older one (NCCL's adapters' conversions), and found as
 *    NCCL finds it (a name, a comma list, the wrapped net plugin's library);
 *  - fabriclab's own report is what it is alone: complete, same hops, bytes,
 *    messages and verdict;
 *  - a next that fails init, gives no handle, is a FIFO, garbage, missing,
 *    has no table, or is fabriclab itself: one WARN per process, and the same
 *    report.
 * `test_profiler_chain --play DIR VERSION [LIB]` plays one job (4 ranks, one per
 * process, no PXN, P2p tasks) into DIR with fabriclab (chained to
 * FABRICLAB_PROFILER_NEXT when set) or LIB alone: test_profiler_chain_thirdparty.sh
 * drives real third-party profilers built outside the repository with it.
 */
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
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <dirent.h>

#include "plugin/abi/profiler_abi.h"
#include "plugin/base/error.h"
#include "tests/player/prof_player.h"
#include "tools/report/report.h"

#define NTYPES 16
#define NSTATES 32

static char base[256], build[PATH_MAX], log_path[600];

struct counts {
	int files;
	uint64_t starts[NTYPES], stops[NTYPES], records[NTYPES], foreign[NTYPES];
	uint64_t states[NSTATES];
	uint64_t null_handles, null_stops, bad_ctx, bad_handles, inits, finalizes;
};

static int setup(void **state)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	(void)state;
	if (n <= 0)
		return -1;
	exe[n] = '\0';
	snprintf(build, sizeof(build), "%s", dirname(dirname(exe)));
	snprintf(base, sizeof(base), "%s/fl-chain.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR")
									   : "/tmp");
	unsetenv("FABRICLAB_PROFILER_NEXT");
	unsetenv("FABRICLAB_TRANSPORT");
	unsetenv("COUNT_PROFILER_MODE");
	unsetenv("COUNT_PROFILER_MASK");
	return mkdtemp(base) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[300];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", base);
	return system(cmd);
}

static const char *lib(const char *name)
{
	static char path[4][PATH_MAX + 64];
	static int next;
	char *p = path[next++ % 4];

	snprintf(p, PATH_MAX + 64, "%s/profnext/libnccl-profiler-%s.so", build, name);
	return p;
}

/* NCCL's logger in the stand-in's processes: WARN lines, one file for all (appended). */
static void capture_log(int level, unsigned long flags, const char *file, int line,
			const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	FILE *f;

	(void)flags, (void)file, (void)line;
	if (level != 2)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	f = fopen(log_path, "a");
	if (f) {
		fprintf(f, "%d %s\n", (int)getpid(), msg);
		fclose(f);
	}
}

static void scenario(struct player_scenario *s, int version)
{
	player_defaults(s, version, 4);
	s->ranks_per_node = 2;
	s->pxn = 1; /* odd ranks' channel 1 moved by the even node-mate, another pid */
	s->p2p = 1;
	s->logger = capture_log;
}

/* A fresh folder under base for one run: its reports, the next's counts and the WARNs. */
static const char *run(const struct player_scenario *s, const char *name)
{
	static char dir[320];
	char cmd[1400];

	snprintf(dir, sizeof(dir), "%s/%s", base, name);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s' && mkdir -p '%s'", dir, dir);
	assert_int_equal(system(cmd), 0);
	snprintf(log_path, sizeof(log_path), "%s/warn.log", dir);
	setenv("COUNT_PROFILER_OUT", dir, 1);
	if (player_run(s, dir))
		fail_msg("%s: the stand-in failed (v%d, lib %s)", name, s->version,
			 s->profiler_lib ? s->profiler_lib : "fabriclab");
	unsetenv("COUNT_PROFILER_OUT");
	return dir;
}

static void add_line(struct counts *c, const char *line)
{
	unsigned long long a, b, d, e, v;
	int t, st;

	if (sscanf(line, "type %d starts %llu stops %llu records %llu foreign_parents %llu", &t,
		   &a, &b, &d, &e) == 5 && t > 0) {
		t = __builtin_ctz((unsigned)t);
		c->starts[t] += a, c->stops[t] += b, c->records[t] += d, c->foreign[t] += e;
	} else if (sscanf(line, "state %d %llu", &st, &v) == 2 && st >= 0 && st < NSTATES) {
		c->states[st] += v;
	} else if (sscanf(line, "null_handles %llu", &v) == 1) {
		c->null_handles += v;
	} else if (sscanf(line, "null_stops %llu", &v) == 1) {
		c->null_stops += v;
	} else if (sscanf(line, "bad_ctx %llu", &v) == 1) {
		c->bad_ctx += v;
	} else if (sscanf(line, "bad_handles %llu", &v) == 1) {
		c->bad_handles += v;
	} else if (sscanf(line, "inits %llu", &v) == 1) {
		c->inits += v;
	} else if (sscanf(line, "finalizes %llu", &v) == 1) {
		c->finalizes += v;
	}
}

/* The count profiler's files of one run, summed over its processes. */
static struct counts read_counts(const char *dir)
{
	struct counts c;
	DIR *dd = opendir(dir);
	struct dirent *e;

	memset(&c, 0, sizeof(c));
	assert_non_null(dd);
	while ((e = readdir(dd))) {
		char path[800], line[256];
		FILE *f;

		if (strncmp(e->d_name, "count-", 6))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		f = fopen(path, "r");
		assert_non_null(f);
		while (fgets(line, sizeof(line), f))
			add_line(&c, line);
		fclose(f);
		c.files++;
	}
	closedir(dd);
	return c;
}

static void assert_counts_equal(const struct counts *alone, const struct counts *chained,
				const char *what)
{
	for (int t = 0; t < NTYPES; t++)
		if (alone->starts[t] != chained->starts[t] || alone->stops[t] != chained->stops[t] ||
		    alone->records[t] != chained->records[t] ||
		    alone->foreign[t] != chained->foreign[t])
			fail_msg("%s: type 0x%x alone %llu/%llu/%llu/%llu chained %llu/%llu/%llu/%llu "
				 "(starts/stops/records/foreign parents)", what, 1u << t,
				 (unsigned long long)alone->starts[t],
				 (unsigned long long)alone->stops[t],
				 (unsigned long long)alone->records[t],
				 (unsigned long long)alone->foreign[t],
				 (unsigned long long)chained->starts[t],
				 (unsigned long long)chained->stops[t],
				 (unsigned long long)chained->records[t],
				 (unsigned long long)chained->foreign[t]);
	for (int st = 0; st < NSTATES; st++)
		if (alone->states[st] != chained->states[st])
			fail_msg("%s: state %d recorded %llu times alone, %llu chained", what, st,
				 (unsigned long long)alone->states[st],
				 (unsigned long long)chained->states[st]);
	assert_int_equal(alone->files, chained->files);
	assert_int_equal(alone->inits, chained->inits);
	assert_int_equal(alone->finalizes, chained->finalizes);
	assert_int_equal(alone->null_stops, chained->null_stops);
	assert_int_equal(alone->bad_ctx, chained->bad_ctx);
	assert_int_equal(chained->bad_handles, 0);
	assert_int_equal(alone->bad_handles, 0);
}

/* The next alone under the stand-in, then behind fabriclab: the same counts. */
static struct counts next_alone(const struct player_scenario *s, const char *next)
{
	struct player_scenario alone = *s;

	alone.profiler_lib = next;
	return read_counts(run(&alone, "alone"));
}

static void merge(const char *dir, struct report_set *set)
{
	struct fl_verdict_params p;

	memset(set, 0, sizeof(*set));
	fl_verdict_default_params(&p);
	if (report_add_path(set, dir) || report_merge(set, &p))
		fail_msg("merge %s: %s", dir, fl_error_text());
}

static const struct report_hop *find_hop(const struct report_set *set,
					 const struct report_hop_key *k)
{
	for (size_t i = 0; i < set->nhops; i++) {
		const struct report_hop_key *h = &set->hops[i].key;

		/* each set keeps its own copy of a name: compared as text */
		if (!strcmp(h->src_node, k->src_node) && !strcmp(h->src_dev, k->src_dev) &&
		    !strcmp(h->dst_node, k->dst_node) && !strcmp(h->dst_dev, k->dst_dev) &&
		    h->comm_hash == k->comm_hash)
			return &set->hops[i];
	}
	return NULL;
}

/* fabriclab's own report, chained, is what it is alone. */
static void assert_reports_equal(const char *alone_dir, const char *chained_dir)
{
	struct report_set a, c;

	merge(alone_dir, &a);
	merge(chained_dir, &c);
	assert_true(a.nhops > 0);
	assert_int_equal(a.nhops, c.nhops);
	assert_int_equal(a.verdict.kind, c.verdict.kind);
	assert_int_equal(a.verdict.hop, c.verdict.hop);
	for (size_t i = 0; i < a.nhops; i++) {
		const struct report_hop *h = &a.hops[i], *o = find_hop(&c, &h->key);

		assert_non_null(o);
		assert_int_equal(h->send->bytes, o->send->bytes);
		assert_int_equal(h->recv->bytes, o->recv->bytes);
		assert_int_equal(h->send->messages, o->send->messages);
		assert_true(h->send->bytes > 0);
		assert_true(h->send->wire_gbs == o->send->wire_gbs);
	}
	for (size_t i = 0; i < c.nfiles; i++)
		if (c.files[i].incomplete)
			fail_msg("%s: a report of the chained run is incomplete", chained_dir);
	report_free(&a);
	report_free(&c);
}

/* fabriclab alone: its report, the reference for every chained run of the scenario. */
static const char *fabriclab_alone(const struct player_scenario *s, const char *name)
{
	static char dir[512];

	unsetenv("FABRICLAB_PROFILER_NEXT");
	snprintf(dir, sizeof(dir), "%s", run(s, name));
	return dir;
}

static const char *chained(const struct player_scenario *s, const char *next)
{
	setenv("FABRICLAB_PROFILER_NEXT", next, 1);
	return run(s, "chained");
}

static int warns_per_process(const char *dir, const char *must_say, int *processes)
{
	char path[600], line[1200];
	int pids[64], n = 0, lines = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/warn.log", dir);
	f = fopen(path, "r");
	*processes = 0;
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		int pid = atoi(line), seen = 0;

		lines++;
		if (!strstr(line, must_say))
			fail_msg("a WARN that does not say \"%s\": %s", must_say, line);
		for (int i = 0; i < n; i++)
			seen |= pids[i] == pid;
		if (!seen && n < 64)
			pids[n++] = pid;
	}
	fclose(f);
	*processes = n;
	return lines;
}

static void assert_no_warn(const char *dir)
{
	int procs;

	assert_int_equal(warns_per_process(dir, "", &procs), 0);
}

/*
 * Chained in NCCL's own version: equal counts for the next's default mask (every
 * event), an Inspector-like one (Coll, P2p, KernelCh: no proxy events, so none
 * of fabriclab's handles is ever its parent) and a proxy-only one (every
 * ProxyStep's parent translated); fabriclab's report unchanged.
 */
static void test_same_version(void **state)
{
	static const char *const masks[] = { NULL, "0x46", "0x38" };
	static const int versions[] = { 5, 6, 7 };

	(void)state;
	for (size_t v = 0; v < sizeof(versions) / sizeof(versions[0]); v++) {
		struct player_scenario s;
		char ref[512];

		scenario(&s, versions[v]);
		snprintf(ref, sizeof(ref), "%s", fabriclab_alone(&s, "ref"));
		for (size_t m = 0; m < sizeof(masks) / sizeof(masks[0]); m++) {
			struct counts alone, with;
			const char *dir;

			if (masks[m])
				setenv("COUNT_PROFILER_MASK", masks[m], 1);
			alone = next_alone(&s, lib("count"));
			dir = chained(&s, lib("count"));
			with = read_counts(dir);
			unsetenv("COUNT_PROFILER_MASK");
			assert_int_equal(with.files, 2);
			assert_true(with.starts[1] + with.starts[4] > 0); /* Coll or ProxyStep seen */
			assert_counts_equal(&alone, &with, masks[m] ? masks[m] : "every event");
			assert_reports_equal(ref, dir);
			assert_no_warn(dir);
		}
	}
}

/*
 * A next older than NCCL's table: fabriclab speaks its version as that NCCL's
 * adapters would (API events and CE gone, a Coll's parent its Group). Its counts
 * are those of the stand-in of its own version loading it alone (2.28-2.30 and
 * 2.31 play the same sequence; 2.27 without API events).
 */
static void test_older_next(void **state)
{
	static const struct {
		int nccl;
		const char *lib;
		int next;
	} cases[] = { { 7, "count-v6", 6 }, { 7, "count-v5", 5 }, { 6, "count-v5", 5 },
		      { 6, "count-v4", 4 }, { 5, "count-v4", 4 } };

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct player_scenario s, own;
		struct counts alone, with;

		scenario(&own, cases[i].next);
		alone = next_alone(&own, lib(cases[i].lib));
		if (alone.starts[4] == 0)
			fail_msg("v%d alone saw no ProxyStep", cases[i].next);
		scenario(&s, cases[i].nccl);
		with = read_counts(chained(&s, lib(cases[i].lib)));
		assert_counts_equal(&alone, &with, cases[i].lib);
	}
	unsetenv("FABRICLAB_PROFILER_NEXT");
}

/*
 * v3 and v1 behind NCCL v6: what NCCL 2.30's v3/v1 adapters give (2.30.7
 * src/plugin/profiler/profiler_v3.cc, profiler_v1.cc): every event of types
 * 0x1..0x80 (0x1..0x20 for v1), states only for ProxyCtrl and steps (8..18),
 * none of SendPeerWait, KernelChStop or the GroupApi ones.
 */
static void test_v3_and_v1_next(void **state)
{
	static const struct {
		const char *lib, *mask;
		int types;
	} cases[] = { { "count-v3", "0xff", 8 }, { "count-v1", "0x3f", 6 } };

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct player_scenario s;
		struct counts full, with;
		uint64_t expect = 0, got = 0;

		scenario(&s, 6);
		setenv("COUNT_PROFILER_MASK", cases[i].mask, 1);
		full = next_alone(&s, lib("count"));
		unsetenv("COUNT_PROFILER_MASK");
		with = read_counts(chained(&s, lib(cases[i].lib)));
		for (int t = 0; t < NTYPES; t++) {
			assert_int_equal(with.starts[t], t < cases[i].types ? full.starts[t] : 0);
			assert_int_equal(with.stops[t], t < cases[i].types ? full.stops[t] : 0);
		}
		for (int st = 8; st <= 18; st++)
			expect += full.states[st], got += with.states[st];
		assert_true(expect > 0);
		assert_int_equal(got, expect);
		assert_int_equal(with.states[20] + with.states[22] + with.states[23], 0);
		assert_int_equal(with.bad_handles, 0);
	}
}

/* Found as NCCL finds it: a comma list's first that loads; unset, in the wrapped net library. */
static void test_found_as_nccl_finds_it(void **state)
{
	struct player_scenario s;
	struct counts alone, with;
	char list[PATH_MAX * 2 + 32];
	const char *dir;

	(void)state;
	scenario(&s, 6);
	alone = next_alone(&s, lib("count"));
	snprintf(list, sizeof(list), "nosuchprofiler,%s", lib("count"));
	with = read_counts(chained(&s, list));
	assert_counts_equal(&alone, &with, "comma list");
	/* NCCL takes ncclProfiler_* from the net plugin's library (2.30.7 profiler.cc:64). */
	unsetenv("FABRICLAB_PROFILER_NEXT");
	snprintf(list, sizeof(list), "ext:%s", lib("count"));
	setenv("FABRICLAB_TRANSPORT", list, 1);
	dir = run(&s, "wrapped");
	with = read_counts(dir);
	assert_counts_equal(&alone, &with, "the wrapped net plugin's library");
	/* ... unless told otherwise. */
	setenv("FABRICLAB_PROFILER_NEXT", "none", 1);
	with = read_counts(run(&s, "none"));
	assert_int_equal(with.files, 0);
	unsetenv("FABRICLAB_PROFILER_NEXT");
	unsetenv("FABRICLAB_TRANSPORT");
}

/* Each failure: one WARN per process, naming it, and fabriclab's report as alone. */
static void check_failure(const char *next, const char *mode, const char *must_say)
{
	struct player_scenario s;
	char ref[512];
	const char *dir;
	int warns, procs;

	scenario(&s, 6);
	snprintf(ref, sizeof(ref), "%s", fabriclab_alone(&s, "ref"));
	if (mode)
		setenv("COUNT_PROFILER_MODE", mode, 1);
	dir = chained(&s, next);
	unsetenv("COUNT_PROFILER_MODE");
	unsetenv("FABRICLAB_PROFILER_NEXT");
	warns = warns_per_process(dir, must_say, &procs);
	if (warns != 2 || procs != 2)
		fail_msg("%s: %d WARNs from %d processes, one per process wanted", next, warns, procs);
	assert_reports_equal(ref, dir);
}

static void test_failures(void **state)
{
	char fifo[400], garbage[PATH_MAX + 64];
	FILE *f;

	(void)state;
	check_failure(lib("count"), "initfail", "its init returned 3");
	check_failure(lib("count"), "null", "gave no handle");
	snprintf(fifo, sizeof(fifo), "%s/fifo.so", base);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	check_failure(fifo, NULL, "it is a FIFO");
	snprintf(garbage, sizeof(garbage), "%s/garbage.so", base);
	f = fopen(garbage, "w");
	assert_non_null(f);
	fputs("\177ELF not really an object\n", f);
	fclose(f);
	check_failure(garbage, NULL, "garbage.so");
	check_failure("nosuchprofiler", NULL, "libnccl-profiler-nosuchprofiler.so");
	/* a real library with no profiler table: one of the test net plugins */
	snprintf(garbage, sizeof(garbage), "%s/inner/libnccl-net-flsock-v12.so", build);
	check_failure(garbage, NULL, "has no ncclProfiler_v1..v6");
}

/* FABRICLAB_PROFILER_NEXT naming fabriclab itself: refused, not a loop. */
static void test_itself(void **state)
{
	char path[PATH_MAX + 64];
	pid_t pid;
	int status;

	(void)state;
	snprintf(path, sizeof(path), "%s/libnccl-profiler-fabriclab.so", build);
	snprintf(log_path, sizeof(log_path), "%s/itself.log", base);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		void *so = dlopen(path, RTLD_NOW | RTLD_LOCAL);
		const struct fl_abi_profiler_v6 *t = so ? dlsym(so, "ncclProfiler_v6") : NULL;
		void *ctx = NULL;
		int mask = 0;

		setenv("FABRICLAB_PROFILER_NEXT", path, 1);
		setenv("FABRICLAB_REPORT", "off", 1);
		if (!t || t->init(&ctx, 0x1234, &mask, "self", 1, 2, 0, capture_log) ||
		    !(mask & FL_PROF_EV_PROXY_STEP) || t->finalize(ctx))
			_exit(1);
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	{
		int procs, n;
		char dir[400];

		snprintf(dir, sizeof(dir), "%s", base);
		rename(log_path, strcat(dir, "/warn.log"));
		n = warns_per_process(base, "is fabriclab itself", &procs);
		assert_int_equal(n, 1);
	}
}

/* One job for a third-party profiler: one rank per process (NCCL's example serializes its inits). */
static int play_one(const char *dir, int version, const char *next_alone)
{
	struct player_scenario s;

	player_defaults(&s, version, 4);
	s.p2p = 1;
	s.profiler_lib = next_alone;
	return player_run(&s, dir) ? 1 : 0;
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same_version),
		cmocka_unit_test(test_older_next),
		cmocka_unit_test(test_v3_and_v1_next),
		cmocka_unit_test(test_found_as_nccl_finds_it),
		cmocka_unit_test(test_failures),
		cmocka_unit_test(test_itself),
	};

	if (argc >= 4 && !strcmp(argv[1], "--play"))
		return play_one(argv[2], atoi(argv[3]), argc > 4 ? argv[4] : NULL);
	return cmocka_run_group_tests(tests, setup, teardown);
}
