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
#define GB 1e9

static struct fl_hop_figures hops[NODES];

/* A ring of 8 over verbs, every hop timed by 1024 requests of 1 MiB, node k -> k+1 at gbs[k]. */
static void ring(const double *gbs)
{
	for (int i = 0; i < NODES; i++) {
		struct fl_hop_figures *h = &hops[i];
		double request_us;

		memset(h, 0, sizeof(*h));
		snprintf(h->src_node, sizeof(h->src_node), "node%d", i);
		snprintf(h->dst_node, sizeof(h->dst_node), "node%d", (i + 1) % NODES);
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

static void judge(const struct fl_hop_elements *e, struct fl_verdict *v)
{
	struct fl_verdict_params p;

	fl_verdict_default_params(&p);
	p.elements = e;
	fl_verdict_compute(hops, NODES, &p, v);
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_the_spine_is_named),
		cmocka_unit_test(test_without_a_topology_no_switch),
		cmocka_unit_test(test_a_link_inside_a_leaf_stays_a_link),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
