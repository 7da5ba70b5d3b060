/*
 * One model (issue 44): the sweep's verdict on a set of hop figures is the
 * one `fabriclab report` and the live warnings reach on them. Each case feeds
 * the same hops to the sweep's judge (sweep_judge_hops) and to
 * fl_verdict_compute, and checks they name the same culprit, kind for kind
 * (device and straggler are the sweep's node), with the same confidence and
 * runner-up; then a sweep's measured matrix, judged by sweep_judge, against
 * fl_verdict_compute on the hops the sweep makes of it (sweep_hops_build).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "tools/sweep/sweep.h"

#define MAX_HOPS 64
#define GB 1e9

static struct fl_hop_figures hops[MAX_HOPS];

/* One hop as a report has it: 1 GiB in 1024 messages at gbs, its receiver waiting 10%. */
static void set_hop(size_t i, const char *src, const char *sdev, const char *dst,
		    const char *ddev, double gbs)
{
	struct fl_hop_figures *h = &hops[i];

	memset(h, 0, sizeof(*h));
	snprintf(h->src_node, sizeof(h->src_node), "%s", src);
	snprintf(h->src_dev, sizeof(h->src_dev), "%s", sdev);
	snprintf(h->dst_node, sizeof(h->dst_node), "%s", dst);
	snprintf(h->dst_dev, sizeof(h->dst_dev), "%s", ddev);
	snprintf(h->transport, sizeof(h->transport), "socket");
	h->line_rate_gbs = 12.5;
	h->bytes = 1ULL << 30;
	h->messages = 1024;
	h->wire_gbs = gbs;
	h->wire_seconds = (double)h->bytes / (gbs * GB);
	h->active_seconds = 1.0;
	h->peer_wait_seconds = 0.1;
	h->mem_types = FL_PTR_HOST;
}

/* Every directed pair of n nodes (n0 ... on eth0), as a sweep measures them, at gbs. */
static size_t all_pairs(int n, double gbs)
{
	size_t k = 0;

	for (int a = 0; a < n; a++) {
		for (int b = 0; b < n; b++) {
			char src[16], dst[16];

			if (a == b)
				continue;
			snprintf(src, sizeof(src), "n%d", a);
			snprintf(dst, sizeof(dst), "n%d", b);
			/* +-0.5%: hops paced alike still differ a little */
			set_hop(k, src, "eth0", dst, "eth0", gbs * (1 + 0.001 * (int)(k % 11 - 5)));
			k++;
		}
	}
	return k;
}

static size_t hop_of(size_t n, const char *src, const char *dst)
{
	for (size_t i = 0; i < n; i++) {
		if (!strcmp(hops[i].src_node, src) && !strcmp(hops[i].dst_node, dst))
			return i;
	}
	fail_msg("no hop %s -> %s", src, dst);
	return 0;
}

/*
 * The same hops to both: the same kind, culprits, names, confidence and
 * runner-up. Returns the sweep's model for the case's own checks.
 */
static void agree(size_t n, double min_ratio, struct sweep_model *m)
{
	struct fl_verdict_params p;
	struct fl_verdict v;

	fl_verdict_default_params(&p);
	p.min_ratio = min_ratio;
	fl_verdict_compute(hops, n, &p, &v);
	sweep_judge_hops(hops, n, min_ratio, m);
	assert_int_equal(m->kind, v.nfindings ? sweep_kind_of(v.findings[0].kind)
				  : v.kind == FL_VERDICT_UNSURE ? SWEEP_UNSURE : SWEEP_NONE);
	assert_int_equal(m->nculprits, v.nfindings);
	for (int k = 0; k < v.nfindings; k++) {
		const struct fl_finding *f = &v.findings[k];
		const struct sweep_culprit *c = &m->culprits[k];
		char name[FL_CULPRIT_LEN];

		fl_finding_culprit(f, hops, name, sizeof(name));
		assert_string_equal(c->culprit, name);
		assert_int_equal(c->model, f->kind);
		assert_int_equal(c->kind, sweep_kind_of(f->kind));
		assert_true(c->confidence == f->confidence);
		if (f->kind == FL_VERDICT_LINK) {
			assert_string_equal(c->node, hops[f->hop].src_node);
			assert_string_equal(c->other, hops[f->hop].dst_node);
		} else if (f->kind == FL_VERDICT_RAIL) {
			assert_string_equal(c->rail, f->dev);
		} else {
			assert_string_equal(c->node, f->node);
		}
	}
	assert_true(m->v.confidence == v.confidence);
	assert_int_equal(m->v.runner_up.kind, v.runner_up.kind);
	assert_string_equal(m->v.runner_up.culprit, v.runner_up.culprit);
	assert_string_equal(m->v.reason, v.reason);
}

