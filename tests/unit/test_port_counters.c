/*
 * Counter deltas (wrap-around, saturation, reset, missing), and reading the
 * counters of a port from a fixture tree, files missing included.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "plugin/port/port_info.h"

#define HEALTHY "tests/fixtures/sysfs/healthy"

static struct fl_counter counter(const char *name, uint64_t value, int width, bool saturating)
{
	struct fl_counter c = { .value = value, .width = (uint8_t)width, .saturating = saturating };

	snprintf(c.name, sizeof(c.name), "%s", name);
	return c;
}

static void test_delta_plain(void **state)
{
	struct fl_counter a = counter("x", 100, 64, false), b = counter("x", 160, 64, false);
	uint64_t d;

	(void)state;
	assert_int_equal(fl_counter_delta(&a, &b, &d), FL_DELTA_OK);
	assert_int_equal(d, 60);
	assert_int_equal(fl_counter_delta(&a, &a, &d), FL_DELTA_OK);
	assert_int_equal(d, 0);
}

static void test_delta_wraps_at_its_width(void **state)
{
	struct fl_counter a = counter("x", 0xfffffff0ULL, 32, false);
	struct fl_counter b = counter("x", 0x10, 32, false);
	uint64_t d;

	(void)state;
	assert_int_equal(fl_counter_delta(&a, &b, &d), FL_DELTA_WRAPPED);
	assert_int_equal(d, 0x20);
	/* exactly at the maximum, then 0: one step */
	a.value = 0xffffffffULL;
	b.value = 0;
	assert_int_equal(fl_counter_delta(&a, &b, &d), FL_DELTA_WRAPPED);
	assert_int_equal(d, 1);
	/* 16-bit */
	a = counter("x", 65530, 16, false);
	b = counter("x", 4, 16, false);
	assert_int_equal(fl_counter_delta(&a, &b, &d), FL_DELTA_WRAPPED);
	assert_int_equal(d, 10);
}

static void test_delta_64_bit_going_back_is_a_reset(void **state)
{
	struct fl_counter a = counter("x", 5000, 64, false), b = counter("x", 7, 64, false);
	uint64_t d;

	(void)state;
	assert_int_equal(fl_counter_delta(&a, &b, &d), FL_DELTA_RESET);
	assert_int_equal(d, 7);
}

/* IB PMA counters stop at their maximum; going back can only be `perfquery -R`. */
static void test_delta_saturating_counters(void **state)
{
	struct fl_counter a = counter("counters/symbol_error", 65000, 16, true);
	struct fl_counter b = counter("counters/symbol_error", 65535, 16, true);
	uint64_t d;

	(void)state;
	assert_int_equal(fl_counter_delta(&a, &b, &d), FL_DELTA_SATURATED);
	assert_int_equal(d, 535);
	a.value = 65535;
	assert_int_equal(fl_counter_delta(&a, &b, &d), FL_DELTA_SATURATED);
	assert_int_equal(d, 0);
	a.value = 300;
	b.value = 12;
	assert_int_equal(fl_counter_delta(&a, &b, &d), FL_DELTA_RESET);
	assert_int_equal(d, 12);
	/* 4-bit local_link_integrity_errors */
	a = counter("c", 3, 4, true);
	b = counter("c", 15, 4, true);
	assert_int_equal(fl_counter_delta(&a, &b, &d), FL_DELTA_SATURATED);
	assert_int_equal(d, 12);
}

static void test_delta_without_base(void **state)
{
	struct fl_counter b = counter("x", 9, 64, false);
	uint64_t d = 42;

	(void)state;
	assert_int_equal(fl_counter_delta(NULL, &b, &d), FL_DELTA_MISSING);
	assert_int_equal(d, 0);
	assert_string_equal(fl_delta_kind_name(FL_DELTA_WRAPPED), "wrapped");
}

