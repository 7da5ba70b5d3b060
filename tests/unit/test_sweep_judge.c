/*
 * `fabriclab sweep` without a network: the round-robin plan (every pair once,
 * rounds disjoint, N-1 of them), the gate's plan, and the judgement, which is
 * the diagnosis model's, on synthetic matrices: a healthy sweep names nothing;
 * one node, one link, one rail are named, with a confidence and a runner-up;
 * each pair is held to its own baseline; the gate holds its node to the fleet
 * or to the baseline; and a sweep too short to tell says so.
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
#define ITERS 40

static struct sweep_node nodes[MAX_N];
static double times[MAX_N * MAX_N], p50[MAX_N * MAX_N], p99[MAX_N * MAX_N],
	iters[MAX_N * MAX_N];
static struct sweep_size size = { BYTES, times, p50, p99, iters };

/*
 * One direction at gbs: ITERS transfers whose times spread by 2% (p99 over
 * p50), and a rate off by up to +-0.5% (as paced lab hops are), the same for
 * the same pair in every call.
 */
static void set(int n, int src, int dst, double gbs)
{
	int k = src * n + dst;
	double jitter = 1.0 + 0.005 * ((k * 7 % 11) - 5) / 5.0;

	times[k] = BYTES / (gbs * jitter) / 1e3;
	p50[k] = times[k];
	p99[k] = times[k] * 1.02;
	iters[k] = ITERS;
}

/* n nodes on device mlx5_0, every direction at gbs. */
static struct sweep_result matrix(int n, double gbs)
{
	for (int i = 0; i < n; i++) {
		memset(&nodes[i], 0, sizeof(nodes[i]));
		snprintf(nodes[i].name, sizeof(nodes[i].name), "n%d", i);
		snprintf(nodes[i].dev, sizeof(nodes[i].dev), "mlx5_0");
	}
	for (int a = 0; a < n; a++) {
		for (int b = 0; b < n; b++) {
			if (a == b)
				times[a * n + b] = -1;
			else
				set(n, a, b, gbs);
		}
	}
	return (struct sweep_result){ .n = n, .nodes = nodes, .sizes = &size, .nsizes = 1 };
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
	assert_non_null(v.model);
	return v;
}

/* Entries flagged slow: exactly those with an end at node x (x < 0: none). */
static void assert_slow_at(const struct sweep_verdict *v, int x)
{
	for (size_t i = 0; i < v->nentries; i++) {
		const struct sweep_entry *e = &v->entries[i];

		assert_int_equal(e->flag != SWEEP_FINE, e->src == x || e->dst == x);
	}
}

static void test_healthy(void **state)
{
	struct sweep_result res = matrix(6, 10);
	struct sweep_opts o = opts();
	struct sweep_verdict v;

	(void)state;
	set(6, 1, 4, 9); /* 10% below: less than the smallest effect named (20%) */
	v = judge(&res, &o, NULL);
	assert_int_equal(v.kind, SWEEP_NONE);
	assert_int_equal(v.nslow, 0);
	assert_int_equal(v.nentries, 30);
	assert_int_equal(v.nfindings, 0);
	assert_true(v.model->v.confidence >= 0.9);
	assert_non_null(strstr(v.reason, "no culprit"));
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
	assert_int_equal(v.other, -1);
	assert_int_equal(v.nslow, 10);
	assert_slow_at(&v, 3);
	/* the model's device: a node whose NIC is slow, both ways */
	assert_int_equal(v.findings[0].c->model, FL_VERDICT_DEVICE);
	assert_string_equal(v.findings[0].c->culprit, "n3/mlx5_0");
	assert_true(v.model->v.confidence >= 0.9);
	assert_true(v.model->v.runner_up.confidence < 0.1);
	assert_non_null(strstr(v.reason, "n3/mlx5_0: its hops run at 0.5"));
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
	assert_int_equal(v.nslow, 1);
	assert_int_equal(v.entries[6].src * 10 + v.entries[6].dst, 12);
	assert_int_equal(v.entries[6].flag, SWEEP_BELOW_MEDIAN);
	assert_string_equal(v.findings[0].c->culprit, "n1/mlx5_0 -> n2/mlx5_0");
	sweep_verdict_free(&v);
}

/*
 * Rail-optimised nodes: n0..n3 reach the others through mlx5_2, n4..n7 through
 * mlx5_0, and every hop with an end on mlx5_2 is slow (its leaf switch): one
 * rail explains what four devices would.
 */
