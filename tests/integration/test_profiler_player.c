/*
 * Profiler mode end to end without a GPU: the player drives ncclProfiler_vN
 * exactly as NCCL does (tests/player), for a ring all-reduce over processes
 * (nodes) and threads (ranks); each process writes its report, and the
 * merge (`fabriclab report`'s code) must name the hops by node and reach the
 * known verdict. Every scenario runs through every ABI version v1..v7, each
 * with the sequence its NCCL emits (tests/player/player_gen.c): v1 = 2.23,
 * v3 = 2.26 (sizes only on ProxyOp states), v5 = 2.28, v6 = 2.30, v7 = 2.32.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <dirent.h>
#include <jansson.h>

#include "plugin/base/error.h"
#include "tests/player/prof_player.h"
#include "tools/report/report.h"

static char dir[256];
static struct report_set set;

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "%s/fl-player.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR")
									  : "/tmp");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[300];

	(void)state;
	report_free(&set);
	memset(&set, 0, sizeof(set));
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd);
}

/*
 * Plays s into a fresh folder (next to the net-mode reports of `net_fixture`,
 * when given) and merges what the processes wrote.
 */
static void play_and_merge_with(const struct player_scenario *s, const char *net_fixture)
{
	struct fl_verdict_params p;
	char cmd[600];

	snprintf(cmd, sizeof(cmd), "rm -f '%s'/*.json", dir);
	assert_int_equal(system(cmd), 0);
	if (net_fixture) {
		snprintf(cmd, sizeof(cmd), "cp tests/fixtures/reports/%s/*.json '%s'/", net_fixture,
			 dir);
		assert_int_equal(system(cmd), 0);
	}
	report_free(&set);
	memset(&set, 0, sizeof(set));
	assert_int_equal(player_run(s, dir), 0);
	fl_verdict_default_params(&p);
	if (report_add_path(&set, dir) || report_merge(&set, &p))
		fail_msg("merge: %s", fl_error_text());
}

static void play_and_merge(const struct player_scenario *s)
{
	play_and_merge_with(s, NULL);
}

/* The hop between two ranks of communicator `comm`, on the nodes that hold them. */
static const struct report_hop *hop_of(const struct player_scenario *s, int src, int dst,
				       int comm)
{
	char src_node[32], dst_node[32], src_dev[16], dst_dev[16];
	uint64_t comm_hash = s->comm_hash + (uint64_t)comm;

	player_node_name(s, player_comm_rank(s, comm, src), src_node, sizeof(src_node));
	player_node_name(s, player_comm_rank(s, comm, dst), dst_node, sizeof(dst_node));
	snprintf(src_dev, sizeof(src_dev), "rank%d", src);
	snprintf(dst_dev, sizeof(dst_dev), "rank%d", dst);
	for (size_t i = 0; i < set.nhops; i++) {
		const struct report_hop_key *k = &set.hops[i].key;

		if (!strcmp(k->src_node, src_node) && !strcmp(k->dst_node, dst_node) &&
		    !strcmp(k->src_dev, src_dev) && !strcmp(k->dst_dev, dst_dev) &&
		    k->comm_hash == comm_hash)
			return &set.hops[i];
	}
	fail_msg("no hop %s/%s -> %s/%s of comm %016llx (v%d, %zu hops)", src_node, src_dev,
		 dst_node, dst_dev, (unsigned long long)comm_hash, s->version, set.nhops);
	return NULL;
}

static size_t count_profiler_hops(void)
{
	size_t n = 0;

	for (size_t i = 0; i < set.nhops; i++)
		n += !strcmp(report_hop_mode(&set.hops[i]), "profiler");
	return n;
}

