/*
 * Fitting one explanation to the hops (verdict_model.h): maximum likelihood
 * of every hop's observations, each a Student-t around its group's level plus
 * the shifts of the culprits it belongs to, with the healthy spread fitted
 * too. Student-t with 4 degrees of freedom (Lange, Little and Taylor 1989):
 * one hop a rank starved of CPU pulled off costs a bounded amount, so it
 * cannot outweigh what several observations agree on.
 *
 * Only physical or user-facing constants appear here: the smallest effect
 * worth naming, the resolution of the wire-time histogram, and how far below
 * its nominal rate a healthy wire-bound hop may run (the line prior).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/fl_math.h"
#include "verdict_model.h"

#define NU 4.0
#define OUTER_ROUNDS 8
#define IRLS_ROUNDS 6
#define GOLDEN_ROUNDS 20
/* Rate shifts a culprit may have: from the smallest effect down to 5 % of the others. */
#define DY_MAX (s->dy_max) /* ln(1 - the smallest effect named) */
#define DY_MIN (-2.995732273553991) /* ln 0.05 */
#define DU_RANGE (s->du_range) /* verdict_observe.c, wait_scale */
/*
 * How a slowed wire's median request moves against its bytes, (1 + kappa):
 * from not at all (-1: a port paused now and then, whose median request misses
 * the pauses) to 8x (requests queued 8 deep behind a throttled port).
 */
#define KAPPA_MIN (-1.0)
#define KAPPA_MAX 7.0
/*
 * Spreads below these are not resolved: 1 % for rates and waits (sums of
 * microsecond stamps over seconds of traffic; rates of paced lab hops agree
 * to about that), and one sub-bucket of the wire-time histogram for median
 * requests (a uniform rounding error of one bucket's width: width / sqrt(12)).
 * Waits resolved only to the smallest effect named were tried (a healthy
 * 13-rank lab run had rank 0's receives wait 1.5x less than the others',
 * tuning seed 200, named a straggler at 1%): on the 150 tuning cases of
 * seeds 400-549 they named 2 stragglers fewer and no false alarm fewer.
 */
#define TAU_Y_FLOOR 0.01
#define TAU_U_FLOOR 0.01
/* the wire-time histogram's 16 sub-buckets per power of two (plugin/stats/histogram.h) */
#define TIME_SUBS 16
#define TAU_M_FLOOR (0.6931471805599453 / TIME_SUBS / 3.4641016151377544)
#define TAU_MAX 3.0
/*
 * Healthy hops of one job differ by a few percent (a quiet lab by 1 %, a
 * loaded 2-core one by up to 5 %): the rates' spread has an exponential prior
 * whose mean is the smallest effect named, so "every hop differs by 25 %" is
 * an explanation that pays for itself instead of a free way out.
 */
#define TAU_Y_PER_UNIT (1.0 / s->min_effect)
/*
 * A healthy hop whose requests the wire paces runs near its nominal rate:
 * at most 5 % above it (rounding of the port's rate) and at least 70 % of it
 * (headers, NCCL's own pacing, a TCP stack's limits: 400 Gb/s InfiniBand moves
 * 370-390 Gb/s of payload, 100 Gb/s TCP 75-95), flat over that range with
 * Gaussian tails SIGMA_LINE wide beyond it. But whether the wire paces them is
 * judged from the requests' size and depth alone, and a NIC's cost per
 * message, LL's flags or a slow host can hold a whole job far below line with
 * nothing broken. So the healthy level's prior is that (with the odds the
 * fabric gives, fl_verdict_params.line_odds) or anywhere from 1 % of line up
 * (flat in ln rate): at 0.9, a level far below line costs about 5 nats, what
 * one hop a few spreads off costs, never more. It matters where
 * few hops are compared (one process's live windows, a 2-node job), and is
 * outweighed by a handful of hops that agree elsewhere.
 */
#define LINE_LOW (-0.35667494393873245) /* ln 0.7 */
#define LINE_HIGH 0.04879016416943205   /* ln 1.05 */
#define SIGMA_LINE 0.05
#define LINE_FLOOR (-4.605170185988091) /* ln 0.01 */

/* ln of the t density (NU = 4) of residual r at scale^2 var, whose ln is ln_var. */
static double logt_at(double r, double var, double ln_var)
{
	/* lgamma(5/2) - lgamma(2) - ln sqrt(4 pi) */
	static const double c = 0.2846828704729192 - 1.2655121234846454;

	return c - 0.5 * ln_var - 0.5 * (NU + 1.0) * fl_ln(1.0 + r * r / (NU * var));
}

static double logt(double r, double var)
{
	return logt_at(r, var, fl_ln(var));
}

