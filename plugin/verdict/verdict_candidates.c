/*
 * The culprits the model may name, each with the hops it would slow:
 *   link    one directed hop;
 *   device  every hop into and out of one node's NIC (both directions seen);
 *   rail    every hop on one device name, on every node (a leaf switch), where
 *           nodes have several device names;
 *   node    a straggler: the hops into it, whose senders wait on it.
 * Each kind gets an equal share of the prior, split among its candidates, so
 * that 1000 links do not outvote one device by their number alone.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/fl_math.h"
#include "verdict_model.h"
#include "verdict_names.h"
#include "verdict_topology.h"

/* Prior of the explanations: healthy, one culprit, two culprits. */
#define PRIOR_NONE 0.5
#define PRIOR_ONE 0.45

struct endpoint {
	const char *node, *dev;
	size_t hop;
	bool src;
};

static int cmp_endpoint(const void *pa, const void *pb)
{
	const struct endpoint *a = pa, *b = pb;
	int c = strcmp(a->node, b->node);

	if (!c && a->dev && b->dev)
		c = strcmp(a->dev, b->dev);
	if (!c)
		c = (a->hop > b->hop) - (a->hop < b->hop);
	return c;
}

static bool same_end(const struct endpoint *a, const struct endpoint *b)
{
	return !strcmp(a->node, b->node) && (!a->dev || !strcmp(a->dev, b->dev));
}

static int cmp_rail(const void *pa, const void *pb);

/*
 * An endpoint as numbers: its names' ranks (verdict_names.h) and 2 hop + 1
 * for a receiver's end, so that a hop's sender comes first as it is made.
 */
struct ranked {
	uint32_t node, dev, end;
};

static int cmp_ranked(const void *pa, const void *pb)
{
	const struct ranked *a = pa, *b = pb;

	if (a->node != b->node)
		return a->node < b->node ? -1 : 1;
	if (a->dev != b->dev)
		return a->dev < b->dev ? -1 : 1;
	return (a->end > b->end) - (a->end < b->end);
}

/* Ranks of the names at each endpoint's node (else its dev) into r[].node (else .dev). */
static int rank_ends(const struct endpoint *e, size_t ne, bool node, struct ranked *r)
{
	const char **names = calloc(ne ? ne : 1, sizeof(*names));
	uint32_t *rank = malloc((ne ? ne : 1) * sizeof(*rank));
	int err = -1;

	if (names && rank) {
		for (size_t i = 0; i < ne; i++)
			names[i] = node ? e[i].node : e[i].dev;
		err = vm_name_ranks(names, ne, rank);
	}
	for (size_t i = 0; !err && i < ne; i++)
		*(node ? &r[i].node : &r[i].dev) = rank[i];
	free(names);
	free(rank);
	return err;
}

/*
 * The endpoints rated_endpoints makes, in cmp_endpoint's order (by_node) or
 * cmp_rail's: sorted by their names' ranks instead of their names, which on
 * 10^6 hops made these two sorts a seventh of the diagnosis.
 */
static void sort_named(const struct vm_state *s, struct endpoint *e, size_t ne, bool by_node)
{
	struct ranked *r = malloc((ne ? ne : 1) * sizeof(*r));

	if (!r || s->n > UINT32_MAX / 2 || (by_node && rank_ends(e, ne, true, r)) ||
	    rank_ends(e, ne, false, r)) {
		free(r); /* the same order, slower */
		qsort(e, ne, sizeof(*e), by_node ? cmp_endpoint : cmp_rail);
		return;
	}
	for (size_t i = 0; i < ne; i++) {
		r[i].node = by_node ? r[i].node : 0;
		r[i].end = (uint32_t)(2 * e[i].hop + !e[i].src);
	}
	qsort(r, ne, sizeof(*r), cmp_ranked);
	for (size_t i = 0; i < ne; i++) {
		const struct fl_hop_figures *h = &s->figs[r[i].end / 2];
		bool src = !(r[i].end & 1);

		e[i] = (struct endpoint){ src ? h->src_node : h->dst_node,
					  src ? h->src_dev : h->dst_dev, r[i].end / 2, src };
	}
	free(r);
}

