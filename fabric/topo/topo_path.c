/*
 * The elements of the emulation's schedule and a connection's path over
 * them. Every direction of every link is one element: a NIC's cable to its
 * leaf port out (NIC to leaf) and in, and each leaf-spine cable up and down.
 * A spine is a crossbar: what it shares are its cables, which is what a
 * spine's fault slows. A connection between leaves takes one spine and one
 * cable each way, picked by its hash as ECMP does, for its whole life.
 */
#include <stdio.h>
#include <string.h>

#include "topo.h"

int ft_elements(const struct ft_topo *t)
{
	int n = 2 * t->nnics;

	for (int u = 0; u < t->nup; u++)
		n += 2 * t->up[u].cables;
	return n;
}

int ft_cable_element(const struct ft_topo *t, int uplink, int cable)
{
	int n = 2 * t->nnics;

	for (int u = 0; u < uplink; u++)
		n += 2 * t->up[u].cables;
	return n + 2 * cable;
}

/* The uplink and cable an element past the NICs is: uplink index, cable in *cable. */
static int cable_of(const struct ft_topo *t, int element, int *cable)
{
	int off = element - 2 * t->nnics;

	for (int u = 0; u < t->nup; u++) {
		if (off < 2 * t->up[u].cables) {
			*cable = off / 2;
			return u;
		}
		off -= 2 * t->up[u].cables;
	}
	return -1;
}

void ft_element_name(const struct ft_topo *t, int element, char *buf, size_t len)
{
	int u, c;

	if (element >= 0 && element < 2 * t->nnics) {
		const struct ft_nic *n = &t->nics[element / 2];

		snprintf(buf, len, "%s/%s %s", t->nodes[n->node].name, n->name,
			 element % 2 ? "in" : "out");
		return;
	}
	u = element >= 0 ? cable_of(t, element, &c) : -1;
	if (u < 0) {
		snprintf(buf, len, "element %d", element);
		return;
	}
	if (element % 2 == 0)
		snprintf(buf, len, "%s -> %s #%d", t->sw[t->up[u].leaf].name,
			 t->sw[t->up[u].spine].name, c);
	else
		snprintf(buf, len, "%s -> %s #%d", t->sw[t->up[u].spine].name,
			 t->sw[t->up[u].leaf].name, c);
}

/* splitmix64's finaliser: every input bit moves every output bit. */
static uint64_t mix(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

uint64_t ft_flow_hash(uint32_t src_qpn, uint32_t dst_qpn, int a, int b)
{
	return mix(((uint64_t)src_qpn << 32 | dst_qpn) ^ mix((uint64_t)(uint32_t)a << 32 |
							      (uint32_t)b));
}

int ft_path(const struct ft_topo *t, int a, int b, uint64_t hash, int *path)
{
	int la, lb, common[256], k = 0, s, ua, ub;

	if (a < 0 || b < 0 || a >= t->nnics || b >= t->nnics)
		return -1;
	la = t->nics[a].leaf;
	lb = t->nics[b].leaf;
	path[0] = 2 * a;
	if (la < 0 || lb < 0 || la == lb) {
		path[1] = 2 * b + 1;
		return 2;
	}
	for (int u = 0; u < t->nup && k < 256; u++)
		if (t->up[u].leaf == la && ft_find_uplink(t, lb, t->up[u].spine) >= 0)
			common[k++] = t->up[u].spine;
	if (!k)
		return -1;
	s = common[hash % (uint64_t)k];
	hash /= (uint64_t)k;
	ua = ft_find_uplink(t, la, s);
	ub = ft_find_uplink(t, lb, s);
	path[1] = ft_cable_element(t, ua, (int)(hash % (uint64_t)t->up[ua].cables));
	path[2] = ft_cable_element(t, ub, (int)(hash % (uint64_t)t->up[ub].cables)) + 1;
	path[3] = 2 * b + 1;
	return 4;
}

/* Faults on one link add up: the slowest share, the first pause, every added latency. */
static void combine(struct ft_fault *out, const struct ft_fault *f)
{
	if (f->rate_pct && (!out->rate_pct || f->rate_pct < out->rate_pct))
		out->rate_pct = f->rate_pct;
	if (f->pause_every_ns && !out->pause_every_ns) {
		out->pause_every_ns = f->pause_every_ns;
		out->pause_for_ns = f->pause_for_ns;
	}
	out->add_ns += f->add_ns;
}

void ft_element_fault(const struct ft_topo *t, int element, struct ft_fault *out)
{
	int u, c;

	memset(out, 0, sizeof(*out));
	if (element >= 0 && element < 2 * t->nnics) {
		const struct ft_nic *n = &t->nics[element / 2];

		combine(out, &n->fault);
		if (n->leaf >= 0)
			combine(out, &t->sw[n->leaf].fault);
		return;
	}
	u = element >= 0 ? cable_of(t, element, &c) : -1;
	if (u < 0)
		return;
	combine(out, &t->up[u].fault);
	combine(out, &t->sw[t->up[u].leaf].fault);
	combine(out, &t->sw[t->up[u].spine].fault);
}

double ft_element_mbps(const struct ft_topo *t, int element)
{
	int u, c;

	if (element >= 0 && element < 2 * t->nnics)
		return ft_port_mbps(t->nics[element / 2].port);
	u = element >= 0 ? cable_of(t, element, &c) : -1;
	if (u < 0)
		return 0;
	if (t->up[u].mbps > 0)
		return t->up[u].mbps;
	for (int i = 0; i < t->nnics; i++) /* a cable as fast as the leaf's NICs */
		if (t->nics[i].leaf == t->up[u].leaf)
			return ft_port_mbps(t->nics[i].port);
	return 0;
}
