/*
 * From posterior probabilities to the verdict a person reads: the culprits
 * named (each likely enough on its own), or healthy, or not enough evidence
 * with what would settle it; the runner-up; and every number under the
 * verdict (share of line, ratio to the other hops, speedup) from the same
 * fitted explanation, so they cannot contradict each other.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/fl_math.h"
#include "verdict_explain.h"
#include "verdict_internal.h"

/* ln(0.9 / 0.1): the odds FL_VERDICT_NAME_CONFIDENCE asks for. */
#define NAME_LOG_ODDS 2.1972245773362196

/* One explanation the posterior weighs: none, a single culprit or a pair. */
struct choice {
	const struct vm_fit *fit;
	double p;
};

static struct choice best_choice(const struct vm_posterior *p, struct choice *runner)
{
	struct choice best = { &p->none, p->p_none }, next = { NULL, 0.0 };

	for (int k = 0; k < p->ntop + p->npairs; k++) {
		struct choice c = k < p->ntop ? (struct choice){ &p->singles[k], p->p_top[k] }
					      : (struct choice){ &p->pairs[k - p->ntop],
								 p->p_pairs[k - p->ntop] };

		if (c.p > best.p) {
			next = best;
			best = c;
		} else if (c.p > next.p) {
			next = c;
		}
	}
	*runner = next;
	return best;
}

/* Probability that candidate c is a culprit: every scored explanation that has it. */
static double marginal(const struct vm_posterior *p, int c)
{
	double m = 0.0;

	for (int k = 0; k < p->ntop; k++)
		m += p->top[k] == c ? p->p_top[k] : 0.0;
	for (int k = 0; k < p->npairs; k++) {
		const struct vm_fit *f = &p->pairs[k];
		bool has = (f->cul[0] == c && f->absorbed != 1) || (f->cul[1] == c && f->absorbed != 2);

		m += has ? p->p_pairs[k] : 0.0;
	}
	return m < 1.0 ? m : 1.0; /* a sum of exponentials rounds a hair above 1 */
}

static void name_candidate(const struct vm_state *s, int c, char *buf, size_t len)
{
	const struct vm_candidate *k = &s->cands[c];
	const struct fl_hop_figures *h = k->hop >= 0 ? &s->figs[k->hop] : NULL;

	if (k->kind == VM_RAIL)
		snprintf(buf, len, "rail %s", k->dev);
	else if (k->kind == VM_DEVICE)
		snprintf(buf, len, "%s/%s", k->node, k->dev);
	else if (k->kind == VM_LINK && h)
		snprintf(buf, len, "%s/%s -> %s/%s", h->src_node, h->src_dev, h->dst_node,
			 h->dst_dev);
	else
		snprintf(buf, len, "%s", k->node ? k->node : "?");
}

/*
 * What a rate culprit costs hop h, ln: its slowdown of bytes over busy time
 * (dy), or where the hop's requests wait for a round trip (its group's was
 * measured, verdict_observe.c), the larger of that and its median request's
 * ((1 + kappa) dy), which is then timed without the round trip. Busy time
 * holds the round trip every hop pays once a slow hop spaces out its
 * requests, so the healthy hops' rate drops with the culprit's and dy hides
 * part of the cost; a median request misses pauses, so it is never the
 * smaller. Without a round trip (sockets) a median request stretches past
 * the rate where requests queue behind a throttled port: dy alone.
 */
static double cost_shift(const struct vm_state *s, const struct vm_fit *f, size_t h, double dy)
{
	if (s->group_rtt[s->hops[h].group] > 0.0 && f->kappa > 0.0)
		return dy * (1.0 + f->kappa);
	return dy;
}

/* The ln rate of hop h as it costs the ring, with the culprits of f except `skip` (-1: all). */
static double predicted_rate(const struct vm_state *s, const struct vm_fit *f, size_t h, int skip)
{
	double r = s->mu_y[s->hops[h].group];

	for (int c = 0; c < f->ncul; c++) {
		int part = vm_member_part(s, (size_t)f->cul[c], h);

		if (c != skip && s->cands[f->cul[c]].kind != VM_NODE && part >= 0)
			r += cost_shift(s, f, h, f->dy[c][part]);
	}
	return r;
}

