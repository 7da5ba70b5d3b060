/*
 * Slow wires: each hop against the comparable hops (same transport, nominal
 * speed within 1%); devices whose hops are all slow in both directions are
 * named first (verdict_device.c), and every slow hop none of them explains is
 * a `link` of its own.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "verdict_internal.h"

#define EXACT_SPREAD_MAX 64 /* groups up to this size get a spread without the hop judged */

struct rated_hop {
	size_t hop;
	size_t group;
	double gbs;
};

/* What the wire analysis learns about each hop, indexed like the hop array. */
struct wire_judgement {
	double *ref; /* median of the other comparable hops; 0 when there are none */
	bool *slow;
	size_t nslow;
	size_t first_slow;
	double *scratch; /* room for one group's rates */
};

bool verdict_comparable(const struct fl_hop_figures *a, const struct fl_hop_figures *b)
{
	double x = a->line_rate_gbs, y = b->line_rate_gbs;
	double diff = x > y ? x - y : y - x;

	return !strcmp(a->transport, b->transport) && diff <= 0.01 * (x > y ? x : y);
}

static int cmp_rated(const void *pa, const void *pb)
{
	const struct rated_hop *a = pa, *b = pb;

	if (a->group != b->group)
		return a->group < b->group ? -1 : 1;
	if (a->gbs != b->gbs)
		return a->gbs < b->gbs ? -1 : 1;
	return (a->hop > b->hop) - (a->hop < b->hop);
}

/* Puts every hop with a rate in a comparable group; returns how many it rated. */
static size_t group_rated(const struct verdict_input *in, struct rated_hop *rated, size_t *reps)
{
	size_t n = 0, ngroups = 0;

	for (size_t i = 0; i < in->nhops; i++) {
		size_t g = 0;

		if (!verdict_has_rate(in, i))
			continue;
		while (g < ngroups && !verdict_comparable(&in->hops[reps[g]], &in->hops[i]))
			g++;
		if (g == ngroups)
			reps[ngroups++] = i;
		rated[n++] = (struct rated_hop){ i, g, fl_verdict_rate(&in->hops[i]) };
	}
	qsort(rated, n, sizeof(*rated), cmp_rated);
	return n;
}

/*
 * Median of a sorted group without its element k: a hop is compared with the
 * others, so in a small ring the two slow hops of a bad device do not drag
 * their own reference down.
 */
static double median_without(const struct rated_hop *g, size_t n, size_t k)
{
	size_t m = n - 1, a, b;

	if (n < 2)
		return 0.0;
	a = m % 2 ? m / 2 : m / 2 - 1;
	b = m / 2;
	return (g[a < k ? a : a + 1].gbs + g[b < k ? b : b + 1].gbs) / 2.0;
}

/*
 * A hop is slow when it is below min_ratio x the others' median and, when its
 * nominal speed is known, also below min_ratio x that speed: a hop faster than
 * its NIC's nominal rate is not a slow cable (loopback and veth, which report
 * no speed, get a placeholder rate their hops beat).
 */
bool verdict_below_ratio(const struct fl_hop_figures *h, double ref, double min_ratio)
{
	double line = h->line_rate_gbs, rate = fl_verdict_rate(h);

	if (ref <= 0.0 || rate >= min_ratio * ref)
		return false;
	return line <= 0.0 || rate < min_ratio * line;
}

static double distance(double a, double b)
{
	return a > b ? a - b : b - a;
}

/* Median absolute deviation of a group's rates from its median (scratch holds n). */
static double group_mad(const struct rated_hop *g, size_t n, double *scratch)
{
	for (size_t k = 0; k < n; k++)
		scratch[k] = g[k].gbs;
	return verdict_mad(scratch, n);
}

/*
 * ... and it must stand out from the others' spread: its shortfall, in median
 * absolute deviations of the others, is a modified z-score (Iglewicz and
 * Hoaglin) above 3.5. Busy shared hosts spread rates by tens of percent with
 * no hop to blame; a bad cable sits far outside the spread of the good ones.
 * Small groups leave the hop, and any other hop slow by the ratio, out of the
 * spread (its partner on a bad device would otherwise widen it); in large
 * groups a few slow hops hardly move it.
 */
