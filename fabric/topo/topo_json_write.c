/* Writing the description: what topo_json.c reads, every field it knows that is set. */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "topo_json.h"

static void put_guid(json_t *o, uint64_t guid)
{
	char v[24];

	if (!guid)
		return;
	snprintf(v, sizeof(v), "0x%016llx", (unsigned long long)guid);
	json_object_set_new(o, "guid", json_string(v));
}

static json_t *nic_json(const struct ft_topo *t, const struct ft_nic *c)
{
	json_t *o = json_object();

	json_object_set_new(o, "name", json_string(c->name));
	if (c->port[0])
		json_object_set_new(o, "port", json_string(c->port));
	put_guid(o, c->guid);
	if (c->leaf >= 0) {
		json_object_set_new(o, "leaf", json_string(t->sw[c->leaf].name));
		json_object_set_new(o, "leaf_port", json_integer(c->leaf_port));
	}
	if (c->port_name[0])
		json_object_set_new(o, "leaf_port_name", json_string(c->port_name));
	if (c->lid)
		json_object_set_new(o, "lid", json_integer(c->lid));
	if (c->data_direct)
		json_object_set_new(o, "data_direct", json_true());
	return o;
}

/* The fields of g that set names, in the reader's order; NULL when none. */
static json_t *gpus_json(const struct ft_gpus *g, unsigned set)
{
	json_t *o, *pci;
	char cc[16];

	if (!set)
		return NULL;
	o = json_object();
	if (set & FT_GPU_COUNT)
		json_object_set_new(o, "count", json_integer(g->count));
	if (set & FT_GPU_PCI) {
		pci = json_array();
		for (int i = 0; i < g->npci; i++)
			json_array_append_new(pci, json_string(g->pci[i]));
		json_object_set_new(o, "pci", pci);
	}
	if (set & FT_GPU_GDR)
		json_object_set_new(o, "gdr", json_boolean(g->gdr));
	if (set & FT_GPU_DMABUF)
		json_object_set_new(o, "dmabuf", json_boolean(g->dmabuf));
	if (set & FT_GPU_MEMORY)
		json_object_set_new(o, "memory_bytes", json_integer((json_int_t)g->memory_bytes));
	if (set & FT_GPU_PROTECT)
		json_object_set_new(o, "protect", json_boolean(g->protect));
	if (set & FT_GPU_CC) {
		snprintf(cc, sizeof(cc), "%d.%d", g->cc / 10, g->cc % 10);
		json_object_set_new(o, "compute_capability", json_string(cc));
	}
	if (set & FT_GPU_COPY)
		json_object_set_new(o, "copy_bytes_per_s",
				    json_integer((json_int_t)g->copy_bytes_per_s));
	return o;
}

/* The description's GPU fields that are not every node's default (none: no "gpus" at all). */
static unsigned gpus_given(const struct ft_gpus *g)
{
	struct ft_gpus d;

	ft_gpus_default(&d);
	return (g->count != d.count ? FT_GPU_COUNT : 0) | (g->npci ? FT_GPU_PCI : 0) |
	       (g->gdr != d.gdr ? FT_GPU_GDR : 0) | (g->dmabuf != d.dmabuf ? FT_GPU_DMABUF : 0) |
	       (g->memory_bytes ? FT_GPU_MEMORY : 0) | (g->protect ? FT_GPU_PROTECT : 0) |
	       (g->cc != d.cc ? FT_GPU_CC : 0) | (g->copy_bytes_per_s ? FT_GPU_COPY : 0);
}

static json_t *nodes_json(const struct ft_topo *t)
{
	json_t *a = json_array();

	for (int n = 0; n < t->nnodes; n++) {
		json_t *o = json_object(), *nics = json_array();

		json_object_set_new(o, "name", json_string(t->nodes[n].name));
		for (int k = 0; k < t->nodes[n].nnics; k++)
			json_array_append_new(nics, nic_json(t, &t->nics[t->nodes[n].first_nic + k]));
		json_object_set_new(o, "nics", nics);
		if (t->nodes[n].gpus_set)
			json_object_set_new(o, "gpus", gpus_json(&t->nodes[n].gpus,
								 t->nodes[n].gpus_set));
		json_array_append_new(a, o);
	}
	return a;
}

static json_t *switches_json(const struct ft_topo *t)
{
	json_t *a = json_array();

	for (int s = 0; s < t->nsw; s++) {
		json_t *o = json_object();

		json_object_set_new(o, "name", json_string(t->sw[s].name));
		json_object_set_new(o, "role", json_string(t->sw[s].role == FT_LEAF ? "leaf" :
							   "spine"));
		put_guid(o, t->sw[s].guid);
		if (t->sw[s].lid)
			json_object_set_new(o, "lid", json_integer(t->sw[s].lid));
		json_array_append_new(a, o);
	}
	return a;
}