/* Every ring hop has both views, named by node, with exactly the bytes moved. */
static void check_ring(const struct player_scenario *s)
{
	uint64_t bytes = (uint64_t)s->ops * s->nsteps * s->nchannels * s->chunk;

	if (count_profiler_hops() != (size_t)s->nranks * s->comms) {
		for (size_t i = 0; i < set.nhops; i++)
			print_message("hop %s/%s -> %s/%s %016llx send %d recv %d\n",
				      set.hops[i].key.src_node, set.hops[i].key.src_dev,
				      set.hops[i].key.dst_node, set.hops[i].key.dst_dev,
				      (unsigned long long)set.hops[i].key.comm_hash,
				      set.hops[i].send->present, set.hops[i].recv->present);
		fail_msg("v%d, %d ranks: %zu hops", s->version, s->nranks, set.nhops);
	}
	for (int c = 0; c < s->comms; c++) {
		for (int r = 0; r < s->nranks; r++) {
			const struct report_hop *h = hop_of(s, r, (r + 1) % s->nranks, c);

			assert_true(h->send->present && h->recv->present);
			assert_true(h->send->profiler && h->recv->profiler);
			assert_string_equal(h->transport, "nccl");
			assert_int_equal(h->send->bytes, bytes);
			assert_int_equal(h->recv->bytes, bytes);
			assert_int_equal(h->send->messages,
					 (uint64_t)s->ops * s->nsteps * s->nchannels);
			assert_true(h->send->wire_gbs > 0);
		}
	}
}

/*
 * Channels run side by side, so the hop's wire time is the union over them:
 * chunk x channels per healthy wire time.
 */
static double healthy_gbs(const struct player_scenario *s)
{
	return (double)s->chunk * s->nchannels / (double)s->wire_ns;
}

static void check_nothing_lost(const struct player_scenario *s);

static void test_healthy(void **state)
{
	int version = *(int *)*state;
	static const int sizes[] = { 2, 4, 8, 16 };

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		struct player_scenario s;

		player_defaults(&s, version, sizes[i]);
		if (sizes[i] >= 8)
			s.ranks_per_node = 2; /* threads: two ranks per process */
		s.pxn = sizes[i] == 16;
		play_and_merge(&s);
		check_ring(&s);
		for (size_t h = 0; h < set.nhops; h++) {
			double gbs = set.hops[h].send->wire_gbs;

			if (gbs < 0.99 * healthy_gbs(&s) || gbs > 1.01 * healthy_gbs(&s))
				fail_msg("%d ranks: hop %zu at %.3f GB/s, expected %.3f",
					 sizes[i], h, gbs, healthy_gbs(&s));
		}
		if (set.verdict.kind != FL_VERDICT_NONE)
			fail_msg("v%d, %d ranks: verdict %s (%s)", version, sizes[i],
				 fl_verdict_kind_name(set.verdict.kind), set.verdict.reason);
		check_nothing_lost(&s);
	}
}

static void test_slow_link(void **state)
{
	int version = *(int *)*state;
	struct player_scenario s;
	const struct fl_hop_figures *f;

	player_defaults(&s, version, 8);
	s.slow_src = 5;
	s.slow_dst = 6;
	play_and_merge(&s);
	check_ring(&s);
	assert_int_equal(set.verdict.kind, FL_VERDICT_LINK);
	assert_true(set.verdict.hop >= 0);
	f = &set.figures[set.verdict.hop];
	assert_string_equal(f->src_node, "node5");
	assert_string_equal(f->dst_node, "node6");
	assert_true(set.verdict.ratio < 0.3 && set.verdict.ratio > 0.2);
	/* Ranks are not devices: the first command finds the NIC behind the rank. */
	assert_non_null(strstr(set.commands, "via NET/"));
	assert_non_null(strstr(set.commands, "rank5 on node5"));
}

static void test_slow_nic(void **state)
{
	int version = *(int *)*state;
	struct player_scenario s;

	player_defaults(&s, version, 8);
	s.slow_nic_rank = 3;
	play_and_merge(&s);
	check_ring(&s);
	if (set.verdict.kind != FL_VERDICT_DEVICE)
		fail_msg("verdict %s (%s)", fl_verdict_kind_name(set.verdict.kind),
			 set.verdict.reason);
	assert_string_equal(set.verdict.node, "node3");
	assert_string_equal(set.verdict.dev, "rank3");
}