/*
 * How much faster the collective runs without culprit `which` of f. The ring
 * moves at its slowest hop: fixed, that hop's wire time shrinks to what the
 * next slowest allows (both predicted by the fit). The rest of the hop's busy
 * span (posted -> done: waits, latency, the other steps of the collective)
 * stays, so a wire that is a small part of the span gains little.
 */
/*
 * How much faster the collective runs without straggler `which` of f. Held,
 * it stretches every hop's busy span (posted -> done) past the time its
 * bytes need on the wire: the ring waits on it. Without it, the ring moves at
 * its slowest wire as fitted (other culprits kept): the typical hop's span
 * over the longest time a hop's bytes need at its fitted rate. A ring that
 * kept its wires busy before has nothing to gain (1).
 */
static double straggler_speedup(const struct vm_state *s, const struct vm_fit *f)
{
	double *spans = s->scratch, wire = 0.0, span;
	size_t n = 0;

	for (size_t h = 0; h < s->n; h++) {
		const struct fl_hop_figures *fig = &s->figs[h];
		double need;

		if (s->hops[h].group < 0 || fig->active_seconds <= 0.0)
			continue;
		need = (double)fig->bytes / 1e9 / fl_exp(predicted_rate(s, f, h, -1));
		wire = need > wire ? need : wire;
		spans[n++] = fig->active_seconds;
	}
	if (!n || wire <= 0.0)
		return 1.0;
	span = verdict_median(spans, n);
	return span > wire ? span / wire : 1.0;
}

static double speedup_without(const struct vm_state *s, const struct vm_fit *f, int which)
{
	double before = INFINITY, after = INFINITY, wire, span, saved;
	size_t pacing = 0;

	if (s->cands[f->cul[which]].kind == VM_NODE)
		return straggler_speedup(s, f);
	for (size_t h = 0; h < s->n; h++) {
		double with, without;

		if (s->hops[h].group < 0)
			continue;
		with = predicted_rate(s, f, h, -1);
		without = predicted_rate(s, f, h, which);
		if (with < before) {
			before = with;
			pacing = h;
		}
		after = without < after ? without : after;
	}
	if (!(before < INFINITY) || !(after < INFINITY) || after <= before)
		return 1.0;
	wire = s->figs[pacing].wire_seconds;
	span = s->figs[pacing].active_seconds > wire ? s->figs[pacing].active_seconds : wire;
	if (wire <= 0.0)
		return fl_exp(after - before);
	saved = wire * (1.0 - fl_exp(before - after));
	return span / (span - saved);
}

/* The culprit's hop its fit says is slowest (its first hop for a straggler). */
static int slowest_member(const struct vm_state *s, const struct vm_fit *f, int c)
{
	const struct vm_candidate *k = &s->cands[f->cul[c]];
	int best = -1;
	double low = INFINITY;

	for (size_t i = 0; i < k->count; i++) {
		size_t h = s->members[k->first + i];
		double r = s->hops[h].group >= 0 ? s->hops[h].y : 0.0;

		if (best < 0 || r < low) {
			best = (int)h;
			low = r;
		}
	}
	return best;
}

/* The part of culprit c its fit slows most (a device's worse direction, a switch's worst hop). */
static int worst_part(const struct vm_state *s, const struct vm_fit *f, int c)
{
	int worst = 0;

	for (int part = 1; part < s->cands[f->cul[c]].parts; part++) {
		if (f->dy[c][part] < f->dy[c][worst])
			worst = part;
	}
	return worst;
}

/* How many parts of culprit c its fit slows by at least the smallest effect named. */
static int slow_parts(const struct vm_state *s, const struct vm_fit *f, int c)
{
	int n = 0;

	for (int part = 0; part < s->cands[f->cul[c]].parts; part++)
		n += f->dy[c][part] <= s->dy_max;
	return n;
}