static void test_set_is_bounded(void **state)
{
	struct fl_counter_set s = { 0 };
	char name[64];

	(void)state;
	for (int i = 0; i < FL_PORT_COUNTERS + 10; i++) {
		snprintf(name, sizeof(name), "c/%d", i);
		fl_counter_add(&s, name, (uint64_t)i, 64, false, FL_COUNTER_INFO);
	}
	assert_int_equal(s.n, FL_PORT_COUNTERS);
	fl_counter_add(&s, "x", 1, 64, false, 0);
	assert_null(fl_counter_find(&s, "x"));
	s.n = 0;
	memset(name, 'a', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	fl_counter_add(&s, name, 1, 64, false, 0); /* too long a name is not cut into another */
	assert_int_equal(s.n, 0);
}

static void test_ethtool_names_kept(void **state)
{
	(void)state;
	assert_int_equal(fl_ethtool_counter_severity("rx_pause_ctrl_phy"), FL_COUNTER_CONGESTION);
	assert_int_equal(fl_ethtool_counter_severity("tx_discards_phy"), FL_COUNTER_CONGESTION);
	assert_int_equal(fl_ethtool_counter_severity("rx_prio3_pause"), FL_COUNTER_CONGESTION);
	assert_int_equal(fl_ethtool_counter_severity("rx_crc_errors_phy"), FL_COUNTER_ERROR);
	assert_int_equal(fl_ethtool_counter_severity("rx_symbol_err_phy"), FL_COUNTER_ERROR);
	assert_int_equal(fl_ethtool_counter_severity("rx_packets"), -1);
	assert_int_equal(fl_ethtool_counter_severity("rx0_wqe_err"), -1); /* per queue */
	assert_int_equal(fl_ethtool_counter_severity("ch3_events"), -1);
}

static struct fl_port port_of(const char *dev, const char *netdev)
{
	struct fl_port p;

	memset(&p, 0, sizeof(p));
	snprintf(p.dev, sizeof(p.dev), "%s", dev);
	p.num = 1;
	snprintf(p.netdev, sizeof(p.netdev), "%s", netdev);
	return p;
}

static void test_read_ib_port(void **state)
{
	struct fl_port p = port_of("mlx5_0", "");
	const struct fl_counter *c;

	(void)state;
	fl_port_read_counters(HEALTHY, &p);
	c = fl_counter_find(&p.counters, "counters/symbol_error");
	assert_non_null(c);
	assert_int_equal(c->value, 0);
	assert_int_equal(c->width, 16);
	assert_true(c->saturating);
	assert_int_equal(c->severity, FL_COUNTER_ERROR);
	c = fl_counter_find(&p.counters, "counters/port_xmit_wait");
	assert_non_null(c);
	assert_int_equal(c->value, 1200);
	assert_int_equal(c->severity, FL_COUNTER_CONGESTION);
	c = fl_counter_find(&p.counters, "counters/port_xmit_data");
	assert_non_null(c);
	assert_false(c->saturating);
	assert_null(fl_counter_find(&p.counters, "hw_counters/lifespan"));
	assert_null(fl_counter_find(&p.counters, "statistics/rx_dropped"));
}

static void test_read_roce_port(void **state)
{
	struct fl_port p = port_of("mlx5_1", "eth2");
	const struct fl_counter *c;

	(void)state;
	fl_port_read_counters(HEALTHY, &p);
	assert_non_null(fl_counter_find(&p.counters, "counters/symbol_error"));
	c = fl_counter_find(&p.counters, "hw_counters/out_of_sequence");
	assert_non_null(c);
	assert_int_equal(c->severity, FL_COUNTER_CONGESTION);
	c = fl_counter_find(&p.counters, "hw_counters/np_cnp_sent");
	assert_non_null(c);
	assert_int_equal(c->value, 12);
	assert_int_equal(c->severity, FL_COUNTER_INFO);
	assert_null(fl_counter_find(&p.counters, "hw_counters/lifespan"));
	assert_non_null(fl_counter_find(&p.counters, "statistics/rx_dropped"));
	assert_non_null(fl_counter_find(&p.counters, "ethtool/rx_pause_ctrl_phy"));
	assert_non_null(fl_counter_find(&p.counters, "ethtool/rx_crc_errors_phy"));
	assert_null(fl_counter_find(&p.counters, "ethtool/rx_packets"));
	assert_null(fl_counter_find(&p.counters, "ethtool/rx0_packets"));
	assert_null(fl_counter_find(&p.counters, "ethtool/ch0_events"));
	assert_int_equal(fl_ethtool_max_mbps(HEALTHY, "eth2"), 100000);
	assert_int_equal(fl_ethtool_max_mbps(HEALTHY, "nosuch0"), 0);
}

/* A copy of the healthy tree; the path is malloc'd. */
static char *copy_tree(void)
{
	char *dir = strdup("/tmp/fabriclab-port-XXXXXX"), cmd[256];

	assert_non_null(mkdtemp(dir));
	snprintf(cmd, sizeof(cmd), "cp -a " HEALTHY "/. %s/", dir);
	assert_int_equal(system(cmd), 0);
	return dir;
}

static void remove_tree(char *dir)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
	free(dir);
}

