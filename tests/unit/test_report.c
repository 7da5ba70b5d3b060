/*
 * One process's report from hop snapshots (plugin/report_build.c and its JSON
 * and text renderings): every field docs/report-format.md lists is written
 * with its type, values derive as documented, and the configuration variables
 * are parsed as documented.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "plugin/base/error.h"
#include "plugin/report/report.h"
#include "plugin/report/report_model.h"

static struct fl_hop_snapshot hop(int view, const char *src, const char *dst, uint64_t bytes,
				  uint64_t wire_ns)
{
	struct fl_hop_snapshot h;

	memset(&h, 0, sizeof(h));
	snprintf(h.key.src_node, sizeof(h.key.src_node), "%s", src);
	snprintf(h.key.dst_node, sizeof(h.key.dst_node), "%s", dst);
	strcpy(h.key.src_dev, "eth0");
	strcpy(h.key.dst_dev, "eth0");
	h.key.view = view;
	h.src_rank = h.dst_rank = -1;
	h.connections = 2;
	h.mem_types = FL_PTR_HOST;
	h.t.bytes = bytes;
	h.t.wire_bytes = bytes;
	h.t.messages = bytes ? bytes / (512 << 10) : 0;
	h.wire_ns = wire_ns;
	h.active_ns = wire_ns * 2;
	if (bytes) {
		h.t.sizes[fl_size_bucket(512 << 10)] = h.t.messages;
		h.t.wire_times[fl_time_bucket(40000)] = h.t.messages - 1;
		h.t.wire_times[fl_time_bucket(900000)] = 1;
		h.t.wire_max_ns = 900000;
	}
	return h;
}

/* A hop slow on the wire is slow for each message too: its median message takes `times` longer. */
static void stretch_messages(struct fl_hop_snapshot *h, unsigned times)
{
	h->t.wire_times[fl_time_bucket(40000)] = 0;
	h->t.wire_times[fl_time_bucket(40000ULL * times)] = h->t.messages - 1;
}

static void base_report(struct fl_report *r)
{
	memset(r, 0, sizeof(*r));
	strcpy(r->node, "node0");
	r->pid = 4242;
	r->rank = -1;
	r->final = 1;
	r->started_unix = 1700000000.5;
	r->written_unix = 1700000100.25;
	strcpy(r->transport, "socket");
	r->ndevs = 2;
	r->devs[0] = (struct fl_report_device){ .dev = 0, .name = "eth0", .speed_mbps = 100000,
						 .pci_path = "/sys/devices/pci0000:00/0000:00:03.0",
						 .ptr_support = FL_PTR_HOST };
	r->devs[1] = (struct fl_report_device){ .dev = 1, .name = "lo", .speed_mbps = 0,
						 .ptr_support = FL_PTR_HOST };
}

static json_t *render(const struct fl_report *r)
{
	json_error_t err;
	char *text;
	size_t len;
	json_t *root;

	assert_int_equal(fl_report_json(r, &text, &len), 0);
	root = json_loads(text, 0, &err);
	if (!root)
		fail_msg("report is not JSON: %s\n%s", err.text, text);
	free(text);
	return root;
}

/* ---- the documented fields ---- */

static char *read_doc(void)
{
	static const char *const paths[] = { "docs/report-format.md", "../docs/report-format.md",
					     "../../docs/report-format.md", NULL };
	for (int i = 0; paths[i]; i++) {
		FILE *f = fopen(paths[i], "r");
		char *buf;
		size_t n;

		if (!f)
			continue;
		buf = calloc(1, 1 << 16);
		assert_non_null(buf);
		n = fread(buf, 1, (1 << 16) - 1, f);
		buf[n] = '\0';
		fclose(f);
		return buf;
	}
	fail_msg("docs/report-format.md not found from %s", getcwd(NULL, 0));
	return NULL;
}

/* The section of the doc whose heading contains `title`, up to the next heading. */
static char *section(const char *doc, const char *title)
{
	for (const char *h = strstr(doc, "\n## "); h; h = strstr(h + 1, "\n## ")) {
		size_t head = strcspn(h + 1, "\n");
		const char *end = strstr(h + 1, "\n## ");
		char heading[256];

		snprintf(heading, sizeof(heading), "%.*s", (int)head, h + 1);
		if (strstr(heading, title))
			return strndup(h, end ? (size_t)(end - h) : strlen(h));
	}
	fail_msg("no section \"%s\" in docs/report-format.md", title);
	return NULL;
}