/* Robust weighted mean of x (variances v): IRLS for the t location, clamped. */
static double t_location(const double *x, const double *v, size_t k, double start, double lo,
			 double hi, double prior_mean, double prior_var, double *info)
{
	double theta = start, sw = 0.0, swx = 0.0;

	/*
	 * From the Gaussian mean: where observations disagree (a rate low, its
	 * median request not) the t likelihood has two modes, and the one nearest
	 * a start at either end is not the one the data favour.
	 */
	for (size_t i = 0; i < k; i++) {
		sw += 1.0 / v[i];
		swx += x[i] / v[i];
	}
	if (sw > 0.0)
		theta = swx / sw;
	for (int r = 0; r < IRLS_ROUNDS; r++) {
		double was = theta;

		sw = swx = 0.0;
		for (size_t i = 0; i < k; i++) {
			double d = x[i] - theta;
			double w = (NU + 1.0) / (NU + d * d / v[i]) / v[i];

			sw += w;
			swx += w * x[i];
		}
		if (prior_var > 0.0) {
			sw += 1.0 / prior_var;
			swx += prior_mean / prior_var;
		}
		if (sw <= 0.0)
			break;
		theta = swx / sw;
		theta = theta < lo ? lo : theta > hi ? hi : theta;
		/* a fixed point: every later round gives this theta and this sw again */
		if (theta == was)
			break;
	}
	if (info)
		*info = sw;
	return theta;
}

/* The observations' residuals under the current parameters, for the hops in list. */
static double residual_y(const struct vm_state *s, size_t h)
{
	return s->hops[h].y - s->mu_y[s->hops[h].group] - s->off[h];
}

static double residual_m(const struct vm_state *s, size_t h)
{
	return s->hops[h].m - s->mu_m[s->hops[h].group] - (1.0 + s->kappa) * s->off[h];
}

static double residual_u(const struct vm_state *s, size_t h)
{
	return s->hops[h].u - s->mu_u[s->hops[h].ugroup] - s->off[2 * s->n + h];
}

static double loglik_hop(const struct vm_state *s, const struct vm_fit *f, size_t h)
{
	const struct vm_hop *o = &s->hops[h];
	double l = 0.0;

	if (o->group >= 0)
		l += logt(residual_y(s, h), f->tau_y * f->tau_y + o->sy * o->sy);
	if (o->group >= 0 && o->has_m)
		l += logt(residual_m(s, h), f->tau_m * f->tau_m + o->sm * o->sm);
	if (o->has_u)
		l += logt(residual_u(s, h), f->tau_u * f->tau_u);
	return l;
}

static void reset_shifts(struct vm_state *s, size_t h)
{
	s->off[h] = s->off[2 * s->n + h] = 0.0;
}

/* Sets the shifts of every listed hop and every culprit's hop from the culprits of f. */
static void apply_shifts(struct vm_state *s, const struct vm_fit *f, const size_t *list,
			 size_t k)
{
	s->kappa = f->kappa;
	for (size_t i = 0; i < k; i++)
		reset_shifts(s, list[i]);
	for (int c = 0; c < f->ncul; c++) {
		const struct vm_candidate *k2 = &s->cands[f->cul[c]];

		for (size_t i = 0; i < k2->count; i++)
			reset_shifts(s, s->members[k2->first + i]);
	}
	for (int c = 0; c < f->ncul; c++) {
		const struct vm_candidate *k2 = &s->cands[f->cul[c]];

		for (size_t i = 0; i < k2->count; i++) {
			size_t h = s->members[k2->first + i];
			int part = s->member_part[k2->first + i];

			s->off[h] += f->dy[c][part];
			s->off[2 * s->n + h] += f->du[c][part];
		}
	}
}

enum obs { OBS_Y, OBS_M, OBS_U };

static bool has_obs(const struct vm_hop *o, enum obs which)
{
	return which == OBS_Y ? o->group >= 0 : which == OBS_M ? o->group >= 0 && o->has_m : o->has_u;
}

static double residual(const struct vm_state *s, enum obs which, size_t h)
{
	return which == OBS_Y ? residual_y(s, h) : which == OBS_M ? residual_m(s, h)
								  : residual_u(s, h);
}

static double variance(const struct vm_state *s, const struct vm_fit *f, enum obs which, size_t h)
{
	return which == OBS_Y ? f->tau_y * f->tau_y + s->hops[h].sy * s->hops[h].sy
	       : which == OBS_M ? f->tau_m * f->tau_m + s->hops[h].sm * s->hops[h].sm
				: f->tau_u * f->tau_u;
}

static double *level_of(struct vm_state *s, enum obs which, size_t h)
{
	return which == OBS_Y ? &s->mu_y[s->hops[h].group]
	       : which == OBS_M ? &s->mu_m[s->hops[h].group]
				: &s->mu_u[s->hops[h].ugroup];
}

/* The two parts of the prior density of a healthy level d = ln(level / line). */
static double line_prior_near(const struct vm_state *s, double d)
{
	double e = d < LINE_LOW ? d - LINE_LOW : d > LINE_HIGH ? d - LINE_HIGH : 0.0;

	return s->line_odds * fl_exp(-0.5 * e * e / (SIGMA_LINE * SIGMA_LINE)) /
	       (LINE_HIGH - LINE_LOW + 2.5066282746310002 * SIGMA_LINE);
}

static double line_prior_below(const struct vm_state *s, double d)
{
	return d >= LINE_FLOOR && d <= LINE_HIGH ? (1.0 - s->line_odds) / (LINE_HIGH - LINE_FLOOR)
						 : 0.0;
}

