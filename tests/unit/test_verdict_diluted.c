/*
 * Where round trips dilute every hop's rate (lab --like xdr/ndr: a 512 KiB step
 * on the wire is about twice the round trip, and a ring's hops send one
 * request at a time), a port trained down to 85% moved its two hops' rates by
 * only 2-5% while their median request took 1.09-1.14x the others'. The hop
 * sets below are the hop tables of those lab runs (2026-12-06, `fabriclab lab
 * --like xdr|ndr -n 8 --channels 2 -s 10 -g 4M --hw-fault
 * 'downgrade:node=nodeK,rate=85%'` from scripts/lab_matrix.sh; ports at
 * 250 Mbit/s), and of a healthy run whose median requests sit one histogram
 * step apart. Before verdict_diluted.c the two downgrades read `none`. Also: 4-rank
 * rings, where two hops are all a device is compared with, and a pause storm's tail.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "plugin/verdict/verdict.h"

#define LINE_GBS 0.03125 /* 250 Mbit/s */
#define NODES 8

static struct fl_hop_figures hops[NODES];

static size_t nodes = NODES;

/* Hop k -> k+1 at pct% of line, its median request p50 us, 70 MiB of 512 KiB requests. */
static void lab_ring_of(size_t n, const double *pct, const double *p50)
{
	nodes = n;
	for (size_t i = 0; i < n; i++) {
		struct fl_hop_figures *h = &hops[i];

		memset(h, 0, sizeof(*h));
		snprintf(h->src_node, sizeof(h->src_node), "node%zu", i);
		snprintf(h->dst_node, sizeof(h->dst_node), "node%zu", (i + 1) % n);
		snprintf(h->src_dev, sizeof(h->src_dev), "mlx5_0");
		snprintf(h->dst_dev, sizeof(h->dst_dev), "mlx5_0");
		snprintf(h->transport, sizeof(h->transport), "ib");
		snprintf(h->link_layer, sizeof(h->link_layer), "InfiniBand");
		h->line_rate_gbs = LINE_GBS;
		h->bytes = 70ull << 20;
		h->messages = 140;
		h->typical_request = 512 << 10;
		h->wire_gbs = LINE_GBS * pct[i] / 100.0;
		h->wire_seconds = (double)h->bytes / (h->wire_gbs * 1e9);
		h->wire_p50_us = p50[i];
		/* about one request in flight, little waiting for the receiver (the tables: 1-2%) */
		h->send_outstanding_seconds = 1.2 * h->wire_seconds;
		h->send_wait_seconds = 0.01 * h->wire_seconds;
		h->mem_types = FL_PTR_CUDA;
		h->gdr_capable = 1;
	}
}

static void lab_ring(const double *pct, const double *p50)
{
	lab_ring_of(NODES, pct, p50);
}

static void judge(struct fl_verdict *v)
{
	struct fl_verdict_params p;

	fl_verdict_default_params(&p);
	fl_verdict_compute(hops, nodes, &p, v);
}

static void test_xdr_port_at_85_percent(void **state)
{
	static const double pct[NODES] = { 67.4, 65.4, 63.5, 66.2, 67.5, 66.4, 66.0, 66.6 };
	static const double p50[NODES] = { 26738.7, 29884.4, 29884.4, 26738.7,
					   26738.7, 26738.7, 26738.7, 26738.7 };
	struct fl_verdict v;

	(void)state;
	lab_ring(pct, p50);
	judge(&v);
	assert_int_equal(v.kind, FL_VERDICT_DEVICE);
	assert_string_equal(v.node, "node2");
	assert_non_null(strstr(v.reason, "diluted by round trips"));
	/* 16.8 ms on the wire, the others' round trip 10.0 ms: 19.9 ms of wire, 0.84x */
	assert_true(v.ratio > 0.80 && v.ratio < 0.88);
}

static void test_ndr_port_at_85_percent(void **state)
{
	static const double pct[NODES] = { 77.3, 77.4, 78.0, 75.3, 74.3, 77.5, 76.4, 76.5 };
	static const double p50[NODES] = { 22544.4, 22544.4, 22544.4, 25690.1,
					   24641.5, 22544.4, 22544.4, 22544.4 };
	struct fl_verdict v;

	(void)state;
	lab_ring(pct, p50);
	judge(&v);
	assert_int_equal(v.kind, FL_VERDICT_DEVICE);
	assert_string_equal(v.node, "node4");
}

