/*
 * `fabriclab lab --rails K`: a rail-optimised cluster. Every node has K NICs
 * on the emulated fabric (mlx5_0..mlx5_<K-1>), NIC k of every node on rail k
 * (leaf switch k), and one rank per GPU: K ranks per node, rank k of a node
 * using NIC k, as NCCL gives GPU k its nearest NIC. Ranks are numbered rail by
 * rail (rank = rail x nodes + node), so the ring the shim runs goes along rail
 * 0 through every node, then rail 1, and so on: all its hops but K stay on one
 * rail, as NCCL's rail-aligned rings do (its hops between rails cross NVLink
 * inside a node; here they are the K hops where one rail's chain meets the next).
 * Over tcp the NICs are interfaces eth0..eth<K-1> of the node's network
 * namespace, eth<k> on bridge br<k> (lab_netns.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lab.h"

int lab_rank_node(const struct lab_opts *o, int rank)
{
	return o->rails > 1 ? rank % o->nodes : rank;
}

int lab_rank_rail(const struct lab_opts *o, int rank)
{
	return o->rails > 1 ? rank / o->nodes : 0;
}

void lab_rail_dev(int rail, char *buf, size_t len)
{
	snprintf(buf, len, "mlx5_%d", rail);
}

void lab_rails_enter(const struct lab_opts *o, int rank)
{
	char node[32], dev[16], ifname[16];

	if (o->rails < 2)
		return;
	snprintf(node, sizeof(node), "node%d", lab_rank_node(o, rank));
	snprintf(dev, sizeof(dev), "%d", lab_rank_rail(o, rank));
	setenv("FABRICLAB_NODE_NAME", node, 1);
	if (o->fabric != LAB_TCP) {
		setenv("FABRICLAB_SHIM_DEV", dev, 1);
		return;
	}
	/* Sockets: the node's interface of this rail, by its exact name, is the one device. */
	snprintf(ifname, sizeof(ifname), "=eth%d", lab_rank_rail(o, rank));
	setenv("FABRICLAB_SOCKET_IFNAME", ifname, 1);
	setenv("FABRICLAB_SHIM_DEV", "0", 1);
}

void lab_rail_dev_of(const struct lab_opts *o, int rail, char *buf, size_t len)
{
	if (o->fabric == LAB_TCP)
		snprintf(buf, len, "eth%d", rail);
	else
		lab_rail_dev(rail, buf, len);
}

int lab_rails_check(const struct lab_opts *o)
{
	if (o->scenario == LAB_SLOW_RAIL && o->rails < 2) {
		fprintf(stderr, "fabriclab lab: slow-rail needs --rails 2 or more (a rail is one "
			"NIC of every node)\n");
		return -1;
	}
	if (o->rails < 2)
		return 0;
	if (o->fabric == LAB_TCP && !o->netns) {
		fprintf(stderr, "fabriclab lab: --rails gives each node K NICs: on the emulated "
			"fabric (--fabric roce or ib) or, over tcp, K interfaces on K bridges "
			"(--netns); loopback has one\n");
		return -1;
	}
	if (o->fabric != LAB_TCP && o->netns) {
		fprintf(stderr, "fabriclab lab: --rails with --netns runs over tcp (K bridges); "
			"--fabric %s rails run without namespaces\n", lab_fabric_name(o->fabric));
		return -1;
	}
	if (o->tc) {
		fprintf(stderr, "fabriclab lab: --tc with --rails is not built (tc shapes rail 0 "
			"only): use slow-rail or --fault\n");
		return -1;
	}
	if (o->nodes * o->rails > LAB_MAX_RANKS) {
		fprintf(stderr, "fabriclab lab: --rails %d x %d nodes is %d ranks: at most "
			LAB_MAX_RANKS_TEXT "\n", o->rails, o->nodes, o->rails * o->nodes);
		return -1;
	}
	if (o->target_rail >= o->rails) {
		fprintf(stderr, "fabriclab lab: --rail %d: there are %d rails (0..%d)\n",
			o->target_rail, o->rails, o->rails - 1);
		return -1;
	}
	return 0;
}