/* ln of the prior density of a healthy level d = ln(level / line). */
static double line_prior_at(const struct vm_state *s, double d)
{
	double e = d < LINE_LOW ? d - LINE_LOW : d > LINE_HIGH ? d - LINE_HIGH : 0.0;
	double p = line_prior_near(s, d) + line_prior_below(s, d);

	return p > 0.0 ? fl_ln(p) : -0.5 * e * e / (SIGMA_LINE * SIGMA_LINE);
}

/* What the line prior says of a level there: its curvature (the Gaussian tail's, or none). */
static double line_prior_info(const struct vm_state *s, double d)
{
	bool tail = d < LINE_LOW || d > LINE_HIGH;

	return tail && line_prior_near(s, d) > line_prior_below(s, d) ? 1.0 / (SIGMA_LINE * SIGMA_LINE)
								 : 0.0;
}

/* The log likelihood of k observations x (variances v) at level mu, with the line prior. */
static double level_objective(const struct vm_state *s, const double *x, const double *v,
			      size_t k, double mu, double line)
{
	double l = line_prior_at(s, mu - line);

	for (size_t i = 0; i < k; i++)
		l += logt(x[i] - mu, v[i]);
	return l;
}

/* Re-fits one group's level of one observation over every hop. */
/* s->mark bits while a fit runs: the hop has a rate shift, a wait shift of its own. */
#define MARK_RATE 1
#define MARK_WAIT 2

static void mark_culprits(struct vm_state *s, const struct vm_fit *f, bool set)
{
	for (int c = 0; c < f->ncul; c++) {
		const struct vm_candidate *k2 = &s->cands[f->cul[c]];
		unsigned char bits = k2->kind == VM_NODE ? MARK_WAIT : MARK_RATE;

		for (size_t i = 0; i < k2->count; i++) {
			size_t h = s->members[k2->first + i];

			s->mark[h] = set ? s->mark[h] | bits : 0;
		}
	}
}

/*
 * A group whose every hop has a shift of its own: nothing fixes its level but
 * a prior. Without one the level is where those hops' shifts are smallest on
 * average, so that they add no evidence either way.
 */
static double culprits_level(struct vm_state *s, enum obs which, int g)
{
	double sum = 0.0;
	size_t k = 0;

	for (size_t h = 0; h < s->n; h++) {
		const struct vm_hop *o = &s->hops[h];

		if (!has_obs(o, which) || (which == OBS_U ? o->ugroup : o->group) != g)
			continue;
		sum += residual(s, which, h) + *level_of(s, which, h);
		k++;
	}
	return k ? sum / (double)k : 0.0;
}

static void fit_level(struct vm_state *s, const struct vm_fit *f, enum obs which, int g)
{
	double *x = s->scratch, *v = s->scratch + 2 * s->n, line = 0.0, *mu = NULL;
	size_t k = 0, anchored = 0, all = 0;
	unsigned char own = which == OBS_U ? MARK_WAIT : MARK_RATE;

	for (size_t h = 0; h < s->n; h++) {
		const struct vm_hop *o = &s->hops[h];

		if (!has_obs(o, which) || (which == OBS_U ? o->ugroup : o->group) != g)
			continue;
		mu = level_of(s, which, h);
		all++;
		anchored += o->anchored;
		line = o->ln_line;
		/* a culprit's hop has a shift of its own: it says nothing of the level */
		if (s->mark[h] & own)
			continue;
		x[k] = residual(s, which, h) + *mu;
		v[k++] = variance(s, f, which, h);
	}
	if (!all)
		return;
	if (which == OBS_Y)
		s->group_line[g] = 2 * anchored > all ? line : NAN;
	if (!k) { /* every hop a culprit's: the level is the prior's, the line where known */
		if (which == OBS_Y && !isnan(s->group_line[g]))
			*mu = line;
		else
			*mu = culprits_level(s, which, g);
		return;
	}
	*mu = t_location(x, v, k, *mu, -INFINITY, INFINITY, 0.0, 0.0, NULL);
	if (which == OBS_Y && !isnan(s->group_line[g])) {
		double edge = *mu < line + LINE_LOW ? line + LINE_LOW : line + LINE_HIGH;
		double free = *mu, near;

		if (*mu >= line + LINE_LOW && *mu <= line + LINE_HIGH)
			return;
		/* the prior's two modes: where the hops are, or pulled toward line */
		near = t_location(x, v, k, *mu, -INFINITY, INFINITY, edge, SIGMA_LINE * SIGMA_LINE,
				  NULL);
		*mu = level_objective(s, x, v, k, near, line) >
			      level_objective(s, x, v, k, free, line) ? near : free;
	}
}

/* Re-fits one part of culprit c's shift of one observation; its information in *info. */
static double fit_shift(struct vm_state *s, const struct vm_fit *f, int c, int part,
			enum obs which, double *info)
{
	const struct vm_candidate *k2 = &s->cands[f->cul[c]];
	double *x = s->scratch, *v = s->scratch + 2 * s->n;
	double cur = which == OBS_Y ? f->dy[c][part] : f->du[c][part];
	double lo = which == OBS_Y ? DY_MIN : -DU_RANGE;
	double hi = which == OBS_Y ? DY_MAX : DU_RANGE;
	size_t k = 0;