static struct vm_candidate *add(struct vm_state *s, enum vm_kind kind)
{
	struct vm_candidate *c = &s->cands[s->ncands++];

	memset(c, 0, sizeof(*c));
	c->kind = kind;
	c->hop = -1;
	c->parts = kind == VM_DEVICE ? 2 : kind == VM_NODE ? 3 : 1;
	c->first = s->nmembers;
	return c;
}

static void add_member(struct vm_state *s, struct vm_candidate *c, size_t hop, int part)
{
	if (c->count && s->members[c->first + c->count - 1] == hop)
		return; /* a hop from a device to itself */
	s->member_part[s->nmembers] = (unsigned char)part;
	s->members[s->nmembers++] = hop;
	c->count++;
}

static void links(struct vm_state *s)
{
	for (size_t i = 0; i < s->n; i++) {
		struct vm_candidate *c;

		if (s->hops[i].group < 0)
			continue;
		c = add(s, VM_LINK);
		c->hop = (int)i;
		add_member(s, c, i, 0);
	}
}

/* Runs of equal endpoints: one device each, kept when hops leave and enter it. */
static void devices(struct vm_state *s, struct endpoint *e, size_t ne)
{
	sort_named(s, e, ne, true);
	for (size_t a = 0, b; a < ne; a = b) {
		bool in = false, out = false;

		for (b = a; b < ne && same_end(&e[a], &e[b]); b++) {
			in |= !e[b].src;
			out |= e[b].src;
		}
		if (in && out) {
			struct vm_candidate *c = add(s, VM_DEVICE);

			c->node = e[a].node;
			c->dev = e[a].dev;
			c->hop = (int)e[a].hop;
			for (size_t k = a; k < b; k++)
				add_member(s, c, e[k].hop, e[k].src ? 0 : 1);
		}
	}
}

static size_t rated_endpoints(const struct vm_state *s, struct endpoint *e)
{
	size_t ne = 0;

	for (size_t i = 0; i < s->n; i++) {
		const struct fl_hop_figures *h = &s->figs[i];

		if (s->hops[i].group < 0)
			continue;
		e[ne++] = (struct endpoint){ h->src_node, h->src_dev, i, true };
		e[ne++] = (struct endpoint){ h->dst_node, h->dst_dev, i, false };
	}
	return ne;
}

static int cmp_rail(const void *pa, const void *pb)
{
	const struct endpoint *a = pa, *b = pb;
	int c = strcmp(a->dev, b->dev);

	if (!c)
		c = (a->hop > b->hop) - (a->hop < b->hop);
	return c;
}

/* A rail is a device name on two nodes or more, where some hops are on other names. */
static void rails(struct vm_state *s, struct endpoint *e, size_t ne, size_t rated)
{
	sort_named(s, e, ne, false);
	for (size_t a = 0, b; a < ne; a = b) {
		const char *first_node = e[a].node;
		bool nodes = false;
		struct vm_candidate *c;

		for (b = a; b < ne && !strcmp(e[a].dev, e[b].dev); b++)
			nodes |= strcmp(first_node, e[b].node) != 0;
		if (!nodes || (a == 0 && b == ne))
			continue;
		c = add(s, VM_RAIL);
		c->dev = e[a].dev;
		for (size_t k = a; k < b; k++)
			add_member(s, c, e[k].hop, 0);
		if (c->count >= rated) { /* every hop: that is the whole fabric, not a rail */
			s->nmembers -= c->count;
			s->ncands--;
		}
	}
}

static bool has_member(const struct vm_state *s, const struct vm_candidate *c, size_t hop)
{
	for (size_t i = 0; i < c->count; i++) {
		if (s->members[c->first + i] == hop)
			return true;
	}
	return false;
}

