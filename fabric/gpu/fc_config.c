/*
 * What this process's emulated GPUs are: the fabric's description (FABRICLAB_FABRIC, its
 * "gpus" and its node's own, for the node ft_process_node picks, as the emulated NIC does),
 * then the FABRICLAB_FAKECUDA_* variables over it (fakecuda.c's comment lists them). Read once,
 * on the first CUDA call.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fabric/topo/topo_json.h"
#include "fc_internal.h"

/* This process's GPUs: the description's for its node, then the variables over them. */
struct config {
	struct ft_gpus g;
	long long limit; /* bytes; -1 unlimited */
};

static struct config cfg;
static pthread_once_t cfg_once = PTHREAD_ONCE_INIT;

static const char *env(const char *name)
{
	const char *v = getenv(name);

	return v && *v ? v : NULL;
}

/* An integer override, or def where it is unset or not an integer (said on stderr). */
static long env_long(const char *name, long def)
{
	const char *v = env(name);
	char *end;
	long n;

	if (!v)
		return def;
	n = strtol(v, &end, 0);
	if (*end) {
		fprintf(stderr, "fakecuda: %s=%s: expected an integer; ignored\n", name, v);
		return def;
	}
	return n;
}

/* GPUs as the description says; false (and why on stderr) when it is refused: no GPUs then. */
static bool described(struct ft_gpus *g)
{
	const char *file = env("FABRICLAB_FABRIC");
	struct ft_topo t;
	char why[512];
	int node;

	if (!file)
		return true;
	if (ft_read_json(file, &t, why, sizeof(why))) {
		fprintf(stderr, "fakecuda: FABRICLAB_FABRIC: %s\n", why);
		ft_free(&t);
		return false;
	}
	node = t.nnodes ? ft_process_node(&t) : -2;
	if (node == -1)
		fprintf(stderr, "fakecuda: FABRICLAB_FABRIC_NODE=%s: %s has no such node\n",
			env("FABRICLAB_FABRIC_NODE"), file);
	else if (node >= 0)
		ft_node_gpus(&t, node, g);
	else
		*g = t.gpus; /* a description of GPUs and no nodes: every process alike */
	ft_free(&t);
	return node != -1;
}

/* FABRICLAB_FAKECUDA_PCI over the bus ids: GPU i's is its i-th entry. */
static void pci_override(struct ft_gpus *g, const char *list)
{
	g->npci = 0;
	for (const char *p = list; *p && g->npci < FT_MAX_GPUS; g->npci++) {
		size_t n = strcspn(p, ",");

		snprintf(g->pci[g->npci], sizeof(g->pci[0]), "%.*s", (int)n, p);
		p += n + (p[n] == ',');
	}
}

static void load_config(void)
{
	struct ft_gpus *g = &cfg.g;
	long rate;
	int cc;

	ft_gpus_default(g);
	if (!described(g)) { /* as the emulated NIC: a refused description gives no devices */
		g->count = 0;
		return;
	}
	cfg.limit = g->memory_bytes ? (long long)g->memory_bytes : -1;
	g->count = (int)env_long("FABRICLAB_FAKECUDA_DEVICES", g->count);
	if (env("FABRICLAB_FAKECUDA_PCI"))
		pci_override(g, env("FABRICLAB_FAKECUDA_PCI"));
	g->gdr = env_long("FABRICLAB_FAKECUDA_GDR", g->gdr) != 0;
	g->dmabuf = env_long("FABRICLAB_FAKECUDA_DMABUF", g->dmabuf) != 0;
	cfg.limit = env_long("FABRICLAB_FAKECUDA_LIMIT", (long)cfg.limit);
	g->protect = env_long("FABRICLAB_FAKECUDA_PROTECT", g->protect) != 0;
	cc = env("FABRICLAB_FAKECUDA_CC") ? ft_cc_parse(env("FABRICLAB_FAKECUDA_CC")) : 0;
	if (cc < 0)
		fprintf(stderr, "fakecuda: FABRICLAB_FAKECUDA_CC=%s: expected MAJOR.MINOR like "
			"9.0; ignored\n", env("FABRICLAB_FAKECUDA_CC"));
	g->cc = cc > 0 ? cc : g->cc;
	rate = env_long("FABRICLAB_FAKECUDA_COPY_RATE", (long)g->copy_bytes_per_s);
	g->copy_bytes_per_s = rate > 0 ? (uint64_t)rate : 0;
}

const struct ft_gpus *fc_gpus(void)
{
	pthread_once(&cfg_once, load_config);
	return &cfg.g;
}

long long fc_memory_limit(void)
{
	pthread_once(&cfg_once, load_config);
	return cfg.limit;
}