	/*
	 * A straggler makes the hops into it wait more; those into its senders
	 * (held up behind it) more and those out of it (starved) less, each by
	 * at most as much.
	 */
	if (k2->kind == VM_NODE) {
		lo = part == 0 ? k2->du_min : part == 1 ? 0.0 : -f->du[c][0];
		hi = part == 0 ? DU_RANGE : part == 1 ? f->du[c][0] : 0.0;
	}
	for (size_t i = 0; i < k2->count; i++) {
		size_t h = s->members[k2->first + i];

		if (s->member_part[k2->first + i] != part || !has_obs(&s->hops[h], which))
			continue;
		x[k] = residual(s, which, h) + cur;
		v[k++] = variance(s, f, which, h);
	}
	*info = 0.0;
	if (!k)
		return cur;
	return t_location(x, v, k, cur, lo, hi, 0.0, 0.0, info);
}

/*
 * A slow wire slows its typical request by as much as its bytes: the rate
 * shift is fitted to both observations of each hop (y and m), and m's own
 * shift (em, below) is only what the median request moved beyond it.
 */
static double fit_rate_shift(struct vm_state *s, const struct vm_fit *f, int c, int part,
			     double *info)
{
	const struct vm_candidate *k2 = &s->cands[f->cul[c]];
	double *x = s->scratch, *v = s->scratch + 2 * s->n, cur = f->dy[c][part];
	size_t k = 0;

	for (size_t i = 0; i < k2->count; i++) {
		size_t h = s->members[k2->first + i];

		if (s->member_part[k2->first + i] != part || !has_obs(&s->hops[h], OBS_Y))
			continue;
		x[k] = residual(s, OBS_Y, h) + cur;
		v[k++] = variance(s, f, OBS_Y, h);
		/*
		 * m moves (1 + kappa) dy: no evidence of dy where it hardly moves, nor
		 * before kappa is fitted (the first round: bytes alone set dy, then
		 * kappa, so a median request 40x slower cannot drag dy off its bytes)
		 */
		if (has_obs(&s->hops[h], OBS_M) && !s->bytes_only && 1.0 + f->kappa > 0.05) {
			double stretch = 1.0 + f->kappa;

			x[k] = residual(s, OBS_M, h) / stretch + cur;
			v[k++] = variance(s, f, OBS_M, h) / (stretch * stretch);
		}
	}
	*info = 0.0;
	if (!k)
		return cur;
	return t_location(x, v, k, cur, DY_MIN, k2->partial ? 0.0 : DY_MAX, 0.0, 0.0, info);
}

/*
 * Sum of the t log densities of one observation's residuals at spread tau,
 * less per_unit x tau: the spread's own prior (see TAU_Y_SCALE).
 */
static double spread_loglik(const double *r, const double *s2, size_t k, double tau,
			    double per_unit)
{
	double l = -per_unit * tau, var = tau * tau, ln_var = fl_ln(var);

	for (size_t i = 0; i < k; i++)
		l += s2[i] > 0.0 ? logt(r[i], var + s2[i])
				 : logt_at(r[i], var, ln_var);
	return l;
}

/*
 * The spread that maximises the likelihood of one observation: golden section
 * on ln tau, within a factor 8 of where it was (the whole range the first time).
 */
static double fit_spread(struct vm_state *s, enum obs which, double floor, double was,
			 double per_unit)
{
	double *r = s->scratch, *s2 = s->scratch + 2 * s->n, g = 0.6180339887498949;
	double a = fl_ln(floor), b = fl_ln(TAU_MAX), c, d, fc, fd;
	size_t k = 0;

	for (size_t h = 0; h < s->n; h++) {
		if (!has_obs(&s->hops[h], which))
			continue;
		r[k] = residual(s, which, h);
		s2[k++] = which == OBS_Y ? s->hops[h].sy * s->hops[h].sy
			  : which == OBS_M ? s->hops[h].sm * s->hops[h].sm : 0.0;
	}
	if (k < 2)
		return floor;
	if (was > 0.0) {
		a = fl_ln(was / 8.0) > a ? fl_ln(was / 8.0) : a;
		b = fl_ln(was * 8.0) < b ? fl_ln(was * 8.0) : b;
	}
	c = b - g * (b - a);
	d = a + g * (b - a);
	fc = spread_loglik(r, s2, k, fl_exp(c), per_unit);
	fd = spread_loglik(r, s2, k, fl_exp(d), per_unit);
	for (int i = 0; i < GOLDEN_ROUNDS; i++) {
		if (fc >= fd) {
			b = d, d = c, fd = fc;
			c = b - g * (b - a);
			fc = spread_loglik(r, s2, k, fl_exp(c), per_unit);
		} else {
			a = c, c = d, fc = fd;
			d = a + g * (b - a);
			fd = spread_loglik(r, s2, k, fl_exp(d), per_unit);
		}
	}
	return fl_exp((a + b) / 2.0);
}

