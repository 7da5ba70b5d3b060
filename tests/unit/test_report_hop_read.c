/*
 * A report's hops read from their parsed tables (tools/report/report_hop_read.h,
 * report_hop_json.h) instead of jansson's trees: every field keeps its check
 * and its message naming "hops[i].field", a syntax error in a hop names its
 * line and column, and a report whose hops the text scan cannot find (the key
 * written with an escape) is read through jansson's tree to the same hops.
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

static char dir[] = "/tmp/fabriclab-hop-read.XXXXXX";
static char path[600];

/* The fields every hop must have, as "key": value. */
static const char *const base[][2] = {
	{ "src_node", "\"n0\"" },	  { "src_dev", "\"mlx5_0\"" },	 { "dst_node", "\"n1\"" },
	{ "dst_dev", "\"mlx5_0\"" },	  { "view", "\"send\"" },		 { "bytes", "1000" },
	{ "messages", "10" },		  { "wire_seconds", "0.5" },		 { "wire_gbs", "2.0e-6" },
	{ "line_rate_gbs", "50" },	  { "active_seconds", "1.0" }, { "peer_wait_seconds", "0" },
};

/*
 * A hop of the base fields with key's value replaced by value (NULL: key
 * left out), then the fields of more (", ..." or "") and the closing brace.
 */
static void hop(FILE *f, const char *key, const char *value, const char *more)
{
	const char *sep = "{";

	for (size_t i = 0; i < sizeof(base) / sizeof(base[0]); i++) {
		bool mine = key && !strcmp(key, base[i][0]);

		if (mine && !value)
			continue;
		fprintf(f, "%s\"%s\": %s", sep, base[i][0], mine ? value : base[i][1]);
		sep = ", ";
	}
	if (key && value && !strstr(key, "\"") && !strchr(key, ',')) {
		bool in_base = false;

		for (size_t i = 0; i < sizeof(base) / sizeof(base[0]); i++)
			in_base |= !strcmp(key, base[i][0]);
		if (!in_base)
			fprintf(f, ", \"%s\": %s", key, value);
	}
	fprintf(f, "%s}", more);
}

/* A report of two hops under hops_key, the second one hop(key, value, more). */
static void write_report(const char *hops_key, const char *key, const char *value,
			 const char *more)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fprintf(f, "{\"schema\": \"fabriclab-report\", \"schema_version\": 1, \"node\": \"n0\",\n"
		"\"pid\": 7, \"transport\": \"ib\", \"devices\": [{\"name\": \"mlx5_0\", "
		"\"ptr_support\": [\"cuda\"]}],\n\"%s\": [", hops_key);
	hop(f, NULL, NULL, "");
	fputs(",\n", f);
	hop(f, key, value, more);
	fputs("]}\n", f);
	assert_int_equal(fclose(f), 0);
}

static int load(struct report_set *set)
{
	memset(set, 0, sizeof(*set));
	fl_error_clear();
	return report_add_file(set, path);
}

static void refused(const char *key, const char *value, const char *more, const char *message)
{
	struct report_set set;

	write_report("hops", key, value, more);
	if (!load(&set) || !strstr(fl_error_text(), message))
		fail_msg("%s: %s%s: got \"%s\", expected \"%s\"", key, value, more, fl_error_text(),
			 message);
	report_free(&set);
}

static int setup(void **state)
{
	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/n0-7.json", dir);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unlink(path);
	return rmdir(dir);
}

