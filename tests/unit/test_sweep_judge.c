/*
 * `fabriclab sweep` without a network: the round-robin plan (every pair once,
 * rounds disjoint, N-1 of them), the gate's plan, and the judgement on
 * synthetic matrices (one node, one link, one rail, scattered, a baseline).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tools/sweep/sweep.h"

#define BYTES 1000000
#define MAX_N 12

static struct sweep_node nodes[MAX_N];
static double times[MAX_N * MAX_N];
static struct sweep_size size = { BYTES, times };

/* n nodes on device dev, every direction at gbs. */
static struct sweep_result matrix(int n, double gbs)
{
	for (int i = 0; i < n; i++) {
		memset(&nodes[i], 0, sizeof(nodes[i]));
		snprintf(nodes[i].name, sizeof(nodes[i].name), "n%d", i);
		snprintf(nodes[i].dev, sizeof(nodes[i].dev), "mlx5_0");
	}
	for (int i = 0; i < n * n; i++)
		times[i] = i / n == i % n ? -1 : BYTES / gbs / 1e3;
	return (struct sweep_result){ .n = n, .nodes = nodes, .sizes = &size, .nsizes = 1 };
}

static void set(int n, int src, int dst, double gbs)
{
	times[src * n + dst] = BYTES / gbs / 1e3;
}

static struct sweep_opts opts(void)
{
	return (struct sweep_opts){ .threshold = 0.8, .baseline_min = 0.9 };
}

static void test_tournament(void **state)
{
	(void)state;
	for (int n = 2; n <= 9; n++) {
		struct sweep_plan p;
		int met[MAX_N][MAX_N] = { { 0 } };

		assert_int_equal(sweep_plan_tournament(&p, n), 0);
		assert_int_equal(p.nrounds, n % 2 ? n : n - 1);
		for (int r = 0; r < p.nrounds; r++) {
			int busy = 0;

			for (int a = 0; a < n; a++) {
				int b = p.peer[r * n + a];

				if (b < 0)
					continue;
				busy++;
				assert_int_not_equal(a, b);
				assert_int_equal(p.peer[r * n + b], a); /* disjoint pairs */
				met[a][b]++;
			}
			assert_int_equal(busy, n / 2 * 2); /* everyone plays but the bye */
		}
		for (int a = 0; a < n; a++) {
			for (int b = 0; b < n; b++)
				assert_int_equal(met[a][b], a != b);
		}
		sweep_plan_free(&p);
	}
}

static void test_gate_plan(void **state)
{
	int peers[] = { 1, 2, 4 };
	struct sweep_plan p;

	(void)state;
	assert_int_equal(sweep_plan_gate(&p, 6, 5, peers, 3, false), 0);
	assert_int_equal(p.nrounds, 3);
	for (int r = 0; r < 3; r++) {
		assert_int_equal(p.peer[r * 6 + 5], peers[r]);
		assert_int_equal(p.peer[r * 6 + peers[r]], 5);
		assert_int_equal(p.peer[r * 6 + 0], -1);
	}
	sweep_plan_free(&p);
	/* Without a baseline the peers also meet each other: the yardstick. */
	assert_int_equal(sweep_plan_gate(&p, 6, 5, peers, 3, true), 0);
	assert_int_equal(p.nrounds, 6);
	assert_int_equal(p.peer[3 * 6 + 5], -1);
	sweep_plan_free(&p);
}

static struct sweep_verdict judge(const struct sweep_result *res, const struct sweep_opts *o,
				  const struct sweep_baseline *base)
{
	struct sweep_verdict v;

	assert_int_equal(sweep_judge(res, o, base, &v), 0);
	return v;
}

static void test_healthy(void **state)
{
	struct sweep_result res = matrix(6, 10);
	struct sweep_opts o = opts();
	struct sweep_verdict v;

	(void)state;
	set(6, 1, 4, 8.5); /* noise, above 80% */
	v = judge(&res, &o, NULL);
	assert_int_equal(v.kind, SWEEP_NONE);
	assert_int_equal(v.nslow, 0);
	assert_int_equal(v.nentries, 30);
	sweep_verdict_free(&v);
}

static void test_node(void **state)
{
	struct sweep_result res = matrix(6, 10);
	struct sweep_opts o = opts();
	struct sweep_verdict v;

	(void)state;
	for (int i = 0; i < 6; i++) {
		if (i != 3) {
			set(6, 3, i, 5);
			set(6, i, 3, 5);
		}
	}
	v = judge(&res, &o, NULL);
	assert_int_equal(v.kind, SWEEP_NODE);
	assert_int_equal(v.node, 3);
	assert_int_equal(v.nslow, 10);
	assert_non_null(strstr(v.reason, "n3 (device mlx5_0) is in every slow pair"));
	sweep_verdict_free(&v);
}

static void test_link(void **state)
{
	struct sweep_result res = matrix(6, 10);
	struct sweep_opts o = opts();
	struct sweep_verdict v;

	(void)state;
	set(6, 1, 2, 4); /* one direction of one cable */
	v = judge(&res, &o, NULL);
	assert_int_equal(v.kind, SWEEP_LINK);
	assert_int_equal(v.node, 1);
	assert_int_equal(v.other, 2);
	sweep_verdict_free(&v);
}

