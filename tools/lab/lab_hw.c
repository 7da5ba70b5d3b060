/*
 * `--hw-fault SPEC`: faults of the emulated fabric's hardware, unknown to the
 * plugin (docs/lab.md, "Hardware faults"). They go into the fabric's
 * description (lab_topology.c), which every rank's emulated NIC reads; the
 * plugin sees them only through what it measures, as on a cluster.
 *
 *   downgrade:node=nodeK[,nic=J],rate=P%        a NIC's port trained down
 *   pause:node=nodeK[,nic=J],every=T,for=T      a NIC paused (a PFC storm)
 *   latency:node=nodeK[,nic=J],add=T            one-way latency added at a NIC
 *   spine:spine=J,EFFECT                        every cable of spine J
 *   uplink:leaf=I,spine=J,EFFECT                the cables between leaf I and spine J
 *   leafport:node=nodeK[,nic=J],EFFECT          the leaf port a NIC hangs off
 * EFFECT: rate=P% (1-100), every=T,for=T (for < every), or add=T.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lab.h"

static const struct { const char *name; enum lab_hw_kind kind; } kinds[] = {
	{ "downgrade", LAB_HW_DOWNGRADE }, { "pause", LAB_HW_PAUSE },
	{ "latency", LAB_HW_LATENCY }, { "spine", LAB_HW_SPINE },
	{ "uplink", LAB_HW_UPLINK }, { "leafport", LAB_HW_LEAFPORT },
};

#define KINDS_TEXT "downgrade, pause, latency, spine, uplink or leafport before the colon"

/* A duration with its unit (ns, us, ms, s) in ns; -1 when malformed. */
static double parse_duration(const char *v, size_t n)
{
	static const struct { const char *unit; double ns; } units[] = {
		{ "ns", 1 }, { "us", 1e3 }, { "ms", 1e6 }, { "s", 1e9 },
	};
	char buf[32], *end;
	double x;

	if (n == 0 || n >= sizeof(buf))
		return -1;
	memcpy(buf, v, n);
	buf[n] = '\0';
	errno = 0;
	x = strtod(buf, &end);
	if (errno || end == buf || !(x >= 0))
		return -1;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (!strcmp(end, units[i].unit))
			return x * units[i].ns;
	return -1;
}

static int hw_bad(const char *spec, const char *field, const char *form)
{
	fprintf(stderr, "fabriclab lab: --hw-fault '%s': %s: expected %s\n", spec, field, form);
	return -1;
}

static bool switch_kind(enum lab_hw_kind k)
{
	return k == LAB_HW_SPINE || k == LAB_HW_UPLINK || k == LAB_HW_LEAFPORT;
}

static bool has_node(enum lab_hw_kind k)
{
	return k != LAB_HW_SPINE && k != LAB_HW_UPLINK;
}

/* An index after its prefix ("node3", "2"), below limit; -1 when not one. */
static long index_of(const char *v, size_t vlen, const char *prefix, long limit)
{
	size_t p = strlen(prefix);
	char buf[24], *end;
	long x;

	if (vlen <= p || vlen - p >= sizeof(buf) || strncmp(v, prefix, p))
		return -1;
	memcpy(buf, v + p, vlen - p);
	buf[vlen - p] = '\0';
	x = strtol(buf, &end, 10);
	return *end || x < 0 || x >= limit ? -1 : x;
}

/* What the fault does: rate=, every=, for=, add= (the kinds that allow them). */
static int effect(const char *spec, const char *key, size_t klen, const char *v, size_t vlen,
		  struct lab_hw *hw)
{
	bool sw = switch_kind(hw->kind);

#define KEY(k) (klen == strlen(k) && !strncmp(key, k, klen))
	if (KEY("rate") && (sw || hw->kind == LAB_HW_DOWNGRADE)) {
		long x = index_of(v, vlen - 1, "", 101);

		if (vlen < 2 || v[vlen - 1] != '%' || x < 1)
			return hw_bad(spec, "rate", "a share of the line rate from 1% to 100%, "
				      "like rate=50%");
		hw->rate_pct = (int)x;
		return 0;
	}
	if ((KEY("every") || KEY("for")) && (sw || hw->kind == LAB_HW_PAUSE)) {
		double ns = parse_duration(v, vlen);

		if (ns <= 0)
			return hw_bad(spec, KEY("every") ? "every" : "for",
				      "a duration with its unit, like 100ms or 40ms");
		*(KEY("every") ? &hw->every_ns : &hw->for_ns) = ns;
		return 0;
	}
	if (KEY("add") && (sw || hw->kind == LAB_HW_LATENCY)) {
		double ns = parse_duration(v, vlen);

		if (ns <= 0)
			return hw_bad(spec, "add", "a one-way latency with its unit, like 20us");
		hw->add_ns = ns;
		return 0;
	}
#undef KEY
	return 1;
}

