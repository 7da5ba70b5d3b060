/*
 * The node's RDMA ports from the fixture trees: states, netdevs, rates, the
 * highest rate decided by link modes or by the same HCA model, the JSON the
 * report and the doctor write.
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

#include "plugin/base/json_out.h"
#include "plugin/port/port_info.h"

#define FIXTURES "tests/fixtures/sysfs/"

static struct fl_port_list *scan(const char *tree)
{
	struct fl_port_list *l = malloc(sizeof(*l));

	assert_non_null(l);
	fl_ports_scan(tree, l);
	return l;
}

static void test_healthy_ports(void **state)
{
	struct fl_port_list *l = scan(FIXTURES "healthy");
	const struct fl_port *ib, *roce;

	(void)state;
	assert_int_equal(l->n, 3);
	assert_string_equal(l->p[0].name, "mlx5_0/1");
	assert_string_equal(l->p[1].name, "mlx5_1/1");
	assert_string_equal(l->p[2].name, "mlx5_2/1");
	ib = &l->p[0];
	assert_string_equal(ib->link_layer, "InfiniBand");
	assert_string_equal(ib->state_name, "ACTIVE");
	assert_int_equal(ib->state, FL_PORT_ACTIVE);
	assert_string_equal(ib->phys_name, "LinkUp");
	assert_string_equal(ib->hca_type, "MT4123");
	assert_string_equal(ib->netdev, "");
	assert_true(ib->active_gbps == 200.0);
	assert_true(ib->max_gbps == 200.0);
	assert_string_equal(ib->max_from, "same HCA model");
	assert_false(fl_port_trained_down(ib));
	assert_non_null(strstr(ib->pci_path, "/0000:02:00.0/0000:03:00.0"));
	roce = &l->p[1];
	assert_string_equal(roce->link_layer, "Ethernet");
	assert_string_equal(roce->netdev, "eth2");
	assert_true(roce->active_gbps == 100.0);
	assert_true(roce->max_gbps == 100.0);
	assert_string_equal(roce->max_from, "link modes");
	assert_ptr_equal(fl_ports_first_active(l), ib);
	assert_ptr_equal(fl_ports_find(l, "mlx5_2/1"), &l->p[2]);
	assert_null(fl_ports_find(l, "mlx5_9/1"));
	free(l);
}

static void test_trained_down_ports(void **state)
{
	struct fl_port_list *l = scan(FIXTURES "trained-down");

	(void)state;
	assert_int_equal(l->n, 3);
	assert_false(fl_port_trained_down(&l->p[0]));
	/* RoCE: 50 of the 100 Gb/s its link modes support */
	assert_true(l->p[1].active_gbps == 50.0);
	assert_true(l->p[1].max_gbps == 100.0);
	assert_true(fl_port_trained_down(&l->p[1]));
	/* IB at 2X: half of the other port of the same HCA model */
	assert_true(l->p[2].active_gbps == 100.0);
	assert_true(l->p[2].max_gbps == 200.0);
	assert_string_equal(l->p[2].max_from, "same HCA model");
	assert_true(fl_port_trained_down(&l->p[2]));
	free(l);
}

static void test_no_rdma(void **state)
{
	struct fl_port_list *l = scan(FIXTURES "no-such-tree");

	(void)state;
	assert_int_equal(l->n, 0);
	assert_null(fl_ports_first_active(l));
	free(l);
}

/* A lone port of its model has nothing to be compared with; a down port is never trained down. */
static void test_lone_and_down_ports(void **state)
{
	struct fl_port p;

	(void)state;
	memset(&p, 0, sizeof(p));
	p.state = FL_PORT_DOWN;
	p.active_gbps = 100.0;
	p.max_gbps = 200.0;
	assert_false(fl_port_trained_down(&p));
	p.state = FL_PORT_ACTIVE;
	assert_true(fl_port_trained_down(&p));
	p.max_gbps = 0.0;
	assert_false(fl_port_trained_down(&p));
}

static json_t *ports_json(const struct fl_port_list *now, const struct fl_port_list *base)
{
	struct fl_json j;
	char *text;
	size_t len;
	json_error_t err;
	json_t *root;

	assert_int_equal(fl_json_init(&j), 0);
	fl_json_object(&j, NULL);
	fl_ports_json(&j, "ports", now, base, 12.5);
	fl_json_end(&j);
	assert_int_equal(fl_json_finish(&j, &text, &len), 0);
	root = json_loads(text, 0, &err);
	free(text);
	assert_non_null(root);
	return root;
}

static void test_json_deltas(void **state)
{
	struct fl_port_list *base = scan(FIXTURES "healthy");
	struct fl_port_list *now = malloc(sizeof(*now));
	json_t *root, *p, *c, *rising;

	(void)state;
	memcpy(now, base, sizeof(*now));
	now->p[0].counters.c[0].value += 33; /* counters/symbol_error */
	root = ports_json(now, base);
	p = json_array_get(json_object_get(root, "ports"), 0);
	assert_string_equal(json_string_value(json_object_get(p, "name")), "mlx5_0/1");
	assert_true(json_is_true(json_object_get(p, "active")));
	assert_true(json_is_false(json_object_get(p, "trained_down")));
	assert_true(json_real_value(json_object_get(p, "delta_seconds")) == 12.5);
	c = json_object_get(json_object_get(p, "counters"), "counters/symbol_error");
	assert_int_equal(json_integer_value(json_object_get(c, "value")), 33);
	assert_int_equal(json_integer_value(json_object_get(c, "delta")), 33);
	assert_string_equal(json_string_value(json_object_get(c, "severity")), "error");
	rising = json_object_get(p, "rising");
	assert_int_equal(json_array_size(rising), 1);
	assert_string_equal(
		json_string_value(json_object_get(json_array_get(rising, 0), "counter")),
		"counters/symbol_error");
	p = json_array_get(json_object_get(root, "ports"), 1);
	assert_string_equal(json_string_value(json_object_get(p, "netdev")), "eth2");
	assert_int_equal(json_array_size(json_object_get(p, "rising")), 0);
	json_decref(root);
	/* without a base: values, null deltas, nothing rising */
	root = ports_json(now, NULL);
	p = json_array_get(json_object_get(root, "ports"), 0);
	c = json_object_get(json_object_get(p, "counters"), "counters/symbol_error");
	assert_true(json_is_null(json_object_get(c, "delta")));
	assert_int_equal(json_array_size(json_object_get(p, "rising")), 0);
	json_decref(root);
	free(now);
	free(base);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_healthy_ports),
		cmocka_unit_test(test_trained_down_ports),
		cmocka_unit_test(test_no_rdma),
		cmocka_unit_test(test_lone_and_down_ports),
		cmocka_unit_test(test_json_deltas),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