static void test_straggler(void **state)
{
	int version = *(int *)*state;
	struct player_scenario s;

	player_defaults(&s, version, 8);
	s.straggler_rank = 2;
	play_and_merge(&s);
	check_ring(&s);
	if (set.verdict.kind != FL_VERDICT_NODE)
		fail_msg("verdict %s (%s)", fl_verdict_kind_name(set.verdict.kind),
			 set.verdict.reason);
	assert_string_equal(set.verdict.node, "node2");
}

/* Prometheus rejects two series with one label set: the communicator is a label. */
static void prom_has_both_comms(const struct player_scenario *s)
{
	char path[300], line[512], want[2][40];
	int seen[2] = { 0, 0 };
	FILE *f;

	snprintf(path, sizeof(path), "%s/out.prom", dir);
	assert_int_equal(report_write_prom(&set, path), 0);
	for (int c = 0; c < 2; c++)
		snprintf(want[c], sizeof(want[c]), "comm=\"%016llx\"",
			 (unsigned long long)(s->comm_hash + (uint64_t)c));
	f = fopen(path, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		for (int c = 0; c < 2; c++)
			seen[c] += strstr(line, "fabriclab_hop_bytes_total{") &&
				   strstr(line, want[c]);
	fclose(f);
	assert_int_equal(seen[0], s->nranks);
	assert_int_equal(seen[1], s->nranks);
}

/* Two communicators on the same ranks: their hops stay apart, bytes not doubled. */
static void test_two_comms(void **state)
{
	int version = *(int *)*state;
	struct player_scenario s;

	player_defaults(&s, version, 4);
	s.ranks_per_node = 2;
	s.comms = 2;
	play_and_merge(&s);
	check_ring(&s);
	assert_int_equal(set.verdict.kind, FL_VERDICT_NONE);
	prom_has_both_comms(&s);
}

/*
 * A mix: profiler-mode reports of one job next to net-mode reports of another
 * (tests/fixtures/reports/healthy4, nodes n1..n4). Each kind is judged on its
 * own: the profiler job's slow link is found, the net job's hops are kept.
 */
static void test_mixed_modes(void **state)
{
	int version = *(int *)*state;
	struct player_scenario s;
	size_t net = 0;

	player_defaults(&s, version, 8);
	play_and_merge_with(&s, "healthy4");
	check_ring(&s);
	for (size_t i = 0; i < set.nhops; i++)
		net += !strcmp(report_hop_mode(&set.hops[i]), "net");
	assert_int_equal(net, 4);
	assert_int_equal(set.verdict.kind, FL_VERDICT_NONE);
	s.slow_src = 5;
	s.slow_dst = 6;
	play_and_merge_with(&s, "healthy4");
	assert_int_equal(set.verdict.kind, FL_VERDICT_LINK);
	assert_string_equal(set.figures[set.verdict.hop].src_node, "node5");
	assert_string_equal(set.figures[set.verdict.hop].dst_node, "node6");
}

/*
 * A split: the second communicator numbers the same processes' ranks
 * backwards. Each hop is named by the nodes that hold its ranks in its own
 * communicator, never by the other's numbering.
 */
static void test_split_renumbered(void **state)
{
	int version = *(int *)*state;
	struct player_scenario s;

	player_defaults(&s, version, 4);
	s.comms = 2;
	s.split = 1;
	play_and_merge(&s);
	check_ring(&s);
	assert_int_equal(set.verdict.kind, FL_VERDICT_NONE);
}

/*
 * Registered buffers and a busy irecv: NCCL starts a receive step again on
 * every proxy pass that cannot post it, over the handle it kept and without a
 * stop (tests/player/prof_player.h cites where). Each repeat is the same step:
 * the report stays complete, with 0 steps lost, and the bytes are exact.
 */
static void test_registered_buffers(void **state)
{
	int version = *(int *)*state;
	struct player_scenario s;

	player_defaults(&s, version, 8);
	s.ranks_per_node = 2;
	s.recv_reg_passes = 20; /* the kernel starts 20 proxy passes after the op */
	s.recv_not_now = 1;     /* and every irecv is refused once */
	play_and_merge(&s);
	check_ring(&s);
	if (set.verdict.kind != FL_VERDICT_NONE)
		fail_msg("v%d: verdict %s (%s)", version, fl_verdict_kind_name(set.verdict.kind),
			 set.verdict.reason);
	check_nothing_lost(&s);
	/* A slow link stays named with the repeats. */
	s.slow_src = 5;
	s.slow_dst = 6;
	play_and_merge(&s);
	check_ring(&s);
	assert_int_equal(set.verdict.kind, FL_VERDICT_LINK);
	assert_string_equal(set.figures[set.verdict.hop].src_node, "node2");
	assert_string_equal(set.figures[set.verdict.hop].dst_node, "node3");
	check_nothing_lost(&s);
}

/* Calls fn on every report the run wrote (each loaded; a file that is not JSON fails). */
static void for_each_report(void (*fn)(json_t *root, const char *path, void *arg), void *arg)
{
	DIR *dd = opendir(dir);
	struct dirent *e;

	assert_non_null(dd);
	while ((e = readdir(dd))) {
		char path[600];
		json_t *root;

		if (!strstr(e->d_name, ".json"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		root = json_load_file(path, 0, NULL);
		if (!root)
			fail_msg("%s: not a JSON report", path);
		fn(root, path, arg);
		json_decref(root);
	}
	closedir(dd);
}

struct rank_sum {
	const char *field;
	uint64_t sum;
};

static void add_rank_count(json_t *root, const char *path, void *arg)
{
	struct rank_sum *t = arg;
	json_t *r;
	size_t i;

	(void)path;
	json_array_foreach(json_object_get(root, "ranks"), i, r)
		t->sum += (uint64_t)json_integer_value(json_object_get(r, t->field));
}

/* Sum of one per-rank count (relayed_ops, dropped_ops, ...) over every report of the run. */
static uint64_t sum_rank_count(const char *field)
{
	struct rank_sum t = { field, 0 };

	for_each_report(add_rank_count, &t);
	return t.sum;
}

/* A count every report's rank entries (or the report itself) must hold; absent fails. */
static void assert_zero(json_t *obj, const char *key, const char *path)
{
	json_t *v = json_object_get(obj, key);

	if (!json_is_integer(v) || json_integer_value(v) != 0)
		fail_msg("%s: `%s` is not a count of 0", path, key);
}

static void check_report_lost_nothing(json_t *root, const char *path, void *ranks_seen)
{
	static const char *const rank_counts[] = { "dropped_ops", "dropped_links",
						   "dropped_steps", "abandoned_steps" };
	json_t *r;
	size_t i;

	assert_zero(root, "profiler_unhomed_ops", path);
	if (!json_is_true(json_object_get(root, "complete")) ||
	    !json_is_null(json_object_get(root, "incomplete")))
		fail_msg("%s: incomplete: %s", path,
			 json_string_value(json_object_get(root, "incomplete")));
	json_array_foreach(json_object_get(root, "ranks"), i, r) {
		for (size_t k = 0; k < sizeof(rank_counts) / sizeof(rank_counts[0]); k++)
			assert_zero(r, rank_counts[k], path);
		++*(int *)ranks_seen;
	}
}

/*
 * Nothing seen and not measured: every report says so with its counts at 0
 * (not by leaving them out), `complete` true and `incomplete` null.
 */
static void check_nothing_lost(const struct player_scenario *s)
{
	int ranks_seen = 0;

	for_each_report(check_report_lost_nothing, &ranks_seen);
	assert_int_equal(ranks_seen, s->nranks * s->comms);
}

/*
 * PXN as NCCL drives it: each odd rank's channel-1 ops are run by its even
 * node-mate's proxy thread, with the originator's context (2.30.7
 * src/enqueue.cc:1402, src/proxy.cc:395) and pid (src/plugin/profiler.cc:582).
 * Another process's context is a PROT_NONE page: a read through it kills the
 * node's process and fails the run. The relayed ops are measured once, by the
 * process that moves them, and counted; the verdicts do not change.
 */
static void check_pxn(int version, int same_process)
{
	struct player_scenario s;
	uint64_t relayed;

	player_defaults(&s, version, 8);
	s.ranks_per_node = 2;
	s.pxn = 1;
	s.pxn_same_process = same_process;
	play_and_merge(&s);
	check_ring(&s);
	assert_int_equal(set.verdict.kind, FL_VERDICT_NONE);
	/* Odd ranks: 4, one channel of two, a send and a receive link, s.ops ops each. */
	relayed = sum_rank_count("relayed_ops");
	assert_int_equal(relayed, (uint64_t)(s.nranks / 2) * 2 * s.ops);
	assert_int_equal(sum_rank_count("dropped_ops"), 0);
	assert_int_equal(sum_rank_count("profiler_ops"),
			 (uint64_t)s.nranks * s.nchannels * 2 * s.ops);
	/* A slow link whose ops this process relays is still named. */
	s.slow_src = 5;
	s.slow_dst = 6;
	play_and_merge(&s);
	check_ring(&s);
	assert_int_equal(set.verdict.kind, FL_VERDICT_LINK);
	assert_string_equal(set.figures[set.verdict.hop].src_node, "node2");
	assert_string_equal(set.figures[set.verdict.hop].dst_node, "node3");
}

static void test_pxn_foreign_process(void **state)
{
	check_pxn(*(int *)*state, 0);
}

static void test_pxn_threads_of_one_process(void **state)
{
	check_pxn(*(int *)*state, 1);
}

static int versions[] = { 1, 2, 3, 4, 5, 6, 7 };

#define VERSION_TESTS(i)                                                                    \
	cmocka_unit_test_prestate_setup_teardown(test_healthy, setup, teardown, &versions[i]), \
	cmocka_unit_test_prestate_setup_teardown(test_slow_link, setup, teardown,             \
						 &versions[i]),                               \
	cmocka_unit_test_prestate_setup_teardown(test_slow_nic, setup, teardown, &versions[i]), \
	cmocka_unit_test_prestate_setup_teardown(test_straggler, setup, teardown,             \
						 &versions[i]),                               \
	cmocka_unit_test_prestate_setup_teardown(test_two_comms, setup, teardown, &versions[i]), \
	cmocka_unit_test_prestate_setup_teardown(test_mixed_modes, setup, teardown,           \
						 &versions[i]),                               \
	cmocka_unit_test_prestate_setup_teardown(test_split_renumbered, setup, teardown,      \
						 &versions[i]),                               \
	cmocka_unit_test_prestate_setup_teardown(test_registered_buffers, setup, teardown,    \
						 &versions[i])

/* The NCCLs whose sequences the PXN replays follow: 2.23, 2.26, 2.28, 2.30, 2.32. */
#define PXN_TESTS(i)                                                                        \
	cmocka_unit_test_prestate_setup_teardown(test_pxn_foreign_process, setup, teardown,   \
						 &versions[i]),                               \
	cmocka_unit_test_prestate_setup_teardown(test_pxn_threads_of_one_process, setup,      \
						 teardown, &versions[i])

int main(void)
{
	const struct CMUnitTest tests[] = {
		VERSION_TESTS(0), VERSION_TESTS(1), VERSION_TESTS(2),
		VERSION_TESTS(3), VERSION_TESTS(4), VERSION_TESTS(5), VERSION_TESTS(6),
		PXN_TESTS(0),     PXN_TESTS(2),     PXN_TESTS(4),     PXN_TESTS(5),
		PXN_TESTS(6),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
