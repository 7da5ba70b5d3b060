/*
 * The topology's shared elements as the model's switch candidates
 * (plugin/verdict/verdict_topology.h, verdict_candidates.c): the hops through
 * one spine slow alike are that spine, named with the element's name; the
 * same hops without a topology are not a switch; an element whose hops are
 * not the slow ones changes nothing.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "plugin/verdict/verdict.h"
#include "plugin/verdict/verdict_topology.h"

#define NODES 8
#define MAX_NODES 16
#define GB 1e9

static struct fl_hop_figures hops[MAX_NODES];

/* A ring of n over verbs, every hop timed by 1024 requests of 1 MiB, node k -> k+1 at gbs[k]. */
static void ring_of(const double *gbs, int n)
{
	for (int i = 0; i < n; i++) {
		struct fl_hop_figures *h = &hops[i];
		double request_us;

		memset(h, 0, sizeof(*h));
		snprintf(h->src_node, sizeof(h->src_node), "node%d", i);
		snprintf(h->dst_node, sizeof(h->dst_node), "node%d", (i + 1) % n);
		snprintf(h->src_dev, sizeof(h->src_dev), "mlx5_0");
		snprintf(h->dst_dev, sizeof(h->dst_dev), "mlx5_0");
		snprintf(h->transport, sizeof(h->transport), "ib");
		h->line_rate_gbs = 50.0;
		h->bytes = 1ULL << 30;
		h->messages = 1024;
		h->typical_request = 1 << 20;
		h->wire_gbs = gbs[i];
		h->wire_seconds = (double)h->bytes / (gbs[i] * GB);
		request_us = (double)h->typical_request / (gbs[i] * 1e3);
		h->wire_p50_us = request_us;
		h->wire_p99_us = 1.1 * request_us;
		h->send_outstanding_seconds = h->wire_seconds;
		h->send_wait_seconds = 0.01 * h->wire_seconds;
	}
}

static void ring(const double *gbs)
{
	ring_of(gbs, NODES);
}

/*
 * Two leaves of four nodes under one spine: the ring crosses the spine on
 * node3 -> node4 and node7 -> node0; each leaf holds the three hops between
 * its nodes.
 */
static struct fl_shared_element els[3];
static size_t members[] = { 3, 7, 0, 1, 2, 4, 5, 6 };
static const struct fl_hop_elements fabric = { els, 3, members, 8, "fat-tree:leaves=2,spines=1",
					      true };

static void elements(void)
{
	els[0] = (struct fl_shared_element){ .kind = FL_ELEMENT_SPINE, .name = "spine0",
					     .sw = "spine0", .certain = true, .first = 0,
					     .count = 2 };
	els[1] = (struct fl_shared_element){ .kind = FL_ELEMENT_LEAF, .name = "leaf0", .sw = "leaf0",
					     .certain = true, .first = 2, .count = 3 };
	els[2] = (struct fl_shared_element){ .kind = FL_ELEMENT_LEAF, .name = "leaf1", .sw = "leaf1",
					     .certain = true, .first = 5, .count = 3 };
}

static void judge_of(const struct fl_hop_elements *e, int n, struct fl_verdict *v)
{
	struct fl_verdict_params p;

	fl_verdict_default_params(&p);
	p.elements = e;
	fl_verdict_compute(hops, (size_t)n, &p, v);
}

static void judge(const struct fl_hop_elements *e, struct fl_verdict *v)
{
	judge_of(e, NODES, v);
}

static void test_the_spine_is_named(void **state)
{
	static const double gbs[NODES] = { 46, 46, 46, 23, 46, 46, 46, 23 };
	struct fl_verdict v;

	(void)state;
	elements();
	ring(gbs);
	judge(&fabric, &v);
	assert_int_equal(v.kind, FL_VERDICT_SWITCH);
	assert_string_equal(v.node, "spine0");
	assert_true(v.confidence >= 0.9);
	assert_float_equal(v.ratio, 0.5, 0.02);
	assert_non_null(strstr(v.reason, "spine0: the hops through it run at 0.50x"));
	assert_string_equal(fl_verdict_kind_name(v.kind), "switch");
}

static void test_without_a_topology_no_switch(void **state)
{
	static const double gbs[NODES] = { 46, 46, 46, 23, 46, 46, 46, 23 };
	struct fl_verdict v;

	(void)state;
	ring(gbs);
	judge(NULL, &v);
	assert_int_not_equal(v.kind, FL_VERDICT_SWITCH);
	for (int k = 0; k < v.nfindings; k++)
		assert_int_not_equal(v.findings[k].kind, FL_VERDICT_SWITCH);
}

