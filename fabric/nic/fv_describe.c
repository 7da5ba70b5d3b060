/*
 * The fabric's description (FABRICLAB_FABRIC=FILE, fabric/README.md) as the
 * NIC of one process reads it: which node this process is, that node's NICs
 * (its devices), the emulation's settings, and every NIC's place in the
 * schedule so that all processes number the shared elements alike. The
 * environment's FABRICLAB_FAKEVERBS_* variables are overrides over it
 * (fv_config.c); without a description they are all there is.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fabric/topo/topo_json.h"
#include "fv_internal.h"

/* This process's node (ft_process_node: as the emulated GPU picks it), or -1 said on stderr. */
static int pick_node(const struct ft_topo *t, const char *file)
{
	int n = ft_process_node(t);

	if (n < 0)
		fprintf(stderr, "fakeverbs: FABRICLAB_FABRIC_NODE=%s: %s has no such node\n",
			getenv("FABRICLAB_FABRIC_NODE"), file);
	return n;
}

/* The node's NICs as NAME=PORT[,NAME=PORT] for fv_config_parse_devices. */
static int node_spec(const struct ft_topo *t, int node, char *spec, size_t len)
{
	size_t used = 0;

	spec[0] = '\0';
	for (int k = 0; k < t->nodes[node].nnics; k++) {
		const struct ft_nic *c = &t->nics[t->nodes[node].first_nic + k];
		int n = snprintf(spec + used, len - used, "%s%s=%s", k ? "," : "", c->name,
				 c->port[0] ? c->port : "ib:4x:hdr");

		if (n < 0 || (size_t)n >= len - used)
			return EINVAL;
		used += (size_t)n;
	}
	return 0;
}

int fv_describe(struct fv_config *cfg, char *spec, size_t len)
{
	const char *file = getenv("FABRICLAB_FABRIC");
	char why[512];
	int node;

	if (!file || !*file)
		return 0;
	if (ft_read_json(file, &cfg->topo, why, sizeof(why))) {
		fprintf(stderr, "fakeverbs: FABRICLAB_FABRIC: %s\n", why);
		return EINVAL;
	}
	if (ft_elements(&cfg->topo) > FV_MAX_ELEMENTS || cfg->topo.nnodes == 0) {
		fprintf(stderr, "fakeverbs: FABRICLAB_FABRIC: %s: %s\n", file,
			cfg->topo.nnodes ? "more links than the emulation holds" : "no nodes");
		return EINVAL;
	}
	node = pick_node(&cfg->topo, file);
	if (node < 0 || node_spec(&cfg->topo, node, spec, len)) {
		if (node >= 0)
			fprintf(stderr, "fakeverbs: FABRICLAB_FABRIC: node %s has too many NICs\n",
				cfg->topo.nodes[node].name);
		return EINVAL;
	}
	cfg->described = true;
	cfg->node = node;
	cfg->dmabuf = cfg->topo.dmabuf;
	cfg->retry_ms = cfg->topo.retry_ms;
	cfg->sq_alloc = (uint32_t)cfg->topo.max_send_wr;
	if (cfg->topo.state_dir[0])
		snprintf(cfg->dir, sizeof(cfg->dir), "%s", cfg->topo.state_dir);
	return 0;
}

int fv_describe_nics(struct fv_config *cfg)
{
	for (int i = 0; i < cfg->ndevs; i++) {
		struct fv_device *d = &cfg->dev[i];
		int nic;

		if (!cfg->described) {
			/* without a description every node's NICs get places of their own */
			d->nic = cfg->node * FV_MAX_DEVS + i;
			continue;
		}
		if (cfg->node >= cfg->topo.nnodes) {
			fprintf(stderr, "fakeverbs: FABRICLAB_FAKEVERBS_NODE=%d: the description has "
				"%d nodes\n", cfg->node, cfg->topo.nnodes);
			return EINVAL;
		}
		nic = ft_find_nic(&cfg->topo, cfg->topo.nodes[cfg->node].name, d->ibdev.name);
		if (nic < 0) /* FABRICLAB_FAKEVERBS_DEVICES gave the node another: a place past the
			      * description's elements, cabled to no switch */
			nic = (ft_elements(&cfg->topo) + 1) / 2 + cfg->node * FV_MAX_DEVS + i;
		else
			d->data_direct = cfg->topo.nics[nic].data_direct;
		if (2 * nic + 1 >= FV_MAX_ELEMENTS) {
			fprintf(stderr, "fakeverbs: device %s: past the links the emulation holds\n",
				d->ibdev.name);
			return EINVAL;
		}
		d->nic = nic;
	}
	return 0;
}
