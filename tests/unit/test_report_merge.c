/*
 * `fabriclab report`'s reading and join, on the committed fixtures
 * (tests/fixtures/reports, from make_fixtures.py) and on reports written here.
 * Run from the repository root, as tests/run.sh does.
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

#include "plugin/base/error.h"
#include "tools/report/report.h"

#define FIXTURES "tests/fixtures/reports/"

static struct report_set set;

static int load(const char *folder)
{
	struct fl_verdict_params p;
	int err;

	memset(&set, 0, sizeof(set));
	fl_verdict_default_params(&p);
	err = report_add_path(&set, folder);
	return err ? err : report_merge(&set, &p);
}

static int teardown(void **state)
{
	(void)state;
	report_free(&set);
	return 0;
}

static const struct report_hop *find_hop(const char *src, const char *dst)
{
	for (size_t i = 0; i < set.nhops; i++) {
		if (!strcmp(set.hops[i].key.src_node, src) &&
		    !strcmp(set.hops[i].key.dst_node, dst))
			return &set.hops[i];
	}
	fail_msg("no hop %s -> %s", src, dst);
	return NULL;
}

static size_t index_of(const struct report_hop *h)
{
	return (size_t)(h - set.hops);
}

static void test_healthy_ring_joins_both_views(void **state)
{
	uint64_t sizes[REPORT_SIZE_BUCKETS];
	const struct report_hop *h;
	const struct fl_hop_figures *f;

	(void)state;
	assert_int_equal(load(FIXTURES "healthy4"), 0);
	assert_int_equal(set.nfiles, 4); /* the .txt beside them is not read */
	assert_int_equal(set.nhops, 4);
	assert_int_equal(set.nodes, 4);
	assert_int_equal(set.verdict.kind, FL_VERDICT_NONE);
	assert_int_equal(set.verdict.judged_hops, 4);
	h = find_hop("n2", "n3");
	assert_true(h->send->present && h->recv->present);
	assert_string_equal(set.files[h->send->input].node, "n2");
	assert_string_equal(set.files[h->recv->input].node, "n3");
	f = &set.figures[index_of(h)];
	/* Sockets: the receiver's wire rate, which the fixture makes lower than the sender's. */
	assert_string_equal(report_wire_view_name(h), "recv");
	assert_float_equal(f->wire_gbs, h->recv->wire_gbs, 1e-12);
	assert_true(h->send->wire_gbs > h->recv->wire_gbs * 1.1);
	/* The receiver's wait (30%), not the sender's (5%). */
	assert_float_equal(f->peer_wait_seconds / f->active_seconds, 0.30, 1e-6);
	assert_int_equal(f->bytes, 2ULL << 30);
	assert_int_equal(f->messages, 4096);
	assert_float_equal(f->line_rate_gbs, 12.5, 1e-12);
	assert_int_equal(h->send->src_rank, 1);
	assert_int_equal(h->send->dst_rank, 2);
	report_sizes_get(h->send, sizes);
	assert_int_equal(sizes[19], 4096); /* 512 KiB messages */
	assert_float_equal(h->recv->p50_us, 52.0, 0.1);
}

static void test_verbs_take_the_senders_wire_rate(void **state)
{
	const struct report_hop *h;

	(void)state;
	assert_int_equal(load(FIXTURES "ib_views4"), 0);
	h = find_hop("n1", "n2");
	assert_string_equal(report_wire_view_name(h), "send");
	assert_float_equal(set.figures[index_of(h)].wire_gbs, 20.0, 1e-9);
	assert_float_equal(h->recv->wire_gbs, 40.0, 1e-9);
	/*
	 * Every hop alike, no culprit among them (the whole ring at 40% of its line: not
	 * enough evidence to call healthy against the line's prior, nor anyone to blame).
	 */
	assert_int_equal(set.verdict.nfindings, 0);
	assert_true(set.verdict.kind == FL_VERDICT_NONE || set.verdict.kind == FL_VERDICT_UNSURE);
}