/* One slow hop inside leaf0 is that link, not the leaf nor the spine. */
static void test_a_link_inside_a_leaf_stays_a_link(void **state)
{
	static const double gbs[NODES] = { 46, 23, 46, 46, 46, 46, 46, 46 };
	struct fl_verdict v;

	(void)state;
	elements();
	ring(gbs);
	judge(&fabric, &v);
	assert_int_equal(v.kind, FL_VERDICT_LINK);
	assert_int_equal(v.hop, 1);
}

/*
 * 16 nodes on four leaves under two spines (fat-tree:leaves=4,spines=2): the
 * ring leaves each leaf once (node3 -> node4, node7 -> node8, ...), and each
 * of those hops takes one spine or the other by the hash of each of its
 * connections (ECMP), which the reports do not say: the spines are one
 * element, the spine layer. The lab's run with spine1 at 25% (2026-12-07,
 * `fabriclab lab --fabric ib --like ndr -n 16 --channels 4 --topology
 * fat-tree:leaves=4,spines=2 --hw-fault 'spine:spine=1,rate=25%' -s 6`):
 * three of the four hops between leaves at 0.43x, 0.76x and 0.64x the
 * others, the fourth's connections all on spine0. Each hop is slowed by the
 * share of its connections on the slow spine, so the layer is named, not the
 * worst hop as a link.
 */
static struct fl_shared_element tree[9];
static size_t tree_hops[4 + 4 * 2 + 4 * 3];
static const struct fl_hop_elements fat_tree = { tree, 9, tree_hops, 24,
						"fat-tree:leaves=4,spines=2", true };

static void fat_tree_elements(void)
{
	size_t k = 0;

	tree[0] = (struct fl_shared_element){ .kind = FL_ELEMENT_SPINES,
					      .name = "the spine layer (spine0, spine1)",
					      .certain = true, .first = k, .count = 4 };
	for (int l = 0; l < 4; l++)
		tree_hops[k++] = (size_t)(4 * l + 3); /* the hop leaving leaf l */
	for (int l = 0; l < 4; l++) {
		struct fl_shared_element *e = &tree[1 + l];

		*e = (struct fl_shared_element){ .kind = FL_ELEMENT_LEAF_UPLINKS, .certain = true,
						 .first = k, .count = 2 };
		snprintf(e->name, sizeof(e->name), "leaf%d's uplinks", l);
		tree_hops[k++] = (size_t)(4 * l + 3);           /* leaving it */
		tree_hops[k++] = (size_t)((4 * l + 15) % 16);   /* entering it */
	}
	for (int l = 0; l < 4; l++) {
		struct fl_shared_element *e = &tree[5 + l];

		*e = (struct fl_shared_element){ .kind = FL_ELEMENT_LEAF, .certain = true,
						 .first = k, .count = 3 };
		snprintf(e->name, sizeof(e->name), "leaf%d", l);
		snprintf(e->sw, sizeof(e->sw), "leaf%d", l);
		for (int i = 0; i < 3; i++)
			tree_hops[k++] = (size_t)(4 * l + i);
	}
}

static void test_a_spine_behind_ecmp_is_the_spine_layer(void **state)
{
	double gbs[MAX_NODES];
	struct fl_verdict v;

	(void)state;
	for (int i = 0; i < MAX_NODES; i++)
		gbs[i] = 46.0;
	gbs[3] = 0.43 * 46.0;
	gbs[11] = 0.76 * 46.0;
	gbs[15] = 0.64 * 46.0;
	fat_tree_elements();
	ring_of(gbs, MAX_NODES);
	judge_of(&fat_tree, MAX_NODES, &v);
	assert_int_equal(v.kind, FL_VERDICT_SWITCH);
	assert_string_equal(v.node, "the spine layer (spine0, spine1)");
	assert_true(v.confidence >= 0.9);
	assert_float_equal(v.ratio, 0.43, 0.02);
	assert_non_null(strstr(v.reason, "3 of its 4 hops slow"));

	/*
	 * One hop between leaves slow alone: its link (every connection through
	 * its ports) or the uplinks some of its connections took, which the
	 * reports cannot tell apart; never healthy, never the whole layer.
	 */
	gbs[11] = gbs[15] = 46.0;
	ring_of(gbs, MAX_NODES);
	judge_of(&fat_tree, MAX_NODES, &v);
	assert_int_equal(v.kind, FL_VERDICT_UNSURE);
	assert_non_null(strstr(v.reason, "likeliest link node3/mlx5_0 -> node4/mlx5_0"));
	assert_non_null(strstr(v.reason, "next switch leaf0's uplinks"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_the_spine_is_named),
		cmocka_unit_test(test_without_a_topology_no_switch),
		cmocka_unit_test(test_a_link_inside_a_leaf_stays_a_link),
		cmocka_unit_test(test_a_spine_behind_ecmp_is_the_spine_layer),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
