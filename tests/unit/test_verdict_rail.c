/*
 * The rail rule on synthetic hop sets of a rail-optimised cluster (device k
 * of every node on leaf switch k): one device slow is that device, the same
 * device name slow on most nodes is its rail, and healthy rails are none.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "plugin/base/fl_types.h"
#include "plugin/verdict/verdict.h"

#define MAX_HOPS 256
#define GB 1e9
#define FAST 10.0

static struct fl_hop_figures hops[MAX_HOPS];
static size_t nhops;
/* Each node's device rate on each rail, in GB/s: a hop runs at its slower end. */
static double rate[16][4];

static void add_hop(int src, int dst, int rail, double noise)
{
	struct fl_hop_figures *h = &hops[nhops++];
	double gbs = (rate[src][rail] < rate[dst][rail] ? rate[src][rail] : rate[dst][rail]) *
		     noise;

	memset(h, 0, sizeof(*h));
	snprintf(h->src_node, sizeof(h->src_node), "node%d", src);
	snprintf(h->dst_node, sizeof(h->dst_node), "node%d", dst);
	snprintf(h->src_dev, sizeof(h->src_dev), "mlx5_%d", rail);
	snprintf(h->dst_dev, sizeof(h->dst_dev), "mlx5_%d", rail);
	snprintf(h->transport, sizeof(h->transport), "ib");
	h->line_rate_gbs = 12.5;
	h->bytes = 1ULL << 30;
	h->messages = 1024;
	h->wire_gbs = gbs;
	h->wire_seconds = (double)h->bytes / (gbs * GB);
	h->wire_p50_us = 1024.0 * 1024.0 / (gbs * 1e3);
	h->active_seconds = 1.0;
	h->peer_wait_seconds = 0.1;
	h->mem_types = FL_PTR_CUDA;
	h->gdr_capable = 1;
}

static void all_fast(int nodes, int rails)
{
	nhops = 0;
	for (int n = 0; n < nodes; n++) {
		for (int k = 0; k < rails; k++)
			rate[n][k] = FAST;
	}
}

/* A few percent of spread, as paced lab hops show. */
static double noise(size_t i)
{
	static const double spread[] = { 1.0, 0.99, 1.01, 0.985, 1.015, 0.995, 1.005 };

	return spread[i % (sizeof(spread) / sizeof(spread[0]))];
}

/* One ring per rail, as NCCL's rail-aligned channels run: node n's device k to node n+1's. */
static void rings(int nodes, int rails)
{
	for (int k = 0; k < rails; k++) {
		for (int n = 0; n < nodes; n++)
			add_hop(n, (n + 1) % nodes, k, noise(nhops));
	}
}

/* Every ordered pair on one rail, as an all-to-all or a sweep of that rail moves. */
static void mesh(int nodes, int rail)
{
	for (int a = 0; a < nodes; a++) {
		for (int b = 0; b < nodes; b++) {
			if (a != b)
				add_hop(a, b, rail, noise(nhops));
		}
	}
}

static struct fl_verdict judge(void)
{
	struct fl_verdict v;

	fl_verdict_compute(hops, nhops, NULL, &v);
	return v;
}

static int count_kind(const struct fl_verdict *v, enum fl_verdict_kind kind)
{
	int n = 0;

	for (int i = 0; i < v->nfindings; i++)
		n += v->findings[i].kind == kind;
	return n;
}

static void test_healthy_rails_are_none(void **state)
{
	struct fl_verdict v;

	(void)state;
	all_fast(8, 4);
	rings(8, 4);
	v = judge();
	assert_int_equal(v.kind, FL_VERDICT_NONE);
	assert_int_equal(v.nfindings, 0);
}

