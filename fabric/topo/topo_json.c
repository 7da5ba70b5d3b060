/*
 * Reading and writing the description. Every field is typed and known: a
 * misspelt key is refused with its path rather than silently ignored, as a
 * description that does not say what its author meant would emulate another
 * fabric without a word.
 */
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topo_json.h"

struct rd {
	struct ft_topo *t;
	char *why;
	size_t len;
	char where[96]; /* the field being read: "nodes[2].nics[0]" */
};

static int fail(struct rd *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(struct rd *r, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(r->why, r->len, "%s%s%s", r->where, r->where[0] ? ": " : "", msg);
	return -1;
}

/* Every key of o is one of the NULL-terminated names. */
static int known(struct rd *r, json_t *o, const char *const *names)
{
	const char *key;
	json_t *v;

	json_object_foreach(o, key, v) {
		size_t i;

		for (i = 0; names[i] && strcmp(names[i], key); i++)
			;
		if (!names[i])
			return fail(r, "unknown field \"%s\"", key);
	}
	return 0;
}

static int str(struct rd *r, json_t *o, const char *key, bool need, char *out, size_t n)
{
	json_t *v = json_object_get(o, key);

	if (!v && !need)
		return 0;
	if (!json_is_string(v))
		return fail(r, "%s: expected a string", key);
	if (json_string_length(v) == 0 || json_string_length(v) >= n)
		return fail(r, "%s: expected 1 to %zu characters", key, n - 1);
	snprintf(out, n, "%s", json_string_value(v));
	return 0;
}

static int u64(struct rd *r, json_t *o, const char *key, uint64_t max, uint64_t *out)
{
	json_t *v = json_object_get(o, key);

	if (!v)
		return 0;
	if (!json_is_integer(v) || json_integer_value(v) < 0 ||
	    (uint64_t)json_integer_value(v) > max)
		return fail(r, "%s: expected an integer from 0 to %" PRIu64, key, max);
	*out = (uint64_t)json_integer_value(v);
	return 0;
}

static int num(struct rd *r, json_t *o, const char *key, double lo, double hi, double *out)
{
	json_t *v = json_object_get(o, key);

	if (!v)
		return 0;
	if (!json_is_number(v) || !(json_number_value(v) >= lo && json_number_value(v) <= hi))
		return fail(r, "%s: expected a number from %g to %g", key, lo, hi);
	*out = json_number_value(v);
	return 0;
}

static int int_field(struct rd *r, json_t *o, const char *key, int max, int *out)
{
	uint64_t x = (uint64_t)*out;
	int rc = u64(r, o, key, (uint64_t)max, &x);

	*out = (int)x;
	return rc;
}

static int guid(struct rd *r, json_t *o, uint64_t *out)
{
	json_t *v = json_object_get(o, "guid");
	char *end;

	if (!v)
		return 0;
	if (!json_is_string(v))
		return fail(r, "guid: expected a string like \"0x0c42a10300000000\"");
	errno = 0;
	*out = strtoull(json_string_value(v), &end, 16);
	if (errno || *end || end == json_string_value(v))
		return fail(r, "guid: \"%s\" is no hexadecimal GUID", json_string_value(v));
	return 0;
}

static int switch_ref(struct rd *r, json_t *o, const char *key, enum ft_role role, int *out)
{
	char name[FT_NAME_LEN] = "";

	if (str(r, o, key, false, name, sizeof(name)))
		return -1;
	if (!name[0])
		return 0;
	*out = ft_find_switch(r->t, name);
	if (*out < 0 || r->t->sw[*out].role != role)
		return fail(r, "%s: \"%s\" is no %s in \"switches\"", key, name,
			    role == FT_LEAF ? "leaf" : "spine");
	return 0;
}

static int read_switches(struct rd *r, json_t *a)
{
	static const char *const keys[] = { "name", "role", "guid", "lid", NULL };
	size_t i;
	json_t *o;

	if (a && !json_is_array(a))
		return fail(r, "switches: expected an array");
	json_array_foreach(a, i, o) {
		char name[FT_NAME_LEN], role[16];
		int s;

		snprintf(r->where, sizeof(r->where), "switches[%zu]", i);
		if (!json_is_object(o))
			return fail(r, "expected an object");
		if (known(r, o, keys) || str(r, o, "name", true, name, sizeof(name)) ||
		    str(r, o, "role", true, role, sizeof(role)))
			return -1;
		if (strcmp(role, "leaf") && strcmp(role, "spine"))
			return fail(r, "role: expected \"leaf\" or \"spine\"");
		s = ft_add_switch(r->t, name, role[0] == 'l' ? FT_LEAF : FT_SPINE);
		if (s < 0 || guid(r, o, &r->t->sw[s].guid) ||
		    int_field(r, o, "lid", 0xffff, &r->t->sw[s].lid))
			return s < 0 ? fail(r, "out of memory") : -1;
	}
	return 0;
}

static int flag(struct rd *r, json_t *o, const char *key, bool *out)
{
	json_t *v = json_object_get(o, key);

	if (v && !json_is_boolean(v))
		return fail(r, "%s: expected true or false", key);
	if (v)
		*out = json_is_true(v);
	return 0;
}

static int pci_list(struct rd *r, json_t *a, struct ft_gpus *g)
{
	size_t i;
	json_t *v;

	if (!json_is_array(a) || json_array_size(a) > FT_MAX_GPUS)
		return fail(r, "pci: expected an array of at most %d bus ids", FT_MAX_GPUS);
	json_array_foreach(a, i, v) {
		if (!json_is_string(v) || !ft_pci_ok(json_string_value(v)))
			return fail(r, "pci[%zu]: expected a PCI bus id like \"0000:3b:00.0\"", i);
		snprintf(g->pci[i], sizeof(g->pci[i]), "%s", json_string_value(v));
	}
	g->npci = (int)json_array_size(a);
	return 0;
}

/*
 * A "gpus" object into g; set (a node's, else NULL) gets a bit for every field given, so a
 * node overrides the description's GPUs field by field.
 */
static int read_gpus(struct rd *r, json_t *o, struct ft_gpus *g, unsigned *set)
{
	static const char *const keys[] = { "count", "pci", "gdr", "dmabuf", "memory_bytes",
					    "protect", "compute_capability", "copy_bytes_per_s",
					    NULL };
	static const unsigned bits[] = { FT_GPU_COUNT, FT_GPU_PCI, FT_GPU_GDR, FT_GPU_DMABUF,
					 FT_GPU_MEMORY, FT_GPU_PROTECT, FT_GPU_CC, FT_GPU_COPY };
	json_t *ccv = json_object_get(o, "compute_capability");
	char cc[8] = "";

	if (!json_is_object(o))
		return fail(r, "expected an object");
	if (ccv && !json_is_string(ccv))
		return fail(r, "compute_capability: expected a string like \"9.0\"");
	if (known(r, o, keys) || int_field(r, o, "count", FT_MAX_GPUS, &g->count) ||
	    (json_object_get(o, "pci") && pci_list(r, json_object_get(o, "pci"), g)) ||
	    flag(r, o, "gdr", &g->gdr) || flag(r, o, "dmabuf", &g->dmabuf) ||
	    u64(r, o, "memory_bytes", 1ull << 50, &g->memory_bytes) ||
	    flag(r, o, "protect", &g->protect) ||
	    str(r, o, "compute_capability", false, cc, sizeof(cc)) ||
	    u64(r, o, "copy_bytes_per_s", 1ull << 40, &g->copy_bytes_per_s))
		return -1;
	if (cc[0] && (g->cc = ft_cc_parse(cc)) < 0)
		return fail(r, "compute_capability: \"%s\": expected MAJOR.MINOR like \"9.0\"", cc);
	for (size_t i = 0; set && keys[i]; i++)
		if (json_object_get(o, keys[i]))
			*set |= bits[i];
	return 0;
}

static int read_nic(struct rd *r, json_t *o, int node)
{
	static const char *const keys[] = { "name", "port", "guid", "leaf", "leaf_port",
					    "leaf_port_name", "lid", "data_direct", NULL };
	char name[FT_DEV_LEN], port[FT_PORT_LEN] = "";
	json_t *dd = json_object_get(o, "data_direct");
	int c;

	if (!json_is_object(o))
		return fail(r, "expected an object");
	if (known(r, o, keys) || str(r, o, "name", true, name, sizeof(name)) ||
	    str(r, o, "port", false, port, sizeof(port)))
		return -1;
	if (port[0] && ft_port_mbps(port) <= 0)
		return fail(r, "port: \"%s\": expected LINK:WIDTH:SPEED like ib:4x:ndr or "
			    "eth:4x:100g", port);
	if (dd && !json_is_boolean(dd))
		return fail(r, "data_direct: expected true or false");
	c = ft_add_nic(r->t, node, name, port);
	if (c < 0)
		return fail(r, "out of memory");
	r->t->nics[c].data_direct = json_is_true(dd);
	return guid(r, o, &r->t->nics[c].guid) ||
	       switch_ref(r, o, "leaf", FT_LEAF, &r->t->nics[c].leaf) ||
	       int_field(r, o, "leaf_port", 4096, &r->t->nics[c].leaf_port) ||
	       int_field(r, o, "lid", 0xffff, &r->t->nics[c].lid) ||
	       str(r, o, "leaf_port_name", false, r->t->nics[c].port_name,
		   sizeof(r->t->nics[c].port_name));
}

static int read_nodes(struct rd *r, json_t *a)
{
	static const char *const keys[] = { "name", "nics", "gpus", NULL };
	size_t i, k;
	json_t *o, *c;

	if (!json_is_array(a))
		return fail(r, "nodes: expected an array of nodes");
	json_array_foreach(a, i, o) {
		char name[FT_NAME_LEN];
		int n;

		snprintf(r->where, sizeof(r->where), "nodes[%zu]", i);
		if (!json_is_object(o))
			return fail(r, "expected an object");
		if (known(r, o, keys) || str(r, o, "name", true, name, sizeof(name)))
			return -1;
		if (!json_is_array(json_object_get(o, "nics")))
			return fail(r, "nics: expected an array of NICs");
		n = ft_add_node(r->t, name);
		if (n < 0)
			return fail(r, "out of memory");
		snprintf(r->where, sizeof(r->where), "nodes[%zu].gpus", i);
		if (json_object_get(o, "gpus") &&
		    read_gpus(r, json_object_get(o, "gpus"), &r->t->nodes[n].gpus,
			      &r->t->nodes[n].gpus_set))
			return -1;
		json_array_foreach(json_object_get(o, "nics"), k, c) {
			snprintf(r->where, sizeof(r->where), "nodes[%zu].nics[%zu]", i, k);
			if (read_nic(r, c, n))
				return -1;
		}
	}
	return 0;
}

static int read_uplinks(struct rd *r, json_t *a)
{
	static const char *const keys[] = { "leaf", "spine", "cables", "leaf_port", "spine_port",
					    "rate_mbps", NULL };
	size_t i;
	json_t *o;

	if (a && !json_is_array(a))
		return fail(r, "uplinks: expected an array");
	json_array_foreach(a, i, o) {
		int leaf = -1, spine = -1, u;

		snprintf(r->where, sizeof(r->where), "uplinks[%zu]", i);
		if (!json_is_object(o))
			return fail(r, "expected an object");
		if (known(r, o, keys) || switch_ref(r, o, "leaf", FT_LEAF, &leaf) ||
		    switch_ref(r, o, "spine", FT_SPINE, &spine))
			return -1;
		if (leaf < 0 || spine < 0)
			return fail(r, "expected both \"leaf\" and \"spine\"");
		u = ft_add_uplink(r->t, leaf, spine, 0);
		if (u < 0)
			return fail(r, "out of memory");
		if (int_field(r, o, "cables", FT_MAX_CABLES, &r->t->up[u].cables) ||
		    int_field(r, o, "leaf_port", 4096, &r->t->up[u].leaf_port) ||
		    int_field(r, o, "spine_port", 4096, &r->t->up[u].spine_port) ||
		    num(r, o, "rate_mbps", 0, 1e9, &r->t->up[u].mbps))
			return -1;
	}
	return 0;
}

static int read_fault(struct rd *r, json_t *o)
{
	static const char *const keys[] = { "element", "rate_pct", "pause_every_ns",
					    "pause_for_ns", "add_ns", NULL };
	char element[FT_NAME_LEN + FT_DEV_LEN];
	struct ft_fault f = { 0 }, *to;
	uint64_t pct = 0;

	if (!json_is_object(o))
		return fail(r, "expected an object");
	if (known(r, o, keys) || str(r, o, "element", true, element, sizeof(element)) ||
	    u64(r, o, "rate_pct", 100, &pct) ||
	    u64(r, o, "pause_every_ns", UINT64_MAX / 2, &f.pause_every_ns) ||
	    u64(r, o, "pause_for_ns", UINT64_MAX / 2, &f.pause_for_ns) ||
	    u64(r, o, "add_ns", 10000000000ull, &f.add_ns))
		return -1;
	if (json_object_get(o, "rate_pct") && !pct)
		return fail(r, "rate_pct: expected 1 to 100");
	if ((f.pause_every_ns || f.pause_for_ns) && f.pause_for_ns >= f.pause_every_ns)
		return fail(r, "pause_for_ns must be below pause_every_ns, both given");
	f.rate_pct = (int)pct;
	to = ft_fault_of(r->t, element);
	if (!to)
		return fail(r, "element: \"%s\" names no NIC (node/dev), leaf port (leaf:port), "
			    "uplink (leaf-spine) or switch here", element);
	*to = f;
	return 0;
}

static int read_faults(struct rd *r, json_t *a)
{
	size_t i;
	json_t *o;

	if (a && !json_is_array(a))
		return fail(r, "faults: expected an array");
	json_array_foreach(a, i, o) {
		snprintf(r->where, sizeof(r->where), "faults[%zu]", i);
		if (read_fault(r, o))
			return -1;
	}
	return 0;
}

static int read_physics(struct rd *r, json_t *o)
{
	static const char *const keys[] = { "on", "latency_ns", "msg_cost_ns", "rate_div", NULL };
	struct ft_topo *t = r->t;
	json_t *on;

	snprintf(r->where, sizeof(r->where), "physics");
	if (!o)
		return 0;
	if (!json_is_object(o) || known(r, o, keys))
		return json_is_object(o) ? -1 : fail(r, "expected an object");
	on = json_object_get(o, "on");
	if (on && !json_is_boolean(on))
		return fail(r, "on: expected true or false");
	t->physics = on ? json_is_true(on) : true;
	return u64(r, o, "latency_ns", 10000000000ull, &t->latency_ns) ||
	       u64(r, o, "msg_cost_ns", 10000000000ull, &t->msg_cost_ns) ||
	       int_field(r, o, "rate_div", 1000, &t->rate_div) ||
	       (t->rate_div < 1 ? fail(r, "rate_div: expected 1 to 1000") : 0);
}

static int read_emulation(struct rd *r, json_t *o)
{
	static const char *const keys[] = { "state_dir", "dmabuf", "retry_ms", "max_send_wr",
					    "inject", NULL };
	struct ft_topo *t = r->t;
	uint64_t retry = 0, sq = 0;
	json_t *d;

	snprintf(r->where, sizeof(r->where), "emulation");
	if (!o)
		return 0;
	if (!json_is_object(o) || known(r, o, keys))
		return json_is_object(o) ? -1 : fail(r, "expected an object");
	d = json_object_get(o, "dmabuf");
	if (d && !json_is_boolean(d))
		return fail(r, "dmabuf: expected true or false");
	t->dmabuf = json_is_true(d);
	if (str(r, o, "state_dir", false, t->state_dir, sizeof(t->state_dir)) ||
	    str(r, o, "inject", false, t->inject, sizeof(t->inject)) ||
	    u64(r, o, "retry_ms", 3600000, &retry) || u64(r, o, "max_send_wr", 32768, &sq))
		return -1;
	t->retry_ms = (long)retry;
	t->max_send_wr = (long)sq;
	return 0;
}

static int read_top_gpus(struct rd *r, json_t *o)
{
	snprintf(r->where, sizeof(r->where), "gpus");
	return o ? read_gpus(r, o, &r->t->gpus, NULL) : 0;
}

static int read_top(struct rd *r, json_t *root)
{
	static const char *const keys[] = { "fabriclab_fabric", "layout", "nodes", "switches",
					    "uplinks", "oversubscription", "physics", "faults",
					    "emulation", "gpus", NULL };
	json_t *v = json_object_get(root, "fabriclab_fabric");

	if (!json_is_object(root))
		return fail(r, "expected an object with \"fabriclab_fabric\": %d", FT_VERSION);
	if (!json_is_integer(v) || json_integer_value(v) != FT_VERSION)
		return fail(r, "fabriclab_fabric: expected %d (the description's version)",
			    FT_VERSION);
	if (known(r, root, keys) ||
	    str(r, root, "layout", false, r->t->layout, sizeof(r->t->layout)) ||
	    num(r, root, "oversubscription", 1, 64, &r->t->oversubscription) ||
	    read_switches(r, json_object_get(root, "switches")) ||
	    read_top_gpus(r, json_object_get(root, "gpus")) ||
	    read_nodes(r, json_object_get(root, "nodes")) ||
	    read_uplinks(r, json_object_get(root, "uplinks")) ||
	    read_physics(r, json_object_get(root, "physics")) ||
	    read_emulation(r, json_object_get(root, "emulation")))
		return -1;
	ft_complete(r->t);
	/* faults last: a leaf port is known once the ports are numbered */
	if (read_faults(r, json_object_get(root, "faults")))
		return -1;
	r->where[0] = '\0';
	return ft_check(r->t, r->why, r->len);
}

static int parse_root(json_t *root, struct ft_topo *t, char *why, size_t len)
{
	struct rd r = { .t = t, .why = why, .len = len };

	return read_top(&r, root);
}

int ft_parse_json(const char *text, size_t n, const char *name, struct ft_topo *t, char *why,
		  size_t len)
{
	json_error_t err;
	json_t *root;
	int rc;

	ft_init(t);
	root = json_loadb(text, n, JSON_REJECT_DUPLICATES, &err);
	if (!root) {
		snprintf(why, len, "%s:%d:%d: %s", name, err.line, err.column, err.text);
		return -1;
	}
	{
		char inner[384];

		rc = parse_root(root, t, inner, sizeof(inner));
		if (rc)
			snprintf(why, len, "%s: %s", name, inner);
	}
	json_decref(root);
	return rc;
}

int ft_read_json(const char *path, struct ft_topo *t, char *why, size_t len)
{
	json_error_t err;
	json_t *root;
	char inner[384];
	int rc;

	ft_init(t);
	root = json_load_file(path, JSON_REJECT_DUPLICATES, &err);
	if (!root) {
		snprintf(why, len, "%s:%d:%d: %s", path, err.line, err.column, err.text);
		return -1;
	}
	rc = parse_root(root, t, inner, sizeof(inner));
	json_decref(root);
	if (rc)
		snprintf(why, len, "%s: %s", path, inner);
	return rc;
}
