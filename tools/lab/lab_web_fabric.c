/*
 * The web lab's emulated fabric: a preset (lab --like), switches (--topology
 * fat-tree:leaves=L,spines=S or rail[:spines=S]) and the faults of a switch
 * (--hw-fault), asked for by the page as plain fields and checked here, so a
 * bad request gets its field and the accepted values before any lab starts.
 * The page draws the switches from the description the lab builds: before a
 * run from lab_web_layout (the same code, in this process), during and after
 * it from the run's own topology.json.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fabric/topo/topo_json.h"
#include "lab.h"
#include "lab_web.h"

#define MAX_SPINES 8

/* The presets the page offers (lab_like.c has their physics) and their fabric. */
static const struct { const char *name, *fabric; } presets[] = {
	{ "hdr", "ib" }, { "ndr", "ib" }, { "xdr", "ib" }, { "roce400", "roce" },
};

/* A switch's fault: what the lab is asked (a 25% spine or uplink: fabric/README.md, a
 * non-blocking fat-tree's ring slows only below 50%; a leaf port at 50%, as halve-cable). */
static const struct { const char *scenario, *form; } switch_faults[] = {
	{ "slow-spine", "spine:spine=%d,rate=25%%" },
	{ "slow-uplink", "uplink:leaf=%d,spine=%d,rate=25%%" },
	{ "slow-leafport", "leafport:node=node%d%s,rate=50%%" },
};

static int refuse(char *why, size_t len, const char *text)
{
	snprintf(why, len, "%s", text);
	return -1;
}

static const char *preset_fabric(const char *like)
{
	for (size_t i = 0; i < sizeof(presets) / sizeof(presets[0]); i++)
		if (!strcmp(like, presets[i].name))
			return presets[i].fabric;
	return NULL;
}

bool lab_web_switch_scenario(const char *scenario)
{
	for (size_t i = 0; i < sizeof(switch_faults) / sizeof(switch_faults[0]); i++)
		if (!strcmp(scenario, switch_faults[i].scenario))
			return true;
	return false;
}

static bool has_switches(const struct lab_job_request *r)
{
	return r->topology[0] && strcmp(r->topology, "flat");
}

/* The leaves the layout makes: fat-tree's, or one per NIC of a node (rail). */
static int leaves_of(const struct lab_job_request *r)
{
	return !strcmp(r->topology, "rail") ? r->rails : r->leaves;
}

static int check_switch_fault(const struct lab_job_request *r, char *why, size_t len)
{
	if (!has_switches(r))
		return refuse(why, len, "scenario: slow-spine, slow-uplink and slow-leafport need "
			      "a topology with switches (fat-tree or rail)");
	if (!strcmp(r->scenario, "slow-leafport"))
		return r->target < 0 ? refuse(why, len, "target: slow-leafport needs a node (0 to "
					      "nodes - 1)") : 0;
	if (r->spine < 0 || r->spine >= r->spines)
		return refuse(why, len, "spine: expected a spine below spines");
	if (!strcmp(r->scenario, "slow-uplink") && (r->leaf < 0 || r->leaf >= leaves_of(r)))
		return refuse(why, len, "leaf: expected a leaf below the topology's leaves");
	return 0;
}

int lab_web_check_fabric(const struct lab_job_request *r, char *why, size_t len)
{
	const char *fabric = r->like[0] ? preset_fabric(r->like) : NULL;

	if (r->like[0] && !fabric)
		return refuse(why, len, "like: expected \"\" (none), hdr, ndr, xdr or roce400");
	if (fabric && strcmp(fabric, r->fabric))
		return refuse(why, len, "fabric: the preset's own (ib for hdr, ndr and xdr; roce "
			      "for roce400)");
	if (fabric && r->link_rate[0])
		return refuse(why, len, "link_rate: a preset sets the rate (leave it out)");
	if (r->topology[0] && strcmp(r->topology, "flat") && strcmp(r->topology, "fat-tree") &&
	    strcmp(r->topology, "rail"))
		return refuse(why, len, "topology: expected \"\" or flat (no switches), fat-tree "
			      "or rail");
	if (has_switches(r) && !fabric)
		return refuse(why, len, "topology: switches need a preset (like: hdr, ndr, xdr or "
			      "roce400)");
	if (has_switches(r) && (r->spines < 1 || r->spines > MAX_SPINES))
		return refuse(why, len, "spines: expected an integer from 1 to 8");
	if (!strcmp(r->topology, "fat-tree") && (r->leaves < 1 || r->leaves > r->nodes))
		return refuse(why, len, "leaves: expected an integer from 1 to nodes");
	if (lab_web_switch_scenario(r->scenario))
		return check_switch_fault(r, why, len);
	return 0;
}

void lab_web_topology_spec(const struct lab_job_request *r, char *spec, size_t len)
{
	spec[0] = '\0';
	if (!strcmp(r->topology, "fat-tree"))
		snprintf(spec, len, "fat-tree:leaves=%d,spines=%d", r->leaves, r->spines);
	else if (!strcmp(r->topology, "rail"))
		snprintf(spec, len, "rail:spines=%d", r->spines);
}

void lab_web_hw_fault(const struct lab_job_request *r, char *spec, size_t len)
{
	char nic[16] = "";

	spec[0] = '\0';
	if (!strcmp(r->scenario, "slow-spine"))
		snprintf(spec, len, switch_faults[0].form, r->spine);
	else if (!strcmp(r->scenario, "slow-uplink"))
		snprintf(spec, len, switch_faults[1].form, r->leaf, r->spine);
	else if (!strcmp(r->scenario, "slow-leafport")) {
		if (r->rails > 1 && r->rail >= 0)
			snprintf(nic, sizeof(nic), ",nic=%d", r->rail);
		snprintf(spec, len, switch_faults[2].form, r->target, nic);
	}
}

/* What the lab would build for r (lab_topology.c), without a run. */
char *lab_web_layout(const struct lab_job_request *r, char *why, size_t len)
{
	struct lab_opts o = { .nodes = r->nodes, .rails = r->rails, .target = -1,
			      .target_rail = -1 };
	char spec[64];
	char *text = NULL;

	if (lab_fabric_parse(r->fabric, &o.fabric) || o.fabric == LAB_TCP) {
		refuse(why, len, "fabric: the emulated fabric is roce's or ib's (tcp has none)");
		return NULL;
	}
	lab_web_topology_spec(r, spec, sizeof(spec));
	o.topology = spec[0] ? spec : NULL;
	if (r->like[0] && lab_like_parse(r->like, &o)) {
		refuse(why, len, "like: expected hdr, ndr, xdr or roce400");
		return NULL;
	}
	if (lab_topology_build(&o))
		refuse(why, len, "the lab could not build that fabric (its reason is in the "
		       "server's log)");
	else if (!(text = ft_json_text(&o.topo)))
		refuse(why, len, "out of memory");
	ft_free(&o.topo);
	return text;
}