static void test_rail(void **state)
{
	struct sweep_result res = matrix(8, 10);
	struct sweep_opts o = opts();
	struct sweep_verdict v;

	(void)state;
	for (int i = 0; i < 4; i++)
		snprintf(nodes[i].dev, sizeof(nodes[i].dev), "mlx5_2");
	for (int a = 0; a < 8; a++) {
		for (int b = 0; b < 8; b++) {
			if (a != b && (a < 4 || b < 4))
				set(8, a, b, 5);
		}
	}
	v = judge(&res, &o, NULL);
	assert_int_equal(v.kind, SWEEP_RAIL);
	assert_string_equal(v.rail, "mlx5_2");
	assert_int_equal(v.nslow, 56 - 12);
	sweep_verdict_free(&v);
}

/* A baseline of n nodes with every direction at gbs, ITERS transfers each. */
static struct sweep_baseline full_baseline(int n, double gbs, struct sweep_base_pair *pairs)
{
	size_t k = 0;

	for (int a = 0; a < n; a++) {
		for (int b = 0; b < n; b++) {
			if (a == b)
				continue;
			memset(&pairs[k], 0, sizeof(pairs[k]));
			snprintf(pairs[k].src, sizeof(pairs[k].src), "n%d", a);
			snprintf(pairs[k].dst, sizeof(pairs[k].dst), "n%d", b);
			snprintf(pairs[k].src_dev, sizeof(pairs[k].src_dev), "%s", nodes[a].dev);
			snprintf(pairs[k].dst_dev, sizeof(pairs[k].dst_dev), "%s", nodes[b].dev);
			pairs[k].gbs = gbs * (1.0 + 0.005 * ((int)(k * 3 % 7) - 3) / 3.0);
			pairs[k].iters = ITERS;
			pairs[k].p50_us = BYTES / pairs[k].gbs / 1e3;
			pairs[k].p99_us = pairs[k].p50_us * 1.02;
			pairs[k].index = k;
			k++;
		}
	}
	return (struct sweep_baseline){ .bytes = BYTES, .pairs = pairs, .npairs = k };
}

/*
 * A sweep of one rail (FABRICLAB_SHIM_DEV=2 on every node) whose leaf switch
 * went bad: every pair is slow, so among themselves they look alike; against
 * their baseline every one is at half, and what they share is that rail.
 */
static void test_rail_against_its_baseline(void **state)
{
	static struct sweep_base_pair pairs[MAX_N * MAX_N];
	struct sweep_result res = matrix(6, 5);
	struct sweep_opts o = opts();
	struct sweep_baseline base;
	struct sweep_verdict v;

	(void)state;
	for (int i = 0; i < 6; i++)
		snprintf(nodes[i].dev, sizeof(nodes[i].dev), "mlx5_2");
	base = full_baseline(6, 10, pairs);
	v = judge(&res, &o, &base);
	assert_int_equal(v.kind, SWEEP_RAIL);
	assert_true(v.against_baseline);
	assert_string_equal(v.rail, "mlx5_2");
	assert_int_equal(v.nslow, 30);
	assert_int_equal(v.entries[0].flag, SWEEP_BELOW_BASELINE);
	assert_int_equal(v.among->kind, SWEEP_NONE); /* among themselves: alike */
	assert_non_null(strstr(v.reason, "sweep another rail"));
	sweep_verdict_free(&v);
	/* Without the baseline the same sweep is healthy: nothing to hold it to. */
	v = judge(&res, &o, NULL);
	assert_int_equal(v.kind, SWEEP_NONE);
	sweep_verdict_free(&v);
}

/*
 * Each pair is held to its own baseline: n0 -> n1 ran at twice the others
 * before (a shorter path), now at their rate. Among themselves nothing stands
 * out; against its own past that one direction is at half.
 */
static void test_pair_against_its_baseline(void **state)
{
	static struct sweep_base_pair pairs[MAX_N * MAX_N];
	struct sweep_result res = matrix(6, 10);
	struct sweep_opts o = opts();
	struct sweep_baseline base = full_baseline(6, 10, pairs);
	struct sweep_verdict v;

	(void)state;
	pairs[0].gbs = 20; /* n0 -> n1 */
	pairs[0].p50_us /= 2;
	pairs[0].p99_us /= 2;
	v = judge(&res, &o, &base);
	assert_int_equal(v.kind, SWEEP_LINK);
	assert_true(v.against_baseline);
	assert_int_equal(v.node, 0);
	assert_int_equal(v.other, 1);
	assert_int_equal(v.nslow, 1);
	for (size_t i = 0; i < v.nentries; i++) {
		const struct sweep_entry *e = &v.entries[i];

		assert_int_equal(e->flag, e->src == 0 && e->dst == 1 ? SWEEP_BELOW_BASELINE :
					  SWEEP_FINE);
	}
	assert_true(v.entries[0].base_gbs == 20);
	sweep_verdict_free(&v);
}