static void test_one_rail_slow_everywhere_is_rail(void **state)
{
	char culprit[64], commands[2048];
	struct fl_verdict v;

	(void)state;
	all_fast(16, 4);
	for (int n = 0; n < 16; n++)
		rate[n][2] = FAST / 2;
	rings(16, 4);
	v = judge();
	assert_int_equal(v.kind, FL_VERDICT_RAIL);
	assert_string_equal(v.dev, "mlx5_2");
	assert_string_equal(v.node, "");
	assert_int_equal(v.nfindings, 1); /* no device or link of the rail named besides */
	assert_non_null(strstr(v.reason, "rail mlx5_2: the hops on this device name run"));
	assert_non_null(strstr(v.reason, "suspect the leaf switch of that rail"));
	assert_true(v.ratio > 0.45 && v.ratio < 0.55);
	assert_true(v.speedup > 1.0 && v.speedup <= 1.0 / v.ratio + 1e-9);
	fl_finding_culprit(&v.findings[0], hops, culprit, sizeof(culprit));
	assert_string_equal(culprit, "rail mlx5_2");
	assert_true(fl_verdict_commands(&v, hops, nhops, commands, sizeof(commands)) >= 3);
	assert_non_null(strstr(commands, "ibnetdiscover | grep -B2 -A10 'mlx5_2'"));
}

static void test_rail_slow_on_most_nodes_in_a_mesh(void **state)
{
	struct fl_verdict v;

	(void)state;
	/* 6 of 8 nodes' mlx5_1 slow: hops between the two healthy ones run at speed. */
	all_fast(8, 2);
	for (int n = 0; n < 6; n++)
		rate[n][1] = FAST * 0.6;
	rings(8, 1);
	mesh(8, 1);
	v = judge();
	assert_int_equal(v.kind, FL_VERDICT_RAIL);
	assert_string_equal(v.dev, "mlx5_1");

}

static void test_one_slow_device_is_a_device(void **state)
{
	struct fl_verdict v;

	(void)state;
	all_fast(8, 4);
	rate[5][2] = FAST / 2;
	rings(8, 4);
	v = judge();
	assert_int_equal(v.kind, FL_VERDICT_DEVICE);
	assert_string_equal(v.node, "node5");
	assert_string_equal(v.dev, "mlx5_2");
	assert_int_equal(count_kind(&v, FL_VERDICT_RAIL), 0);
}

static void test_two_slow_devices_of_one_rail_are_devices(void **state)
{
	struct fl_verdict v;

	(void)state;
	all_fast(8, 2);
	rate[1][1] = FAST / 2;
	rate[5][1] = FAST / 2;
	rings(8, 2);
	v = judge();
	assert_int_equal(count_kind(&v, FL_VERDICT_RAIL), 0);
	assert_int_equal(count_kind(&v, FL_VERDICT_DEVICE), 2);
}

static void test_too_few_nodes_or_one_rail_is_no_rail(void **state)
{
	struct fl_verdict v;

	(void)state;
	/* Two nodes cannot tell a switch from two NICs. */
	all_fast(2, 2);
	rate[0][1] = rate[1][1] = FAST / 2;
	rings(2, 2);
	v = judge();
	assert_int_equal(count_kind(&v, FL_VERDICT_RAIL), 0);
	/* One rail slow with no other rail to compare with: nothing stands out. */
	all_fast(8, 1);
	for (int n = 0; n < 8; n++)
		rate[n][0] = FAST / 2;
	rings(8, 1);
	v = judge();
	assert_int_equal(v.kind, FL_VERDICT_NONE);
}

static void test_rail_and_a_device_on_another_rail(void **state)
{
	struct fl_verdict v;

	(void)state;
	all_fast(8, 3);
	for (int n = 0; n < 8; n++)
		rate[n][0] = FAST / 2;
	rate[3][2] = FAST * 0.7;
	rings(8, 3);
	v = judge();
	assert_int_equal(v.kind, FL_VERDICT_RAIL);
	assert_string_equal(v.dev, "mlx5_0");
	assert_int_equal(count_kind(&v, FL_VERDICT_RAIL), 1);
	assert_int_equal(count_kind(&v, FL_VERDICT_DEVICE), 1);
	for (int i = 0; i < v.nfindings; i++) {
		if (v.findings[i].kind == FL_VERDICT_DEVICE) {
			assert_string_equal(v.findings[i].node, "node3");
			assert_string_equal(v.findings[i].dev, "mlx5_2");
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_healthy_rails_are_none),
		cmocka_unit_test(test_one_rail_slow_everywhere_is_rail),
		cmocka_unit_test(test_rail_slow_on_most_nodes_in_a_mesh),
		cmocka_unit_test(test_one_slow_device_is_a_device),
		cmocka_unit_test(test_two_slow_devices_of_one_rail_are_devices),
		cmocka_unit_test(test_too_few_nodes_or_one_rail_is_no_rail),
		cmocka_unit_test(test_rail_and_a_device_on_another_rail),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
