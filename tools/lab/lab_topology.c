/*
 * The emulated fabric of a run, as one description (fabric/README.md): the
 * lab's nodes and their NICs, the switches --topology asks for (flat without
 * it: every NIC reaches every other alone), the preset's physics, the
 * --hw-fault and the GPUs' copy rate (--copy-rate). Written as
 * <run>/topology.json, which every rank's emulated NIC and GPU
 * reads (FABRICLAB_FABRIC) and `fabriclab report --topology` takes back.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fabric/topo/topo_json.h"
#include "lab.h"

/* The fake NIC names a node's NICs' GUIDs from node and device (fabric/nic/fv_config.c). */
static uint64_t nic_guid(int node, int k)
{
	return 0x0c42a10300000000ull | ((uint64_t)node << 16) | ((uint64_t)k << 4);
}

static const char *port_of(const struct lab_opts *o)
{
	return lab_like_port(o) ? lab_like_port(o) : o->fabric == LAB_IB ? "ib:4x:ndr" :
									 "eth:4x:100g";
}

static int lab_nodes(const struct lab_opts *o, struct ft_topo *t)
{
	char name[32];

	for (int n = 0; n < o->nodes; n++) {
		snprintf(name, sizeof(name), "node%d", n);
		if (ft_add_node(t, name) < 0)
			return -1;
		for (int k = 0; k < o->rails; k++) {
			int c;

			lab_rail_dev(k, name, sizeof(name));
			c = ft_add_nic(t, n, name, port_of(o));
			if (c < 0)
				return -1;
			t->nics[c].guid = nic_guid(n, k);
		}
	}
	return 0;
}

/* A user's description: it must hold the lab's nodes and NICs; their ports become the preset's. */
static int from_file(const struct lab_opts *o, struct ft_topo *t)
{
	char why[512], dev[16], node[16];

	if (ft_read_json(o->topology, t, why, sizeof(why))) {
		fprintf(stderr, "fabriclab lab: --topology %s\n", why);
		return -1;
	}
	for (int n = 0; n < o->nodes; n++)
		for (int k = 0; k < o->rails; k++) {
			int c;

			snprintf(node, sizeof(node), "node%d", n);
			lab_rail_dev(k, dev, sizeof(dev));
			c = ft_find_nic(t, node, dev);
			if (c < 0) {
				fprintf(stderr, "fabriclab lab: --topology %s: no NIC %s/%s, which the "
					"lab's %d nodes x %d rails need\n", o->topology, node, dev,
					o->nodes, o->rails);
				return -1;
			}
			snprintf(t->nics[c].port, sizeof(t->nics[c].port), "%s", port_of(o));
			if (!t->nics[c].guid)
				t->nics[c].guid = nic_guid(n, k);
		}
	return 0;
}

static void hw_effect(const struct lab_opts *o, struct ft_fault *f)
{
	const struct lab_hw *hw = &o->hw;

	f->rate_pct = hw->rate_pct;
	f->pause_every_ns = (uint64_t)hw->every_ns; /* this machine's clock, as given */
	f->pause_for_ns = (uint64_t)hw->for_ns;
	/* a latency is the fabric's, so it is scaled as the preset's one way is */
	f->add_ns = (uint64_t)(hw->add_ns * (o->like ? lab_like_scale(o->like) : 1.0) + 0.5);
}

static int hw_bad(const struct lab_opts *o, const char *why)
{
	fprintf(stderr, "fabriclab lab: --hw-fault '%s': %s\n", o->hw_fault, why);
	return -1;
}

/* --hw-fault into the description: the NIC(s), a leaf port, a leaf's cables to a spine, a spine. */
static int apply_hw(const struct lab_opts *o, struct ft_topo *t)
{
	const struct lab_hw *hw = &o->hw;
	char name[64], why[96];
	struct ft_fault *f;

	if (lab_hw_on_switch(hw)) {
		if (hw->kind == LAB_HW_SPINE)
			snprintf(name, sizeof(name), "spine%d", hw->spine);
		else
			snprintf(name, sizeof(name), "leaf%d-spine%d", hw->leaf, hw->spine);
		f = ft_fault_of(t, name);
		if (!f) {
			snprintf(why, sizeof(why), "the topology (%s) has no %s", t->layout, name);
			return hw_bad(o, why);
		}
		hw_effect(o, f);
		return 0;
	}
	for (int k = 0; k < o->rails; k++) {
		int c = t->nodes[hw->node].first_nic + k;

		if (hw->nic >= 0 && hw->nic != k)
			continue;
		if (hw->kind == LAB_HW_LEAFPORT && t->nics[c].leaf < 0)
			return hw_bad(o, "a leaf port needs switches: --topology fat-tree:... or rail");
		hw_effect(o, &t->nics[c].fault);
	}
	return 0;
}

int lab_topology_build(struct lab_opts *o)
{
	struct ft_topo *t = &o->topo;
	char why[256];
	int rc;

	ft_init(t);
	if (o->topology && !ft_is_layout_spec(o->topology))
		rc = from_file(o, t);
	else if (lab_nodes(o, t))
		rc = -1;
	else if ((rc = ft_build_layout(t, o->topology ? o->topology : "flat", why, sizeof(why))))
		fprintf(stderr, "fabriclab lab: --topology: %s\n", why);
	if (!rc && o->hw_fault)
		rc = apply_hw(o, t);
	lab_like_physics(o, t);
	return rc;
}

int lab_topology_write(struct lab_opts *o, char *path, size_t len)
{
	size_t n = strlen(o->run_dir);
	char why[512];

	/* the emulated NIC's paths under it must fit too: the state folder's is bounded */
	if (n + sizeof("/fabric") > sizeof(o->topo.state_dir)) {
		fprintf(stderr, "fabriclab lab: %s: the run folder's path is too long for the "
			"emulated fabric's state (at most %zu characters)\n", o->run_dir,
			sizeof(o->topo.state_dir) - sizeof("/fabric"));
		return -1;
	}
	memcpy(o->topo.state_dir, o->run_dir, n);
	memcpy(o->topo.state_dir + n, "/fabric", sizeof("/fabric"));
	/* every node's GPUs copy at --copy-rate (a --topology FILE's node may keep its own) */
	o->topo.gpus.copy_bytes_per_s = (uint64_t)(o->copy_rate_bytes + 0.5);
	snprintf(path, len, "%s/topology.json", o->run_dir);
	if (ft_write_json(&o->topo, path, why, sizeof(why))) {
		fprintf(stderr, "fabriclab lab: %s\n", why);
		return -1;
	}
	return 0;
}

void lab_topology_print(const struct lab_opts *o, FILE *out)
{
	const struct ft_topo *t = &o->topo;
	int leaves = 0, spines = 0;

	for (int s = 0; s < t->nsw; s++)
		*(t->sw[s].role == FT_LEAF ? &leaves : &spines) += 1;
	if (!leaves) {
		fprintf(out, "topology: flat (no switches: every NIC reaches every other alone; "
			"%s/topology.json)\n", o->run_dir);
		return;
	}
	fprintf(out, "topology: %s: %d lea%s, %d spine%s, %d cable%s each way between a leaf "
		"and a spine (%s/topology.json)\n", t->layout, leaves, leaves == 1 ? "f" : "ves",
		spines, spines == 1 ? "" : "s", t->nup ? t->up[0].cables : 0,
		t->nup && t->up[0].cables == 1 ? "" : "s", o->run_dir);
}