static void test_every_field_is_read(void **state)
{
	struct report_set set;
	const struct report_view *v;
	uint64_t sizes[REPORT_SIZE_BUCKETS];

	(void)state;
	write_report("hops", NULL, NULL,
		     ", \"src_rank\": 3, \"dst_rank\": 4, \"connections\": 2, \"wire_bytes\": 900, "
		     "\"wire_runs\": 5, \"\\u006futstanding_seconds\": 0.25, "
		     "\"wire_time_us\": {\"p50\": 1.5, \"p99\": 2.5, \"max\": 9, \"alone\": 4, "
		     "\"queued\": 6, \"alone_p50\": 3.5, \"queued_p50\": 1.25}, "
		     "\"size_histogram\": [[1024, 3], [1048576, 7]], \"memory\": [\"host\", \"cuda\"], "
		     "\"gdr\": true, \"link_layer\": \"InfiniBand\", \"mode\": \"profiler\", "
		     "\"comm_hash\": \"00000000000000ff\", \"gpu_wait_seconds\": 0.125, "
		     "\"transport\": \"nccl\", \"unread\": [1, {\"a\": null}]");
	assert_int_equal(load(&set), 0);
	assert_int_equal(set.files[0].nviews, 2);
	v = &set.files[0].views[1].v;
	assert_int_equal(v->src_rank, 3);
	assert_int_equal(v->dst_rank, 4);
	assert_int_equal(v->connections, 2);
	assert_int_equal(v->bytes, 1000);
	assert_int_equal(v->messages, 10);
	assert_int_equal(v->wire_bytes, 900);
	assert_int_equal(v->wire_runs, 5);
	assert_true(v->wire_gbs == 2.0e-6 && v->line_rate_gbs == 50.0 && v->wire_seconds == 0.5);
	assert_true(v->outstanding_seconds == 0.25 && v->gpu_wait_seconds == 0.125);
	assert_true(v->p50_us == 1.5 && v->p99_us == 2.5 && v->max_us == 9.0);
	assert_true(v->alone == 4 && v->queued == 6 && v->alone_p50_us == 3.5 &&
		    v->queued_p50_us == 1.25);
	report_sizes_get(v, sizes);
	assert_int_equal(sizes[10], 3);
	assert_int_equal(sizes[20], 7);
	assert_int_equal(v->mem_types, FL_PTR_HOST | FL_PTR_CUDA);
	assert_true(v->gdr && v->dev_gdr_capable && v->profiler);
	assert_string_equal(v->link_layer, "InfiniBand");
	assert_int_equal(set.files[0].views[1].key.comm_hash, 0xff);
	assert_string_equal(set.files[0].views[1].transport, "nccl");
	/* the first hop: the defaults of what it left out */
	v = &set.files[0].views[0].v;
	assert_int_equal(v->src_rank, -1);
	assert_int_equal(v->connections, 1);
	assert_int_equal(v->wire_bytes, 1000); /* 2e-6 GB/s over 0.5 s: 1000 B, all of them */
	assert_string_equal(set.files[0].views[0].transport, "ib");
	assert_false(v->profiler);
	report_free(&set);
}

