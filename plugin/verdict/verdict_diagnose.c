/*
 * Which explanation the data supports (verdict_model.h): every candidate
 * culprit alone, the likeliest pairs, and none, each scored by its log
 * evidence (maximised likelihood, Occam factors of its parameters from the
 * Laplace approximation with uniform priors on effect sizes, and its prior),
 * then turned into posterior probabilities. The explanation is named when it
 * is likely enough; otherwise the answer is "not enough evidence".
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/fl_math.h"
#include "verdict_explain.h"
#include "verdict_model.h"

/* Candidates fitted in full, and whose pairs are tried (the likeliest by screening). */
#define TOP VM_TOP
/*
 * Above this many hops one or two culprits cannot move the levels and
 * spreads thousands of others set: culprits are fitted with those held.
 */
#define FULL_FIT_MAX_HOPS 2048
/* Up to this many hops every candidate is fitted in full, not screened (a job's own view). */
#define FIT_ALL_MAX_HOPS 64

static void top_candidates(const struct vm_state *s, int *top, int *ntop)
{
	*ntop = 0;
	for (size_t c = 0; c < s->ncands; c++) {
		int k = *ntop < TOP ? (*ntop)++ : TOP;

		if (k == TOP && s->cands[c].score <= s->cands[top[TOP - 1]].score)
			continue;
		if (k == TOP)
			k = TOP - 1;
		while (k > 0 && s->cands[top[k - 1]].score < s->cands[c].score) {
			top[k] = top[k - 1];
			k--;
		}
		top[k] = (int)c;
	}
}

static double model_score(const struct vm_state *s, const struct vm_fit *f)
{
	double prior = f->ncul == 0   ? vm_prior_none()
		       : f->ncul == 1 ? s->kind_prior[s->cands[f->cul[0]].kind]
				      : vm_prior_pair(s);

	return f->loglik + f->occam + prior;
}

static void screen(struct vm_state *s, const struct vm_fit *none)
{
	bool all = s->n <= FIT_ALL_MAX_HOPS;

	for (size_t c = 0; c < s->ncands; c++) {
		struct vm_fit f = { .ncul = 1, .cul = { (int)c } };

		if (all)
			vm_fit(s, &f);
		else
			vm_fit_local(s, none, &f);
		s->cands[c].score = model_score(s, &f);
	}
}

/*
 * A straggler beside a rate culprit at its node: a slow wire changes the
 * waits of its hops and of the node it leaves or enters (a node whose own
 * sends crawl posts its receives late), so those waits are no evidence of a
 * straggler there. Such a pair is the wire alone: it is scored, and its
 * straggler is never named (vm_fit.absorbed).
 */
/* Whether a hop runs from node x to node y. */
static bool sends_to(const struct vm_state *s, const char *x, const char *y)
{
	for (size_t h = 0; h < s->n; h++) {
		if (!strcmp(s->figs[h].src_node, x) && !strcmp(s->figs[h].dst_node, y))
			return true;
	}
	return false;
}

static bool confounded(const struct vm_state *s, int a, int b)
{
	const struct vm_candidate *node = &s->cands[a], *rate = &s->cands[b];

	/*
	 * Two stragglers side by side: the one sending into the other cannot send
	 * while it is held, so it posts its own receives late and looks like one
	 * too. The pair is the stronger of them alone.
	 */
	if (node->kind == VM_NODE && rate->kind == VM_NODE)
		return sends_to(s, node->node, rate->node) || sends_to(s, rate->node, node->node);
	if (node->kind != VM_NODE) {
		const struct vm_candidate *t = node;

		node = rate;
		rate = t;
	}
	if (node->kind != VM_NODE || rate->kind == VM_NODE)
		return false;
	for (size_t i = 0; i < rate->count; i++) {
		const struct fl_hop_figures *h = &s->figs[s->members[rate->first + i]];

		if (!strcmp(h->src_node, node->node) || !strcmp(h->dst_node, node->node))
			return true;
	}
	return false;
}

static void mark_absorbed(const struct vm_state *s, struct vm_fit *f)
{
	f->absorbed = 0;
	if (f->ncul != 2 || !confounded(s, f->cul[0], f->cul[1]))
		return;
	if (s->cands[f->cul[0]].kind == VM_NODE && s->cands[f->cul[1]].kind == VM_NODE)
		f->absorbed = f->du[0][0] < f->du[1][0] ? 1 : 2; /* the one waited on less */
	else
		f->absorbed = s->cands[f->cul[0]].kind == VM_NODE ? 1 : 2;
}

