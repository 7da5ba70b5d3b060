/*
 * A request's own time without the round trip (plugin/verdict/verdict_observe.c,
 * request_times): a verbs write is done when its acknowledgement is back, so a
 * request that found its connection idle pays the round trip and one queued
 * behind the one before does not. A slow hop spaces out every other hop's
 * requests, which then all pay it: their rate over busy time drops with the
 * culprit's, and the speedup of fixing it read from rates alone falls short.
 *
 * The figures are those of one lab run (2026-12-07 22:17 UTC):
 *   fabriclab lab -n 6 --steps 6 --grad 2M --compute 100 --fabric ib --like xdr \
 *       --channels 4 --hw-fault 'latency:node=node3,add=10us'
 * against its healthy twin (the same without --hw-fault): the all-reduce took
 * 812.1 ms against 201.7 ms, 4.03x. Healthy hops read 32.6-38.7% of line with
 * most requests alone at 17.3 ms (queued ones 9.2 ms, as in the twin, where
 * 114 of 120 queued); node3's two hops 13.8-13.9%, 114 of 120 queued at
 * 38.8 ms. Here node k is n(k+1): node3 is n4, the ring n1 -> n2 -> ... -> n6 -> n1.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "plugin/base/fl_types.h"
#include "plugin/verdict/verdict.h"

#define NODES 6
#define LINE_GBS (250e6 / 8 / 1e9) /* the preset's emulated port: 250 Mb/s */
#define REQUEST 174761ULL
#define MESSAGES 120ULL
#define MEASURED_SPEEDUP (812.1 / 201.7)

static struct fl_hop_figures hops[NODES];

struct lab_hop {
	double pct_line;
	uint64_t alone, queued;
	double alone_p50_us, queued_p50_us, p50_us, p99_us;
};

/* The six hops of the run, n1 -> n2 first. */
static const struct lab_hop run[NODES] = {
	{ 34.5, 100, 20, 17302, 9175, 17302, 17302 },
	{ 38.7, 74, 46, 17302, 9175, 17302, 17302 },
	{ 13.9, 6, 114, 81789, 38797, 38797, 81789 }, /* into n4 and out of it */
	{ 13.8, 6, 114, 81789, 38797, 38797, 81789 },
	{ 32.6, 114, 6, 17302, 9175, 17302, 17302 },
	{ 33.6, 107, 13, 17302, 9699, 17302, 17302 },
};

static void set_hops(bool split)
{
	double span = (double)(REQUEST * MESSAGES) / (0.139 * LINE_GBS * 1e9);

	for (int i = 0; i < NODES; i++) {
		struct fl_hop_figures *h = &hops[i];
		const struct lab_hop *r = &run[i];

		memset(h, 0, sizeof(*h));
		snprintf(h->src_node, sizeof(h->src_node), "n%d", i + 1);
		snprintf(h->dst_node, sizeof(h->dst_node), "n%d", (i + 1) % NODES + 1);
		snprintf(h->src_dev, sizeof(h->src_dev), "mlx5_0");
		snprintf(h->dst_dev, sizeof(h->dst_dev), "mlx5_0");
		snprintf(h->transport, sizeof(h->transport), "ib");
		h->line_rate_gbs = LINE_GBS;
		h->bytes = REQUEST * MESSAGES;
		h->messages = MESSAGES;
		h->typical_request = REQUEST;
		h->wire_gbs = r->pct_line / 100.0 * LINE_GBS;
		h->wire_seconds = (double)h->bytes / (h->wire_gbs * 1e9);
		h->wire_p50_us = r->p50_us;
		h->wire_p99_us = r->p99_us;
		if (split) {
			h->wire_alone = r->alone;
			h->wire_queued = r->queued;
			h->alone_p50_us = r->alone_p50_us;
			h->queued_p50_us = r->queued_p50_us;
		}
		h->active_seconds = span; /* every hop busy the whole all-reduce */
		h->send_outstanding_seconds = span;
		h->send_wait_seconds = 0.002 * span;
		h->mem_types = FL_PTR_CUDA;
		h->gdr_capable = 1;
	}
}

static void judge(bool split, struct fl_verdict *v)
{
	struct fl_verdict_params p;

	set_hops(split);
	fl_verdict_default_params(&p);
	fl_verdict_compute(hops, NODES, &p, v);
}

/* Told which requests paid the round trip, the cost of n4's device is its queued requests'. */
static void test_speedup_of_a_latency_fault(void **state)
{
	struct fl_verdict v;
	double queued_ratio = 38797.0 / 9175.0;

	(void)state;
	judge(true, &v);
	assert_int_equal(v.kind, FL_VERDICT_DEVICE);
	assert_string_equal(v.node, "n4");
	assert_float_equal(v.speedup, queued_ratio, 0.05 * queued_ratio);
	assert_float_equal(v.speedup, MEASURED_SPEEDUP, 0.15 * MEASURED_SPEEDUP);
}

/* Without the split (older reports), the same hops: found, but the speedup from rates. */
static void test_without_the_split_rates_alone(void **state)
{
	struct fl_verdict v;

	(void)state;
	judge(false, &v);
	assert_int_equal(v.kind, FL_VERDICT_DEVICE);
	assert_string_equal(v.node, "n4");
	assert_true(v.speedup < 0.75 * MEASURED_SPEEDUP);
}

/* The healthy twin: nearly every request queued, none slow. */
static void test_healthy_twin_is_none(void **state)
{
	struct fl_verdict v;
	struct fl_verdict_params p;

	(void)state;
	set_hops(true);
	for (int i = 0; i < NODES; i++) {
		struct fl_hop_figures *h = &hops[i];

		h->wire_gbs = 0.568 * LINE_GBS;
		h->wire_seconds = (double)h->bytes / (h->wire_gbs * 1e9);
		h->wire_alone = 6;
		h->wire_queued = 114;
		h->alone_p50_us = 17302;
		h->queued_p50_us = 9175;
		h->wire_p50_us = 9175;
		h->wire_p99_us = 17302;
	}
	fl_verdict_default_params(&p);
	fl_verdict_compute(hops, NODES, &p, &v);
	assert_int_equal(v.kind, FL_VERDICT_NONE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_speedup_of_a_latency_fault),
		cmocka_unit_test(test_without_the_split_rates_alone),
		cmocka_unit_test(test_healthy_twin_is_none),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