static void test_one_view_is_enough(void **state)
{
	const struct report_hop *h;
	const struct fl_hop_figures *f;

	(void)state;
	assert_int_equal(load(FIXTURES "send_only4"), 0);
	assert_int_equal(set.nhops, 4);
	h = find_hop("n3", "n4");
	assert_false(h->recv->present);
	f = &set.figures[index_of(h)];
	assert_float_equal(f->wire_gbs, h->send->wire_gbs, 1e-12);
	/* the receiver's waits are unknown without its report, never the sender's under its name */
	assert_float_equal(f->peer_wait_seconds, 0.0, 0.0);
	assert_float_equal(f->send_wait_seconds, h->send->peer_wait_seconds, 1e-12);
	assert_int_equal(set.verdict.judged_hops, 4);
}

static void test_slow_device_names_it_and_marks_its_hops(void **state)
{
	(void)state;
	assert_int_equal(load(FIXTURES "slow_device8"), 0);
	assert_int_equal(set.verdict.kind, FL_VERDICT_DEVICE);
	assert_string_equal(set.verdict.node, "n2");
	assert_string_equal(set.verdict.dev, "eth0");
	for (size_t i = 0; i < set.nhops; i++) {
		bool through_n2 = !strcmp(set.hops[i].key.src_node, "n2") ||
				  !strcmp(set.hops[i].key.dst_node, "n2");

		assert_int_equal(report_is_culprit(&set, i), through_n2);
	}
	assert_true(set.ncommands >= 4);
	assert_non_null(strstr(set.commands, "on n2: ethtool -S eth0"));
}

static void test_other_verdicts_from_fixtures(void **state)
{
	(void)state;
	assert_int_equal(load(FIXTURES "slow_link4"), 0);
	assert_int_equal(set.verdict.kind, FL_VERDICT_LINK);
	assert_string_equal(set.hops[set.verdict.hop].key.src_node, "n3");
	report_free(&set);
	assert_int_equal(load(FIXTURES "straggler4"), 0);
	assert_int_equal(set.verdict.kind, FL_VERDICT_NODE);
	assert_string_equal(set.verdict.node, "n3");
	report_free(&set);
	assert_int_equal(load(FIXTURES "transport4"), 0);
	assert_int_equal(set.verdict.kind, FL_VERDICT_TRANSPORT);
}

static void test_gdr_join_keeps_the_side_without_it(void **state)
{
	const struct fl_hop_figures *into_n2, *away;

	(void)state;
	assert_int_equal(load(FIXTURES "gdr4"), 0);
	/* n1 sends from GPU memory, n2 receives into host memory: the hop is not GDR. */
	into_n2 = &set.figures[index_of(find_hop("n1", "n2"))];
	assert_int_equal(into_n2->mem_types, FL_PTR_HOST);
	assert_true(into_n2->gdr_capable);
	away = &set.figures[index_of(find_hop("n3", "n4"))];
	assert_int_equal(away->mem_types, FL_PTR_CUDA);
	assert_int_equal(set.verdict.kind, FL_VERDICT_GDR);
	assert_string_equal(set.verdict.node, "n2");
}

static void test_snapshot_and_final_count_once(void **state)
{
	(void)state;
	assert_int_equal(load(FIXTURES "snapshot_and_final4"), 0);
	assert_int_equal(set.nfiles, 5);
	for (size_t i = 0; i < set.nfiles; i++) {
		const struct report_file *f = &set.files[i];

		if (strstr(f->path, ".snapshot.json"))
			assert_string_equal(set.files[f->superseded_by].path,
					    FIXTURES "snapshot_and_final4/n1-1000.json");
		else
			assert_int_equal(f->superseded_by, -1);
	}
	/* The snapshot's half count is not added to the final one. */
	assert_int_equal(set.figures[index_of(find_hop("n1", "n2"))].bytes, 2ULL << 30);
}

/*
 * Two processes per node (one per GPU, same host name) on one NIC: each pair of
 * ranks keeps its own hop, never mixed with the other pair's, and the names
 * say which ranks they are.
 */