/* Every `name` in the first column of a table row must be a member of obj. */
static int check_fields(const char *sec, json_t *obj, const char *where)
{
	int checked = 0;

	for (const char *line = sec; (line = strstr(line, "\n| `")); line++) {
		const char *cell_end = strchr(line + 3, '|');

		for (const char *p = line + 3; p && p < cell_end; ) {
			const char *a = strchr(p, '`'), *b = a ? strchr(a + 1, '`') : NULL;
			char name[64];

			if (!a || !b || a > cell_end)
				break;
			snprintf(name, sizeof(name), "%.*s", (int)(b - a - 1), a + 1);
			if (!json_object_get(obj, name))
				fail_msg("%s: documented field \"%s\" is not in the report", where,
					 name);
			checked++;
			p = b + 1;
		}
	}
	return checked;
}

static void test_every_documented_field_is_written(void **state)
{
	struct fl_report r;
	struct fl_hop_snapshot *h = calloc(2, sizeof(*h));
	char *doc = read_doc(), *sec;
	json_t *root;

	(void)state;
	assert_non_null(h);
	base_report(&r);
	h[0] = hop(FL_HOP_SEND, "node0", "node1", 1000000000, 100000000);
	h[1] = hop(FL_HOP_RECV, "node3", "node0", 1000000000, 200000000);
	assert_int_equal(fl_report_fill(&r, h, 2, NULL), 0);
	root = render(&r);
	sec = section(doc, "Top level");
	assert_true(check_fields(sec, root, "top level") >= 14);
	free(sec);
	sec = section(doc, "`devices[]`");
	assert_true(check_fields(sec, json_array_get(json_object_get(root, "devices"), 0),
				 "devices[]") >= 6);
	free(sec);
	sec = section(doc, "`hops[]`");
	assert_true(check_fields(sec, json_array_get(json_object_get(root, "hops"), 0), "hops[]") >=
		    20);
	free(sec);
	sec = section(doc, "`verdict`");
	assert_true(check_fields(sec, json_object_get(root, "verdict"), "verdict") >= 11);
	free(sec);
	json_decref(root);
	fl_report_release(&r);
	free(doc);
}

static double num(json_t *obj, const char *key)
{
	json_t *v = json_object_get(obj, key);

	if (!json_is_number(v))
		fail_msg("\"%s\" is not a number", key);
	return json_number_value(v);
}