static json_t *uplinks_json(const struct ft_topo *t)
{
	json_t *a = json_array();

	for (int u = 0; u < t->nup; u++) {
		const struct ft_uplink *up = &t->up[u];
		json_t *o = json_object();

		json_object_set_new(o, "leaf", json_string(t->sw[up->leaf].name));
		json_object_set_new(o, "spine", json_string(t->sw[up->spine].name));
		json_object_set_new(o, "cables", json_integer(up->cables));
		json_object_set_new(o, "leaf_port", json_integer(up->leaf_port));
		json_object_set_new(o, "spine_port", json_integer(up->spine_port));
		if (up->mbps > 0)
			json_object_set_new(o, "rate_mbps", json_real(up->mbps));
		json_array_append_new(a, o);
	}
	return a;
}

static void add_fault(json_t *a, const char *element, const struct ft_fault *f)
{
	json_t *o;

	if (!ft_fault_set(f))
		return;
	o = json_object();
	json_object_set_new(o, "element", json_string(element));
	if (f->rate_pct)
		json_object_set_new(o, "rate_pct", json_integer(f->rate_pct));
	if (f->pause_every_ns) {
		json_object_set_new(o, "pause_every_ns", json_integer((json_int_t)f->pause_every_ns));
		json_object_set_new(o, "pause_for_ns", json_integer((json_int_t)f->pause_for_ns));
	}
	if (f->add_ns)
		json_object_set_new(o, "add_ns", json_integer((json_int_t)f->add_ns));
	json_array_append_new(a, o);
}

static json_t *faults_json(const struct ft_topo *t)
{
	char name[FT_NAME_LEN * 2 + 2];
	json_t *a = json_array();

	for (int i = 0; i < t->nnics; i++) {
		snprintf(name, sizeof(name), "%s/%s", t->nodes[t->nics[i].node].name,
			 t->nics[i].name);
		add_fault(a, name, &t->nics[i].fault);
	}
	for (int s = 0; s < t->nsw; s++)
		add_fault(a, t->sw[s].name, &t->sw[s].fault);
	for (int u = 0; u < t->nup; u++) {
		snprintf(name, sizeof(name), "%s-%s", t->sw[t->up[u].leaf].name,
			 t->sw[t->up[u].spine].name);
		add_fault(a, name, &t->up[u].fault);
	}
	return a;
}

static json_t *physics_json(const struct ft_topo *t)
{
	json_t *o = json_object();

	json_object_set_new(o, "on", json_boolean(t->physics));
	json_object_set_new(o, "latency_ns", json_integer((json_int_t)t->latency_ns));
	json_object_set_new(o, "msg_cost_ns", json_integer((json_int_t)t->msg_cost_ns));
	json_object_set_new(o, "rate_div", json_integer(t->rate_div));
	return o;
}

static json_t *emulation_json(const struct ft_topo *t)
{
	json_t *o = json_object();

	if (t->state_dir[0])
		json_object_set_new(o, "state_dir", json_string(t->state_dir));
	if (t->dmabuf)
		json_object_set_new(o, "dmabuf", json_true());
	if (t->retry_ms)
		json_object_set_new(o, "retry_ms", json_integer(t->retry_ms));
	if (t->max_send_wr)
		json_object_set_new(o, "max_send_wr", json_integer(t->max_send_wr));
	if (t->inject[0])
		json_object_set_new(o, "inject", json_string(t->inject));
	return o;
}

static json_t *topo_json(const struct ft_topo *t)
{
	json_t *o = json_object();

	json_object_set_new(o, "fabriclab_fabric", json_integer(FT_VERSION));
	json_object_set_new(o, "layout", json_string(t->layout));
	json_object_set_new(o, "nodes", nodes_json(t));
	json_object_set_new(o, "switches", switches_json(t));
	json_object_set_new(o, "uplinks", uplinks_json(t));
	json_object_set_new(o, "oversubscription", json_real(t->oversubscription));
	json_object_set_new(o, "physics", physics_json(t));
	json_object_set_new(o, "faults", faults_json(t));
	json_object_set_new(o, "emulation", emulation_json(t));
	if (gpus_given(&t->gpus))
		json_object_set_new(o, "gpus", gpus_json(&t->gpus, gpus_given(&t->gpus)));
	return o;
}

int ft_write_json(const struct ft_topo *t, const char *path, char *why, size_t len)
{
	char tmp[512];
	json_t *o = topo_json(t);
	int rc;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	rc = json_dump_file(o, tmp, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
	json_decref(o);
	if (rc || rename(tmp, path)) {
		snprintf(why, len, "%s: %s", path, strerror(errno ? errno : EIO));
		return -1;
	}
	return 0;
}

char *ft_json_text(const struct ft_topo *t)
{
	json_t *o = topo_json(t);
	char *text = json_dumps(o, JSON_INDENT(1) | JSON_PRESERVE_ORDER);

	json_decref(o);
	return text;
}