static void test_every_check_keeps_its_message(void **state)
{
	(void)state;
	refused("bytes", "-1", "", "n0-7.json: hops[1].bytes: expected a non-negative integer");
	refused("bytes", NULL, "", "n0-7.json: hops[1].bytes: missing");
	refused("messages", "1.0", "", "hops[1].messages: expected a non-negative integer");
	refused("wire_bytes", "null", "", "hops[1].wire_bytes: missing");
	refused("wire_runs", "1.5", "", "hops[1].wire_runs: expected a non-negative integer");
	refused("wire_gbs", "\"fast\"", "", "hops[1].wire_gbs: expected a non-negative number");
	refused("active_seconds", "-0.5", "", "hops[1].active_seconds: expected a non-negative");
	refused("src_rank", "-2", "", "hops[1].src_rank: expected an integer");
	refused("connections", "-1", "", "hops[1].connections: expected a non-negative integer");
	refused("gdr", "1", "", "hops[1].gdr: expected true or false");
	refused("view", "\"both\"", "", "hops[1].view: expected \"send\" or \"recv\"");
	refused("src_node", "\"0123456789012345678901234567890123456789012345678\"", "",
		"hops[1].src_node: longer than 47 characters");
	refused("src_dev", "null", "", "hops[1].src_dev: missing");
	refused("dst_dev", "7", "", "hops[1].dst_dev: expected a string");
	refused("memory", "[\"gpu\"]", "", "hops[1].memory: expected only");
	refused("memory", "\"cuda\"", "", "hops[1].memory: expected an array");
	refused("size_histogram", "[[1]]", "", "hops[1].size_histogram: expected [floor_bytes");
	refused("size_histogram", "{}", "", "hops[1].size_histogram: expected an array");
	refused("wire_time_us", "3", "", "hops[1].wire_time_us: expected an object");
	refused("wire_time_us", "{\"p99\": -1}", "",
		"hops[1].wire_time_us.p99: expected a non-negative number");
	refused("link_layer", "\"Token Ring\"", "", "hops[1].link_layer: expected");
	refused("mode", "\"both\"", "", "hops[1].mode: expected \"net\" or \"profiler\"");
	refused("mode", "\"profiler\"", "", "hops[1].comm_hash: missing");
	refused("mode", "\"profiler\"", ", \"comm_hash\": \"12\"",
		"hops[1].comm_hash: expected 16 hex digits");
	refused("gpu_wait_seconds", "-1", "", "hops[1].gpu_wait_seconds: expected a non-negative");
	refused(NULL, NULL, "}, 7, {\"q\": 1", "hops[2]: expected an object");
}

/*
 * Syntax errors in a hop: the line and column in the file, and why. The hop
 * on line 4 ends its base fields at column 233.
 */
static void test_syntax_errors_name_the_place(void **state)
{
	(void)state;
	refused("gdr", "true", ", \"gdr\": false",
		"n0-7.json: truncated or not JSON (line 4, column 249: duplicate object key)");
	refused("gdr", "tru", "", "(line 4, column 243: invalid token)");
	refused("x", "\"\\q\"", "", "(line 4, column 242: invalid escape)");
	refused("x", "1e999", "", "(line 4, column 241: real number overflow)");
	refused("x", "\"\x01\"", "", "(line 4, column 242: control character 0x1 in a string)");
	refused(NULL, NULL, "} {", "(line 4, column 236: ',' or ']' expected between hops)");
}

/* "h\u006fps" is "hops": the text scan misses it, jansson's tree does not. */
static void test_escaped_hops_key_reads_the_same(void **state)
{
	const char *more = ", \"size_histogram\": [[4096, 2]], \"wire_time_us\": {\"max\": 3}";
	struct report_set plain, escaped;

	(void)state;
	write_report("hops", NULL, NULL, more);
	assert_int_equal(load(&plain), 0);
	write_report("h\\u006fps", NULL, NULL, more);
	assert_int_equal(load(&escaped), 0);
	assert_int_equal(escaped.files[0].nviews, 2);
	for (size_t i = 0; i < 2; i++) {
		struct report_file_view a = plain.files[0].views[i], b = escaped.files[0].views[i];
		uint64_t sa[REPORT_SIZE_BUCKETS], sb[REPORT_SIZE_BUCKETS];

		report_sizes_get(&a.v, sa);
		report_sizes_get(&b.v, sb);
		assert_memory_equal(sa, sb, sizeof(sa));
		a.v.size_counts = b.v.size_counts = NULL; /* the arena's pointers differ */
		assert_memory_equal(&a, &b, sizeof(a));
	}
	report_free(&plain);
	report_free(&escaped);
	write_report("h\\u006fps", "bytes", "-1", ""); /* and its checks alike */
	assert_int_not_equal(load(&escaped), 0);
	assert_non_null(strstr(fl_error_text(), "hops[1].bytes: expected a non-negative integer"));
	report_free(&escaped);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_field_is_read),
		cmocka_unit_test(test_every_check_keeps_its_message),
		cmocka_unit_test(test_syntax_errors_name_the_place),
		cmocka_unit_test(test_escaped_hops_key_reads_the_same),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