/* ln of the Occam factor of one parameter: its posterior width over its prior range. */
static double occam(double info, double range)
{
	double o;

	if (info <= 0.0)
		return 0.0;
	o = fl_ln(fl_sqrt(2.0 * M_PI / info) / range);
	return o < 0.0 ? o : 0.0;
}

/*
 * Log evidence of a parameter that is 0 (a spike) or anywhere in its range
 * (a slab), even odds, against it free: the mixture of the slab's Occam factor
 * and the spike's likelihood, ln L(0) - ln L(max) being -z^2/2 in the same
 * Laplace approximation.
 */
static double spike_or_slab(double info, double range, double value)
{
	double slab = occam(info, range), spike = -0.5 * value * value * info;
	double top = slab > spike ? slab : spike;

	return top + fl_ln(0.5 * fl_exp(slab - top) + 0.5 * fl_exp(spike - top));
}

/* Sum of 1 / variance of y over each group's hops at spread tau (cached per tau). */
static void sum_group_info(struct vm_state *s, double tau)
{
	if (s->group_info_tau == tau)
		return;
	for (int g = 0; g < s->ngroups; g++)
		s->group_info[g] = 0.0;
	for (size_t h = 0; h < s->n; h++) {
		if (s->hops[h].group >= 0)
			s->group_info[s->hops[h].group] += 1.0 / (tau * tau + s->hops[h].sy * s->hops[h].sy);
	}
	s->group_info_tau = tau;
}

/* Whether h is a member of one of f's culprits before the c-th. */
static bool member_before(const struct vm_state *s, const struct vm_fit *f, int c, size_t h)
{
	for (int j = 0; j < c; j++) {
		if (vm_member_part(s, (size_t)f->cul[j], h) >= 0)
			return true;
	}
	return false;
}

/* The standard normal's distribution function (Abramowitz and Stegun 7.1.26, error < 1.5e-7). */
static double normal_cdf(double z)
{
	double x = (z < 0.0 ? -z : z) / 1.4142135623730951, t = 1.0 / (1.0 + 0.3275911 * x);
	double erf = 1.0 - (((((1.061405429 * t - 1.453152027) * t) + 1.421413741) * t -
			      0.284496736) * t + 0.254829592) * t * fl_exp(-x * x);

	return z < 0.0 ? 0.5 * (1.0 - erf) : 0.5 * (1.0 + erf);
}

/* The near-line part's share of levels below d (flat between the edges, Gaussian tails). */
static double line_near_cdf(double d)
{
	double tail = 2.5066282746310002 * SIGMA_LINE, w = LINE_HIGH - LINE_LOW + tail;

	if (d < LINE_LOW)
		return tail * normal_cdf((d - LINE_LOW) / SIGMA_LINE) / w;
	if (d <= LINE_HIGH)
		return (tail / 2.0 + d - LINE_LOW) / w;
	return (tail / 2.0 + LINE_HIGH - LINE_LOW + tail * (normal_cdf((d - LINE_HIGH) /
								       SIGMA_LINE) - 0.5)) / w;
}

/* The line prior's mass of healthy levels between a and b (ln of a share of line). */
static double line_prior_mass(const struct vm_state *s, double a, double b)
{
	double lo = a > LINE_FLOOR ? a : LINE_FLOOR, hi = b < LINE_HIGH ? b : LINE_HIGH;
	double below = hi > lo ? (1.0 - s->line_odds) * (hi - lo) / (LINE_HIGH - LINE_FLOOR) : 0.0;

	return b > a ? s->line_odds * (line_near_cdf(b) - line_near_cdf(a)) + below : 0.0;
}

/*
 * Where every hop of group g is a culprit's, the levels the culprits' fitted
 * rates allow: each part's shift from it within [DY_MIN, DY_MAX]. The prior's
 * mass there is the Occam factor of a level that nothing else measures.
 */
static double culprits_level_mass(const struct vm_state *s, const struct vm_fit *f, int g)
{
	double top = -INFINITY, bottom = INFINITY;

	for (int j = 0; j < f->ncul; j++) {
		const struct vm_candidate *kj = &s->cands[f->cul[j]];

		for (size_t i = 0; i < kj->count && kj->kind != VM_NODE; i++) {
			size_t h = s->members[kj->first + i];
			double v = s->mu_y[g] + f->dy[j][s->member_part[kj->first + i]];

			if (s->hops[h].group != g)
				continue;
			top = v > top ? v : top;
			bottom = v < bottom ? v : bottom;
		}
	}
	if (top == -INFINITY)
		return 1.0;
	return line_prior_mass(s, top - DY_MAX - s->group_line[g],
			       bottom - DY_MIN - s->group_line[g]);
}

/*
 * The Occam factor of the healthy levels of rates that have a line prior
 * (Laplace: the level's posterior width over the prior's, the prior's density
 * being in the log likelihood already, line_prior). A level is measured by
 * the hops of its group that no culprit shifts, and by the prior's curvature
 * where it sits in its Gaussian tail. Where every hop of a group is a
 * culprit's (a 2-node ring's device), nothing measures the level: it may be
 * anywhere the culprits' shifts allow, and the prior's mass there replaces
 * its density in the likelihood. So "healthy" pays for the level it fits as
 * every culprit pays for its shift, and explaining every hop by culprits
 * gains from the prior only what the prior gives.
 */