static void test_processes_of_one_node_never_mix(void **state)
{
	char name[128];

	(void)state;
	assert_int_equal(load(FIXTURES "shared_nic2"), 0);
	assert_int_equal(set.nhops, 4);
	assert_true(set.ranked_names);
	for (size_t i = 0; i < set.nhops; i++) {
		const struct report_hop *h = &set.hops[i];

		assert_int_equal(h->send->processes, 1);
		assert_int_equal(h->recv->processes, 1);
		assert_int_equal(h->send->bytes, 1ULL << 30);
		/* One process's rate, not the sum of two. */
		assert_float_equal(h->recv->wire_gbs, 5.0, 1e-6);
		assert_true(h->src_rank >= 0 && h->dst_rank >= 0);
	}
	report_hop_name(&set, 0, name, sizeof(name));
	assert_string_equal(name, "n1/eth0[r0] -> n2/eth0[r2]");
}

/* A report written here: one hop view with the figures given, and the world size. */
static void write_view(const char *dir, const char *node, int pid, int rank, int world,
		       const char *view, unsigned long long bytes, unsigned long long wire_bytes,
		       double wire_seconds)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s-%d.json", dir, node, pid);
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f,
		"{\"schema\": \"fabriclab-report\", \"schema_version\": 1, \"node\": \"%s\", "
		"\"pid\": %d, \"rank\": %d, \"world_size\": %d, \"transport\": \"socket\", "
		"\"hops\": [{\"src_node\": \"a\", \"src_dev\": \"eth0\", \"dst_node\": \"b\", "
		"\"dst_dev\": \"eth0\", \"view\": \"%s\", \"bytes\": %llu, \"wire_bytes\": %llu, "
		"\"messages\": 100, \"wire_seconds\": %.9f, \"wire_gbs\": %.9f, "
		"\"line_rate_gbs\": 1.0, \"active_seconds\": 1, \"peer_wait_seconds\": 0}]}\n",
		node, pid, rank, world, view, bytes, wire_bytes, wire_seconds,
		wire_seconds > 0 ? (double)wire_bytes / wire_seconds / 1e9 : 0.0);
	fclose(f);
}

