/*
 * The fabric's description and the topologies a user has (fabric/topo/, tools/topology/):
 *  - the lab's layouts: fat-tree puts nodes in order over the leaves and cables every leaf to
 *    every spine, rail puts NIC k of every node on leaf k; a path within a leaf crosses two
 *    elements, across spines four, the hash picking the spine (every spine taken by some);
 *  - the description survives writing and reading; a misspelt field, a wrong reference and
 *    malformed JSON are refused with the field's path or the line and column;
 *  - ibnetdiscover's and lldpctl -f json's outputs (tests/fixtures/topology) read as the same
 *    model: hosts, leaves, spines, ports, LIDs; a malformed line is named;
 *  - the elements a ring's hops share: with two spines the spines are one element, "the spine
 *    layer (spine0, spine1)", since ECMP sends every hop between leaves over either; with one,
 *    "spine0"; a hop the topology does not name is refused with its end; the commands for an
 *    ibnetdiscover topology name the switch's LID and port.
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

#include "fabric/topo/topo_json.h"
#include "topo_refused.h"
#include "tools/topology/topology.h"

#define FIXTURES "tests/fixtures/topology"

static void nodes(struct ft_topo *t, int n, int nics)
{
	char name[32];

	ft_init(t);
	for (int i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "node%d", i);
		assert_int_equal(ft_add_node(t, name), i);
		for (int k = 0; k < nics; k++) {
			snprintf(name, sizeof(name), "mlx5_%d", k);
			assert_true(ft_add_nic(t, i, name, "ib:4x:ndr") >= 0);
		}
	}
}

static const char *leaf_of(const struct ft_topo *t, const char *node, const char *dev)
{
	int c = ft_find_nic(t, node, dev);

	return c >= 0 && t->nics[c].leaf >= 0 ? t->sw[t->nics[c].leaf].name : "-";
}

static void test_layouts(void **state)
{
	struct ft_topo t;
	char why[256];
	int path[FT_PATH_MAX], seen[2] = { 0, 0 };

	(void)state;
	nodes(&t, 16, 1);
	assert_int_equal(ft_build_layout(&t, "fat-tree:leaves=4,spines=2", why, sizeof(why)), 0);
	assert_string_equal(leaf_of(&t, "node3", "mlx5_0"), "leaf0");
	assert_string_equal(leaf_of(&t, "node4", "mlx5_0"), "leaf1");
	assert_string_equal(leaf_of(&t, "node15", "mlx5_0"), "leaf3");
	assert_int_equal(t.nup, 8); /* every leaf to every spine */
	assert_int_equal(t.up[0].cables, 2); /* 4 NICs over 2 spines, non-blocking */
	assert_int_equal(ft_path(&t, 0, 1, 7, path), 2); /* within leaf0 */
	for (uint64_t h = 0; h < 64; h++) { /* node3 -> node4 across: some hashes each spine */
		assert_int_equal(ft_path(&t, 3, 4, h, path), 4);
		seen[path[1] >= ft_cable_element(&t, ft_find_uplink(&t, 0, ft_find_switch(&t,
								"spine1")), 0)]++;
	}
	assert_true(seen[0] > 0 && seen[1] > 0);
	ft_free(&t);

	nodes(&t, 4, 2);
	assert_int_equal(ft_build_layout(&t, "rail", why, sizeof(why)), 0);
	assert_string_equal(leaf_of(&t, "node2", "mlx5_0"), "leaf0");
	assert_string_equal(leaf_of(&t, "node2", "mlx5_1"), "leaf1");
	assert_int_equal(ft_find_switch(&t, "spine0") >= 0, 1);
	ft_free(&t);

	nodes(&t, 4, 1);
	assert_int_equal(ft_build_layout(&t, "fat-tree:leaves=2", why, sizeof(why)), -1);
	assert_non_null(strstr(why, "needs both leaves=L and spines=S"));
	assert_int_equal(ft_build_layout(&t, "torus:x=2", why, sizeof(why)), -1);
	ft_free(&t);
}