static double level_occam(struct vm_state *s, const struct vm_fit *f)
{
	double *free_info = s->scratch, o = 0.0;

	sum_group_info(s, f->tau_y);
	for (int g = 0; g < s->ngroups; g++)
		free_info[g] = s->group_info[g];
	for (int j = 0; j < f->ncul; j++) {
		const struct vm_candidate *kj = &s->cands[f->cul[j]];

		for (size_t i = 0; i < kj->count && kj->kind != VM_NODE; i++) {
			size_t h = s->members[kj->first + i];

			if (s->hops[h].group >= 0 && !member_before(s, f, j, h))
				free_info[s->hops[h].group] -= 1.0 / variance(s, f, OBS_Y, h);
		}
	}
	for (int g = 0; g < s->ngroups; g++) {
		double d = s->mu_y[g] - s->group_line[g], info;

		if (isnan(s->group_line[g]))
			continue;
		/* what rounding of the sums leaves where every hop is a culprit's is not a hop */
		info = free_info[g] > 1e-9 * s->group_info[g] ? free_info[g] : 0.0;
		info += line_prior_info(s, d);
		if (info > 0.0) {
			o += 0.5 * fl_ln(2.0 * M_PI / info);
		} else {
			double mass = culprits_level_mass(s, f, g);

			o += (mass > 1e-300 ? fl_ln(mass) : -690.0) - line_prior_at(s, d);
		}
	}
	return o;
}

static void fit_part(struct vm_state *s, struct vm_fit *f, int c, int part, bool last)
{
	bool rate = s->cands[f->cul[c]].kind != VM_NODE;
	double info;

	/*
	 * A device's second direction is as slow as the first (spike) or anything
	 * (slab), at even odds: a transmitter and a receiver may fail apart, and
	 * two links through one NIC are then the same prediction as the NIC.
	 */
	if (rate) {
		f->dy[c][part] = fit_rate_shift(s, f, c, part, &info);
		if (last && s->cands[f->cul[c]].partial)
			f->occam += spike_or_slab(info, -DY_MIN, f->dy[c][part]);
		else if (last)
			f->occam += part ? spike_or_slab(info, DY_MAX - DY_MIN,
							 f->dy[c][1] - f->dy[c][0])
					 : occam(info, DY_MAX - DY_MIN);
		apply_shifts(s, f, NULL, 0);
	}
	/*
	 * Only a straggler explains waits. A slow wire moves its hops' waits too,
	 * but none and the wire leave them alike unexplained, so they do not tip
	 * one against the other; a straggler at the wire's node is the wire
	 * (verdict_diagnose.c, confounded).
	 */
	if (rate)
		return;
	/* its side effects are none (spike) or up to its own (slab), at even odds */
	f->du[c][part] = fit_shift(s, f, c, part, OBS_U, &info);
	if (last && info > 0.0)
		f->occam += part ? spike_or_slab(info, f->du[c][0], f->du[c][part])
				 : occam(info, DU_RANGE - s->cands[f->cul[c]].du_min);
	apply_shifts(s, f, NULL, 0);
}

static double kappa_loglik(struct vm_state *s, const struct vm_fit *f, double kappa)
{
	double l = 0.0;

	s->kappa = kappa;
	for (int c = 0; c < f->ncul; c++) {
		const struct vm_candidate *k2 = &s->cands[f->cul[c]];

		for (size_t i = 0; i < k2->count; i++) {
			size_t h = s->members[k2->first + i];

			if (has_obs(&s->hops[h], OBS_M))
				l += logt(residual_m(s, h), variance(s, f, OBS_M, h));
		}
	}
	return l;
}

/* The stretch of median requests that fits the culprits' hops best (golden section). */
static bool culprits_have_m(const struct vm_state *s, const struct vm_fit *f)
{
	for (int c = 0; c < f->ncul; c++) {
		const struct vm_candidate *k2 = &s->cands[f->cul[c]];

		for (size_t i = 0; i < k2->count; i++) {
			if (has_obs(&s->hops[s->members[k2->first + i]], OBS_M))
				return true;
		}
	}
	return false;
}

static void fit_kappa(struct vm_state *s, struct vm_fit *f)
{
	double a = KAPPA_MIN, b = KAPPA_MAX, g = 0.6180339887498949;

	if (!culprits_have_m(s, f)) {
		f->kappa = s->kappa = 0.0;
		return;
	}
	double c = b - g * (b - a), d = a + g * (b - a);
	double fc = kappa_loglik(s, f, c), fd = kappa_loglik(s, f, d);

	for (int i = 0; i < GOLDEN_ROUNDS; i++) {
		if (fc >= fd) {
			b = d, d = c, fd = fc;
			c = b - g * (b - a);
			fc = kappa_loglik(s, f, c);
		} else {
			a = c, c = d, fc = fd;
			d = a + g * (b - a);
			fd = kappa_loglik(s, f, d);
		}
	}
	f->kappa = (a + b) / 2.0;
	s->kappa = f->kappa;
}