static void test_healthy(void **state)
{
	struct sweep_model m;

	(void)state;
	agree(all_pairs(5, 10), 0.8, &m);
	assert_int_equal(m.kind, SWEEP_NONE);
	assert_int_equal(m.nculprits, 0);
}

static void test_link(void **state)
{
	size_t n = all_pairs(5, 10);
	struct sweep_model m;

	(void)state;
	hops[hop_of(n, "n2", "n4")].wire_gbs = 5;
	hops[hop_of(n, "n2", "n4")].wire_seconds *= 2;
	agree(n, 0.8, &m);
	assert_int_equal(m.kind, SWEEP_LINK);
	assert_string_equal(m.culprits[0].node, "n2");
	assert_string_equal(m.culprits[0].other, "n4");
}

/* A slow NIC, both ways: the model's device, the sweep's node. */
static void test_device_is_node(void **state)
{
	size_t n = all_pairs(5, 10);
	struct sweep_model m;

	(void)state;
	for (size_t i = 0; i < n; i++) {
		if (!strcmp(hops[i].src_node, "n1") || !strcmp(hops[i].dst_node, "n1")) {
			hops[i].wire_gbs = 6;
			hops[i].wire_seconds = (double)hops[i].bytes / (6 * GB);
		}
	}
	agree(n, 0.8, &m);
	assert_int_equal(m.kind, SWEEP_NODE);
	assert_int_equal(m.culprits[0].model, FL_VERDICT_DEVICE);
	assert_string_equal(m.culprits[0].node, "n1");
}

/* A straggler (the hops into n3 wait least on it): the model's node, the sweep's node. */
static void test_straggler_is_node(void **state)
{
	struct sweep_model m;
	size_t n = 8;

	(void)state;
	for (size_t i = 0; i < n; i++) {
		char src[24], dst[24];

		snprintf(src, sizeof(src), "n%zu", i + 1);
		snprintf(dst, sizeof(dst), "n%zu", (i + 1) % n + 1);
		set_hop(i, src, "eth0", dst, "eth0", 10);
		hops[i].peer_wait_seconds = strcmp(dst, "n3") ? 0.5 : 0.02;
	}
	agree(n, 0.95, &m);
	assert_int_equal(m.kind, SWEEP_NODE);
	assert_int_equal(m.culprits[0].model, FL_VERDICT_NODE);
	assert_string_equal(m.culprits[0].node, "n3");
}

/* Rail-optimised nodes, every hop with an end on mlx5_2 slow: the rail. */
static void test_rail(void **state)
{
	size_t n = all_pairs(8, 10);
	struct sweep_model m;

	(void)state;
	for (size_t i = 0; i < n; i++) {
		bool a = hops[i].src_node[1] < '4', b = hops[i].dst_node[1] < '4';

		snprintf(hops[i].src_dev, sizeof(hops[i].src_dev), "%s", a ? "mlx5_2" : "mlx5_0");
		snprintf(hops[i].dst_dev, sizeof(hops[i].dst_dev), "%s", b ? "mlx5_2" : "mlx5_0");
		if (a || b) {
			hops[i].wire_gbs = 5;
			hops[i].wire_seconds = (double)hops[i].bytes / (5 * GB);
		}
	}
	agree(n, 0.8, &m);
	assert_int_equal(m.kind, SWEEP_RAIL);
	assert_string_equal(m.culprits[0].rail, "mlx5_2");
}

/* Two cables at once: both named, the costlier first, in both. */
static void test_two_links(void **state)
{
	size_t n = all_pairs(6, 10), a = hop_of(n, "n0", "n1"), b = hop_of(n, "n3", "n5");
	struct sweep_model m;

	(void)state;
	hops[a].wire_gbs = 4;
	hops[a].wire_seconds *= 2.5;
	hops[b].wire_gbs = 6;
	hops[b].wire_seconds *= 10.0 / 6;
	agree(n, 0.8, &m);
	assert_int_equal(m.nculprits, 2);
	assert_string_equal(m.culprits[0].node, "n0");
	assert_string_equal(m.culprits[1].node, "n3");
}

/* GPUDirect unused where the device supports it: a set-up fault of a node, the sweep's node. */
static void test_gdr_is_node(void **state)
{
	size_t n = all_pairs(4, 10);
	struct sweep_model m;

	(void)state;
	for (size_t i = 0; i < n; i++) {
		hops[i].mem_types = FL_PTR_CUDA;
		hops[i].gdr_capable = 1;
		if (!strcmp(hops[i].src_node, "n2") || !strcmp(hops[i].dst_node, "n2"))
			hops[i].mem_types = FL_PTR_HOST;
	}
	agree(n, 0.8, &m);
	assert_int_equal(m.kind, SWEEP_NODE);
	assert_int_equal(m.culprits[0].model, FL_VERDICT_GDR);
	assert_string_equal(m.culprits[0].node, "n2");
}