static void test_description_round_trip_and_errors(void **state)
{
	static const char *const bad[][2] = {
		{ "{\"fabriclab_fabric\": 1, \"nodes\": [{\"name\": \"n0\", \"nics\": [{\"name\": "
		  "\"mlx5_0\", \"lef\": \"leaf0\"}]}]}", "nodes[0].nics[0]: unknown field \"lef\"" },
		{ "{\"fabriclab_fabric\": 1, \"nodes\": [{\"name\": \"n0\", \"nics\": [{\"name\": "
		  "\"mlx5_0\", \"leaf\": \"leaf9\"}]}]}", "nodes[0].nics[0]: leaf: \"leaf9\" is no leaf" },
		{ "{\"fabriclab_fabric\": 1, \"nodes\": [{\"name\": \"n0\", \"nics\": [{\"name\": "
		  "\"mlx5_0\", \"data_direct\": 1}]}]}",
		  "nodes[0].nics[0]: data_direct: expected true or false" },
		{ "{\"fabriclab_fabric\": 1, \"nodes\": [],\n \"faults\": [{\"element\": \"spine7\", "
		  "\"rate_pct\": 50}]}", "faults[0]: element: \"spine7\" names no" },
		{ "{\"fabriclab_fabric\": 1,\n \"nodes\": [}", "t.json:2:" },
	};
	struct ft_topo t, back;
	char why[256], path[] = "/tmp/test_topology.XXXXXX";
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	nodes(&t, 4, 1);
	assert_int_equal(ft_build_layout(&t, "fat-tree:leaves=2,spines=1", why, sizeof(why)), 0);
	ft_fault_of(&t, "spine0")->rate_pct = 25;
	ft_fault_of(&t, "leaf1:2")->pause_every_ns = 100000000;
	ft_fault_of(&t, "leaf1:2")->pause_for_ns = 40000000;
	t.physics = true;
	t.rate_div = 20;
	t.nics[1].data_direct = true;
	assert_int_equal(ft_write_json(&t, path, why, sizeof(why)), 0);
	assert_int_equal(ft_read_json(path, &back, why, sizeof(why)), 0);
	assert_int_equal(back.nnodes, 4);
	assert_int_equal(back.nsw, 3);
	assert_string_equal(leaf_of(&back, "node3", "mlx5_0"), "leaf1");
	assert_int_equal(back.sw[ft_find_switch(&back, "spine0")].fault.rate_pct, 25);
	assert_int_equal(back.nics[3].fault.pause_for_ns, 40000000); /* leaf1:2 is node3's port */
	assert_int_equal(back.rate_div, 20);
	assert_true(back.nics[1].data_direct && !back.nics[0].data_direct);
	ft_free(&back);
	ft_free(&t);
	unlink(path);
	assert_refused(bad, sizeof(bad) / sizeof(bad[0]));
}

static void test_ibnetdiscover(void **state)
{
	struct ft_topo t;
	char why[256];
	int s0;

	(void)state;
	assert_int_equal(topo_read(FIXTURES "/ibnetdiscover-fat-tree.txt", &t, why, sizeof(why)), 0);
	assert_string_equal(t.layout, "ibnetdiscover");
	assert_int_equal(t.nnodes, 4);
	assert_string_equal(leaf_of(&t, "node1", "mlx5_0"), "leaf0");
	assert_string_equal(leaf_of(&t, "node2", "mlx5_0"), "leaf1");
	assert_int_equal(t.nics[ft_find_nic(&t, "node2", "mlx5_0")].leaf_port, 1);
	assert_int_equal(t.nics[ft_find_nic(&t, "node3", "mlx5_0")].lid, 4);
	assert_string_equal(t.nics[0].port, "ib:4x:ndr");
	s0 = ft_find_switch(&t, "spine0");
	assert_true(s0 >= 0 && t.sw[s0].role == FT_SPINE && t.sw[s0].lid == 21);
	assert_int_equal(t.nup, 4);
	assert_int_equal(t.up[ft_find_uplink(&t, ft_find_switch(&t, "leaf1"), s0)].cables, 2);
	assert_int_equal(t.up[ft_find_uplink(&t, ft_find_switch(&t, "leaf1"), s0)].leaf_port, 33);
	ft_free(&t);
	assert_int_equal(topo_read_ibnet("Switch 36 \"S-01\" # \"a\" lid 1\n[1] nonsense\n", "x.txt",
					 &t, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "x.txt:2: expected [PORT]"));
	ft_free(&t);
}

