/*
 * `fabriclab report`'s outputs on the committed fixtures: the text table, the
 * merged JSON (read back with jansson), the node_exporter textfile, the SVG,
 * and the atomic replacement of output files. Run from the repository root.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "plugin/base/error.h"
#include "tools/report/report.h"

#define FIXTURES "tests/fixtures/reports/"

static struct report_set set;
static char *text;

static void load(const char *folder)
{
	struct fl_verdict_params p;

	memset(&set, 0, sizeof(set));
	fl_verdict_default_params(&p);
	assert_int_equal(report_add_path(&set, folder), 0);
	assert_int_equal(report_merge(&set, &p), 0);
}

static void render(int (*print)(const struct report_set *, FILE *))
{
	size_t len;
	FILE *f = open_memstream(&text, &len);

	assert_non_null(f);
	assert_int_equal(print(&set, f), 0);
	fclose(f);
}

static int teardown(void **state)
{
	(void)state;
	report_free(&set);
	free(text);
	text = NULL;
	return 0;
}

static void test_text_names_verdict_culprits_and_commands(void **state)
{
	(void)state;
	load(FIXTURES "slow_device8");
	render(report_print_text);
	assert_non_null(strstr(text, "verdict: device  n2/eth0  ratio 0.40  speedup 1.92x  (confidence 1.00; next: "));
	assert_non_null(
		strstr(text, "\n* n1/eth0 -> n2/eth0      4.20      4.83   33.6%    2.0 GiB"));
	assert_non_null(strstr(text, "\n* n2/eth0 -> n3/eth0 "));
	assert_non_null(strstr(text, "\n  n3/eth0 -> n4/eth0 "));
	assert_non_null(strstr(text, "8 from 8 processes on 8 nodes, 8 judged"));
	assert_non_null(strstr(text, "to confirm on the machines:\n  on n2: ethtool eth0"));
	assert_non_null(strstr(text, "all_reduce_perf -b 1G -e 8G -f 2 -g 1"));
}

static void test_text_of_a_healthy_run(void **state)
{
	(void)state;
	load(FIXTURES "send_only4");
	render(report_print_text);
	assert_true(!strncmp(text, "verdict: none  (confidence ", 27));
	assert_null(strstr(text, "\n* "));
	assert_null(strstr(text, "to confirm"));
	/* The missing receiver view shows as "-". */
	assert_non_null(strstr(text, "n1/eth0 -> n2/eth0         -     11.96"));
}

static json_t *parse_text(void)
{
	json_error_t err;
	json_t *root = json_loads(text, 0, &err);

	if (!root)
		fail_msg("merged JSON does not parse: %s (line %d)", err.text, err.line);
	return root;
}

static void test_json_has_both_views_verdict_and_files(void **state)
{
	json_t *root, *hops, *hop, *verdict;

	(void)state;
	load(FIXTURES "slow_device8");
	render(report_print_json);
	root = parse_text();
	assert_string_equal(json_string_value(json_object_get(root, "schema")),
			    REPORT_MERGED_SCHEMA);
	assert_int_equal(json_integer_value(json_object_get(root, "schema_version")), 1);
	assert_int_equal(json_array_size(json_object_get(root, "files")), 8);
	hops = json_object_get(root, "hops");
	assert_int_equal(json_array_size(hops), 8);
	hop = json_array_get(hops, 0);
	assert_string_equal(json_string_value(json_object_get(hop, "src_node")), "n1");
	assert_string_equal(json_string_value(json_object_get(hop, "wire_view")), "recv");
	assert_float_equal(json_real_value(json_object_get(hop, "wire_gbs")), 4.2, 1e-6);
	assert_true(json_is_true(json_object_get(hop, "culprit")));
	assert_float_equal(
		json_real_value(json_object_get(json_object_get(hop, "send"), "wire_gbs")), 4.83,
		1e-6);
	assert_string_equal(
		json_string_value(json_object_get(json_object_get(hop, "recv"), "file")),
		FIXTURES "slow_device8/n2-1001.json");
	verdict = json_object_get(root, "verdict");
	assert_string_equal(json_string_value(json_object_get(verdict, "kind")), "device");
	assert_string_equal(json_string_value(json_object_get(verdict, "node")), "n2");
	assert_string_equal(json_string_value(json_object_get(verdict, "dev")), "eth0");
	assert_string_equal(
		json_string_value(json_object_get(json_object_get(verdict, "hop"), "dst_node")),
		"n2");
	assert_true(json_array_size(json_object_get(verdict, "commands")) >= 4);
	/* findings[]: the one anomaly, with culprit, evidence and cost. */
	hop = json_array_get(json_object_get(root, "findings"), 0);
	assert_int_equal(json_array_size(json_object_get(root, "findings")), 1);
	assert_string_equal(json_string_value(json_object_get(hop, "kind")), "device");
	assert_string_equal(json_string_value(json_object_get(hop, "culprit")), "n2/eth0");
	assert_non_null(strstr(json_string_value(json_object_get(hop, "evidence")), "n2/eth0"));
	/* its hops' wire is 51% of their busy span: fixed, the ring saves that share of 1 - 0.40 */
	assert_float_equal(json_real_value(json_object_get(hop, "cost")), 1.0 - 1.0 / 1.92, 0.01);
	assert_int_equal(json_array_size(json_object_get(root, "missing_ranks")), 0);
	json_decref(root);
}