static void set_file(const char *root, const char *rel, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void remove_file(const char *root, const char *rel)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	assert_int_equal(unlink(path), 0);
}

/* Rising, missing and unreadable counters between two reads of one port. */
static void test_rising_between_reads(void **state)
{
	char *root = copy_tree();
	struct fl_port before = port_of("mlx5_1", "eth2"), after;
	struct fl_counter_change ch[FL_PORT_COUNTERS];
	int n;

	(void)state;
	fl_port_read_counters(root, &before);
	after = before;
	set_file(root, "class/infiniband/mlx5_1/ports/1/counters/symbol_error", "7\n");
	set_file(root, "class/infiniband/mlx5_1/ports/1/counters/port_xmit_data", "5\n");
	set_file(root, "class/infiniband/mlx5_1/ports/1/counters/link_downed", "garbage\n");
	remove_file(root, "class/infiniband/mlx5_1/ports/1/counters/port_rcv_errors");
	set_file(root, "class/net/eth2/ethtool-S.txt",
		 "NIC statistics:\n     rx_pause_ctrl_phy: 40\n     rx_packets: 99\n");
	fl_port_read_counters(root, &after);
	assert_null(fl_counter_find(&after.counters, "counters/port_rcv_errors"));
	assert_null(fl_counter_find(&after.counters, "counters/link_downed"));
	n = fl_port_rising(&after, &before, FL_COUNTER_CONGESTION, ch, FL_PORT_COUNTERS);
	assert_int_equal(n, 2);
	assert_string_equal(ch[0].counter->name, "counters/symbol_error");
	assert_int_equal(ch[0].delta, 7);
	assert_string_equal(ch[1].counter->name, "ethtool/rx_pause_ctrl_phy");
	assert_int_equal(ch[1].delta, 40);
	/* port_xmit_data went back: a reset, and only info, so not listed at congestion */
	n = fl_port_rising(&after, &before, FL_COUNTER_INFO, ch, FL_PORT_COUNTERS);
	assert_int_equal(n, 3);
	assert_string_equal(ch[1].counter->name, "counters/port_xmit_data");
	assert_int_equal(ch[1].kind, FL_DELTA_RESET);
	assert_int_equal(ch[1].delta, 5);
	/* only errors */
	n = fl_port_rising(&after, &before, FL_COUNTER_ERROR, ch, FL_PORT_COUNTERS);
	assert_int_equal(n, 1);
	/* a counter that appeared after the base has no delta */
	n = fl_port_rising(&before, &after, FL_COUNTER_INFO, ch, FL_PORT_COUNTERS);
	for (int i = 0; i < n; i++)
		assert_string_not_equal(ch[i].counter->name, "counters/port_rcv_errors");
	remove_tree(root);
}

static void test_only_real_sysfs_uses_ioctls(void **state)
{
	(void)state;
	assert_true(fl_sysfs_is_real("/sys"));
	assert_true(fl_sysfs_is_real("/sys/"));
	assert_false(fl_sysfs_is_real(HEALTHY));
	/* a real interface without link modes or statistics reads as unknown, not an error */
	assert_int_equal(fl_ethtool_max_mbps("/sys", "lo"), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_delta_plain),
		cmocka_unit_test(test_delta_wraps_at_its_width),
		cmocka_unit_test(test_delta_64_bit_going_back_is_a_reset),
		cmocka_unit_test(test_delta_saturating_counters),
		cmocka_unit_test(test_delta_without_base),
		cmocka_unit_test(test_set_is_bounded),
		cmocka_unit_test(test_ethtool_names_kept),
		cmocka_unit_test(test_read_ib_port),
		cmocka_unit_test(test_read_roce_port),
		cmocka_unit_test(test_rising_between_reads),
		cmocka_unit_test(test_only_real_sysfs_uses_ioctls),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