/* The range [*a, *b) of e (sorted, ne) whose node is `node`. */
static void node_range(const struct endpoint *e, size_t ne, const char *node, size_t *a, size_t *b)
{
	size_t lo = 0, hi = ne;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (strcmp(e[mid].node, node) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	*a = lo;
	while (hi < ne && !strcmp(e[hi].node, node))
		hi++;
	*b = hi > lo ? hi : lo;
}

/*
 * A straggler's side effects on the waits around it, each a part of its own
 * (verdict_fit.c fits them as spike or slab): the hops out of it, whose
 * receivers it starves (their senders never wait, they wait: u lower), and
 * the hops into the nodes that send to it, which cannot free the buffers it
 * does not drain and so post their own receives late (u higher: NCCL's
 * proxy frees a receive slot only once the GPU's head has passed it,
 * src/transport/net.cc:1729-1744 at v2.30.7-1). Added only where they are
 * few, as in a ring: in an all-to-all every node is upstream of every other
 * and it says nothing.
 */
static void node_sides(struct vm_state *s, struct vm_candidate *c, const struct endpoint *in,
		       size_t nin, const struct endpoint *out, size_t nout, size_t first_in,
		       size_t end_in)
{
	size_t a, b, up = 0;

	node_range(out, nout, c->node, &a, &b);
	for (size_t k = a; k < b; k++)
		add_member(s, c, out[k].hop, 2);
	for (size_t i = first_in; i < end_in; i++) {
		size_t x, y;

		node_range(in, nin, s->figs[in[i].hop].src_node, &x, &y);
		up += y - x;
	}
	if (up > 2 * (end_in - first_in))
		return;
	for (size_t i = first_in; i < end_in; i++) {
		const char *sender = s->figs[in[i].hop].src_node;
		size_t x, y;

		node_range(in, nin, sender, &x, &y);
		for (size_t k = x; k < y; k++) {
			if (strcmp(s->figs[in[k].hop].src_node, c->node) &&
			    !has_member(s, c, in[k].hop))
				add_member(s, c, in[k].hop, 1);
		}
	}
}

/* The floor of the hops into the node: the least of their wait groups'. */
static void straggler_min_shift(struct vm_state *s, struct vm_candidate *c)
{
	c->du_min = INFINITY;
	for (size_t i = 0; i < c->count; i++) {
		size_t h = s->members[c->first + i];
		double d;

		if (s->member_part[c->first + i] || s->hops[h].ugroup < 0)
			continue;
		d = s->du_floor[s->hops[h].ugroup];
		if (d < c->du_min)
			c->du_min = d;
	}
	if (c->du_min == INFINITY)
		c->du_min = -s->dy_max;
}

/* Stragglers: the nodes hops enter, judged by those hops' waits and their side effects. */
static int nodes(struct vm_state *s, struct endpoint *e)
{
	struct endpoint *out = malloc((s->n ? s->n : 1) * sizeof(*out));
	size_t ne = 0, nout = 0;

	if (!out)
		return -1;
	for (size_t i = 0; i < s->n; i++) {
		if (!s->hops[i].has_u)
			continue;
		e[ne++] = (struct endpoint){ s->figs[i].dst_node, NULL, i, false };
		out[nout++] = (struct endpoint){ s->figs[i].src_node, NULL, i, true };
	}
	qsort(e, ne, sizeof(*e), cmp_endpoint);
	qsort(out, nout, sizeof(*out), cmp_endpoint);
	for (size_t a = 0, b; a < ne; a = b) {
		struct vm_candidate *c = add(s, VM_NODE);

		c->node = e[a].node;
		for (b = a; b < ne && same_end(&e[a], &e[b]); b++)
			add_member(s, c, e[b].hop, 0);
		node_sides(s, c, e, ne, out, nout, a, b);
		straggler_min_shift(s, c);
	}
	free(out);
	return 0;
}

/*
 * Two candidates that slow the same hops make the same prediction: the data
 * cannot choose, so they are one explanation, named by the first found (a
 * device before a rail; in a 2-node ring, the first node's device). Members
 * are sorted per candidate, then candidates with equal sets dropped.
 */
struct member {
	size_t hop;
	unsigned char part;
};

static int cmp_member(const void *pa, const void *pb)
{
	const struct member *a = pa, *b = pb;

	return (a->hop > b->hop) - (a->hop < b->hop);
}

/* Sorts a candidate's hops (its parts with them): equal sets then compare equal. */
static void sort_members(struct vm_state *s, const struct vm_candidate *k, struct member *tmp)
{
	for (size_t i = 0; i < k->count; i++)
		tmp[i] = (struct member){ s->members[k->first + i], s->member_part[k->first + i] };
	qsort(tmp, k->count, sizeof(*tmp), cmp_member);
	for (size_t i = 0; i < k->count; i++) {
		s->members[k->first + i] = tmp[i].hop;
		s->member_part[k->first + i] = tmp[i].part;
	}
}

static bool same_hops(const struct vm_state *s, const struct vm_candidate *a,
		      const struct vm_candidate *b)
{
	return a->count == b->count &&
	       !memcmp(s->members + a->first, s->members + b->first, a->count * sizeof(size_t));
}

struct signature {
	uint64_t sum;
	size_t cand;
};

static int cmp_signature(const void *pa, const void *pb)
{
	const struct signature *a = pa, *b = pb;

	if (a->sum != b->sum)
		return a->sum < b->sum ? -1 : 1;
	return (a->cand > b->cand) - (a->cand < b->cand);
}

static int drop_same_hops(struct vm_state *s)
{
	struct signature *sig = malloc((s->ncands ? s->ncands : 1) * sizeof(*sig));
	struct member *tmp = malloc(2 * (s->n ? s->n : 1) * sizeof(*tmp));
	bool *drop = calloc(s->ncands ? s->ncands : 1, sizeof(*drop));
	size_t n = 0, kept = 0;

	if (!sig || !tmp || !drop) {
		free(sig);
		free(tmp);
		free(drop);
		return -1;
	}
	for (size_t c = 0; c < s->ncands; c++) {
		struct vm_candidate *k = &s->cands[c];
		uint64_t sum = k->count;

		if (k->kind != VM_DEVICE && k->kind != VM_RAIL && k->kind != VM_SWITCH)
			continue;
		sort_members(s, k, tmp);
		for (size_t i = 0; i < k->count; i++)
			sum = sum * 1000003u + s->members[k->first + i];
		sig[n++] = (struct signature){ sum, c };
	}
	qsort(sig, n, sizeof(*sig), cmp_signature);
	for (size_t a = 0; a < n; a++) {
		for (size_t b = a + 1; b < n && sig[b].sum == sig[a].sum; b++) {
			if (!drop[sig[b].cand] &&
			    same_hops(s, &s->cands[sig[a].cand], &s->cands[sig[b].cand]))
				drop[sig[b].cand] = true;
		}
	}
	for (size_t c = 0; c < s->ncands; c++) {
		if (!drop[c])
			s->cands[kept++] = s->cands[c];
	}
	s->ncands = kept;
	free(drop);
	free(tmp);
	free(sig);
	return 0;
}

static void priors(struct vm_state *s)
{
	size_t count[VM_KINDS] = { 0 };
	int kinds = 0;

	for (size_t c = 0; c < s->ncands; c++)
		count[s->cands[c].kind]++;
	for (int k = 0; k < VM_KINDS; k++)
		kinds += count[k] > 0;
	for (int k = 0; k < VM_KINDS; k++)
		s->kind_prior[k] = count[k] ? fl_ln(PRIOR_ONE / kinds / (double)count[k]) : -INFINITY;
}

double vm_prior_none(void)
{
	return fl_ln(PRIOR_NONE);
}

double vm_prior_pair(const struct vm_state *s)
{
	double pairs = (double)s->ncands * (double)(s->ncands - 1) / 2.0;

	return pairs >= 1.0 ? fl_ln((1.0 - PRIOR_NONE - PRIOR_ONE) / pairs) : -INFINITY;
}

/*
 * The topology's shared elements (verdict_topology.h): the hops through one
 * leaf, its uplinks, a spine or the spine layer, one candidate each. A leaf
 * port's hops are its NIC's, the device candidate already. After the devices
 * and rails, so that an element with the same hops as one of them is named as
 * that (drop_same_hops keeps the first).
 */
static void switches(struct vm_state *s)
{
	const struct fl_hop_elements *e = s->elements;
	bool ecmp = false;

	/* several paths between leaves: a hop may cross a spine or not, a cable of several */
	for (size_t i = 0; e && i < e->nel; i++)
		ecmp |= !e->el[i].certain || e->el[i].kind == FL_ELEMENT_SPINES ||
			(e->el[i].kind == FL_ELEMENT_UPLINK && e->el[i].cables > 1);

	for (size_t i = 0; e && i < e->nel; i++) {
		const struct fl_shared_element *el = &e->el[i];
		struct vm_candidate *c;

		if (el->kind == FL_ELEMENT_LEAF_PORT)
			continue;
		c = add(s, VM_SWITCH);
		c->node = el->name;
		/*
		 * Where connections hash over several paths, a fault on one of
		 * them (a spine, a cable) slows each hop by the share of its
		 * connections that took it; a leaf carries all of its hops' paths.
		 */
		c->partial = ecmp && el->kind != FL_ELEMENT_LEAF && el->count <= VM_PARTS;
		for (size_t k = 0; k < el->count; k++) {
			size_t h = e->hops[el->first + k];

			if (h < s->n && s->hops[h].group >= 0)
				add_member(s, c, h, c->partial ? (int)c->count : 0);
		}
		c->parts = c->partial ? (int)c->count : 1;
		if (c->count < 2) { /* fewer than two judged hops: a link, or nothing */
			s->nmembers -= c->count;
			s->ncands--;
		}
	}
}

int vm_candidates(struct vm_state *s)
{
	size_t room = s->n ? s->n : 1, ne, rated = 0;
	size_t extra = s->elements ? s->elements->nhops + s->elements->nel : 0;
	struct endpoint *e = malloc(2 * room * sizeof(*e));

	/* links n, devices 2n, rails 2n, nodes n into them, n out and at most 2n upstream */
	s->cands = calloc(6 * room + extra, sizeof(*s->cands));
	s->members = calloc(10 * room + extra, sizeof(*s->members));
	s->member_part = calloc(10 * room + extra, 1);
	if (!e || !s->cands || !s->members || !s->member_part) {
		free(e);
		return -1;
	}
	for (size_t i = 0; i < s->n; i++)
		rated += s->hops[i].group >= 0;
	links(s);
	ne = rated_endpoints(s, e);
	devices(s, e, ne);
	ne = rated_endpoints(s, e);
	rails(s, e, ne, rated);
	switches(s);
	if (nodes(s, e)) {
		free(e);
		return -1;
	}
	free(e);
	if (drop_same_hops(s))
		return -1;
	priors(s);
	return 0;
}

int vm_member_part(const struct vm_state *s, size_t c, size_t h)
{
	const struct vm_candidate *k = &s->cands[c];

	for (size_t i = 0; i < k->count; i++) {
		if (s->members[k->first + i] == h)
			return s->member_part[k->first + i];
	}
	return -1;
}


const char *vm_kind_label(enum vm_kind k)
{
	static const char *const names[] = { "link", "device", "node", "rail", "switch" };

	return (unsigned)k < VM_KINDS ? names[k] : "?";
}

enum fl_verdict_kind vm_verdict_kind(enum vm_kind k)
{
	static const enum fl_verdict_kind kinds[] = { FL_VERDICT_LINK, FL_VERDICT_DEVICE,
						      FL_VERDICT_NODE, FL_VERDICT_RAIL,
						      FL_VERDICT_SWITCH };

	return kinds[k];
}