/* Whether any hop of candidate c has a median request time (the m observation). */
static bool members_timed(const struct vm_state *s, int c)
{
	const struct vm_candidate *k = &s->cands[c];

	for (size_t i = 0; i < k->count; i++) {
		if (s->hops[s->members[k->first + i]].has_m)
			return true;
	}
	return false;
}

static void rate_reason(const struct vm_state *s, const struct vm_fit *f, int c,
			struct fl_finding *out)
{
	const struct vm_candidate *k = &s->cands[f->cul[c]];
	const char *what = k->kind == VM_LINK	   ? "this hop runs"
			   : k->kind == VM_DEVICE ? "its hops run"
			   : k->kind == VM_SWITCH ? "the hops through it run"
						  : "the hops on this device name run, on every node,";
	int part = worst_part(s, f, c);
	char name[FL_CULPRIT_LEN];

	name_candidate(s, f->cul[c], name, sizeof(name));
	if (k->partial)
		verdict_say(out, "%s: %d of its %d hops slow (by their ECMP paths), the slowest at "
			    "%.2fx the others", name, slow_parts(s, f, c), k->parts, out->ratio);
	else
		verdict_say(out, "%s: %s at %.2fx the rate of the other hops", name, what,
			    out->ratio);
	if (k->kind == VM_DEVICE)
		verdict_say_more(out, " (out %.2fx, in %.2fx)", fl_exp(f->dy[c][0]),
				 fl_exp(f->dy[c][1]));
	verdict_say_more(out, " (%.3g of %.3g GB/s", out->culprit_gbs, out->median_gbs);
	if (out->line_share > 0.0)
		verdict_say_more(out, ", %.0f%% of line", 100.0 * out->line_share);
	verdict_say_more(out, ")");
	if (members_timed(s, f->cul[c]))
		verdict_say_more(out, ", their median request %.2fx as slow",
				 fl_exp(-(1.0 + f->kappa) * f->dy[c][part]));
	verdict_say_more(out, "; healthy hops differ by %.1f%%", 100.0 * f->tau_y);
	if (k->kind == VM_DEVICE)
		verdict_say_more(out, ": suspect its NIC, port or cable");
	else if (k->kind == VM_RAIL)
		verdict_say_more(out, ": suspect the leaf switch of that rail");
	else if (k->kind == VM_SWITCH)
		verdict_say_more(out, ": suspect that switch");
}

static void node_reason(const struct vm_state *s, const struct vm_fit *f, int c,
			struct fl_finding *out)
{
	(void)s;
	verdict_say(out,
		    "wire rates are normal, but the hops into %s wait on it %.2fx as much as the "
		    "other hops wait (healthy hops differ by %.1f%%): the straggler the others "
		    "wait on",
		    out->node, fl_exp(f->du[c][0]), 100.0 * f->tau_u);
}

static void fill_finding(const struct vm_state *s, const struct vm_fit *f, int c, double conf,
			 struct fl_finding *out)
{
	const struct vm_candidate *k = &s->cands[f->cul[c]];
	int h = slowest_member(s, f, c);
	int g = h >= 0 && s->hops[h].group >= 0 ? s->hops[h].group : 0;
	double line = h >= 0 ? s->figs[h].line_rate_gbs : 0.0;

	out->kind = vm_verdict_kind(k->kind);
	out->hop = k->kind == VM_NODE ? -1 : h;
	verdict_set_name(out->node, sizeof(out->node), k->node ? k->node : "");
	verdict_set_name(out->dev, sizeof(out->dev), k->dev ? k->dev : "");
	out->confidence = conf;
	out->median_gbs = s->ngroups ? fl_exp(s->mu_y[g]) : 0.0;
	out->speedup = speedup_without(s, f, c);
	if (k->kind == VM_NODE) {
		out->ratio = fl_exp(-f->du[c][0]);
		out->culprit_gbs = out->median_gbs;
		out->line_share = line > 0.0 ? out->median_gbs / line : 0.0;
		node_reason(s, f, c, out);
		return;
	}
	out->ratio = fl_exp(f->dy[c][worst_part(s, f, c)]);
	out->culprit_gbs = out->median_gbs * out->ratio;
	out->line_share = line > 0.0 ? out->culprit_gbs / line : 0.0;
	if (out->line_share > FL_VERDICT_MAX_LINE_FRACTION)
		out->line_share = FL_VERDICT_MAX_LINE_FRACTION;
	rate_reason(s, f, c, out);
}