static void test_rail_and_scattered(void **state)
{
	struct sweep_result res = matrix(6, 10);
	struct sweep_opts o = opts();
	struct sweep_verdict v;

	(void)state;
	/* n0..n3 on mlx5_2, slow among themselves; n4 and n5 on mlx5_0 fine. */
	for (int i = 0; i < 4; i++)
		snprintf(nodes[i].dev, sizeof(nodes[i].dev), "mlx5_2");
	for (int a = 0; a < 4; a++) {
		for (int b = 0; b < 4; b++) {
			if (a != b)
				set(6, a, b, 3);
		}
	}
	v = judge(&res, &o, NULL);
	assert_int_equal(v.kind, SWEEP_RAIL);
	assert_string_equal(v.rail, "mlx5_2");
	sweep_verdict_free(&v);
	/* The same slow pairs with one device everywhere: nothing in common to name. */
	res = matrix(6, 10);
	set(6, 0, 1, 3);
	set(6, 2, 3, 3);
	set(6, 4, 5, 3);
	v = judge(&res, &o, NULL);
	assert_int_equal(v.kind, SWEEP_SCATTERED);
	assert_int_equal(v.nslow, 3);
	sweep_verdict_free(&v);
}

/* A baseline of n nodes with every direction at gbs. */
static struct sweep_baseline full_baseline(int n, double gbs, struct sweep_base_pair *pairs)
{
	size_t k = 0;

	for (int a = 0; a < n; a++) {
		for (int b = 0; b < n; b++) {
			if (a == b)
				continue;
			snprintf(pairs[k].src, sizeof(pairs[k].src), "n%d", a);
			snprintf(pairs[k].dst, sizeof(pairs[k].dst), "n%d", b);
			pairs[k++].gbs = gbs;
		}
	}
	return (struct sweep_baseline){ .bytes = BYTES, .pairs = pairs, .npairs = k,
					.median_gbs = gbs };
}

/*
 * A sweep of one rail (FABRICLAB_SHIM_DEV=2 on every node) whose leaf switch
 * went bad: every pair is slow, so the median cannot tell; the baseline can,
 * and what every slow pair shares is that rail's device.
 */
static void test_rail_against_its_baseline(void **state)
{
	static struct sweep_base_pair pairs[MAX_N * MAX_N];
	struct sweep_baseline base = full_baseline(6, 10, pairs);
	struct sweep_result res = matrix(6, 5);
	struct sweep_opts o = opts();
	struct sweep_verdict v;

	(void)state;
	for (int i = 0; i < 6; i++)
		snprintf(nodes[i].dev, sizeof(nodes[i].dev), "mlx5_2");
	v = judge(&res, &o, &base);
	assert_int_equal(v.nslow, 30);
	assert_int_equal(v.kind, SWEEP_RAIL);
	assert_string_equal(v.rail, "mlx5_2");
	assert_non_null(strstr(v.reason, "all 30 directions of the 6 nodes on mlx5_2"));
	sweep_verdict_free(&v);
	/* Two nodes are one pair, whatever their devices: a link. */
	base = full_baseline(2, 10, pairs);
	res = matrix(2, 5);
	v = judge(&res, &o, &base);
	assert_int_equal(v.kind, SWEEP_LINK);
	sweep_verdict_free(&v);
	/* Most pairs slow but not all: no rail (scattered, or a node when one is in all). */
	base = full_baseline(6, 10, pairs);
	res = matrix(6, 5);
	set(6, 0, 1, 10);
	set(6, 2, 3, 10);
	v = judge(&res, &o, &base);
	assert_int_equal(v.kind, SWEEP_SCATTERED);
	sweep_verdict_free(&v);
}

static void test_baseline(void **state)
{
	struct sweep_base_pair pairs[] = { { "n0", "n1", 20, 0 }, { "n1", "n0", 10, 1 } };
	struct sweep_baseline base = { .bytes = BYTES, .pairs = pairs, .npairs = 2,
				       .median_gbs = 15 };
	struct sweep_result res = matrix(4, 10);
	struct sweep_opts o = opts();
	struct sweep_verdict v;

	(void)state;
	/* At the median, but half of what n0 -> n1 did before: only the baseline sees it. */
	v = judge(&res, &o, &base);
	assert_int_equal(v.nslow, 1);
	for (size_t i = 0; i < v.nentries; i++) {
		const struct sweep_entry *e = &v.entries[i];

		assert_int_equal(e->flag, e->src == 0 && e->dst == 1 ? SWEEP_BELOW_BASELINE :
					  SWEEP_FINE);
	}
	assert_true(sweep_baseline_find(&base, "N1", "n0") == 10);
	assert_true(sweep_baseline_find(&base, "n2", "n0") == 0);
	sweep_verdict_free(&v);
}

static void test_gate(void **state)
{
	struct sweep_result res = matrix(4, 10);
	struct sweep_opts o = opts();
	struct sweep_verdict v;

	(void)state;
	o.gate = true;
	snprintf(o.gate_node, sizeof(o.gate_node), "n3");
	/* The peers among themselves at 10; n3 at 7 with each: below 80% of the fleet. */
	for (int i = 0; i < 3; i++) {
		set(4, 3, i, 7);
		set(4, i, 3, 7);
	}
	v = judge(&res, &o, NULL);
	assert_true(v.reference_gbs == 10);
	assert_int_equal(v.nslow, 6);
	assert_int_equal(v.kind, SWEEP_NODE);
	assert_int_equal(v.node, 3);
	sweep_verdict_free(&v);
	o.threshold = 0.6;
	v = judge(&res, &o, NULL);
	assert_int_equal(v.nslow, 0);
	sweep_verdict_free(&v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tournament),
		cmocka_unit_test(test_gate_plan),
		cmocka_unit_test(test_healthy),
		cmocka_unit_test(test_node),
		cmocka_unit_test(test_link),
		cmocka_unit_test(test_rail_and_scattered),
		cmocka_unit_test(test_rail_against_its_baseline),
		cmocka_unit_test(test_baseline),
		cmocka_unit_test(test_gate),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