static void test_lldp(void **state)
{
	struct ft_topo t;
	char why[256], path[] = "/tmp/node9.XXXXXX";
	FILE *f;
	int fd;

	(void)state;
	assert_int_equal(topo_read(FIXTURES "/lldp", &t, why, sizeof(why)), 0);
	assert_int_equal(t.nnodes, 4);
	assert_string_equal(leaf_of(&t, "node1", "eth0"), "leaf0");
	assert_string_equal(leaf_of(&t, "node2", "eth0"), "leaf1"); /* json0 */
	assert_int_equal(t.nics[ft_find_nic(&t, "node3", "eth0")].leaf_port, 4);
	assert_string_equal(t.nics[ft_find_nic(&t, "node1", "eth0")].port_name, "swp2");
	/* the reports name RDMA devices, LLDP netdevs: a node's only interface is its NIC */
	assert_int_equal(topo_nic_of(&t, "node1", "mlx5_0"), ft_find_nic(&t, "node1", "eth0"));
	ft_free(&t);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	assert_non_null(f);
	fputs("{\"lldp\": {\"interface\": {\"eth0\": {\"port\": {}}}}}", f);
	fclose(f);
	assert_int_equal(topo_read(path, &t, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "lldp.interface.eth0: expected its neighbour's \"chassis\""));
	ft_free(&t);
	unlink(path);
}

static struct fl_hop_figures hop(int a, int b)
{
	struct fl_hop_figures h;

	memset(&h, 0, sizeof(h));
	snprintf(h.src_node, sizeof(h.src_node), "node%d", a);
	snprintf(h.dst_node, sizeof(h.dst_node), "node%d", b);
	snprintf(h.src_dev, sizeof(h.src_dev), "mlx5_0");
	snprintf(h.dst_dev, sizeof(h.dst_dev), "mlx5_0");
	h.wire_gbs = 1.0;
	return h;
}

static const struct fl_shared_element *named(const struct fl_hop_elements *e, const char *name)
{
	for (size_t i = 0; i < e->nel; i++)
		if (!strcmp(e->el[i].name, name))
			return &e->el[i];
	return NULL;
}

static void test_elements_the_hops_share(void **state)
{
	struct fl_hop_figures ring[4] = { hop(0, 1), hop(1, 2), hop(2, 3), hop(3, 0) };
	const struct fl_shared_element *layer;
	struct fl_hop_elements e;
	struct ft_topo t;
	char why[256], cmds[2048];

	(void)state;
	assert_int_equal(topo_read(FIXTURES "/ibnetdiscover-fat-tree.txt", &t, why, sizeof(why)), 0);
	assert_int_equal(topo_hop_elements(&t, ring, 4, &e, why, sizeof(why)), 0);
	for (size_t i = 0; i < e.nel; i++)
		print_message("%-44s %zu hops%s\n", e.el[i].name, e.el[i].count,
			      e.el[i].certain ? "" : " (ECMP)");
	layer = named(&e, "the spine layer (spine0, spine1)");
	assert_non_null(layer);
	assert_int_equal(layer->count, 2); /* node1 -> node2 and node3 -> node0 */
	assert_true(layer->certain);       /* each crosses one spine or the other: the layer */
	assert_null(named(&e, "spine0"));
	assert_non_null(named(&e, "leaf0 port 2 (node1/mlx5_0)"));
	assert_true(topo_confirm_commands(&t, &e, layer, ring, cmds, sizeof(cmds)) >= 3);
	assert_non_null(strstr(cmds, "perfquery -x -a 21"));
	assert_non_null(strstr(cmds, "ibtracert -G 0x0c42a10300010000 0x0c42a10300020000"));
	assert_int_equal(topo_confirm_commands(&t, &e, named(&e, "leaf0 port 2 (node1/mlx5_0)"),
					       ring, cmds, sizeof(cmds)), 3);
	assert_non_null(strstr(cmds, "perfquery -x 11 2"));
	fl_hop_elements_free(&e);
	ring[2] = hop(2, 9);
	assert_int_equal(topo_hop_elements(&t, ring, 4, &e, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "hop node2/mlx5_0 -> node9/mlx5_0: the topology (ibnetdiscover) "
				    "has no node node9"));
	ft_free(&t);

	ring[2] = hop(2, 3);
	nodes(&t, 4, 1);
	assert_int_equal(ft_build_layout(&t, "fat-tree:leaves=2,spines=1", why, sizeof(why)), 0);
	assert_int_equal(topo_hop_elements(&t, ring, 4, &e, why, sizeof(why)), 0);
	layer = named(&e, "spine0");
	assert_non_null(layer); /* one spine: the data can name it */
	assert_true(layer->certain);
	fl_hop_elements_free(&e);
	ft_free(&t);
}

/* A verdict of kind k on hop h of ring, naming node (a switch: its element). */
static struct fl_verdict verdict(enum fl_verdict_kind k, int h, const char *node)
{
	struct fl_verdict v;