static void test_baseline_find(void **state)
{
	struct sweep_base_pair pairs[] = { { .src = "n0", .dst = "n1", .gbs = 20, .index = 0 },
					   { .src = "n1", .dst = "n0", .gbs = 10, .index = 1 } };
	struct sweep_baseline base = { .bytes = BYTES, .pairs = pairs, .npairs = 2 };

	(void)state;
	assert_true(sweep_baseline_find(&base, "N1", "n0") == 10);
	assert_true(sweep_baseline_find(&base, "n2", "n0") == 0);
}

static void test_gate(void **state)
{
	struct sweep_result res = matrix(4, 10);
	struct sweep_opts o = opts();
	struct sweep_verdict v;

	(void)state;
	o.gate = true;
	snprintf(o.gate_node, sizeof(o.gate_node), "n3");
	/* The peers among themselves at 10; n3 at 7 with each: 30% below the fleet. */
	for (int i = 0; i < 3; i++) {
		set(4, 3, i, 7);
		set(4, i, 3, 7);
	}
	v = judge(&res, &o, NULL);
	assert_int_equal(v.nslow, 6);
	assert_int_equal(v.kind, SWEEP_NODE);
	assert_int_equal(v.node, 3);
	assert_slow_at(&v, 3);
	sweep_verdict_free(&v);
	/* A 40% effect is the smallest named now: 30% below is healthy within that margin. */
	o.threshold = 0.6;
	v = judge(&res, &o, NULL);
	assert_int_equal(v.nslow, 0);
	assert_int_equal(v.kind, SWEEP_NONE);
	sweep_verdict_free(&v);
}

/* The gate with a baseline measures its node's pairs only: they are held to the baseline. */
static void test_gate_against_baseline(void **state)
{
	static struct sweep_base_pair pairs[MAX_N * MAX_N];
	struct sweep_result res = matrix(4, 10);
	struct sweep_opts o = opts();
	struct sweep_baseline base = full_baseline(4, 10, pairs);
	struct sweep_verdict v;

	(void)state;
	o.gate = true;
	snprintf(o.gate_node, sizeof(o.gate_node), "n3");
	for (int a = 0; a < 3; a++) { /* the peers were not measured among themselves */
		for (int b = 0; b < 3; b++)
			times[a * 4 + b] = -1;
		set(4, 3, a, 5);
		set(4, a, 3, 5);
	}
	v = judge(&res, &o, &base);
	assert_null(v.among);
	assert_int_equal(v.kind, SWEEP_NODE);
	assert_int_equal(v.node, 3);
	assert_int_equal(v.nslow, 6);
	sweep_verdict_free(&v);
	/* Healthy: its pairs at their baseline. */
	for (int a = 0; a < 3; a++) {
		set(4, 3, a, 10);
		set(4, a, 3, 10);
	}
	v = judge(&res, &o, &base);
	assert_int_equal(v.kind, SWEEP_NONE);
	assert_int_equal(v.nslow, 0);
	sweep_verdict_free(&v);
}

/*
 * Four nodes, three transfers per pair whose times spread widely (a sweep far
 * too short on a noisy fabric: healthy pairs up to 15% apart), one pair 35%
 * low: the model cannot tell that pair from the noise and says so, with what
 * would settle it, never "none".
 */
static void test_not_enough_evidence(void **state)
{
	static const double noise[16] = { 1, 1.00, 0.85, 1.12, 0.92, 1, 1.15, 0.88,
					  1.08, 0.86, 1, 0.95, 1.13, 0.9, 1.04, 1 };
	struct sweep_result res = matrix(4, 10);
	struct sweep_opts o = opts();
	struct sweep_verdict v;

	(void)state;
	for (int k = 0; k < 16; k++) {
		if (times[k] < 0)
			continue;
		set(4, k / 4, k % 4, 10 * noise[k]);
		iters[k] = 3;
		p50[k] = times[k] * noise[(k + 5) % 16];
		p99[k] = 1.5 * p50[k];
	}
	set(4, 0, 1, 6.5);
	iters[1] = 3;
	p99[1] = 1.5 * p50[1];
	v = judge(&res, &o, NULL);
	assert_int_equal(v.kind, SWEEP_UNSURE);
	assert_string_equal(sweep_kind_name(v.kind), "not-enough-evidence");
	assert_int_equal(v.nfindings, 0);
	assert_int_equal(v.nslow, 0);
	assert_non_null(strstr(v.reason, "not enough evidence"));
	assert_non_null(strstr(v.reason, "would settle it"));
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
		cmocka_unit_test(test_rail),
		cmocka_unit_test(test_rail_against_its_baseline),
		cmocka_unit_test(test_pair_against_its_baseline),
		cmocka_unit_test(test_baseline_find),
		cmocka_unit_test(test_gate),
		cmocka_unit_test(test_gate_against_baseline),
		cmocka_unit_test(test_not_enough_evidence),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
