/*
 * The union of intervals over many connections (plugin/interval.c): checked
 * against a brute-force union for overlaps, nesting, touching, out-of-order
 * intervals, many connections interleaved with reader drains and watermarks,
 * a writer and a reader on two threads, and both overflow paths (where the
 * result must stay within its stated error bound).
 */
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "plugin/stats/interval.h"

struct iv {
	uint64_t s, e;
};

static int by_s(const void *a, const void *b)
{
	const struct iv *x = a, *y = b;

	return (x->s > y->s) - (x->s < y->s);
}

/* The reference: sort, merge, sum; *runs (when not NULL) the disjoint runs. */
static uint64_t brute_union_runs(const struct iv *in, size_t n, uint64_t *runs)
{
	struct iv *v = malloc((n ? n : 1) * sizeof(*v));
	uint64_t total = 0, cs = 0, ce = 0, count = 0;
	int open = 0;

	assert_non_null(v);
	memcpy(v, in, n * sizeof(*v));
	qsort(v, n, sizeof(*v), by_s);
	for (size_t i = 0; i < n; i++) {
		if (v[i].e <= v[i].s)
			continue;
		if (open && v[i].s <= ce) {
			if (v[i].e > ce)
				ce = v[i].e;
			continue;
		}
		if (open)
			total += ce - cs;
		cs = v[i].s, ce = v[i].e, open = 1;
		count++;
	}
	if (open)
		total += ce - cs;
	free(v);
	if (runs)
		*runs = count;
	return total;
}

static uint64_t brute_union(const struct iv *in, size_t n)
{
	return brute_union_runs(in, n, NULL);
}

static struct fl_runs *new_runs(void)
{
	struct fl_runs *r = aligned_alloc(64, sizeof(*r));

	assert_non_null(r);
	memset(r, 0, sizeof(*r));
	return r;
}

/* One connection: add the intervals, then read the union twice (kept, then folded). */
static uint64_t one_connection(const struct iv *v, size_t n)
{
	struct fl_runs *r = new_runs();
	struct fl_union u;
	struct fl_run_scratch sc = { 0 };
	uint64_t kept, folded;

	fl_union_init(&u);
	for (size_t i = 0; i < n; i++)
		fl_runs_add(r, v[i].s, v[i].e);
	fl_union_take(&u, &sc, r);
	fl_union_settle(&u, &sc, 0);
	kept = fl_union_ns(&u);
	fl_union_settle(&u, &sc, UINT64_MAX);
	folded = fl_union_ns(&u);
	assert_int_equal(kept, folded);
	assert_int_equal(u.npending, 0);
	assert_int_equal(u.bridged_ns, 0);
	fl_union_free(&u);
	fl_run_scratch_free(&sc);
	free(r);
	return kept;
}

static void test_single_connection_shapes(void **state)
{
	static const struct iv overlap[] = { { 10, 20 }, { 15, 30 } };
	static const struct iv nested[] = { { 10, 100 }, { 20, 30 } };
	static const struct iv touching[] = { { 10, 20 }, { 20, 30 } };
	static const struct iv disjoint[] = { { 10, 20 }, { 30, 40 }, { 50, 55 } };
	static const struct iv early[] = { { 100, 200 }, { 10, 20 } };
	static const struct iv early_overlap[] = { { 100, 200 }, { 50, 150 } };
	static const struct iv empty[] = { { 10, 10 }, { 30, 20 }, { 40, 41 } };
	static const struct iv mixed[] = { { 5, 9 },   { 100, 120 }, { 110, 115 }, { 60, 70 },
					   { 69, 101 }, { 1, 2 },    { 300, 400 }, { 250, 260 } };

	(void)state;
	assert_int_equal(one_connection(overlap, 2), 20);
	assert_int_equal(one_connection(nested, 2), 90);
	assert_int_equal(one_connection(touching, 2), 20);
	assert_int_equal(one_connection(disjoint, 3), 25);
	assert_int_equal(one_connection(early, 2), 110);
	assert_int_equal(one_connection(early_overlap, 2), 150);
	assert_int_equal(one_connection(empty, 3), 1);
	assert_int_equal(one_connection(mixed, 8), brute_union(mixed, 8));
}