/* A culprit of f, other than those of best and than one f's partner explains; -1 none. */
static int new_culprit(const struct vm_fit *best, const struct vm_fit *f)
{
	for (int c = 0; c < f->ncul; c++) {
		bool shared = c + 1 == f->absorbed;

		for (int b = 0; best && b < best->ncul; b++)
			shared |= best->cul[b] == f->cul[c];
		if (!shared)
			return f->cul[c];
	}
	return -1;
}

/*
 * The runner-up: the likeliest explanation that says something the verdict
 * does not (a pair that adds a culprit says that culprit; healthy, when the
 * verdict names one).
 */
static void runner_up(const struct vm_state *s, const struct vm_posterior *p,
		      const struct vm_fit *best, struct fl_verdict *v)
{
	struct fl_runner_up *r = &v->runner_up;
	int pick = -1;

	memset(r, 0, sizeof(*r));
	r->kind = FL_VERDICT_NONE;
	if (best && best->ncul)
		r->confidence = p->p_none;
	for (int k = 0; k < p->ntop + p->npairs; k++) {
		const struct vm_fit *f = k < p->ntop ? &p->singles[k] : &p->pairs[k - p->ntop];
		double pk = k < p->ntop ? p->p_top[k] : p->p_pairs[k - p->ntop];
		int c = f == best ? -1 : new_culprit(best, f);

		if (c >= 0 && pk > r->confidence) {
			r->confidence = pk;
			pick = c;
		}
	}
	if (pick < 0)
		return;
	r->kind = vm_verdict_kind(s->cands[pick].kind);
	name_candidate(s, pick, r->culprit, sizeof(r->culprit));
}

static size_t judged(const struct vm_state *s)
{
	size_t n = 0;

	for (size_t h = 0; h < s->n; h++)
		n += s->hops[h].group >= 0;
	return n;
}

static double median_bytes(const struct vm_state *s, const struct vm_fit *f)
{
	const struct vm_candidate *k = &s->cands[f->cul[0]];

	return k->count ? (double)s->figs[s->members[k->first]].bytes : 0.0;
}

/* How much more traffic would settle the likeliest culprit, or why more would not. */
static void settle(const struct vm_state *s, const struct vm_posterior *p, const struct vm_fit *f,
		   struct fl_verdict *v, char *buf, size_t len)
{
	const struct vm_candidate *k = &s->cands[f->cul[0]];
	double gain = f->loglik - p->none.loglik;
	double penalty = f->occam + s->kind_prior[k->kind] - vm_prior_none();
	double sy = s->hops[s->members[k->first]].sy, times;

	(void)v;
	if (k->kind != VM_NODE && f->tau_y > sy) {
		snprintf(buf, len,
			 "; more traffic would not settle it: the healthy hops here differ by %.1f%% "
			 "among themselves, more than one hop's own requests vary",
			 100.0 * f->tau_y);
		return;
	}
	if (gain <= 0.0) {
		snprintf(buf, len, "; nothing in the data points at it yet");
		return;
	}
	times = (NAME_LOG_ODDS - penalty) / gain;
	if (times < 2.0)
		times = 2.0;
	snprintf(buf, len, "; about %.0fx this traffic (%.0f MiB per hop) would settle it", times,
		 times * median_bytes(s, f) / (1 << 20));
}