	memset(&v, 0, sizeof(v));
	v.kind = k;
	v.hop = h;
	snprintf(v.node, sizeof(v.node), "%s", node);
	snprintf(v.dev, sizeof(v.dev), "mlx5_0");
	return v;
}

/* The commands confirming a verdict name the switch and its port, with the topology's LIDs. */
static void test_verdict_commands_name_the_switch(void **state)
{
	struct fl_hop_figures ring[4] = { hop(0, 1), hop(1, 2), hop(2, 3), hop(3, 0) };
	struct fl_hop_elements e;
	struct fl_verdict v;
	struct ft_topo t;
	char why[256], cmds[2048];

	(void)state;
	assert_int_equal(topo_read(FIXTURES "/ibnetdiscover-fat-tree.txt", &t, why, sizeof(why)), 0);
	assert_int_equal(topo_hop_elements(&t, ring, 4, &e, why, sizeof(why)), 0);
	/* the spine layer, slow hop node1 -> node2: its route, each spine, its ports to leaf0
	 * (node1's, ports 1-2 of each spine) and leaf1 (node2's, ports 3-4) */
	v = verdict(FL_VERDICT_SWITCH, 1, "the spine layer (spine0, spine1)");
	assert_true(topo_confirm_verdict(&t, &e, &v, ring, 4, cmds, sizeof(cmds)) >= 11);
	print_message("%s", cmds);
	assert_non_null(strstr(cmds, "ibtracert -G 0x0c42a10300010000 0x0c42a10300020000"));
	assert_non_null(strstr(cmds, "perfquery -x -a 21"));
	assert_non_null(strstr(cmds, "perfquery -x -a 22"));
	assert_non_null(strstr(cmds, "perfquery -x 21 1   # spine0 port 1: cable 1 of 2 to leaf0"));
	assert_non_null(strstr(cmds, "perfquery -x 22 4   # spine1 port 4: cable 2 of 2 to leaf1"));
	/* a device: the leaf port its NIC hangs off */
	v = verdict(FL_VERDICT_DEVICE, 1, "node1");
	assert_int_equal(topo_confirm_verdict(&t, &e, &v, ring, 4, cmds, sizeof(cmds)), 3);
	assert_non_null(strstr(cmds, "perfquery -x 11 2   # leaf0 port 2"));
	assert_non_null(strstr(cmds, "ibportstate 11 2 query"));
	/* a link: both ends' leaf ports, its route once */
	v = verdict(FL_VERDICT_LINK, 1, "");
	assert_int_equal(topo_confirm_verdict(&t, &e, &v, ring, 4, cmds, sizeof(cmds)), 5);
	assert_non_null(strstr(cmds, "perfquery -x 11 2"));
	assert_non_null(strstr(cmds, "perfquery -x 12 1"));
	assert_non_null(strstr(cmds, "ibtracert"));
	assert_null(strstr(strstr(cmds, "ibtracert") + 1, "ibtracert"));
	/* not enough evidence with the spine layer next: its commands tell the two apart */
	v = verdict(FL_VERDICT_UNSURE, -1, "");
	v.runner_up.kind = FL_VERDICT_SWITCH;
	snprintf(v.runner_up.culprit, sizeof(v.runner_up.culprit), "%s",
		 "the spine layer (spine0, spine1)");
	assert_true(topo_confirm_verdict(&t, &e, &v, ring, 4, cmds, sizeof(cmds)) >= 3);
	assert_non_null(strstr(cmds, "perfquery -x -a 21"));
	/* healthy, or a switch the topology does not have: nothing */
	v = verdict(FL_VERDICT_NONE, -1, "");
	assert_int_equal(topo_confirm_verdict(&t, &e, &v, ring, 4, cmds, sizeof(cmds)), 0);
	v = verdict(FL_VERDICT_SWITCH, 1, "spine7");
	assert_int_equal(topo_confirm_verdict(&t, &e, &v, ring, 4, cmds, sizeof(cmds)), 0);
	assert_string_equal(cmds, "");
	fl_hop_elements_free(&e);
	ft_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_layouts),
		cmocka_unit_test(test_description_round_trip_and_errors),
		cmocka_unit_test(test_ibnetdiscover),
		cmocka_unit_test(test_lldp),
		cmocka_unit_test(test_elements_the_hops_share),
		cmocka_unit_test(test_verdict_commands_name_the_switch),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