static bool stands_out(const struct rated_hop *g, size_t n, size_t k, double ref,
		       double min_ratio, double large_group_mad, double *scratch)
{
	double mad = large_group_mad;
	size_t m = 0;

	if (n <= EXACT_SPREAD_MAX) {
		/*
		 * Only hops that are not slow themselves make the spread: in a ring of 4
		 * the other hop through a halved NIC would otherwise be half of it.
		 */
		for (size_t o = 0; o < n; o++) {
			if (o != k && g[o].gbs >= min_ratio * ref)
				scratch[m++] = distance(g[o].gbs, ref);
		}
		mad = verdict_median(scratch, m);
	}
	return verdict_outside_spread(ref - g[k].gbs, mad);
}

static void judge_group(const struct verdict_input *in, const struct rated_hop *g, size_t n,
			struct wire_judgement *j)
{
	double mad = n > EXACT_SPREAD_MAX ? group_mad(g, n, j->scratch) : 0.0;

	for (size_t k = 0; n >= 2 && k < n; k++) {
		size_t i = g[k].hop;

		j->ref[i] = median_without(g, n, k);
		j->slow[i] = verdict_below_ratio(&in->hops[i], j->ref[i], in->params->min_ratio) &&
			     stands_out(g, n, k, j->ref[i], in->params->min_ratio, mad, j->scratch);
	}
}

static void judge_groups(const struct verdict_input *in, const struct rated_hop *rated, size_t n,
			 struct wire_judgement *j)
{
	for (size_t lo = 0, hi; lo < n; lo = hi) {
		for (hi = lo; hi < n && rated[hi].group == rated[lo].group; hi++)
			;
		judge_group(in, &rated[lo], hi - lo, j);
	}
	j->nslow = 0;
	for (size_t i = in->nhops; i-- > 0;) {
		if (j->slow[i]) {
			j->nslow++;
			j->first_slow = i;
		}
	}
}

static double hop_ratio(const struct verdict_input *in, const struct wire_judgement *j, size_t i)
{
	return fl_verdict_rate(&in->hops[i]) / j->ref[i];
}

static void pct_line(const struct fl_hop_figures *h, char *buf, size_t len)
{
	if (h->line_rate_gbs > 0.0)
		snprintf(buf, len, ", %.0f%% of its %.2f GB/s line rate",
			 100.0 * h->wire_gbs / h->line_rate_gbs, h->line_rate_gbs);
	else
		buf[0] = '\0';
}

static void name_link(const struct verdict_input *in, const struct wire_judgement *j, size_t i,
		      struct fl_finding *out)
{
	const struct fl_hop_figures *h = &in->hops[i];
	char line[64];

	verdict_set_hop(out, in->hops, i);
	out->median_gbs = j->ref[i];
	out->ratio = hop_ratio(in, j, i);
	/* A ring moves at the pace of its slowest hop. */
	out->speedup = out->ratio > 0.0 ? 1.0 / out->ratio : 1.0;
	pct_line(h, line, sizeof(line));
	verdict_say(
		out,
		"hop %s/%s -> %s/%s runs at %.2f GB/s, %.2fx the %.2f GB/s median of comparable "
		"%s hops%s (%zu slow hop%s in all)",
		h->src_node, h->src_dev, h->dst_node, h->dst_dev, h->wire_gbs, out->ratio,
		out->median_gbs, h->transport, line, j->nslow, j->nslow == 1 ? "" : "s");
}

/* Each slow hop that no slow device explains is a link of its own. */
static void add_links(const struct verdict_input *in, const struct wire_judgement *j,
		      const bool *explained, struct fl_verdict *out)
{
	for (size_t i = 0; i < in->nhops; i++) {
		struct fl_finding *f;

		if (!j->slow[i] || explained[i] || !verdict_typical_slow(in, i, NULL, NULL))
			continue;
		f = verdict_add_finding(out, FL_VERDICT_LINK);
		if (!f)
			return;
		name_link(in, j, i, f);
	}
}

/* Whether the link finding f ends at node/dev as `end` (0 source, 1 destination). */
static bool link_at(const struct verdict_input *in, const struct fl_finding *f, const char *node,
		    const char *dev, int end)
{
	const struct fl_hop_figures *h = &in->hops[f->hop];

	return end ? !strcmp(h->dst_node, node) && !strcmp(h->dst_dev, dev)
		   : !strcmp(h->src_node, node) && !strcmp(h->src_dev, dev);
}