static void say_unsure(const struct vm_state *s, const struct vm_posterior *p,
		       const struct vm_fit *f, double conf, struct fl_verdict *v)
{
	struct fl_finding say = { 0 };
	char name[FL_CULPRIT_LEN], more[240];

	v->kind = FL_VERDICT_UNSURE;
	v->confidence = conf;
	v->likeliest = f && f->ncul ? vm_verdict_kind(s->cands[f->cul[0]].kind) : FL_VERDICT_NONE;
	if (!f || !f->ncul) {
		snprintf(v->reason, sizeof(v->reason),
			 "the hops differ more than healthy ones do, but no culprit stands out "
			 "(healthy: probability %.2f)", p->p_none);
		return;
	}
	name_candidate(s, f->cul[0], name, sizeof(name));
	fill_finding(s, f, 0, conf, &say);
	/*
	 * Healthy all but ruled out: something is slow there, and what is not
	 * settled is which explanation of the same hops (more traffic of the same
	 * kind would not tell a device from its link).
	 */
	if (p->p_none < 1.0 - FL_VERDICT_NAME_CONFIDENCE) {
		int n = snprintf(more, sizeof(more), "; something there is slow, but its "
				 "explanations share hops: next %s ",
				 fl_verdict_kind_name(v->runner_up.kind));

		if (n > 0 && (size_t)n < sizeof(more))
			memccpy(more + n, v->runner_up.culprit, '\0', sizeof(more) - (size_t)n);
		more[sizeof(more) - 1] = '\0';
	} else
		settle(s, p, f, v, more, sizeof(more));
	v->ratio = say.ratio;
	v->median_gbs = say.median_gbs;
	v->culprit_gbs = say.culprit_gbs;
	v->line_share = say.line_share;
	verdict_say(&say,
		    "not enough evidence to name a culprit: likeliest %s %s at %.2fx the other hops "
		    "(probability %.2f; healthy %.2f)%s",
		    vm_kind_label(s->cands[f->cul[0]].kind), name, say.ratio, conf, p->p_none,
		    more);
	memcpy(v->reason, say.reason, sizeof(v->reason));
}

static void say_none(const struct vm_state *s, const struct vm_posterior *p, struct fl_verdict *v)
{
	v->kind = FL_VERDICT_NONE;
	v->confidence = p->p_none < 1.0 ? p->p_none : 1.0;
	v->median_gbs = s->ngroups ? fl_exp(s->mu_y[0]) : 0.0;
	snprintf(v->reason, sizeof(v->reason),
		 "no culprit: %d hops judged, none %.0f%% or more below the others or waited on "
		 "(probability %.2f; healthy hops differ by %.1f%%)",
		 v->judged_hops, 100.0 * s->min_effect, p->p_none, 100.0 * p->none.tau_y);
}

static void refit(struct vm_state *s, const struct vm_posterior *p, struct vm_fit *f, bool full)
{
	struct vm_fit keep = *f;

	if (full) {
		vm_fit(s, f);
	} else {
		vm_fit(s, &(struct vm_fit){ 0 }); /* the levels of none, which local fits hold */
		vm_fit_local(s, &p->none, f);
	}
	f->ncul = keep.ncul;
}

int vm_explain(struct vm_state *s, const struct vm_posterior *p, bool full, struct fl_verdict *v)
{
	struct choice next, best = best_choice(p, &next);
	struct vm_fit f = *best.fit;

	v->judged_hops = (int)judged(s);
	v->noise = p->none.tau_y;
	v->healthy = p->p_none;
	v->line_share = 1.0;
	if (!v->judged_hops) {
		v->kind = FL_VERDICT_NONE;
		snprintf(v->reason, sizeof(v->reason), "nothing to judge: no hop has a timed wire");
		return 0;
	}
	refit(s, p, &f, full);
	runner_up(s, p, best.fit, v);
	if (!f.ncul) {
		if (p->p_none >= FL_VERDICT_NAME_CONFIDENCE) {
			say_none(s, p, v);
		} else {
			say_unsure(s, p, next.fit, next.p, v);
		}
		return 0;
	}
	for (int c = 0; c < f.ncul; c++) {
		double conf = marginal(p, f.cul[c]);
		struct fl_finding *out;

		if (c + 1 == best.fit->absorbed || conf < FL_VERDICT_NAME_CONFIDENCE)
			continue;
		out = verdict_add_finding(v, FL_VERDICT_NONE);
		if (out)
			fill_finding(s, &f, c, conf, out);
	}
	if (!v->nfindings)
		say_unsure(s, p, &f, best.p, v);
	return 0;
}