static void remove_dir(const char *dir)
{
	char cmd[600];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

/*
 * The same view from two processes that do not know their ranks: the bytes
 * each timed over the sum of their wire times (the union's upper bound), never
 * all bytes over the longer time, which read 146x the line rate.
 */
static void test_same_view_from_two_processes_uses_timed_bytes(void **state)
{
	char dir[] = "/tmp/fabriclab-report-test.XXXXXX";
	const struct report_hop *h;

	(void)state;
	assert_non_null(mkdtemp(dir));
	/* Each timed 10 MB of 1 GB, at 0.16 GB/s. */
	write_view(dir, "b", 1, -1, 0, "recv", 1000000000ULL, 10000000ULL, 0.0625);
	write_view(dir, "b", 2, -1, 0, "recv", 1000000000ULL, 10000000ULL, 0.0625);
	assert_int_equal(load(dir), 0);
	assert_int_equal(set.nhops, 1);
	h = &set.hops[0];
	assert_int_equal(h->recv->processes, 2);
	assert_int_equal(h->recv->wire_bytes, 20000000ULL);
	assert_float_equal(h->recv->wire_gbs, 0.16, 1e-9);
	assert_false(report_rate_error(&set, 0, (char[160]){ 0 }, 160));
	remove_dir(dir);
}

/* A rate no cable carries is flagged with its cause, and judged as the line rate. */
static void test_rate_above_line_rate_is_a_measurement_error(void **state)
{
	char dir[] = "/tmp/fabriclab-report-test.XXXXXX";
	char why[160];

	(void)state;
	assert_non_null(mkdtemp(dir));
	/* 1.4 GB/s on a 1 GB/s line, from a tenth of the bytes. */
	write_view(dir, "b", 1, 1, 2, "recv", 1000000000ULL, 100000000ULL, 100000000.0 / 1.4e9);
	assert_int_equal(load(dir), 0);
	assert_true(report_rate_error(&set, 0, why, sizeof(why)));
	assert_non_null(strstr(why, "only 10% of its bytes were timed"));
	report_free(&set);
	/* 1.04: within the 5% a measurement may err by. */
	write_view(dir, "b", 1, 1, 2, "recv", 1000000000ULL, 1000000000ULL, 1.0 / 1.04);
	assert_int_equal(load(dir), 0);
	assert_false(report_rate_error(&set, 0, why, sizeof(why)));
	remove_dir(dir);
}

/* One socket hop whose sender and receiver timed it at these rates (GB/s), loaded from dir. */
static const struct report_hop *timed_both_ends(const char *dir, double send_gbs,
						double recv_gbs)
{
	write_view(dir, "a", 1, 0, 2, "send", 1000000000ULL, 1000000000ULL, 1.0 / send_gbs);
	write_view(dir, "b", 2, 1, 2, "recv", 1000000000ULL, 1000000000ULL, 1.0 / recv_gbs);
	assert_int_equal(load(dir), 0);
	return &set.hops[0];
}

/*
 * Both ends of a socket hop timed the wire: the slower view is judged. A late
 * receiver reads buffered bytes at its own pace and hides a throttled sender
 * (lab, 4 ranks on a loaded host: the sender at 90%, its receiver at 97%); a
 * sender's socket buffer hides a throttled receiver.
 */
static void test_socket_hop_judged_on_its_slower_end(void **state)
{
	char dir[] = "/tmp/fabriclab-report-test.XXXXXX";

	(void)state;
	assert_non_null(mkdtemp(dir));
	assert_string_equal(report_wire_view_name(timed_both_ends(dir, 0.90, 0.97)), "send");
	assert_float_equal(set.figures[0].wire_gbs, 0.90, 1e-9);
	report_free(&set);
	assert_string_equal(report_wire_view_name(timed_both_ends(dir, 0.99, 0.91)), "recv");
	assert_float_equal(set.figures[0].wire_gbs, 0.91, 1e-9);
	remove_dir(dir);
}

/* The world size the reports carry says which ranks left no report. */
static void test_missing_ranks_and_nodes_are_named(void **state)
{
	char dir[] = "/tmp/fabriclab-report-test.XXXXXX";
	char text[256];

	(void)state;
	assert_non_null(mkdtemp(dir));
	write_view(dir, "c", 1, 2, 4, "send", 1000, 1000, 0.001);
	write_view(dir, "b", 2, 1, 4, "recv", 1000, 1000, 0.001);
	assert_int_equal(load(dir), 0);
	assert_int_equal(set.world_size, 4);
	assert_int_equal(set.nmissing_ranks, 2);
	assert_int_equal(set.missing_ranks[0], 0);
	assert_int_equal(set.missing_ranks[1], 3);
	/* Node a sends on the hop b received, yet wrote nothing. */
	assert_int_equal(set.nmissing_nodes, 1);
	assert_string_equal(set.missing_nodes[0], "a");
	report_missing_text(&set, text, sizeof(text));
	assert_string_equal(text, "expected 4 ranks (world size), no report from ranks 0, 3; "
				  "no report from node a (named by the hops of others)");
	remove_dir(dir);
}

static void expect_error(const char *folder, const char *file, const char *what)
{
	assert_int_equal(load(folder), FL_ERR_USAGE);
	if (file)
		assert_non_null(strstr(fl_error_text(), file));
	assert_non_null(strstr(fl_error_text(), what));
	report_free(&set);
}

static void test_bad_inputs_name_the_file(void **state)
{
	(void)state;
	expect_error(FIXTURES "bad_version", "bad_version/n1-1000.json", "schema_version 2");
	expect_error(FIXTURES "truncated", "truncated/n1-1000.json", "truncated or not JSON");
	expect_error(FIXTURES "not_json", "not_json/n1-1000.json", "truncated or not JSON");
	expect_error(FIXTURES "wrong_field", "wrong_field/n1-1000.json",
		     "hops[1].bytes: expected a non-negative integer");
	expect_error(FIXTURES "other_schema", "n1-1000.json", "not a fabriclab report");
	expect_error(FIXTURES "no-such-folder", "no-such-folder", "No such file");
}

/* A report with only the fields the merge needs, written here. */
static void write_minimal(const char *dir, const char *node, int pid, const char *extra_hop)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s-%d.json", dir, node, pid);
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f,
		"{\"schema\": \"fabriclab-report\", \"schema_version\": 1, \"node\": \"%s\", "
		"\"pid\": %d, \"transport\": \"socket\", \"hops\": [%s]}\n",
		node, pid, extra_hop);
	fclose(f);
}

