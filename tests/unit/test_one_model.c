/*
 * One model (issue 44): the merged report (fl_verdict_compute), the live
 * warnings (fl_report_live_judge) and the sweep (sweep_judge_hops) reach the
 * same culprit on the same hops. A ring of 8 at 1 GB/s lines, each hop moving
 * 64 MiB in 1 MiB requests per window: one link at half speed, then one device
 * (both its hops) at half speed, then healthy. The live judge sees the same
 * figures as two windows of one process holding every hop.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "plugin/report/report_live.h"
#include "tools/sweep/sweep.h"

#define NODES 8
#define LINE_MBPS 8000 /* 1 GB/s */
#define REQUEST (1ULL << 20)
#define WINDOW_BYTES (64ULL << 20)

static double rate[NODES]; /* hop i: n<i> -> n<i+1>, its share of the line */
static struct fl_hop_figures figs[NODES];
static struct fl_hop_snapshot snaps[NODES];
static struct fl_report rep;
static int slow_told[NODES];

static void name(char *dst, size_t len, int node)
{
	assert_true(snprintf(dst, len, "n%d", node) < (int)len);
}

/* Hop i as the report and the sweep take it: one window's bytes at its rate. */
static void figures(int i)
{
	struct fl_hop_figures *h = &figs[i];
	double p50 = (double)REQUEST / (rate[i] * 1e3); /* us: bytes per ns is GB/s */

	memset(h, 0, sizeof(*h));
	name(h->src_node, sizeof(h->src_node), i);
	name(h->dst_node, sizeof(h->dst_node), (i + 1) % NODES);
	snprintf(h->src_dev, sizeof(h->src_dev), "eth0");
	snprintf(h->dst_dev, sizeof(h->dst_dev), "eth0");
	snprintf(h->transport, sizeof(h->transport), "socket");
	h->line_rate_gbs = 1.0;
	h->bytes = WINDOW_BYTES;
	h->messages = WINDOW_BYTES / REQUEST;
	h->typical_request = REQUEST;
	h->wire_gbs = rate[i];
	h->wire_seconds = (double)WINDOW_BYTES / (rate[i] * 1e9);
	h->wire_p50_us = p50;
	h->wire_p99_us = 1.1 * p50;
	h->mem_types = FL_PTR_HOST;
}

/* The same window added to hop i's snapshot, as its receiver timed it. */
static void window(int i)
{
	struct fl_hop_snapshot *h = &snaps[i];
	uint64_t ns = (uint64_t)((double)WINDOW_BYTES / rate[i]), requests = WINDOW_BYTES / REQUEST;

	h->key.view = FL_HOP_RECV;
	name(h->key.src_node, sizeof(h->key.src_node), i);
	name(h->key.dst_node, sizeof(h->key.dst_node), (i + 1) % NODES);
	snprintf(h->key.src_dev, sizeof(h->key.src_dev), "eth0");
	snprintf(h->key.dst_dev, sizeof(h->key.dst_dev), "eth0");
	h->t.bytes += WINDOW_BYTES;
	h->t.wire_bytes += WINDOW_BYTES;
	h->t.messages += requests;
	h->t.sizes[fl_size_bucket(REQUEST)] += requests;
	h->t.wire_times[fl_time_bucket((uint64_t)((double)REQUEST / rate[i]))] += requests;
	h->wire_ns += ns;
	h->active_ns += ns;
}

static void notify(enum fl_live_state state, const struct fl_live_finding *f)
{
	if (state != FL_LIVE_APPEARED)
		return;
	for (int i = 0; i < NODES; i++) {
		char src[8];

		name(src, sizeof(src), i);
		if (!strcmp(f->key.src_node, src))
			slow_told[i]++;
	}
}

static int setup(void **state)
{
	(void)state;
	fl_report_live_reset();
	memset(&rep, 0, sizeof(rep));
	memset(snaps, 0, sizeof(snaps));
	memset(slow_told, 0, sizeof(slow_told));
	snprintf(rep.transport, sizeof(rep.transport), "socket");
	rep.ndevs = 1;
	rep.devs[0].speed_mbps = LINE_MBPS;
	rep.hops = snaps;
	rep.nhops = NODES;
	for (int i = 0; i < NODES; i++)
		rate[i] = 1.0;
	return 0;
}

/* The three judges on the ring as it stands: which hops each finds slow. */
static void judge(struct fl_verdict *report, struct sweep_model *sweep)
{
	static const struct fl_live_params live = { .window_s = 0.5,
						    .low_windows = FL_LIVE_LOW_WINDOWS };

	for (int i = 0; i < NODES; i++)
		figures(i);
	fl_verdict_compute(figs, NODES, NULL, report);
	memset(sweep, 0, sizeof(*sweep));
	sweep_judge_hops(figs, NODES, 0.95, sweep);
	assert_int_equal(sweep->v.kind, report->kind); /* the very same verdict */
	for (int w = 0; w < FL_LIVE_LOW_WINDOWS; w++) {
		for (int i = 0; i < NODES; i++)
			window(i);
		fl_report_live_judge(&rep, &live, 1000.0 + w, (uint64_t)w * 500000000ULL, notify);
	}
}

static void test_a_link(void **state)
{
	struct fl_verdict v;
	struct sweep_model s;

	(void)state;
	rate[3] = 0.5; /* n3 -> n4 */
	judge(&v, &s);
	assert_int_equal(v.kind, FL_VERDICT_LINK);
	assert_int_equal(v.hop, 3);
	assert_int_equal(s.kind, SWEEP_LINK);
	assert_string_equal(s.culprits[0].node, "n3");
	assert_string_equal(s.culprits[0].other, "n4");
	for (int i = 0; i < NODES; i++)
		assert_int_equal(slow_told[i], i == 3); /* live: that hop alone */
}

static void test_a_device(void **state)
{
	struct fl_verdict v;
	struct sweep_model s;

	(void)state;
	rate[2] = rate[3] = 0.5; /* into n3 and out of it */
	judge(&v, &s);
	assert_int_equal(v.kind, FL_VERDICT_DEVICE);
	assert_string_equal(v.node, "n3");
	assert_int_equal(s.kind, SWEEP_NODE);
	assert_string_equal(s.culprits[0].node, "n3");
	for (int i = 0; i < NODES; i++)
		assert_int_equal(slow_told[i], i == 2 || i == 3);
}

static void test_healthy(void **state)
{
	struct fl_verdict v;
	struct sweep_model s;

	(void)state;
	judge(&v, &s);
	assert_int_equal(v.kind, FL_VERDICT_NONE);
	assert_int_equal(s.kind, SWEEP_NONE);
	for (int i = 0; i < NODES; i++)
		assert_int_equal(slow_told[i], 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_a_link, setup),
		cmocka_unit_test_setup(test_a_device, setup),
		cmocka_unit_test_setup(test_healthy, setup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
