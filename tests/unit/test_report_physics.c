/*
 * Issue 49, finding 4: a report's figures are checked against physics and what a stopped job
 * left undone is said (plugin/report/report_complete.c), never summed in silently:
 *  - completions with sizes that cannot be true (left out of the figures by the wrap, counted
 *    in the hop's totals) make the report incomplete, with the first claim;
 *  - a wire rate above 10 times the hop's line rate is flagged; one at the line is not;
 *  - requests outstanding when the final report is written, or when their connection closed,
 *    are named per hop; a periodic report with requests in flight is a running job.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "plugin/base/clock.h"
#include "plugin/report/report.h"
#include "plugin/report/report_model.h"

/* A send hop over eth0 (100 Gbit/s: 12.5 GB/s) that moved bytes in wire_ns. */
static struct fl_hop_snapshot hop(uint64_t bytes, uint64_t wire_ns)
{
	struct fl_hop_snapshot h;

	memset(&h, 0, sizeof(h));
	strcpy(h.key.src_node, "node0");
	strcpy(h.key.dst_node, "node1");
	strcpy(h.key.src_dev, "eth0");
	strcpy(h.key.dst_dev, "eth0");
	h.key.view = FL_HOP_SEND;
	h.src_rank = h.dst_rank = -1;
	h.connections = 1;
	h.mem_types = FL_PTR_HOST;
	h.t.bytes = h.t.wire_bytes = bytes;
	h.t.messages = bytes >> 19;
	h.t.sizes[fl_size_bucket(512 << 10)] = h.t.messages;
	h.wire_ns = h.active_ns = wire_ns;
	return h;
}

/* Fills r with one hop and returns its incomplete text (empty when complete). */
static const char *judged(struct fl_report *r, struct fl_hop_snapshot h, int final)
{
	static char why[FL_REPORT_WHY_LEN];
	struct fl_hop_snapshot *hops = malloc(sizeof(*hops));

	assert_non_null(hops);
	memset(r, 0, sizeof(*r));
	strcpy(r->node, "node0");
	r->pid = 1;
	r->rank = -1;
	r->final = final;
	strcpy(r->transport, "socket");
	r->ndevs = 1;
	r->devs[0] = (struct fl_report_device){ .dev = 0, .name = "eth0", .speed_mbps = 100000,
						 .ptr_support = FL_PTR_HOST };
	hops[0] = h;
	assert_int_equal(fl_report_fill(r, hops, 1, NULL), 0);
	fl_report_incomplete(r, why, sizeof(why));
	return why;
}

static void test_line_rate_bound(void **state)
{
	struct fl_report r;

	(void)state;
	/* 1 GB in 0.1 s: 10 GB/s on a 12.5 GB/s line */
	assert_string_equal(judged(&r, hop(1000000000, 100000000), 1), "");
	fl_report_release(&r);
	/* 1 GB in 1 ms: 1000 GB/s, 80 times the line */
	assert_non_null(strstr(judged(&r, hop(1000000000, 1000000), 1),
			       "hop node0/eth0 -> node1/eth0 (send): wire rate 1000.000 GB/s is more "
			       "than 10 times its line rate 12.500 GB/s"));
	fl_report_release(&r);
}

static void test_impossible_sizes_said(void **state)
{
	struct fl_hop_snapshot h = hop(1000000000, 100000000);
	struct fl_report r;

	(void)state;
	h.t.impossible = 9;
	h.t.impossible_claimed = 0x7fffffff;
	h.t.impossible_posted = 1024;
	assert_non_null(strstr(judged(&r, h, 0), "9 completion(s) with sizes that cannot be true "
				"left out of its figures (the first said 2147483647 bytes of 1024 posted)"));
	fl_report_release(&r);
	h.t.impossible_claimed = -4096;
	assert_non_null(strstr(judged(&r, h, 0), "the first said -4096 bytes"));
	fl_report_release(&r);
}

static void test_outstanding_requests_named(void **state)
{
	struct fl_hop_snapshot h = hop(1000000000, 100000000);
	struct fl_report r;

	(void)state;
	h.t.outstanding = 2;
	h.t.oldest_post_ns = fl_clock_ns() - 120000000000ULL;
	/* a periodic report of a running job: requests in flight are normal */
	assert_string_equal(judged(&r, h, 0), "");
	fl_report_release(&r);
	assert_non_null(strstr(judged(&r, h, 1), "2 request(s) outstanding when the job stopped, "
				"the oldest posted 120"));
	fl_report_release(&r);
	h.t.outstanding = 0;
	h.t.abandoned = 3;
	assert_non_null(strstr(judged(&r, h, 0),
			       "3 request(s) still outstanding when their connection closed"));
	fl_report_release(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_line_rate_bound),
		cmocka_unit_test(test_impossible_sizes_said),
		cmocka_unit_test(test_outstanding_requests_named),
	};

	fl_clock_init();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