/* Three noisy samples per hop, healthy hops 15% apart, one hop at half: not enough evidence. */
static void test_unsure(void **state)
{
	static const double noise[12] = { 1, 0.85, 1.12, 0.92, 1.15, 0.88,
					   1.08, 0.86, 0.95, 1.13, 0.9, 1.04 };
	size_t n = all_pairs(4, 10);
	struct sweep_model m;

	(void)state;
	for (size_t i = 0; i < n; i++) {
		hops[i].line_rate_gbs = 0; /* as a sweep over sockets on lo has them: no line, no waits */
		hops[i].active_seconds = hops[i].peer_wait_seconds = 0;
		hops[i].wire_gbs = 10 * noise[i];
		hops[i].messages = 3;
		hops[i].bytes = 3 << 20;
		hops[i].typical_request = 1 << 20;
		hops[i].wire_seconds = (double)hops[i].bytes / (hops[i].wire_gbs * GB);
		hops[i].wire_p50_us = 1e6 * hops[i].wire_seconds / 3 * noise[(i + 5) % 12];
		hops[i].wire_p99_us = 1.5 * hops[i].wire_p50_us;
	}
	hops[5].wire_gbs = 5;
	hops[5].wire_seconds = (double)hops[5].bytes / (5 * GB);
	agree(n, 0.8, &m);
	assert_int_equal(m.kind, SWEEP_UNSURE);
}

/*
 * The sweep end to end: a measured matrix (n2's NIC at half) judged by
 * sweep_judge, and fl_verdict_compute on the hops the sweep makes of it.
 */
static void test_sweep_matrix(void **state)
{
	static struct sweep_node nodes[5];
	static double t[25], p50[25], p99[25], it[25];
	struct sweep_size size = { 1 << 20, t, p50, p99, it };
	struct sweep_result res = { .n = 5, .nodes = nodes, .sizes = &size, .nsizes = 1 };
	struct sweep_opts o = { .threshold = 0.8, .baseline_min = 0.9 };
	struct fl_verdict_params p;
	struct sweep_verdict v;
	struct sweep_hops h;
	struct fl_verdict direct;
	char name[FL_CULPRIT_LEN];

	(void)state;
	for (int i = 0; i < 5; i++) {
		snprintf(nodes[i].name, sizeof(nodes[i].name), "node%d", i);
		snprintf(nodes[i].dev, sizeof(nodes[i].dev), "mlx5_0");
		nodes[i].speed_mbps = 200000;
		snprintf(nodes[i].link_layer, sizeof(nodes[i].link_layer), "InfiniBand");
	}
	for (int k = 0; k < 25; k++) {
		bool slow = k / 5 == 2 || k % 5 == 2;

		t[k] = k / 5 == k % 5 ? -1 : (1 << 20) / (slow ? 11.0 : 22.0) / 1e3 *
						      (1 + 0.002 * (k % 3));
		p50[k] = t[k];
		p99[k] = 1.03 * t[k];
		it[k] = 200;
	}
	assert_int_equal(sweep_hops_build(&res, &h), 0);
	assert_int_equal(h.n, 20);
	assert_string_equal(h.figs[0].transport, "ib");
	assert_true(h.figs[0].line_rate_gbs == 25.0);
	assert_int_equal(h.figs[0].messages, 200);
	fl_verdict_default_params(&p);
	p.min_ratio = o.threshold;
	fl_verdict_compute(h.figs, h.n, &p, &direct);
	assert_int_equal(sweep_judge(&res, &o, NULL, &v), 0);
	assert_int_equal(direct.kind, FL_VERDICT_DEVICE);
	assert_string_equal(direct.node, "node2");
	assert_int_equal(v.kind, SWEEP_NODE);
	assert_string_equal(nodes[v.node].name, direct.node);
	fl_finding_culprit(&direct.findings[0], h.figs, name, sizeof(name));
	assert_string_equal(v.findings[0].c->culprit, name);
	assert_true(v.model->v.confidence == direct.confidence);
	assert_int_equal(v.nslow, 8);
	sweep_verdict_free(&v);
	sweep_hops_free(&h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_healthy),
		cmocka_unit_test(test_link),
		cmocka_unit_test(test_device_is_node),
		cmocka_unit_test(test_straggler_is_node),
		cmocka_unit_test(test_rail),
		cmocka_unit_test(test_two_links),
		cmocka_unit_test(test_gdr_is_node),
		cmocka_unit_test(test_unsure),
		cmocka_unit_test(test_sweep_matrix),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