static void test_values_follow_the_definitions(void **state)
{
	struct fl_report r;
	struct fl_hop_snapshot *h = calloc(3, sizeof(*h));
	json_t *root, *hops, *send, *recv, *dev0, *dev1, *hist, *verdict;

	(void)state;
	assert_non_null(h);
	base_report(&r);
	h[0] = hop(FL_HOP_SEND, "node0", "node1", 1000000000, 100000000);
	h[0].src_rank = 3; /* from NCCL's tag: this process's rank */
	h[0].dst_rank = 4;
	h[0].mem_types = FL_PTR_HOST | FL_PTR_CUDA;
	h[1] = hop(FL_HOP_RECV, "node5", "node0", 1000000000, 200000000);
	h[1].src_rank = 2;
	h[1].t.peer_wait_ns = 1500000000;
	h[2] = hop(FL_HOP_RECV, "node6", "node0", 0, 0);
	assert_int_equal(fl_report_fill(&r, h, 3, NULL), 0);
	root = render(&r);
	assert_string_equal(json_string_value(json_object_get(root, "schema")), "fabriclab-report");
	assert_int_equal(json_integer_value(json_object_get(root, "schema_version")), 1);
	assert_int_equal(json_integer_value(json_object_get(root, "pid")), 4242);
	assert_int_equal(json_integer_value(json_object_get(root, "rank")), 3);
	assert_true(json_is_true(json_object_get(root, "final")));
	assert_true(num(root, "written_unix") == 1700000100.25);
	assert_int_equal(json_array_size(json_object_get(root, "injected")), 0);
	dev0 = json_array_get(json_object_get(root, "devices"), 0);
	assert_true(num(dev0, "line_rate_gbs") == 12.5);
	assert_string_equal(json_string_value(json_object_get(dev0, "pci_path")),
			    "/sys/devices/pci0000:00/0000:00:03.0");
	dev1 = json_array_get(json_object_get(root, "devices"), 1);
	assert_true(json_is_null(json_object_get(dev1, "pci_path")));
	hops = json_object_get(root, "hops");
	assert_int_equal(json_array_size(hops), 3);
	send = json_array_get(hops, 0);
	recv = json_array_get(hops, 1);
	assert_string_equal(json_string_value(json_object_get(send, "view")), "send");
	assert_string_equal(json_string_value(json_object_get(recv, "view")), "recv");
	assert_int_equal(json_integer_value(json_object_get(recv, "dst_rank")), 3);
	assert_int_equal(json_integer_value(json_object_get(recv, "src_rank")), 2);
	assert_true(num(send, "wire_gbs") == 10.0);
	assert_true(num(send, "wire_seconds") == 0.1);
	assert_true(num(send, "pct_line_rate") == 80.0);
	assert_true(num(send, "active_seconds") == 0.2);
	assert_true(num(recv, "peer_wait_seconds") == 1.5);
	assert_true(json_is_true(json_object_get(send, "gdr")));
	assert_int_equal(json_array_size(json_object_get(send, "memory")), 2);
	assert_string_equal(json_string_value(json_array_get(json_object_get(send, "memory"), 1)),
			    "cuda");
	assert_true(json_is_false(json_object_get(recv, "gdr")));
	hist = json_object_get(send, "size_histogram");
	assert_int_equal(json_array_size(hist), 1);
	assert_int_equal(json_integer_value(json_array_get(json_array_get(hist, 0), 0)), 512 << 10);
	assert_int_equal(json_integer_value(json_array_get(json_array_get(hist, 0), 1)), 1907);
	/* p50 in the 40 us bucket, p99 too (1 slow message of 1907), max exact. */
	assert_true(num(json_object_get(send, "wire_time_us"), "p50") > 39.0 &&
		    num(json_object_get(send, "wire_time_us"), "p50") < 41.3);
	assert_true(num(json_object_get(send, "wire_time_us"), "max") == 900.0);
	/* The slowest hop is judged from the receiving end for sockets: node5 -> node0. */
	assert_int_equal(r.slowest, 1);
	/* node0 -> node1 registered CUDA memory, node5 -> node0 host memory only: uneven GDR. */
	verdict = json_object_get(root, "verdict");
	assert_int_equal(r.verdict.kind, FL_VERDICT_GDR);
	assert_string_equal(json_string_value(json_object_get(verdict, "kind")), "gdr");
	json_decref(root);
	fl_report_release(&r);
}

static void test_link_verdict_names_its_hop(void **state)
{
	struct fl_report r;
	struct fl_hop_snapshot *h = calloc(4, sizeof(*h));
	json_t *root, *v, *vh;
	char line[512];

	(void)state;
	assert_non_null(h);
	base_report(&r);
	h[0] = hop(FL_HOP_RECV, "node1", "node0", 4000000000, 400000000);
	h[1] = hop(FL_HOP_RECV, "node2", "node0", 4000000000, 410000000);
	h[2] = hop(FL_HOP_RECV, "node3", "node0", 4000000000, 1600000000);
	h[3] = hop(FL_HOP_RECV, "node4", "node0", 4000000000, 395000000);
	stretch_messages(&h[2], 4);
	assert_int_equal(fl_report_fill(&r, h, 4, NULL), 0);
	assert_int_equal(r.verdict.kind, FL_VERDICT_LINK);
	root = render(&r);
	v = json_object_get(root, "verdict");
	assert_string_equal(json_string_value(json_object_get(v, "kind")), "link");
	vh = json_object_get(v, "hop");
	assert_string_equal(json_string_value(json_object_get(vh, "src_node")), "node3");
	assert_string_equal(json_string_value(json_object_get(vh, "dst_node")), "node0");
	/*
	 * 4 GB each: node3's hop took 1.6 s (2.5 GB/s); the others 0.4, 0.41 and 0.395 s
	 * (10, 9.756 and 10.127 GB/s), whose fitted level is about 10 GB/s: ratio 0.25.
	 */
	assert_true(fabs(num(v, "median_gbs") - 10.0) < 0.2);
	assert_true(fabs(num(v, "ratio") - 0.25) < 0.01);
	assert_true(json_array_size(json_object_get(v, "commands")) > 0);
	fl_report_summary_line(&r, "/x/node0-4242.json", line, sizeof(line));
	assert_string_equal(line, "fabriclab: node0 slowest hop node3/eth0 -> node0/eth0 "
				  "2.500 GB/s (link), report /x/node0-4242.json");
	json_decref(root);
	fl_report_release(&r);
}

