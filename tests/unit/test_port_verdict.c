/*
 * The node's RDMA ports in one process's report (plugin/report_build.c and its
 * renderings): sockets carrying traffic beside an active port give the
 * `transport` verdict naming that port and the commands to check it; no
 * active port, no such verdict; the JSON and text carry the ports.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "plugin/report/report_model.h"

#define FIXTURES "tests/fixtures/sysfs/"

static struct fl_hop_snapshot *two_hops(void)
{
	struct fl_hop_snapshot *h = calloc(2, sizeof(*h));

	assert_non_null(h);
	for (int i = 0; i < 2; i++) {
		snprintf(h[i].key.src_node, sizeof(h[i].key.src_node), i ? "node1" : "node0");
		snprintf(h[i].key.dst_node, sizeof(h[i].key.dst_node), i ? "node0" : "node1");
		strcpy(h[i].key.src_dev, "eth0");
		strcpy(h[i].key.dst_dev, "eth0");
		h[i].key.view = i ? FL_HOP_RECV : FL_HOP_SEND;
		h[i].src_rank = h[i].dst_rank = -1;
		h[i].connections = 1;
		h[i].mem_types = FL_PTR_HOST;
		h[i].t.bytes = h[i].t.wire_bytes = 1 << 20;
		h[i].t.messages = 4;
		h[i].wire_ns = 1000000;
		h[i].active_ns = 2000000;
	}
	return h;
}

/* A report of node0 over sockets, with the ports of a fixture tree (NULL: none read). */
static void fill(struct fl_report *r, const char *tree, struct fl_port_list *base)
{
	memset(r, 0, sizeof(*r));
	strcpy(r->node, "node0");
	r->pid = 7;
	r->rank = 0;
	strcpy(r->transport, "socket");
	if (tree) {
		r->ports = malloc(sizeof(*r->ports));
		assert_non_null(r->ports);
		fl_ports_scan(tree, r->ports);
		if (base) {
			fl_ports_scan(tree, base);
			r->ports_base = base;
			r->ports_seconds = 30.0;
		}
	}
	assert_int_equal(fl_report_fill(r, two_hops(), 2, NULL), 0);
}

static void test_sockets_beside_active_port(void **state)
{
	struct fl_report r;

	(void)state;
	fill(&r, FIXTURES "healthy", NULL);
	assert_true(r.figs[0].rdma_port_active);
	assert_string_equal(r.figs[1].rdma_node, "node0"); /* this node, also on the recv view */
	assert_string_equal(r.figs[0].rdma_port, "mlx5_0/1");
	assert_int_equal(r.verdict.kind, FL_VERDICT_TRANSPORT);
	assert_string_equal(r.verdict.node, "node0");
	assert_string_equal(r.verdict.dev, "mlx5_0/1");
	assert_non_null(strstr(r.verdict.reason, "node0 has an active RDMA port mlx5_0/1"));
	assert_non_null(strstr(r.commands, "on node0: ibstat mlx5_0 1"));
	assert_non_null(strstr(r.commands, "NCCL_NET=IB NCCL_IB_HCA==mlx5_0:1"));
	fl_report_release(&r);
	assert_null(r.ports);
}

static void test_no_port_no_transport_verdict(void **state)
{
	struct fl_report r;

	(void)state;
	fill(&r, NULL, NULL);
	assert_false(r.figs[0].rdma_port_active);
	assert_string_equal(r.figs[0].rdma_port, "");
	assert_int_not_equal(r.verdict.kind, FL_VERDICT_TRANSPORT);
	fl_report_release(&r);
	fill(&r, FIXTURES "no-such-tree", NULL);
	assert_int_equal(r.ports->n, 0);
	assert_int_not_equal(r.verdict.kind, FL_VERDICT_TRANSPORT);
	fl_report_release(&r);
}

/* The verdict without a port name (older figures): the generic command stays. */
static void test_transport_commands_without_port(void **state)
{
	struct fl_hop_figures f;
	struct fl_verdict v;
	char buf[2048];

	(void)state;
	memset(&f, 0, sizeof(f));
	strcpy(f.src_node, "a");
	strcpy(f.dst_node, "b");
	strcpy(f.transport, "socket");
	f.bytes = 100;
	f.messages = 1;
	f.rdma_port_active = 1;
	fl_verdict_compute(&f, 1, NULL, &v);
	assert_int_equal(v.kind, FL_VERDICT_TRANSPORT);
	assert_string_equal(v.node, "a");
	assert_string_equal(v.dev, "");
	fl_verdict_commands(&v, &f, 1, buf, sizeof(buf));
	assert_non_null(strstr(buf, "on a: ibv_devinfo"));
	assert_null(strstr(buf, "ibstat"));
}

static void test_renderings_carry_ports(void **state)
{
	struct fl_port_list *base = malloc(sizeof(*base));
	struct fl_report r;
	json_error_t err;
	json_t *root, *ports;
	char *text;
	size_t len;

	(void)state;
	fill(&r, FIXTURES "trained-down", base);
	r.ports->p[0].counters.c[0].value = 9; /* mlx5_0/1 counters/symbol_error rose by 9 */
	assert_int_equal(fl_report_json(&r, &text, &len), 0);
	root = json_loads(text, 0, &err);
	free(text);
	assert_non_null(root);
	assert_true(json_is_true(json_object_get(root, "rdma_port_active")));
	ports = json_object_get(root, "ports");
	assert_int_equal(json_array_size(ports), 3);
	assert_true(json_is_true(json_object_get(json_array_get(ports, 2), "trained_down")));
	assert_int_equal(json_integer_value(json_object_get(
				 json_array_get(json_object_get(json_array_get(ports, 0), "rising"), 0),
				 "delta")),
			 9);
	json_decref(root);
	assert_int_equal(fl_report_text(&r, &text, &len), 0);
	assert_non_null(strstr(text, "RDMA ports of this node"));
	assert_non_null(strstr(text, "port mlx5_2/1: InfiniBand, ACTIVE LinkUp, 100 of 200 Gb/s "
				     "(same HCA model): TRAINED DOWN"));
	assert_non_null(strstr(text, "counters/symbol_error +9 in 30 s (error)"));
	free(text);
	fl_report_release(&r);
	free(base);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sockets_beside_active_port),
		cmocka_unit_test(test_no_port_no_transport_verdict),
		cmocka_unit_test(test_transport_commands_without_port),
		cmocka_unit_test(test_renderings_carry_ports),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