static uint64_t rnd(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

#define CONNS 8
#define PER_CONN 3000

/*
 * Requests per connection: post times rise, each interval starts at or after
 * its post and may overlap or even precede the one before it.
 */
struct script {
	uint64_t post[CONNS][PER_CONN];
	struct iv iv[CONNS][PER_CONN];
};

static void make_script(struct script *sc, uint64_t seed, uint64_t gap, uint64_t delay,
			uint64_t len)
{
	for (int c = 0; c < CONNS; c++) {
		uint64_t p = 1000 + rnd(&seed) % 100;

		for (int k = 0; k < PER_CONN; k++) {
			p += rnd(&seed) % gap;
			sc->post[c][k] = p;
			sc->iv[c][k].s = p + rnd(&seed) % delay;
			sc->iv[c][k].e = sc->iv[c][k].s + 1 + rnd(&seed) % len;
		}
	}
}

/* Interleaves writers at random and drains now and then; the union must be exact throughout. */
static void run_interleaved(const struct script *plan, uint64_t seed, int drain_every)
{
	struct fl_runs *r[CONNS];
	int next[CONNS] = { 0 }, left = CONNS * PER_CONN, events = 0;
	struct iv *added = malloc(CONNS * PER_CONN * sizeof(*added));
	size_t nadded = 0;
	struct fl_union u;
	struct fl_run_scratch sc = { 0 };

	assert_non_null(added);
	fl_union_init(&u);
	for (int c = 0; c < CONNS; c++)
		r[c] = new_runs();
	while (left) {
		int c = (int)(rnd(&seed) % CONNS);

		if (next[c] == PER_CONN)
			continue;
		fl_runs_add(r[c], plan->iv[c][next[c]].s, plan->iv[c][next[c]].e);
		added[nadded++] = plan->iv[c][next[c]++];
		left--;
		if (++events % drain_every)
			continue;
		/* The watermark: nothing can come before the next request's post. */
		uint64_t floor = UINT64_MAX;

		for (int k = 0; k < CONNS; k++)
			if (next[k] < PER_CONN && plan->post[k][next[k]] < floor)
				floor = plan->post[k][next[k]];
		for (int k = 0; k < CONNS; k++)
			fl_union_take(&u, &sc, r[k]);
		fl_union_settle(&u, &sc, floor);
		assert_true(u.npending <= FL_UNION_PENDING);
		/* The reference costs O(n log n): compared at a few hundred drains. */
		if (events % (drain_every * 13) == 0 || left == 0)
			assert_int_equal(fl_union_ns(&u), brute_union(added, nadded));
	}
	for (int k = 0; k < CONNS; k++)
		fl_union_take(&u, &sc, r[k]);
	fl_union_settle(&u, &sc, UINT64_MAX);
	{
		uint64_t runs, ns = brute_union_runs(added, nadded, &runs);

		assert_int_equal(fl_union_ns(&u), ns);
		assert_int_equal(fl_union_runs(&u), runs); /* busy stretches, for the round trip out */
	}
	assert_int_equal(u.bridged_ns, 0);
	for (int k = 0; k < CONNS; k++) {
		assert_int_equal(atomic_load(&r[k]->bridged_ns), 0);
		free(r[k]);
	}
	fl_union_free(&u);
	fl_run_scratch_free(&sc);
	free(added);
}

static void test_many_connections_interleaved_with_drains(void **state)
{
	struct script *sc = malloc(sizeof(*sc));

	(void)state;
	assert_non_null(sc);
	/* Busy: long overlapping intervals. Sparse: short ones with gaps. */
	make_script(sc, 88172645463325252ULL, 50, 100, 200);
	run_interleaved(sc, 7, 97);
	make_script(sc, 1234567ULL, 400, 30, 20);
	run_interleaved(sc, 11, 64);
	/* Drains after every interval: the watermark moves all the time. */
	make_script(sc, 99991ULL, 100, 300, 60);
	run_interleaved(sc, 13, 1);
	free(sc);
}

/* Sixteen nearly full rings of interleaved disjoint runs, taken in one drain: still exact. */
static void test_one_drain_of_many_full_rings_is_exact(void **state)
{
	enum { N = 16, PER = FL_RUN_RING - 1 };
	struct fl_runs *r[N];
	struct iv *v = malloc(N * PER * sizeof(*v));
	struct fl_run_scratch sc = { 0 };
	struct fl_union u;
	size_t n = 0;

	(void)state;
	assert_non_null(v);
	fl_union_init(&u);
	for (int c = 0; c < N; c++)
		r[c] = new_runs();
	for (int k = 0; k < PER; k++) {
		for (int c = 0; c < N; c++) {
			uint64_t s = 1000 + (uint64_t)k * 100 + (uint64_t)c * 5;

			v[n] = (struct iv){ s, s + 3 };
			fl_runs_add(r[c], v[n].s, v[n].e);
			n++;
		}
	}
	for (int c = 0; c < N; c++)
		assert_int_equal(fl_union_take(&u, &sc, r[c]), PER - 1); /* the last one is open */
	/* 16 x 1022 disjoint runs at once; all of them before the watermark. */
	fl_union_settle(&u, &sc, 1000 + (uint64_t)PER * 100);
	assert_int_equal(u.bridged_ns, 0);
	assert_int_equal(u.npending, 0);
	assert_int_equal(fl_union_ns(&u), brute_union(v, n));
	for (int c = 0; c < N; c++)
		free(r[c]);
	fl_union_free(&u);
	fl_run_scratch_free(&sc);
	free(v);
}

/* A writer nobody drains: the ring fills, gaps get bridged, and the bound says so. */
static void test_full_ring_bridges_within_the_bound(void **state)
{
	struct fl_runs *r = new_runs();
	struct iv v[3 * FL_RUN_RING];
	struct fl_union u;
	struct fl_run_scratch sc = { 0 };
	uint64_t total, bridged, truth;

	(void)state;
	for (size_t i = 0; i < 3 * FL_RUN_RING; i++) {
		v[i] = (struct iv){ 100 * i + 10, 100 * i + 60 };
		fl_runs_add(r, v[i].s, v[i].e);
	}
	truth = brute_union(v, 3 * FL_RUN_RING);
	fl_union_init(&u);
	/* one word a run, pushed while the longest run (an escape) still fits */
	assert_int_equal(fl_union_take(&u, &sc, r), FL_RUN_RING - FL_RUN_WORDS_MAX + 1);
	fl_union_settle(&u, &sc, UINT64_MAX);
	total = fl_union_ns(&u);
	bridged = atomic_load(&r->bridged_ns) + u.bridged_ns;
	assert_true(bridged > 0);
	assert_true(total >= truth);
	assert_true(total - bridged <= truth);
	/* every interval that found the ring full is counted: all but the pushed and the open */
	assert_int_equal(atomic_load(&r->overflows),
			 3 * FL_RUN_RING - (FL_RUN_RING - FL_RUN_WORDS_MAX + 1) - 1);
	assert_int_equal(u.bridges, 0);
	/* Drained, the ring takes runs again. */
	fl_runs_add(r, 100000000, 100000010);
	fl_runs_add(r, 200000000, 200000010);
	/* The bridged run, then [1e8, 1e8 + 10): one word each. */
	assert_int_equal(fl_union_take(&u, &sc, r), 2);
	fl_union_free(&u);
	fl_run_scratch_free(&sc);
	free(r);
}

static struct {
	struct fl_runs *r;
	struct fl_union u;
	struct fl_run_scratch sc;
	int nudges, drain;
} nw;

/* The reader's side of a nudge: counted, and (nw.drain) answered with a drain at once. */
static void nudged(void)
{
	nw.nudges++;
	if (nw.drain)
		fl_union_take(&nw.u, &nw.sc, nw.r);
}

/* Disjoint runs of one word each: the ring holds i words after run i + 1 is added. */
static void add_runs(size_t from, size_t to)
{
	for (size_t i = from; i < to; i++)
		fl_runs_add(nw.r, 100 * i + 10, 100 * i + 60);
}

/* A ring past half full wakes its reader, again while it stays there, and not before. */
static void test_half_full_ring_nudges_its_reader(void **state)
{
	(void)state;
	memset(&nw, 0, sizeof(nw));
	nw.r = new_runs();
	fl_union_init(&nw.u);
	fl_runs_set_nudge(nudged);
	add_runs(0, FL_RUN_NUDGE + 2); /* FL_RUN_NUDGE + 1 words: the bound itself is no nudge */
	assert_int_equal(nw.nudges, 0);
	add_runs(FL_RUN_NUDGE + 2, FL_RUN_NUDGE + 3);
	assert_int_equal(nw.nudges, 1);
	add_runs(FL_RUN_NUDGE + 3, FL_RUN_NUDGE + 2 + FL_RUN_NUDGE_AGAIN);
	assert_int_equal(nw.nudges, 1);
	add_runs(FL_RUN_NUDGE + 2 + FL_RUN_NUDGE_AGAIN, FL_RUN_NUDGE + 3 + FL_RUN_NUDGE_AGAIN);
	assert_int_equal(nw.nudges, 2);
	assert_int_equal(atomic_load(&nw.r->overflows), 0);
	/* A reader that drains when nudged: thousands of runs more, none bridged, exact. */
	nw.drain = 1;
	add_runs(FL_RUN_NUDGE + 3 + FL_RUN_NUDGE_AGAIN, 8 * FL_RUN_RING);
	fl_union_take(&nw.u, &nw.sc, nw.r);
	fl_union_settle(&nw.u, &nw.sc, UINT64_MAX);
	assert_int_equal(atomic_load(&nw.r->overflows), 0);
	assert_int_equal(fl_union_ns(&nw.u), 50 * (8 * FL_RUN_RING));
	assert_true(nw.nudges >= 8 * FL_RUN_RING / FL_RUN_NUDGE - 1); /* about one per half ring */
	fl_runs_set_nudge(NULL);
	fl_union_free(&nw.u);
	fl_run_scratch_free(&nw.sc);
	free(nw.r);
}

/* Runs that do not fit one word (far apart, long, earlier than the last) come back exact. */
static void test_runs_that_escape_decode_exactly(void **state)
{
	const uint64_t g = 1ULL << 32; /* ns: a gap or length this long needs an escape */
	const struct iv v[] = {
		{ 5 * g, 5 * g + 10 },      /* 5g after 0: escaped (3 words) */
		{ 5 * g + 20, 5 * g + 30 }, /* 10 after, 10 long: one word */
		{ 12 * g, 15 * g },         /* 7g after, 3g long: escaped */
		{ 16 * g, 16 * g + 5 },     /* exactly g after: escaped */
		{ 16 * g + 7, 16 * g + 9 }, /* after [100, 200) went early: escaped */
		{ 100, 200 },               /* before the open run: pushed at once, escaped */
		{ 16 * g + 20, 16 * g + 25 },
	};
	const size_t n = sizeof(v) / sizeof(v[0]);
	struct fl_runs *r = new_runs();
	struct fl_run_scratch sc = { 0 };
	struct fl_union u;

	(void)state;
	fl_union_init(&u);
	for (size_t i = 0; i < n; i++)
		fl_runs_add(r, v[i].s, v[i].e);
	assert_int_equal(fl_union_take(&u, &sc, r), 3 + 1 + 3 + 3 + 3 + 3);
	fl_union_settle(&u, &sc, UINT64_MAX);
	assert_int_equal(fl_union_ns(&u), brute_union(v, n));
	assert_int_equal(u.bridged_ns + atomic_load(&r->bridged_ns), 0);
	/* decoding goes on from the last run: a near one is one word again */
	fl_runs_add(r, 16 * g + 30, 16 * g + 31);
	assert_int_equal(fl_union_take(&u, &sc, r), 1);
	fl_union_free(&u);
	fl_run_scratch_free(&sc);
	free(r);
}

/* One connection's old outstanding request pins the watermark; pending runs stay bounded. */
static void test_pinned_watermark_keeps_pending_bounded(void **state)
{
	struct fl_runs *r = new_runs();
	size_t n = 6 * FL_UNION_PENDING;
	struct iv *v = malloc(n * sizeof(*v));
	struct fl_union u;
	struct fl_run_scratch sc = { 0 };
	uint64_t total, truth;

	(void)state;
	assert_non_null(v);
	fl_union_init(&u);
	for (size_t i = 0; i < n; i++) {
		v[i] = (struct iv){ 1000 + 10 * i, 1000 + 10 * i + 4 + i % 3 };
		fl_runs_add(r, v[i].s, v[i].e);
		if (i % (FL_RUN_RING / 2) == 0) {
			fl_union_take(&u, &sc, r);
			fl_union_settle(&u, &sc, 5); /* the pinned floor */
			assert_true(u.npending <= FL_UNION_PENDING);
		}
	}
	fl_union_take(&u, &sc, r);
	fl_union_settle(&u, &sc, UINT64_MAX);
	total = fl_union_ns(&u);
	truth = brute_union(v, n);
	assert_true(u.bridged_ns > 0);
	assert_true(u.bridges > 0); /* the reader's bridging is counted, the writer's ring held */
	assert_true(total >= truth && total - u.bridged_ns <= truth);
	assert_int_equal(atomic_load(&r->bridged_ns), 0);
	assert_int_equal(atomic_load(&r->overflows), 0);
	fl_union_free(&u);
	fl_run_scratch_free(&sc);
	free(r);
	free(v);
}

/* ---- a writer thread and a reader thread, as in the plugin ---- */

#define THREAD_CONNS 4
#define THREAD_REQS 200000

static struct {
	struct fl_runs *r[THREAD_CONNS];
	_Atomic uint64_t clock;
	_Atomic uint64_t posted[THREAD_CONNS];
	_Atomic int done;
	struct iv *log;
} tw;

/* Test harness only: never outrun the reader, so the result must be exact. */
static void wait_for_room(struct fl_runs *r)
{
	while (atomic_load(&r->head) - atomic_load(&r->tail) > FL_RUN_RING - 4)
		sched_yield();
}

/* The protocol of fl_stats_post / fl_stats_complete on a logical clock. */
static void *writer(void *arg)
{
	uint64_t seed = 424242;

	(void)arg;
	for (int i = 0; i < THREAD_REQS; i++) {
		int c = (int)(rnd(&seed) % THREAD_CONNS);
		uint64_t p = atomic_load(&tw.clock), s, e;

		atomic_store(&tw.posted[c], p);
		atomic_fetch_add(&tw.clock, 1 + rnd(&seed) % 20);
		s = p + rnd(&seed) % 40;
		e = s + 1 + rnd(&seed) % 30;
		wait_for_room(tw.r[c]);
		fl_runs_add(tw.r[c], s, e);
		tw.log[i] = (struct iv){ s, e };
		atomic_store(&tw.posted[c], UINT64_MAX);
	}
	atomic_store(&tw.done, 1);
	return NULL;
}

static void drain(struct fl_union *u, struct fl_run_scratch *sc)
{
	uint64_t floor = atomic_load(&tw.clock);

	for (int c = 0; c < THREAD_CONNS; c++) {
		uint64_t p = atomic_load(&tw.posted[c]);

		if (p < floor)
			floor = p;
	}
	for (int c = 0; c < THREAD_CONNS; c++)
		fl_union_take(u, sc, tw.r[c]);
	fl_union_settle(u, sc, floor);
}

static void test_writer_and_reader_threads_agree_exactly(void **state)
{
	struct fl_union u;
	struct fl_run_scratch sc = { 0 };
	pthread_t t;
	uint64_t bridged = 0;

	(void)state;
	tw.log = malloc(THREAD_REQS * sizeof(*tw.log));
	assert_non_null(tw.log);
	atomic_store(&tw.clock, 1);
	atomic_store(&tw.done, 0);
	for (int c = 0; c < THREAD_CONNS; c++) {
		tw.r[c] = new_runs();
		atomic_store(&tw.posted[c], UINT64_MAX);
	}
	fl_union_init(&u);
	assert_int_equal(pthread_create(&t, NULL, writer, NULL), 0);
	while (!atomic_load(&tw.done))
		drain(&u, &sc);
	pthread_join(t, NULL);
	drain(&u, &sc);
	fl_union_settle(&u, &sc, UINT64_MAX);
	for (int c = 0; c < THREAD_CONNS; c++)
		bridged += atomic_load(&tw.r[c]->bridged_ns);
	assert_int_equal(bridged + u.bridged_ns, 0);
	assert_int_equal(fl_union_ns(&u), brute_union(tw.log, THREAD_REQS));
	for (int c = 0; c < THREAD_CONNS; c++)
		free(tw.r[c]);
	fl_union_free(&u);
	fl_run_scratch_free(&sc);
	free(tw.log);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_single_connection_shapes),
		cmocka_unit_test(test_many_connections_interleaved_with_drains),
		cmocka_unit_test(test_one_drain_of_many_full_rings_is_exact),
		cmocka_unit_test(test_full_ring_bridges_within_the_bound),
		cmocka_unit_test(test_half_full_ring_nudges_its_reader),
		cmocka_unit_test(test_runs_that_escape_decode_exactly),
		cmocka_unit_test(test_pinned_watermark_keeps_pending_bounded),
		cmocka_unit_test(test_writer_and_reader_threads_agree_exactly),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