/* A socket receiver that timed nothing leaves the judging to the senders' view. */
static void test_untimed_receivers_fall_back_to_the_send_view(void **state)
{
	struct fl_report r;
	struct fl_hop_snapshot *h = calloc(4, sizeof(*h));

	(void)state;
	assert_non_null(h);
	base_report(&r);
	h[0] = hop(FL_HOP_RECV, "node1", "node0", 4000000000, 0);
	h[1] = hop(FL_HOP_SEND, "node0", "node1", 4000000000, 400000000);
	h[2] = hop(FL_HOP_SEND, "node0", "node2", 4000000000, 1600000000);
	h[3] = hop(FL_HOP_SEND, "node0", "node3", 4000000000, 395000000);
	stretch_messages(&h[2], 4);
	assert_int_equal(fl_report_fill(&r, h, 4, NULL), 0);
	assert_true(r.figs[1].wire_gbs > 9.9 && r.figs[1].wire_gbs < 10.1);
	assert_true(r.figs[0].wire_gbs == 0.0);
	assert_int_equal(r.verdict.kind, FL_VERDICT_LINK);
	assert_string_equal(r.verdict.node, "");
	assert_string_equal(r.figs[r.verdict.hop].dst_node, "node2");
	assert_non_null(strstr(r.verdict.reason, "as senders timed them"));
	fl_report_release(&r);

	/* With one timed receive hop, receivers are judged again and senders are not. */
	h = calloc(2, sizeof(*h));
	assert_non_null(h);
	base_report(&r);
	h[0] = hop(FL_HOP_RECV, "node1", "node0", 4000000000, 400000000);
	h[1] = hop(FL_HOP_SEND, "node0", "node1", 4000000000, 400000000);
	assert_int_equal(fl_report_fill(&r, h, 2, NULL), 0);
	assert_true(r.figs[0].wire_gbs > 9.9);
	assert_true(r.figs[1].wire_gbs == 0.0);
	assert_null(strstr(r.verdict.reason, "as senders timed them"));
	fl_report_release(&r);
}

static void test_text_has_the_hop_table_and_verdict(void **state)
{
	struct fl_report r;
	struct fl_hop_snapshot *h = calloc(1, sizeof(*h));
	char *text, line[512];
	size_t len;

	(void)state;
	assert_non_null(h);
	base_report(&r);
	h[0] = hop(FL_HOP_SEND, "node0", "node1", 1000000000, 100000000);
	assert_int_equal(fl_report_fill(&r, h, 1, NULL), 0);
	assert_int_equal(fl_report_text(&r, &text, &len), 0);
	assert_int_equal(strlen(text), len);
	assert_non_null(strstr(text, "fabriclab report: node node0, pid 4242"));
	assert_non_null(strstr(text, "node0/eth0 -> node1/eth0 send"));
	assert_non_null(strstr(text, "1.0 GB"));
	assert_non_null(strstr(text, "   10.000"));
	assert_non_null(strstr(text, "\nverdict: none"));
	free(text);
	fl_report_summary_line(&r, "/r.json", line, sizeof(line));
	assert_string_equal(line, "fabriclab: node0 slowest hop node0/eth0 -> node1/eth0 "
				  "10.000 GB/s (none), report /r.json");
	fl_report_release(&r);
	base_report(&r);
	assert_int_equal(fl_report_fill(&r, calloc(1, sizeof(*h)), 0, NULL), 0);
	fl_report_summary_line(&r, "/r.json", line, sizeof(line));
	assert_string_equal(line, "fabriclab: node0 no traffic measured (none), report /r.json");
	fl_report_release(&r);
}

