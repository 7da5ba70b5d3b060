/*
 * The topologies `fabriclab report --topology` and the emulated NIC read, on any bytes: the
 * fabric's description (JSON) and ibnetdiscover's output each parse or are refused with a
 * reason, never crash, leak or hang; what parses is a topology whose references hold (every
 * NIC's leaf is a leaf, every uplink joins a leaf to a spine), that writes back and reads again
 * alike (every node's GPUs too), and on which a ring of hops over its first NICs maps to shared
 * elements.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fabric/topo/topo_json.h"
#include "tools/topology/topology.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_refs(const struct ft_topo *t)
{
	for (int i = 0; i < t->nnics; i++)
		if (t->nics[i].leaf >= t->nsw ||
		    (t->nics[i].leaf >= 0 && t->sw[t->nics[i].leaf].role != FT_LEAF))
			abort();
	for (int u = 0; u < t->nup; u++)
		if (t->sw[t->up[u].leaf].role != FT_LEAF || t->sw[t->up[u].spine].role != FT_SPINE ||
		    t->up[u].cables < 1)
			abort();
}

/* A ring over the nodes' first NICs maps to elements, or is refused with a reason. */
static void ring(const struct ft_topo *t)
{
	struct fl_hop_figures hops[8];
	struct fl_hop_elements e;
	char why[512];
	int n = 0;

	for (int i = 0; i < t->nnodes && n < 8; i++)
		if (t->nodes[i].nnics)
			n++;
	if (n < 2)
		return;
	memset(hops, 0, sizeof(hops));
	for (int i = 0; i < n; i++) {
		const struct ft_nic *a = &t->nics[t->nodes[i].first_nic];
		const struct ft_nic *b = &t->nics[t->nodes[(i + 1) % n].first_nic];

		snprintf(hops[i].src_node, sizeof(hops[i].src_node), "%s", t->nodes[a->node].name);
		snprintf(hops[i].src_dev, sizeof(hops[i].src_dev), "%s", a->name);
		snprintf(hops[i].dst_node, sizeof(hops[i].dst_node), "%s", t->nodes[b->node].name);
		snprintf(hops[i].dst_dev, sizeof(hops[i].dst_dev), "%s", b->name);
	}
	if (!topo_hop_elements(t, hops, (size_t)n, &e, why, sizeof(why))) {
		for (size_t k = 0; k < e.nel; k++)
			if (e.el[k].count < 2 || e.el[k].first + e.el[k].count > e.nhops)
				abort();
		fl_hop_elements_free(&e);
	}
}

static bool same_gpus(const struct ft_gpus *a, const struct ft_gpus *b)
{
	if (a->npci != b->npci)
		return false;
	for (int i = 0; i < a->npci; i++)
		if (strcmp(a->pci[i], b->pci[i]))
			return false;
	return a->count == b->count && a->gdr == b->gdr && a->dmabuf == b->dmabuf &&
	       a->memory_bytes == b->memory_bytes && a->protect == b->protect && a->cc == b->cc &&
	       a->copy_bytes_per_s == b->copy_bytes_per_s;
}

static void round_trip(const struct ft_topo *t)
{
	char path[] = "/tmp/fuzz_topology.XXXXXX", why[512];
	struct ft_topo back;
	int fd = mkstemp(path);

	if (fd < 0)
		return;
	close(fd);
	if (ft_write_json(t, path, why, sizeof(why)) || ft_read_json(path, &back, why, sizeof(why)) ||
	    back.nnodes != t->nnodes || back.nnics != t->nnics || back.nsw != t->nsw ||
	    back.nup != t->nup)
		abort();
	for (int n = 0; n < t->nnodes; n++) {
		struct ft_gpus was, now;

		ft_node_gpus(t, n, &was);
		ft_node_gpus(&back, n, &now);
		if (!same_gpus(&was, &now))
			abort();
	}
	ft_free(&back);
	unlink(path);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1), why[512];
	struct ft_topo t;
	int rc;

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	if (size && text[0] == '{')
		rc = ft_parse_json(text, size, "fuzz.json", &t, why, sizeof(why));
	else
		rc = topo_read_ibnet(text, "fuzz.txt", &t, why, sizeof(why));
	if (rc && !why[0])
		abort(); /* a refusal says why */
	if (!rc) {
		check_refs(&t);
		ring(&t);
		if (size && text[0] == '{')
			round_trip(&t);
	}
	ft_free(&t);
	free(text);
	return 0;
}