/* The pairs of the top candidates, fitted locally or in full. */
static int fit_pairs(struct vm_state *s, const struct vm_fit *none, const int *top, int ntop,
		     bool full, struct vm_fit *pairs)
{
	int n = 0;

	for (int a = 0; a < ntop; a++) {
		for (int b = a + 1; b < ntop; b++) {
			struct vm_fit *f;

			f = &pairs[n++];
			memset(f, 0, sizeof(*f));
			f->ncul = 2;
			f->cul[0] = top[a];
			f->cul[1] = top[b];
			if (full)
				vm_fit(s, f);
			else
				vm_fit_local(s, none, f);
			mark_absorbed(s, f);
		}
	}
	return n;
}

static bool paired(const struct vm_fit *pairs, int n, int a, int b)
{
	for (int k = 0; k < n; k++) {
		if ((pairs[k].cul[0] == a && pairs[k].cul[1] == b) ||
		    (pairs[k].cul[0] == b && pairs[k].cul[1] == a))
			return true;
	}
	return false;
}

/*
 * Forward selection: the likeliest single culprit and each other candidate
 * beside it (fitted on that candidate's hops, the first held), the best
 * VM_PARTNERS of those then fitted in full. A second culprit far smaller
 * than the first never reaches the top singles, whose pairs fit_pairs tries.
 */
static int add_partners(struct vm_state *s, const struct vm_posterior *p, bool full,
			struct vm_fit *pairs, int n)
{
	struct vm_fit first = p->singles[0], best[VM_PARTNERS];
	int nbest = 0;

	for (int k = 1; k < p->ntop; k++) {
		if (s->cands[p->top[k]].score > s->cands[first.cul[0]].score)
			first = p->singles[k];
	}
	if (!p->ntop)
		return n;
	if (full)
		vm_fit(s, &first);
	else
		vm_fit(s, &(struct vm_fit){ 0 });
	for (size_t c = 0; c < s->ncands; c++) {
		struct vm_fit f;
		int k;

		if ((int)c == first.cul[0] || paired(pairs, n, first.cul[0], (int)c))
			continue;
		vm_fit_add(s, &first, (int)c, &f);
		if (nbest == VM_PARTNERS && model_score(s, &f) <= model_score(s, &best[nbest - 1]))
			continue;
		k = nbest < VM_PARTNERS ? nbest++ : VM_PARTNERS - 1;
		while (k > 0 && model_score(s, &best[k - 1]) < model_score(s, &f)) {
			best[k] = best[k - 1];
			k--;
		}
		best[k] = f;
	}
	for (int k = 0; k < nbest; k++) {
		pairs[n] = best[k];
		if (full)
			vm_fit(s, &pairs[n]);
		mark_absorbed(s, &pairs[n]);
		n++;
	}
	return n;
}

static double log_sum_exp(double a, double b)
{
	if (a == -INFINITY)
		return b;
	if (b == -INFINITY)
		return a;
	return a > b ? a + fl_ln(1.0 + fl_exp(b - a)) : b + fl_ln(1.0 + fl_exp(a - b));
}

/*
 * A culprit whose fitted effect sits at the smallest one named (its shift held
 * at the bound) is one the data would have smaller: an effect not worth naming,
 * which is what "healthy" allows.
 */
static bool small_effect(const struct vm_state *s, const struct vm_fit *f, int c)
{
	const struct vm_candidate *k = &s->cands[f->cul[c]];

	if (k->kind == VM_NODE)
		return f->du[c][0] <= k->du_min + 1e-9;
	for (int part = 0; part < k->parts; part++) {
		if (f->dy[c][part] < s->dy_max - 1e-9)
			return false;
	}
	return true;
}

/* Small effects count as healthy: their probability moves to none, or to the other culprit. */
static void fold_small_effects(const struct vm_state *s, struct vm_posterior *p)
{
	for (int k = 0; k < p->ntop; k++) {
		if (small_effect(s, &p->singles[k], 0)) {
			p->p_none += p->p_top[k];
			p->p_top[k] = 0.0;
		}
	}
	for (int k = 0; k < p->npairs; k++) {
		struct vm_fit *f = &p->pairs[k];
		bool a = small_effect(s, f, 0), b = small_effect(s, f, 1);

		if (a && b) {
			p->p_none += p->p_pairs[k];
			p->p_pairs[k] = 0.0;
		} else if (a || b) {
			f->absorbed = a ? 1 : 2;
		}
	}
}

