/*
 * Which commands confirm a slow link or device: chosen by transport and, for
 * verbs, by the port's link layer. RoCE (Ethernet) gets rdma link, ethtool and
 * its PFC pause counters; InfiniBand gets ibstat, perfquery and ibdiagnet;
 * sockets the netdev's ethtool and ip counters. Neither side's tools leak into
 * the other's list.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "plugin/base/fl_types.h"
#include "plugin/verdict/verdict.h"

static struct fl_hop_figures hop;
static char out[4096];

static void a_hop(const char *transport, const char *link_layer, const char *dev)
{
	memset(&hop, 0, sizeof(hop));
	snprintf(hop.src_node, sizeof(hop.src_node), "node1");
	snprintf(hop.dst_node, sizeof(hop.dst_node), "node2");
	snprintf(hop.src_dev, sizeof(hop.src_dev), "%s", dev);
	snprintf(hop.dst_dev, sizeof(hop.dst_dev), "%s", dev);
	snprintf(hop.transport, sizeof(hop.transport), "%s", transport);
	snprintf(hop.link_layer, sizeof(hop.link_layer), "%s", link_layer);
}

/* The commands for a verdict of this kind naming the hop (and, for a device, node2's). */
static int commands(enum fl_verdict_kind kind)
{
	struct fl_verdict v = { .kind = kind, .hop = 0 };

	if (kind == FL_VERDICT_RAIL)
		snprintf(v.dev, sizeof(v.dev), "%s", hop.src_dev);
	if (kind == FL_VERDICT_DEVICE) {
		snprintf(v.node, sizeof(v.node), "node2");
		snprintf(v.dev, sizeof(v.dev), "%s", hop.dst_dev);
	}
	return fl_verdict_commands(&v, &hop, 1, out, sizeof(out));
}

static void assert_has(const char *what)
{
	if (!strstr(out, what))
		fail_msg("no \"%s\" in:\n%s", what, out);
}

static void assert_lacks(const char *what)
{
	if (strstr(out, what))
		fail_msg("\"%s\" should not be in:\n%s", what, out);
}

static void test_roce_link_gets_ethernet_tools(void **state)
{
	(void)state;
	a_hop("ib", FL_LINK_ETHERNET, "mlx5_0");
	assert_true(commands(FL_VERDICT_LINK) >= 7);
	assert_has("on node1: rdma link show mlx5_0/1");
	assert_has("on node2: rdma link show mlx5_0/1");
	assert_has("on node2: ethtool -S $(ls /sys/class/infiniband/mlx5_0/device/net) | grep -E "
		   "'pause|discard|out_of_buffer|err'");
	assert_has("rx/tx_prio*_pause");
	assert_has("-x NCCL_IB_HCA=mlx5_0 all_reduce_perf");
	assert_lacks("ibstat");
	assert_lacks("perfquery");
	assert_lacks("ibdiagnet");
}

static void test_ib_link_gets_infiniband_tools(void **state)
{
	(void)state;
	a_hop("ib", FL_LINK_INFINIBAND, "mlx5_0");
	commands(FL_VERDICT_LINK);
	assert_has("on node1: ibstat mlx5_0");
	assert_has("on node2: perfquery -x -C mlx5_0");
	assert_has("ibdiagnet");
	assert_lacks("ethtool");
	assert_lacks("pause");
	assert_lacks("rdma link");
}

static void test_roce_device_checks_that_node_only(void **state)
{
	(void)state;
	a_hop("ib", FL_LINK_ETHERNET, "mlx5_1");
	commands(FL_VERDICT_DEVICE);
	assert_has("on node2: rdma link show mlx5_1/1");
	assert_has("on node2: ethtool $(ls /sys/class/infiniband/mlx5_1/device/net)");
	assert_lacks("on node1: rdma link");
	assert_lacks("ibstat");
}

/* Reports from before the link layer was written: verbs read as InfiniBand, as they did. */
static void test_unknown_link_layer_keeps_infiniband_tools(void **state)
{
	(void)state;
	a_hop("ib", "", "mlx5_0");
	commands(FL_VERDICT_LINK);
	assert_has("ibstat mlx5_0");
	assert_lacks("rdma link");
}

/* A rail over RoCE is an Ethernet leaf switch: LLDP and pause counters, not the IB fabric tools. */
static void test_roce_rail_gets_ethernet_switch_tools(void **state)
{
	(void)state;
	a_hop("ib", FL_LINK_ETHERNET, "mlx5_2");
	commands(FL_VERDICT_RAIL);
	assert_has("on node1: rdma link show mlx5_2/1");
	assert_has("lldpctl $(ls /sys/class/infiniband/mlx5_2/device/net)");
	assert_lacks("ibnetdiscover");
	assert_lacks("ibdiagnet");
	a_hop("ib", FL_LINK_INFINIBAND, "mlx5_2");
	commands(FL_VERDICT_RAIL);
	assert_has("ibnetdiscover");
	assert_lacks("lldpctl");
}

static void test_socket_gets_its_netdev_tools(void **state)
{
	(void)state;
	a_hop("socket", "", "eth0");
	commands(FL_VERDICT_LINK);
	assert_has("on node1: ethtool eth0");
	assert_has("on node2: ip -s link show eth0");
	assert_has("-x NCCL_SOCKET_IFNAME=eth0");
	assert_lacks("rdma link");
	assert_lacks("ibstat");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roce_link_gets_ethernet_tools),
		cmocka_unit_test(test_ib_link_gets_infiniband_tools),
		cmocka_unit_test(test_roce_device_checks_that_node_only),
		cmocka_unit_test(test_unknown_link_layer_keeps_infiniband_tools),
		cmocka_unit_test(test_roce_rail_gets_ethernet_switch_tools),
		cmocka_unit_test(test_socket_gets_its_netdev_tools),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