/* Healthy (xdr, 8 ranks): median requests one histogram step apart are not a fault. */
static void test_healthy_one_step_apart(void **state)
{
	static const double pct[NODES] = { 78.2, 79.8, 79.9, 78.7, 78.8, 78.9, 78.5, 79.4 };
	static const double p50[NODES] = { 25690.1, 26738.7, 26738.7, 26738.7,
					   26738.7, 26738.7, 26738.7, 27787.3 };
	struct fl_verdict v;

	(void)state;
	lab_ring(pct, p50);
	judge(&v);
	assert_int_equal(v.kind, FL_VERDICT_NONE);
	/* two adjacent hops (one device) one step up, both slightly slower: still none */
	hops[3].wire_p50_us = hops[4].wire_p50_us = 27787.3;
	hops[3].wire_gbs *= 0.99;
	hops[4].wire_gbs *= 0.99;
	judge(&v);
	assert_int_equal(v.kind, FL_VERDICT_NONE);
}

/* Where hops run near their line rate, the median request alone names nothing. */
static void test_not_diluted_keeps_the_rate_rule(void **state)
{
	static const double pct[NODES] = { 97.0, 96.5, 95.8, 97.2, 97.5, 96.9, 97.1, 96.6 };
	static const double p50[NODES] = { 17000.0, 19000.0, 19000.0, 17000.0,
					   17000.0, 17000.0, 17000.0, 17000.0 };
	struct fl_verdict v;

	(void)state;
	lab_ring(pct, p50);
	judge(&v);
	assert_int_equal(v.kind, FL_VERDICT_NONE);
}

/*
 * 4 ranks: the device's two hops against two others (the matrix of 2026-12-06, ndr and xdr,
 * 1 and 2 channels, a port at 85%): each read none before small_reference_low.
 */
static void test_four_ranks_port_at_85_percent(void **state)
{
	static const struct {
		double pct[4], p50[4];
		const char *node;
	} runs[] = {
		{ { 74.4, 81.1, 85.5, 74.6 }, { 45088.8, 21495.8, 40894.5, 57671.7 }, "node0" },
		{ { 78.8, 84.3, 90.8, 79.1 }, { 40894.5, 23593.0, 34603.0, 53477.4 }, "node0" },
		{ { 76.1, 67.7, 67.3, 71.8 }, { 45088.8, 63963.1, 47185.9, 27787.3 }, "node2" },
		{ { 75.1, 66.4, 66.6, 70.9 }, { 49283.1, 63963.1, 45088.8, 26738.7 }, "node2" },
		{ { 74.3, 74.0, 78.2, 85.3 }, { 55574.5, 40894.5, 26738.7, 42991.6 }, "node1" },
	};
	struct fl_verdict v;

	(void)state;
	for (size_t r = 0; r < sizeof(runs) / sizeof(runs[0]); r++) {
		lab_ring_of(4, runs[r].pct, runs[r].p50);
		judge(&v);
		assert_int_equal(v.kind, FL_VERDICT_DEVICE);
		assert_string_equal(v.node, runs[r].node);
	}
}

/* 4 ranks, pause storm on node3 (ndr, 1 channel): its outgoing hop kept its median request. */
static void test_four_ranks_pause_storm(void **state)
{
	static const double pct[4] = { 83.0, 84.3, 63.5, 68.4 };
	static const double p50[4] = { 21495.8, 36700.2, 98566.1, 22544.4 };
	static const double p99[4] = { 40894.5, 73400.3, 138412.0, 81788.9 };
	struct fl_verdict v;

	(void)state;
	lab_ring_of(4, pct, p50);
	for (size_t i = 0; i < 4; i++)
		hops[i].wire_p99_us = p99[i];
	judge(&v);
	assert_int_equal(v.kind, FL_VERDICT_DEVICE);
	assert_string_equal(v.node, "node3");
}

/* 4 ranks, two adjacent hops slowest in rate but not in median request: none. */
static void test_four_ranks_rate_alone_names_nothing(void **state)
{
	static const double pct[4] = { 78.0, 77.5, 84.0, 86.0 };
	static const double p50[4] = { 26738.7, 26738.7, 27787.3, 26738.7 };
	struct fl_verdict v;

	(void)state;
	lab_ring_of(4, pct, p50);
	judge(&v);
	assert_int_equal(v.kind, FL_VERDICT_NONE);
}

/*
 * A pause storm (40 ms of every 100 ms) on node2's port, ndr, 8 ranks, 1 channel: both its hops
 * at 0.80x, the outgoing one's median request unchanged, its slowest requests 1.65x the others'.
 * Read `link node1 -> node2` before DEVICE_TAIL_STRETCH.
 */