/* A ring, pending list or table that overflowed is counted and said; a healthy run says nothing. */
static void test_incomplete_data_is_said(void **state)
{
	struct fl_report r;
	struct fl_hop_snapshot *h = calloc(1, sizeof(*h));
	char *text;
	size_t len;
	json_t *root, *jh;

	(void)state;
	assert_non_null(h);
	base_report(&r);
	h[0] = hop(FL_HOP_SEND, "node0", "node1", 1000000000, 100000000);
	assert_int_equal(fl_report_fill(&r, h, 1, NULL), 0);
	root = render(&r);
	assert_true(json_is_true(json_object_get(root, "complete")));
	assert_true(json_is_null(json_object_get(root, "incomplete")));
	jh = json_array_get(json_object_get(root, "hops"), 0);
	assert_int_equal(json_integer_value(json_object_get(jh, "ring_overflows")), 0);
	assert_int_equal(json_integer_value(json_object_get(jh, "union_bridges")), 0);
	json_decref(root);
	assert_int_equal(fl_report_text(&r, &text, &len), 0);
	assert_null(strstr(text, "incomplete"));
	free(text);
	fl_report_release(&r);

	h = calloc(1, sizeof(*h));
	assert_non_null(h);
	base_report(&r);
	h[0] = hop(FL_HOP_SEND, "node0", "node1", 1000000000, 100000000);
	h[0].t.ring_overflows = 3;
	h[0].t.union_bridges = 2;
	h[0].t.wire_bridged_ns = 2000;
	h[0].t.active_bridged_ns = 5000;
	r.devs_left_out = 4;
	r.ranks_left_out = 1;
	/* The profiler role's losses, two ranks summed, and the process's unhomed ops. */
	r.nranks_held = 2;
	r.ranks[0].prof = (struct fl_report_prof_counts){ .dropped_ops = 5, .dropped_links = 2,
							  .dropped_steps = 7 };
	r.ranks[1].prof = (struct fl_report_prof_counts){ .dropped_ops = 1,
							  .abandoned_steps = 4 };
	r.prof_unhomed_ops = 9;
	assert_int_equal(fl_report_fill(&r, h, 1, NULL), 0);
	root = render(&r);
	assert_true(json_is_false(json_object_get(root, "complete")));
	/* Every reason at once, said whole. */
	assert_string_equal(json_string_value(json_object_get(root, "incomplete")),
			    "3 interval ring overflow(s); 2 bridging(s) by the report thread; "
			    "wire time overstated by at most 0.000002 s, active time by at most "
			    "0.000005 s; 4 device(s) past the report's 32 not listed; 1 rank(s) "
			    "past the report's 64 not named; 6 profiler op(s) not measured (2 past "
			    "the links cap); 7 profiler step(s) not measured (no free stats slot); 4 "
			    "profiler step(s) lost (slot reused before their stop); 9 relayed (PXN) "
			    "op(s) not measured (no context on their proxy thread)");
	jh = json_array_get(json_object_get(root, "hops"), 0);
	assert_int_equal(json_integer_value(json_object_get(jh, "ring_overflows")), 3);
	assert_int_equal(json_integer_value(json_object_get(jh, "union_bridges")), 2);
	assert_true(json_number_value(json_object_get(jh, "active_error_seconds")) == 5e-6);
	json_decref(root);
	assert_int_equal(fl_report_text(&r, &text, &len), 0);
	assert_non_null(strstr(text, "\nincomplete data (figures are bounds, not exact): 3 interval "
				     "ring overflow(s)"));
	free(text);
	fl_report_release(&r);
}

/* Past the report's tables: ranks past FL_REPORT_MAX_RANKS are counted; a "*" hop is said. */
static void test_tables_that_fill_are_counted(void **state)
{
	struct fl_report_rank out[FL_REPORT_MAX_RANKS];
	struct fl_report r;
	struct fl_hop_snapshot *h = calloc(1, sizeof(*h));
	int left = -1;
	char why[512];

	(void)state;
	assert_non_null(h);
	for (int i = 0; i < FL_REPORT_MAX_RANKS + 6; i++)
		fl_report_note_rank(0x77, i, FL_REPORT_MAX_RANKS + 6, 1, "big");
	assert_int_equal(fl_report_ranks(out, FL_REPORT_MAX_RANKS, &left), FL_REPORT_MAX_RANKS);
	assert_int_equal(left, 6);
	assert_int_equal(fl_report_ranks(out, 10, &left), 10);
	assert_int_equal(left, 6 + FL_REPORT_MAX_RANKS - 10);
	base_report(&r);
	h[0] = hop(FL_HOP_SEND, FL_HOP_OTHER, FL_HOP_OTHER, 1000, 100);
	h[0].connections = 3;
	assert_int_equal(fl_report_fill(&r, h, 1, NULL), 0);
	assert_true(fl_report_incomplete(&r, why, sizeof(why)));
	assert_string_equal(why, "3 connection(s) past the 256-hop table counted together as hop *");
	fl_report_release(&r);
}