/* Turns scores into posterior probabilities (the normaliser over every model scored). */
static void posterior(struct vm_state *s, struct vm_posterior *p)
{
	double z = model_score(s, &p->none);

	for (size_t c = 0; c < s->ncands; c++)
		z = log_sum_exp(z, s->cands[c].score);
	for (int k = 0; k < p->npairs; k++)
		z = log_sum_exp(z, model_score(s, &p->pairs[k]));
	p->p_none = fl_exp(model_score(s, &p->none) - z);
	for (int k = 0; k < p->ntop; k++)
		p->p_top[k] = fl_exp(s->cands[p->top[k]].score - z);
	for (int k = 0; k < p->npairs; k++)
		p->p_pairs[k] = fl_exp(model_score(s, &p->pairs[k]) - z);
	p->p_single_rest = 1.0 - p->p_none;
	for (int k = 0; k < p->npairs; k++)
		p->p_single_rest -= p->p_pairs[k];
	for (int k = 0; k < p->ntop; k++)
		p->p_single_rest -= p->p_top[k];
	fold_small_effects(s, p);
}

static void fit_tops(struct vm_state *s, struct vm_posterior *p, bool full)
{
	for (int k = 0; k < p->ntop; k++) {
		struct vm_fit *f = &p->singles[k];

		memset(f, 0, sizeof(*f));
		f->ncul = 1;
		f->cul[0] = p->top[k];
		if (full) {
			vm_fit(s, f);
			s->cands[p->top[k]].score = model_score(s, f);
		} else {
			vm_fit_local(s, &p->none, f);
		}
	}
}

/*
 * Screening against none is blunt where a real culprit inflates none's
 * spreads: screens again at the levels and spreads of the likeliest single
 * culprit's full fit (the scores of the candidates fitted in full are kept).
 */
static void rescreen(struct vm_state *s, struct vm_posterior *p)
{
	struct vm_fit best = p->singles[0], base;
	double scores[VM_TOP];

	for (int k = 1; k < p->ntop; k++) {
		if (s->cands[p->top[k]].score > s->cands[best.cul[0]].score)
			best = p->singles[k];
	}
	if (!p->ntop || s->cands[best.cul[0]].score <= model_score(s, &p->none))
		return;
	for (int k = 0; k < p->ntop; k++)
		scores[k] = s->cands[p->top[k]].score;
	vm_fit(s, &best);
	vm_fit_none_at(s, &best, &base);
	for (size_t c = 0; c < s->ncands; c++) {
		struct vm_fit f = { .ncul = 1, .cul = { (int)c } };

		vm_fit_local(s, &base, &f);
		/* each screening's likelihood is one at fixed levels: a lower bound on the best */
		if (model_score(s, &f) > s->cands[c].score)
			s->cands[c].score = model_score(s, &f);
	}
	for (int k = 0; k < p->ntop; k++)
		s->cands[p->top[k]].score = scores[k];
}

int vm_diagnose(const struct fl_hop_figures *figs, size_t n,
		const struct fl_verdict_params *params, struct fl_verdict *v)
{
	struct vm_state s;
	struct vm_posterior *p = calloc(1, sizeof(*p));
	bool full = n <= FULL_FIT_MAX_HOPS;
	int err = -1;

	if (!p || vm_observe(&s, figs, n, params)) {
		free(p);
		return -1;
	}
	if (vm_candidates(&s))
		goto out;
	vm_fit(&s, &p->none);
	screen(&s, &p->none);
	top_candidates(&s, p->top, &p->ntop);
	if (full) {
		fit_tops(&s, p, true);
		if (n > FIT_ALL_MAX_HOPS) {
			rescreen(&s, p);
			top_candidates(&s, p->top, &p->ntop);
			fit_tops(&s, p, true);
		}
		p->npairs = fit_pairs(&s, &p->none, p->top, p->ntop, true, p->pairs);
		p->npairs = add_partners(&s, p, true, p->pairs, p->npairs);
	} else {
		p->npairs = fit_pairs(&s, &p->none, p->top, p->ntop, false, p->pairs);
		fit_tops(&s, p, false);
		p->npairs = add_partners(&s, p, false, p->pairs, p->npairs);
	}
	posterior(&s, p);
	err = vm_explain(&s, p, full, v);
out:
	vm_free(&s);
	free(p);
	return err;
}