static void test_pause_storm_stretches_the_tail(void **state)
{
	static const double pct[NODES] = { 80.1, 64.4, 63.9, 80.5, 79.9, 79.9, 79.7, 79.2 };
	static const double p50[NODES] = { 21495.8, 53477.4, 21495.8, 21495.8,
					   21495.8, 21495.8, 21495.8, 21495.8 };
	static const double p99[NODES] = { 36700.2, 77594.6, 63963.1, 38797.3,
					   38797.3, 38797.3, 33030.1, 34603.0 };
	struct fl_verdict v;

	(void)state;
	lab_ring(pct, p50);
	for (size_t i = 0; i < NODES; i++)
		hops[i].wire_p99_us = p99[i];
	judge(&v);
	assert_int_equal(v.kind, FL_VERDICT_DEVICE);
	assert_string_equal(v.node, "node2");
}

/*
 * The round trip out of a downgrade to 50% (xdr, 8 ranks, node3): each request carries about
 * 10 ms of lab time beside its 16.8 ms on the wire; by rate the port's hops read 47% and the
 * others 63-74%, with the round trip out 47% and 100%. The hop feeding the port sends in
 * bursts behind the stalled ring (96 busy stretches for 224 requests, in the run of
 * 2026-12-06 10:05, the port's hops 8, the others 174-213): by rate and by its median request
 * it read 74%, less a round trip per stretch 92%. Here with 140 requests a hop.
 */
static void test_round_trip_out(void **state)
{
	static const double pct[NODES] = { 66.2, 74.3, 46.9, 46.8, 63.2, 63.6, 64.5, 65.3 };
	static const double p50[NODES] = { 26738.7, 34603.0, 276824.1, 69206.0,
					   26738.7, 26738.7, 26738.7, 26738.7 };
	static const uint64_t runs[NODES] = { 109, 60, 5, 5, 133, 128, 122, 114 };
	static const double flat[NODES] = { 97.0, 96.5, 95.8, 97.2, 97.5, 96.9, 97.1, 96.6 };
	double rtt;

	(void)state;
	lab_ring(pct, p50);
	rtt = fl_verdict_round_trip_us(hops, NODES);
	assert_float_equal(rtt, 26738.7 - (512 << 10) / (LINE_GBS * 1e3), 0.1);
	assert_float_equal(fl_verdict_line_share_rtt_out(&hops[0], rtt), 1.0, 0.01);
	assert_float_equal(fl_verdict_line_share_rtt_out(&hops[1], rtt), 0.743, 0.001);
	assert_float_equal(fl_verdict_line_share_rtt_out(&hops[2], rtt), 0.469, 0.001);
	assert_float_equal(fl_verdict_line_share_rtt_out(&hops[3], rtt), 0.468, 0.001);
	/* with their busy stretches */
	for (size_t i = 0; i < NODES; i++)
		hops[i].wire_runs = runs[i];
	assert_float_equal(fl_verdict_line_share_rtt_out(&hops[0], rtt), 1.0, 0.01);
	assert_float_equal(fl_verdict_line_share_rtt_out(&hops[1], rtt), 0.917, 0.002);
	assert_float_equal(fl_verdict_line_share_rtt_out(&hops[2], rtt), 0.474, 0.002);
	assert_float_equal(fl_verdict_line_share_rtt_out(&hops[3], rtt), 0.473, 0.002);
	for (size_t i = 4; i < NODES; i++)
		assert_in_range(100 * fl_verdict_line_share_rtt_out(&hops[i], rtt), 90, 101);
	/* rates near the line: no round trip to take out */
	lab_ring(flat, p50);
	assert_float_equal(fl_verdict_round_trip_us(hops, NODES), 0.0, 0.0);
	assert_float_equal(fl_verdict_line_share_rtt_out(&hops[0], 0.0), 0.0, 0.0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_xdr_port_at_85_percent),
		cmocka_unit_test(test_ndr_port_at_85_percent),
		cmocka_unit_test(test_healthy_one_step_apart),
		cmocka_unit_test(test_not_diluted_keeps_the_rate_rule),
		cmocka_unit_test(test_four_ranks_port_at_85_percent),
		cmocka_unit_test(test_four_ranks_rate_alone_names_nothing),
		cmocka_unit_test(test_four_ranks_pause_storm),
		cmocka_unit_test(test_pause_storm_stretches_the_tail),
		cmocka_unit_test(test_round_trip_out),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