/* Every rated hop through node/dev is one of the links from `first` on, in both directions. */
static bool all_hops_linked(const struct verdict_input *in, const struct fl_verdict *out,
			    int first, const char *node, const char *dev)
{
	bool in_dir = false, out_dir = false;

	for (size_t i = 0; i < in->nhops; i++) {
		bool linked = false;

		if (!verdict_has_rate(in, i) || !fl_verdict_touches(&in->hops[i], node, dev))
			continue;
		for (int k = first; k < out->nfindings && !linked; k++)
			linked = out->findings[k].kind == FL_VERDICT_LINK && out->findings[k].hop == (int)i;
		if (!linked)
			return false;
		out_dir |= !strcmp(in->hops[i].src_node, node) && !strcmp(in->hops[i].src_dev, dev);
		in_dir |= !strcmp(in->hops[i].dst_node, node) && !strcmp(in->hops[i].dst_dev, dev);
	}
	return in_dir && out_dir;
}

/*
 * The links from `first` on that all go through one device, in and out, are that device: in a
 * ring of 4 its own rule compares it with two hops only, whose spread (and median message) is
 * luck, so a 90% NIC came out as two links (lab, 2 of 3 runs). One device finding takes their
 * place, named by the slowest of them.
 */
static void links_to_device(const struct verdict_input *in, struct fl_verdict *out, int first)
{
	for (int k = first; k < out->nfindings; k++) {
		const struct fl_hop_figures *h = &in->hops[out->findings[k].hop];
		const char *node = h->dst_node, *dev = h->dst_dev;
		struct fl_finding merged, *slowest = NULL;
		int kept = first, through = 0;

		if (out->findings[k].kind != FL_VERDICT_LINK ||
		    !all_hops_linked(in, out, first, node, dev))
			continue;
		for (int m = first; m < out->nfindings; m++) {
			struct fl_finding *f = &out->findings[m];

			if (f->kind == FL_VERDICT_LINK &&
			    (link_at(in, f, node, dev, 0) || link_at(in, f, node, dev, 1))) {
				through++;
				if (!slowest || f->ratio < slowest->ratio)
					slowest = f;
			}
		}
		merged = *slowest;
		merged.kind = FL_VERDICT_DEVICE;
		verdict_set_name(merged.node, sizeof(merged.node), node);
		verdict_set_name(merged.dev, sizeof(merged.dev), dev);
		verdict_say(&merged,
			    "all %d hops through %s/%s are slow in both directions, each below the "
			    "others (slowest %.2fx the %.2f GB/s median of comparable hops): suspect "
			    "its NIC, port or cable",
			    through, node, dev, slowest->ratio, slowest->median_gbs);
		for (int m = first; m < out->nfindings; m++) {
			const struct fl_finding *f = &out->findings[m];

			if (!(f->kind == FL_VERDICT_LINK &&
			      (link_at(in, f, node, dev, 0) || link_at(in, f, node, dev, 1))))
				out->findings[kept++] = *f;
		}
		out->findings[kept++] = merged;
		out->nfindings = kept;
		return; /* one device per call: the links left are judged again by the caller */
	}
}

int verdict_try_wire(const struct verdict_input *in, struct fl_verdict *out)
{
	size_t n = in->nhops ? in->nhops : 1;
	struct rated_hop *rated = malloc(n * sizeof(*rated));
	size_t *reps = malloc(n * sizeof(*reps));
	struct wire_judgement j = { calloc(n, sizeof(double)), calloc(n, sizeof(bool)), 0, 0,
				    malloc(n * sizeof(double)) };
	bool *explained = calloc(n, sizeof(bool));
	int before = out->nfindings, found = -1;

	if (rated && reps && j.ref && j.slow && j.scratch && explained) {
		judge_groups(in, rated, group_rated(in, rated, reps), &j);
		found = verdict_find_rails_and_devices(in, explained, out);
		if (found >= 0) {
			int links = out->nfindings, was;

			add_links(in, &j, explained, out);
			do {
				was = out->nfindings;
				links_to_device(in, out, links);
			} while (out->nfindings < was);
			found = out->nfindings - before;
		}
	}
	free(explained);
	free(rated);
	free(reps);
	free(j.ref);
	free(j.slow);
	free(j.scratch);
	return found;
}
