/*
 * `fabriclab lab --rails K`: a rail-optimised cluster. Every node has K NICs
 * on the emulated fabric (mlx5_0..mlx5_<K-1>), NIC k of every node on rail k
 * (leaf switch k), and one rank per GPU: K ranks per node, rank k of a node
 * using NIC k, as NCCL gives GPU k its nearest NIC. Ranks are numbered rail by
 * rail (rank = rail x nodes + node), so the ring the shim runs goes along rail
 * 0 through every node, then rail 1, and so on: all its hops but K stay on one
 * rail, as NCCL's rail-aligned rings do (its hops between rails cross NVLink
 * inside a node; here they are the K hops where one rail's chain meets the next).
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

void lab_rails_devices(const struct lab_opts *o, const char *port, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (int k = 0; k < o->rails && used < len; k++)
		used += (size_t)snprintf(buf + used, len - used, "%smlx5_%d=%s", k ? "," : "", k,
					 port);
}

void lab_rails_enter(const struct lab_opts *o, int rank)
{
	char node[32], dev[16];

	if (o->rails < 2)
		return;
	snprintf(node, sizeof(node), "node%d", lab_rank_node(o, rank));
	snprintf(dev, sizeof(dev), "%d", lab_rank_rail(o, rank));
	setenv("FABRICLAB_NODE_NAME", node, 1);
	setenv("FABRICLAB_SHIM_DEV", dev, 1);
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
	if (o->fabric == LAB_TCP) {
		fprintf(stderr, "fabriclab lab: --rails gives each node K NICs on the emulated "
			"fabric: use --fabric roce or ib\n");
		return -1;
	}
	if (o->netns) {
		fprintf(stderr, "fabriclab lab: --rails with --netns (K bridges) is not built: "
			"the rails run on the emulated fabric without namespaces\n");
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