static void fit_shifts(struct vm_state *s, struct vm_fit *f, bool last)
{
	if (last)
		f->occam = 0.0;
	for (int c = 0; c < f->ncul; c++) {
		for (int part = 0; part < s->cands[f->cul[c]].parts; part++)
			fit_part(s, f, c, part, last);
	}
	if (f->ncul)
		fit_kappa(s, f);
}

/* Where every culprit's shifts start: at the smallest effect named. */
static void start_shifts(const struct vm_state *s, struct vm_fit *f)
{
	f->kappa = 0.0;
	for (int c = 0; c < f->ncul; c++) {
		for (int part = 0; part < VM_PARTS; part++) {
			bool node = s->cands[f->cul[c]].kind == VM_NODE;

			f->dy[c][part] = node ? 0.0 : DY_MAX;
			f->du[c][part] = node && !part ? s->cands[f->cul[c]].du_min : 0.0;
		}
	}
}

static void start_levels(struct vm_state *s)
{
	for (int g = 0; g < s->ngroups; g++)
		s->mu_y[g] = s->mu_m[g] = NAN;
	for (int g = 0; g < s->nugroups; g++)
		s->mu_u[g] = NAN;
	for (size_t h = 0; h < s->n; h++) {
		const struct vm_hop *o = &s->hops[h];

		if (o->group >= 0 && isnan(s->mu_y[o->group]))
			s->mu_y[o->group] = o->y;
		if (o->group >= 0 && o->has_m && isnan(s->mu_m[o->group]))
			s->mu_m[o->group] = o->m;
		if (o->has_u && isnan(s->mu_u[o->ugroup]))
			s->mu_u[o->ugroup] = o->u;
	}
}

static size_t *all_hops(struct vm_state *s)
{
	for (size_t h = 0; h < s->n; h++)
		s->list[h] = h;
	return s->list;
}

static double line_prior(const struct vm_state *s)
{
	double l = 0.0;

	for (int g = 0; g < s->ngroups; g++) {
		if (!isnan(s->group_line[g]))
			l += line_prior_at(s, s->mu_y[g] - s->group_line[g]);
	}
	return l;
}

static bool settled(const double was[3], const struct vm_fit *f)
{
	const double now[3] = { f->tau_y, f->tau_m, f->tau_u };

	for (int i = 0; i < 3; i++) {
		if (now[i] > was[i] * 1.001 || now[i] < was[i] * 0.999)
			return false;
	}
	return true;
}

/*
 * None's fit depends on the hops alone: its levels, spreads and shifts all
 * start afresh (start_levels, start_shifts, apply_shifts over every hop), and
 * it reads nothing an earlier fit left. The diagnosis asks for it again to put
 * back the levels local fits hold (add_partners, refit), which on 10^6 hops
 * costs what the first fit cost: the first is kept and given back, with the
 * state it leaves (levels, shifts, kappa), bit for bit.
 */
static void none_keep(struct vm_state *s, const struct vm_fit *f)
{
	size_t g = (size_t)s->ngroups, u = (size_t)s->nugroups;

	if (!s->none_levels)
		s->none_levels = malloc((3 * g + u + 1) * sizeof(*s->none_levels));
	if (!s->none_levels)
		return; /* fitted afresh when asked again: the same, only slower */
	memcpy(s->none_levels, s->mu_y, g * sizeof(double));
	memcpy(s->none_levels + g, s->mu_m, g * sizeof(double));
	memcpy(s->none_levels + 2 * g, s->group_line, g * sizeof(double));
	memcpy(s->none_levels + 3 * g, s->mu_u, u * sizeof(double));
	s->none_fit = *f;
	s->none_bytes_only = s->bytes_only;
}

static bool none_recall(struct vm_state *s, struct vm_fit *f)
{
	size_t g = (size_t)s->ngroups, u = (size_t)s->nugroups;
	const struct vm_fit *kept = &s->none_fit;

	if (!s->none_levels)
		return false;
	memcpy(s->mu_y, s->none_levels, g * sizeof(double));
	memcpy(s->mu_m, s->none_levels + g, g * sizeof(double));
	memcpy(s->group_line, s->none_levels + 2 * g, g * sizeof(double));
	memcpy(s->mu_u, s->none_levels + 3 * g, u * sizeof(double));
	/* what vm_fit writes of a fit without culprits */
	f->tau_y = kept->tau_y;
	f->tau_m = kept->tau_m;
	f->tau_u = kept->tau_u;
	f->kappa = kept->kappa;
	f->loglik = kept->loglik;
	f->occam = kept->occam;
	apply_shifts(s, f, all_hops(s), s->n);
	s->bytes_only = s->none_bytes_only;
	return true;
}