static const char *fields_text(enum lab_hw_kind k)
{
	switch (k) {
	case LAB_HW_DOWNGRADE: return "node=, nic= or rate=";
	case LAB_HW_PAUSE: return "node=, nic=, every= or for=";
	case LAB_HW_LATENCY: return "node=, nic= or add=";
	case LAB_HW_SPINE: return "spine=, then rate=, every= and for=, or add=";
	case LAB_HW_UPLINK: return "leaf=, spine=, then rate=, every= and for=, or add=";
	default: return "node=, nic=, then rate=, every= and for=, or add=";
	}
}

static int hw_field(const char *spec, const char *key, size_t klen, const char *v, size_t vlen,
		    struct lab_hw *hw, const struct lab_opts *o)
{
	int rc;

#define KEY(k) (klen == strlen(k) && !strncmp(key, k, klen))
	if (KEY("node") && has_node(hw->kind)) {
		hw->node = (int)index_of(v, vlen, "node", o->nodes);
		return hw->node < 0 ? hw_bad(spec, "node", "node<K>, K from 0 to the nodes - 1") : 0;
	}
	if (KEY("nic") && has_node(hw->kind)) {
		hw->nic = (int)index_of(v, vlen, "", o->rails);
		return hw->nic < 0 ? hw_bad(spec, "nic", "a NIC index from 0 to --rails - 1") : 0;
	}
	if (KEY("spine") && !has_node(hw->kind)) {
		hw->spine = (int)index_of(v, vlen, "", 256);
		return hw->spine < 0 ? hw_bad(spec, "spine", "a spine's index J (spineJ)") : 0;
	}
	if (KEY("leaf") && hw->kind == LAB_HW_UPLINK) {
		hw->leaf = (int)index_of(v, vlen, "", 256);
		return hw->leaf < 0 ? hw_bad(spec, "leaf", "a leaf's index I (leafI)") : 0;
	}
#undef KEY
	rc = effect(spec, key, klen, v, vlen, hw);
	if (rc > 0) {
		char name[32];

		snprintf(name, sizeof(name), "%.*s", (int)(klen < 24 ? klen : 24), key);
		return hw_bad(spec, name[0] ? name : "field", fields_text(hw->kind));
	}
	return rc;
}

static int parse_kind(const char *spec, struct lab_hw *hw)
{
	const char *colon = strchr(spec, ':');

	if (!colon)
		return hw_bad(spec, "kind", "KIND:FIELD=VALUE,..., KIND one of " KINDS_TEXT);
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if ((size_t)(colon - spec) == strlen(kinds[i].name) &&
		    !strncmp(spec, kinds[i].name, strlen(kinds[i].name))) {
			hw->kind = kinds[i].kind;
			return 0;
		}
	return hw_bad(spec, "kind", KINDS_TEXT);
}

/* What a fault must say once all its fields are read. */
static int complete(const char *spec, const struct lab_hw *hw)
{
	int effects = (hw->rate_pct > 0) + (hw->every_ns > 0 || hw->for_ns > 0) + (hw->add_ns > 0);

	if (has_node(hw->kind) && hw->node < 0)
		return hw_bad(spec, "node", "node=node<K>: the node whose NIC is faulty");
	if (!has_node(hw->kind) && hw->spine < 0)
		return hw_bad(spec, "spine", "spine=J: the faulty spine (spineJ)");
	if (hw->kind == LAB_HW_UPLINK && hw->leaf < 0)
		return hw_bad(spec, "leaf", "leaf=I: the leaf whose cables to spineJ are faulty");
	if (hw->kind == LAB_HW_DOWNGRADE && !hw->rate_pct)
		return hw_bad(spec, "rate", "rate=P% (1-100)");
	if (hw->kind == LAB_HW_LATENCY && !hw->add_ns)
		return hw_bad(spec, "add", "add=T, like add=20us");
	if (switch_kind(hw->kind) && effects != 1)
		return hw_bad(spec, "effect", "one of rate=P%, every=T,for=T or add=T");
	if ((hw->kind == LAB_HW_PAUSE || hw->every_ns > 0 || hw->for_ns > 0) &&
	    (!hw->every_ns || !hw->for_ns || hw->for_ns >= hw->every_ns))
		return hw_bad(spec, "every/for", "both, with for < every, like every=100ms,for=40ms");
	return 0;
}

int lab_hw_parse(const char *spec, const struct lab_opts *o, struct lab_hw *hw)
{
	const char *p;

	memset(hw, 0, sizeof(*hw));
	hw->node = hw->nic = hw->leaf = hw->spine = -1;
	if (parse_kind(spec, hw))
		return -1;
	for (p = strchr(spec, ':') + 1; *p;) {
		size_t len = strcspn(p, ","), klen;
		const char *eq = memchr(p, '=', len);

		if (!eq)
			return hw_bad(spec, "field", "FIELD=VALUE pairs separated by commas");
		klen = (size_t)(eq - p);
		if (hw_field(spec, p, klen, eq + 1, len - klen - 1, hw, o))
			return -1;
		p += len + (p[len] == ',');
	}
	return complete(spec, hw);
}

bool lab_hw_on_switch(const struct lab_hw *hw)
{
	return hw->kind == LAB_HW_SPINE || hw->kind == LAB_HW_UPLINK;
}