static void test_configuration_from_the_environment(void **state)
{
	struct fl_report_config cfg;
	char cwd[4096], want[4200];

	(void)state;
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	unsetenv("FABRICLAB_REPORT");
	unsetenv("FABRICLAB_REPORT_DIR");
	unsetenv("FABRICLAB_REPORT_INTERVAL");
	assert_int_equal(fl_report_config_from_env(&cfg), 0);
	assert_int_equal(cfg.mode, FL_REPORT_FULL);
	assert_int_equal(cfg.interval_s, 10);
	assert_int_equal(cfg.live_window_ms, 500);
	snprintf(want, sizeof(want), "%s/fabriclab-reports", cwd);
	assert_string_equal(cfg.dir, want);
	setenv("FABRICLAB_REPORT", "brief", 1);
	setenv("FABRICLAB_REPORT_DIR", "/abs/dir", 1);
	setenv("FABRICLAB_REPORT_INTERVAL", "0", 1);
	assert_int_equal(fl_report_config_from_env(&cfg), 0);
	assert_int_equal(cfg.mode, FL_REPORT_BRIEF);
	assert_int_equal(cfg.interval_s, 0);
	assert_string_equal(cfg.dir, "/abs/dir");
	setenv("FABRICLAB_REPORT", "OFF", 1);
	assert_int_equal(fl_report_config_from_env(&cfg), 0);
	assert_int_equal(cfg.mode, FL_REPORT_OFF);
	setenv("FABRICLAB_REPORT", "verbose", 1);
	assert_int_equal(fl_report_config_from_env(&cfg), FL_ERR_USAGE);
	setenv("FABRICLAB_REPORT", "full", 1);
	setenv("FABRICLAB_REPORT_INTERVAL", "-1", 1);
	assert_int_equal(fl_report_config_from_env(&cfg), FL_ERR_USAGE);
	setenv("FABRICLAB_REPORT_INTERVAL", "5s", 1);
	assert_int_equal(fl_report_config_from_env(&cfg), FL_ERR_USAGE);
	unsetenv("FABRICLAB_REPORT_INTERVAL");
	setenv("FABRICLAB_LIVE_WINDOW_MS", "250", 1);
	assert_int_equal(fl_report_config_from_env(&cfg), 0);
	assert_int_equal(cfg.live_window_ms, 250);
	setenv("FABRICLAB_LIVE_WINDOW_MS", "99", 1); /* faster than the drains can judge */
	assert_int_equal(fl_report_config_from_env(&cfg), FL_ERR_USAGE);
	assert_non_null(strstr(fl_error_text(), "FABRICLAB_LIVE_WINDOW_MS"));
	assert_non_null(strstr(fl_error_text(), "from 100 to 60000"));
	setenv("FABRICLAB_LIVE_WINDOW_MS", "0.5s", 1);
	assert_int_equal(fl_report_config_from_env(&cfg), FL_ERR_USAGE);
	unsetenv("FABRICLAB_LIVE_WINDOW_MS");
	unsetenv("FABRICLAB_REPORT");
	unsetenv("FABRICLAB_REPORT_DIR");
	unsetenv("FABRICLAB_REPORT_INTERVAL");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_documented_field_is_written),
		cmocka_unit_test(test_values_follow_the_definitions),
		cmocka_unit_test(test_link_verdict_names_its_hop),
		cmocka_unit_test(test_untimed_receivers_fall_back_to_the_send_view),
		cmocka_unit_test(test_text_has_the_hop_table_and_verdict),
		cmocka_unit_test(test_incomplete_data_is_said),
		cmocka_unit_test(test_tables_that_fill_are_counted),
		cmocka_unit_test(test_configuration_from_the_environment),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