void vm_fit(struct vm_state *s, struct vm_fit *f)
{
	if (!f->ncul && none_recall(s, f))
		return;
	f->tau_y = f->tau_m = f->tau_u = 0.1;
	start_shifts(s, f);
	start_levels(s);
	apply_shifts(s, f, all_hops(s), s->n);
	mark_culprits(s, f, true);
	for (int round = 0, last = 0; !last; round++) {
		double was[3] = { f->tau_y, f->tau_m, f->tau_u };

		last = round == OUTER_ROUNDS - 1;
		s->bytes_only = round == 0;
		for (int g = 0; g < s->ngroups; g++) {
			fit_level(s, f, OBS_Y, g);
			fit_level(s, f, OBS_M, g);
		}
		for (int g = 0; g < s->nugroups; g++)
			fit_level(s, f, OBS_U, g);
		fit_shifts(s, f, last);
		f->tau_y = fit_spread(s, OBS_Y, TAU_Y_FLOOR, round ? was[0] : 0.0, TAU_Y_PER_UNIT);
		f->tau_m = fit_spread(s, OBS_M, TAU_M_FLOOR, round ? was[1] : 0.0, 0.0);
		f->tau_u = fit_spread(s, OBS_U, TAU_U_FLOOR, round ? was[2] : 0.0, 0.0);
		/* settled: one more round fits the shifts and their Occam factors at these spreads */
		if (round >= 2 && !last && settled(was, f))
			round = OUTER_ROUNDS - 2;
	}
	mark_culprits(s, f, false);
	f->loglik = line_prior(s) - TAU_Y_PER_UNIT * f->tau_y;
	for (size_t h = 0; h < s->n; h++)
		f->loglik += loglik_hop(s, f, h);
	f->occam += level_occam(s, f);
	if (!f->ncul)
		none_keep(s, f);
}

void vm_fit_none_at(struct vm_state *s, const struct vm_fit *like, struct vm_fit *base)
{
	memset(base, 0, sizeof(*base));
	base->tau_y = like->tau_y;
	base->tau_m = like->tau_m;
	base->tau_u = like->tau_u;
	apply_shifts(s, base, all_hops(s), s->n);
	for (size_t h = 0; h < s->n; h++)
		base->loglik += loglik_hop(s, base, h);
	base->loglik += line_prior(s) - TAU_Y_PER_UNIT * base->tau_y;
	base->occam = level_occam(s, base);
}

/* The hops of f's culprits, each once, into s->list; how many. */
static size_t culprits_hops(struct vm_state *s, const struct vm_fit *f)
{
	size_t k = 0;

	for (int c = 0; c < f->ncul; c++) {
		const struct vm_candidate *k2 = &s->cands[f->cul[c]];

		for (size_t i = 0; i < k2->count; i++) {
			size_t h = s->members[k2->first + i];

			if (!s->mark[h]) {
				s->mark[h] = 1;
				s->list[k++] = h;
			}
		}
	}
	for (size_t i = 0; i < k; i++)
		s->mark[s->list[i]] = 0;
	return k;
}

double vm_fit_local(struct vm_state *s, const struct vm_fit *base, struct vm_fit *f)
{
	size_t k = culprits_hops(s, f);
	struct vm_fit none = *base;
	double before = 0.0, after = 0.0;

	none.ncul = 0;
	apply_shifts(s, &none, s->list, k);
	for (size_t i = 0; i < k; i++)
		before += loglik_hop(s, base, s->list[i]);
	f->tau_y = base->tau_y;
	f->tau_m = base->tau_m;
	f->tau_u = base->tau_u;
	start_shifts(s, f);
	for (int round = 0; round < 3; round++) {
		s->bytes_only = round == 0;
		fit_shifts(s, f, round == 2);
	}
	k = culprits_hops(s, f);
	for (size_t i = 0; i < k; i++)
		after += loglik_hop(s, f, s->list[i]);
	apply_shifts(s, &none, s->list, k);
	f->loglik = base->loglik + after - before;
	f->occam += level_occam(s, f);
	return f->loglik;
}

double vm_fit_add(struct vm_state *s, const struct vm_fit *base, int cand, struct vm_fit *f)
{
	const struct vm_candidate *k2 = &s->cands[cand];
	const size_t *mine = s->members + k2->first;
	int c = base->ncul;
	double before = 0.0, after = 0.0;

	*f = *base;
	f->ncul = c + 1;
	f->cul[c] = cand;
	for (int part = 0; part < VM_PARTS; part++) {
		f->dy[c][part] = k2->kind == VM_NODE ? 0.0 : DY_MAX;
		f->du[c][part] = k2->kind == VM_NODE && !part ? k2->du_min : 0.0;
	}
	apply_shifts(s, base, mine, k2->count);
	for (size_t i = 0; i < k2->count; i++)
		before += loglik_hop(s, base, mine[i]);
	for (int round = 0; round < 3; round++) {
		s->bytes_only = round == 0;
		for (int part = 0; part < k2->parts; part++)
			fit_part(s, f, c, part, round == 2);
	}
	for (size_t i = 0; i < k2->count; i++)
		after += loglik_hop(s, f, mine[i]);
	apply_shifts(s, base, mine, k2->count);
	f->loglik = base->loglik + after - before;
	f->occam += level_occam(s, f) - level_occam(s, base);
	return f->loglik;
}