#define MINIMAL_HOP                                                                                \
	"{\"src_node\": \"%s\", \"src_dev\": \"eth0\", \"dst_node\": \"n10\", "                    \
	"\"dst_dev\": \"eth0\", \"view\": \"send\", \"bytes\": 100, \"messages\": 1, "             \
	"\"wire_seconds\": 0.0, \"wire_gbs\": 0, \"line_rate_gbs\": 0, "                           \
	"\"active_seconds\": 0, \"peer_wait_seconds\": 0}"

static void test_minimal_reports_natural_order_odd_names(void **state)
{
	char dir[] = "/tmp/fabriclab-report-test.XXXXXX";
	char cmd[600], hops[1024];

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(hops, sizeof(hops), MINIMAL_HOP, "n10");
	write_minimal(dir, "n10", 1, hops);
	snprintf(hops, sizeof(hops), MINIMAL_HOP ", " MINIMAL_HOP, "n9", "a \\\"x\\\" & b");
	write_minimal(dir, "n9", 2, hops);
	assert_int_equal(load(dir), 0);
	assert_int_equal(set.nhops, 3);
	/* Natural order: n9 before n10. */
	assert_string_equal(set.hops[0].key.src_node, "a \"x\" & b");
	assert_string_equal(set.hops[1].key.src_node, "n9");
	assert_string_equal(set.hops[2].key.src_node, "n10");
	assert_int_equal(set.hops[1].send->connections, 1);
	assert_int_equal(set.hops[1].send->src_rank, -1);
	assert_int_equal(set.nodes, 3);
	assert_int_equal(set.verdict.kind, FL_VERDICT_NONE);
	assert_int_equal(set.verdict.judged_hops, 0);
	assert_string_equal(set.files[0].version, "unknown");
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

/*
 * A large report is read a hop at a time from its text, each hop's table
 * reused for the next: what the rest of the report holds (its devices, read
 * during the hops, and its ports, after them) must come through intact.
 */
static void test_large_report_streams_hops_and_keeps_the_rest(void **state)
{
	char dir[] = "/tmp/fabriclab-report-test.XXXXXX";
	char path[600], cmd[600];
	const size_t n = 4000;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/n0-1.json", dir);
	assert_non_null(f = fopen(path, "w"));
	fputs("{\"schema\": \"fabriclab-report\", \"schema_version\": 1, \"node\": \"n0\", "
	      "\"pid\": 1, \"transport\": \"ib\", \"devices\": [{\"name\": \"mlx5_0\", "
	      "\"ptr_support\": [\"host\", \"cuda\"]}], \"hops\": [", f);
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%s{\"src_node\": \"n0\", \"src_dev\": \"mlx5_0\", \"dst_node\": "
			"\"peer%05zu\", \"dst_dev\": \"mlx5_0\", \"view\": \"send\", \"bytes\": "
			"%zu, \"messages\": 1, \"wire_seconds\": 0.5, \"wire_gbs\": 1.0, "
			"\"line_rate_gbs\": 50.0, \"active_seconds\": 1.0, \"peer_wait_seconds\": 0, "
			"\"size_histogram\": [[1024, 1]], \"memory\": [\"cuda\"], \"gdr\": true, "
			"\"wire_time_us\": {\"p50\": 1.0, \"p99\": 2.0, \"max\": 3.0}}",
			i ? ", " : "", i, 1000 + i);
	fputs("], \"ports\": [{\"name\": \"mlx5_0/1\", \"device\": \"mlx5_0\", "
	      "\"active\": true, \"active_gbps\": 200.0}]}\n", f);
	assert_true(ftell(f) > (1L << 20)); /* 4000 hops, over 1 MiB */
	assert_int_equal(fclose(f), 0);
	assert_int_equal(load(dir), 0);
	assert_int_equal(set.nhops, n);
	assert_int_equal(set.files[0].nports, 1);
	assert_string_equal(set.files[0].ports[0].name, "mlx5_0/1");
	assert_true(set.files[0].ports[0].active_gbps == 200.0);
	for (size_t i = 0; i < n; i += 997) {
		char peer[16];
		const struct report_hop *h;

		snprintf(peer, sizeof(peer), "peer%05zu", i);
		h = find_hop("n0", peer);
		assert_int_equal(h->send->bytes, 1000 + i);
		assert_true(h->send->dev_gdr_capable); /* the devices' names, read from the rest */
		assert_string_equal(h->send->rdma_port, "mlx5_0/1");
		assert_true(h->send->p99_us == 2.0);
	}
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

/* The link layer (which decides RoCE or IB commands) reaches the merged figures; others are refused. */
static void test_link_layer_is_kept_and_checked(void **state)
{
	char dir[] = "/tmp/fabriclab-report-test.XXXXXX";
	char cmd[600], hops[1024];
	const char *end = MINIMAL_HOP;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(hops, sizeof(hops), "%.*s, \"link_layer\": \"Ethernet\"}",
		 (int)strlen(end) - 1, end);
	write_minimal(dir, "n1", 1, hops);
	assert_int_equal(load(dir), 0);
	assert_int_equal(set.nhops, 1);
	assert_string_equal(set.figures[0].link_layer, "Ethernet");
	report_free(&set);
	snprintf(hops, sizeof(hops), "%.*s, \"link_layer\": \"Token Ring\"}",
		 (int)strlen(end) - 1, end);
	write_minimal(dir, "n1", 1, hops);
	expect_error(dir, "n1-1.json",
		     "hops[0].link_layer: expected \"Ethernet\", \"InfiniBand\" or null");
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

static void test_empty_folder_is_an_error(void **state)
{
	char dir[] = "/tmp/fabriclab-report-test.XXXXXX";

	(void)state;
	assert_non_null(mkdtemp(dir));
	expect_error(dir, dir, "no *.json reports");
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_healthy_ring_joins_both_views, teardown),
		cmocka_unit_test_teardown(test_verbs_take_the_senders_wire_rate, teardown),
		cmocka_unit_test_teardown(test_one_view_is_enough, teardown),
		cmocka_unit_test_teardown(test_slow_device_names_it_and_marks_its_hops, teardown),
		cmocka_unit_test_teardown(test_other_verdicts_from_fixtures, teardown),
		cmocka_unit_test_teardown(test_gdr_join_keeps_the_side_without_it, teardown),
		cmocka_unit_test_teardown(test_snapshot_and_final_count_once, teardown),
		cmocka_unit_test_teardown(test_processes_of_one_node_never_mix, teardown),
		cmocka_unit_test_teardown(test_same_view_from_two_processes_uses_timed_bytes,
					  teardown),
		cmocka_unit_test_teardown(test_rate_above_line_rate_is_a_measurement_error,
					  teardown),
		cmocka_unit_test_teardown(test_socket_hop_judged_on_its_slower_end, teardown),
		cmocka_unit_test_teardown(test_missing_ranks_and_nodes_are_named, teardown),
		cmocka_unit_test_teardown(test_bad_inputs_name_the_file, teardown),
		cmocka_unit_test_teardown(test_minimal_reports_natural_order_odd_names, teardown),
		cmocka_unit_test_teardown(test_empty_folder_is_an_error, teardown),
		cmocka_unit_test_teardown(test_large_report_streams_hops_and_keeps_the_rest, teardown),
		cmocka_unit_test_teardown(test_link_layer_is_kept_and_checked, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