static void test_json_one_view_is_null(void **state)
{
	json_t *root, *hop;

	(void)state;
	load(FIXTURES "send_only4");
	render(report_print_json);
	root = parse_text();
	hop = json_array_get(json_object_get(root, "hops"), 0);
	assert_true(json_is_null(json_object_get(hop, "recv")));
	assert_true(json_is_null(json_object_get(json_object_get(root, "verdict"), "hop")));
	assert_int_equal(
		json_array_size(json_object_get(json_object_get(root, "verdict"), "commands")), 0);
	json_decref(root);
}

static void test_prom_textfile(void **state)
{
	(void)state;
	load(FIXTURES "slow_device8");
	render(report_emit_prom);
	assert_non_null(strstr(text, "# TYPE fabriclab_hop_wire_bytes_per_second gauge\n"));
	assert_non_null(strstr(text, "fabriclab_hop_wire_bytes_per_second{src_node=\"n1\","
				     "src_dev=\"eth0\",dst_node=\"n2\",dst_dev=\"eth0\","
				     "view=\"recv\"} 4.2e+09\n"));
	assert_non_null(strstr(text, "view=\"send\"} 4.83e+09\n"));
	assert_non_null(strstr(text, "# TYPE fabriclab_hop_bytes_total counter\n"));
	assert_non_null(strstr(text, "fabriclab_hop_bytes_total{src_node=\"n8\",src_dev=\"eth0\","
				     "dst_node=\"n1\",dst_dev=\"eth0\"} 2147483648\n"));
	assert_non_null(strstr(text, "# HELP fabriclab_verdict "));
	assert_non_null(
		strstr(text, "fabriclab_verdict{kind=\"device\",node=\"n2\",dev=\"eth0\"} 1\n"));
	assert_non_null(strstr(text, "fabriclab_finding_cost{kind=\"device\",culprit=\"n2/eth0\","
				     "node=\"n2\",dev=\"eth0\"} 0.47"));
}

static void test_svg_is_standalone_and_marks_the_culprit(void **state)
{
	(void)state;
	load(FIXTURES "slow_device8");
	render(report_emit_svg);
	assert_true(!strncmp(text, "<?xml", 5));
	assert_non_null(strstr(text, "<svg xmlns=\"http://www.w3.org/2000/svg\""));
	assert_non_null(strstr(text, "</svg>\n"));
	assert_null(strstr(text, "href"));
	assert_null(strstr(text, "<script"));
	assert_null(strstr(text, "@import"));
	assert_non_null(strstr(text, "fabriclab verdict: device n2/eth0"));
	/* Two red arrows, for the two hops through n2's NIC, with their rates. */
	assert_non_null(strstr(text, "fill=\"#d62728\" font-weight=\"bold\">4.20</text>"));
	assert_non_null(strstr(text, "<title>n1 -&gt; n2: 4.20 GB/s (1 hop)</title>"));
	assert_non_null(strstr(text, "stroke=\"#d62728\" stroke-width=\"3.5\""));
}

static bool temp_files_left(const char *dir)
{
	struct dirent *e;
	bool found = false;
	DIR *d = opendir(dir);

	assert_non_null(d);
	while ((e = readdir(d)))
		found |= strstr(e->d_name, ".tmp.") != NULL;
	closedir(d);
	return found;
}

static int failing_emit(const struct report_set *s, FILE *out)
{
	(void)s;
	fputs("half of a file", out);
	return fl_fail(FL_ERR_SYSTEM, "disk full (simulated)");
}

static void test_atomic_write_keeps_the_old_file_on_failure(void **state)
{
	char dir[] = "/tmp/fabriclab-report-test.XXXXXX";
	char path[256], buf[64] = "";
	FILE *f;

	(void)state;
	load(FIXTURES "healthy4");
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/fabriclab.prom", dir);
	assert_int_equal(report_write_prom(&set, path), 0);
	assert_int_equal(access(path, R_OK), 0);
	assert_int_equal(report_write_atomic(path, failing_emit, &set), FL_ERR_SYSTEM);
	f = fopen(path, "r");
	assert_non_null(f);
	assert_non_null(fgets(buf, sizeof(buf), f));
	fclose(f);
	assert_true(!strncmp(buf, "# HELP fabriclab_hop_wire_bytes_per_second", 42));
	assert_false(temp_files_left(dir));
	/* A folder that does not exist: an error naming the path, nothing written. */
	assert_int_equal(report_write_svg(&set, "/nonexistent-dir/x.svg"), FL_ERR_SYSTEM);
	assert_non_null(strstr(fl_error_text(), "/nonexistent-dir/x.svg"));
	unlink(path);
	assert_int_equal(rmdir(dir), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_text_names_verdict_culprits_and_commands, teardown),
		cmocka_unit_test_teardown(test_text_of_a_healthy_run, teardown),
		cmocka_unit_test_teardown(test_json_has_both_views_verdict_and_files, teardown),
		cmocka_unit_test_teardown(test_json_one_view_is_null, teardown),
		cmocka_unit_test_teardown(test_prom_textfile, teardown),
		cmocka_unit_test_teardown(test_svg_is_standalone_and_marks_the_culprit, teardown),
		cmocka_unit_test_teardown(test_atomic_write_keeps_the_old_file_on_failure,
					  teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
