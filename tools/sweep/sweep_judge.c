/*
 * The sweep's judgement is the diagnosis model's (plugin/verdict, the one the
 * merged report and the live warnings use): each directed pair a hop
 * (sweep_figures.c), every explanation scored against all of them. Two
 * judgements, each with its own smallest effect named (the model's min_ratio):
 *  - among the sweep's pairs (--threshold), unless a gate holds its pairs to a
 *    baseline: the same hops the report would judge the same way;
 *  - against the baseline (--baseline-min): each pair relative to its own
 *    baseline, beside the baseline's pairs (sweep_figures.c), so a node, a
 *    link or the whole rail below what it did before is a culprit even when
 *    the sweep's median is as slow as it is.
 * The verdict given is the first that names a culprit of this sweep; not
 * enough evidence from either is never read as healthy.
 */
#include "sweep.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "shim/shim.h"

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

double sweep_median(double *values, size_t n)
{
	if (!n)
		return 0;
	qsort(values, n, sizeof(*values), cmp_double);
	return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

const char *sweep_kind_name(enum sweep_kind k)
{
	static const char *const names[] = { "none", "link", "node", "rail",
					     "not-enough-evidence" };

	return (unsigned)k < sizeof(names) / sizeof(names[0]) ? names[k] : "?";
}

enum sweep_kind sweep_kind_of(enum fl_verdict_kind k)
{
	switch (k) {
	case FL_VERDICT_LINK: return SWEEP_LINK;
	case FL_VERDICT_RAIL: return SWEEP_RAIL;
	case FL_VERDICT_DEVICE:
	case FL_VERDICT_NODE:
	case FL_VERDICT_GDR:
	case FL_VERDICT_TRANSPORT: return SWEEP_NODE;
	case FL_VERDICT_UNSURE:
	case FL_VERDICT_SWITCH: return SWEEP_UNSURE; /* judged without a topology: never */
	case FL_VERDICT_NONE: break;
	}
	return SWEEP_NONE;
}

/* A name out of the hops or the verdict (memmove: the compiler cannot tell they are apart). */
static void copy_name(char *dst, size_t len, const char *src)
{
	size_t n = strnlen(src, len - 1);

	memmove(dst, src, n);
	dst[n] = '\0';
}

static void name_culprit(const struct fl_hop_figures *hops, size_t n, const struct fl_finding *f,
			 struct sweep_culprit *c)
{
	c->kind = sweep_kind_of(f->kind);
	c->model = f->kind;
	fl_finding_culprit(f, hops, c->culprit, sizeof(c->culprit));
	if (f->kind == FL_VERDICT_LINK && f->hop >= 0 && (size_t)f->hop < n) {
		copy_name(c->node, sizeof(c->node), hops[f->hop].src_node);
		copy_name(c->other, sizeof(c->other), hops[f->hop].dst_node);
	} else if (f->kind == FL_VERDICT_RAIL) {
		copy_name(c->rail, sizeof(c->rail), f->dev);
	} else {
		copy_name(c->node, sizeof(c->node), f->node);
	}
}

void sweep_judge_hops(const struct fl_hop_figures *hops, size_t n, double min_ratio,
		      struct sweep_model *m)
{
	struct fl_verdict_params p;

	fl_verdict_default_params(&p);
	p.min_ratio = min_ratio;
	memset(m, 0, sizeof(*m));
	fl_verdict_compute(hops, n, &p, &m->v);
	for (int k = 0; k < m->v.nfindings; k++) {
		struct sweep_culprit *c = &m->culprits[m->nculprits++];

		c->finding = k;
		name_culprit(hops, n, &m->v.findings[k], c);
		c->confidence = m->v.findings[k].confidence;
	}
	m->kind = m->nculprits ? m->culprits[0].kind
				: m->v.kind == FL_VERDICT_UNSURE ? SWEEP_UNSURE : SWEEP_NONE;
}

/* Whether culprit c of m slows any of the sweep's own hops (not only the baseline's). */
static bool in_sweep(const struct sweep_hops *h, const struct sweep_model *m,
		     const struct sweep_culprit *c)
{
	for (size_t i = 0; i < h->nsweep; i++) {
		if (sweep_finding_has(&m->v.findings[c->finding], h->figs, i))
			return true;
	}
	return false;
}

/* Keeps the culprits of the sweep's hops; a verdict that named none of them is none then. */
static void keep_sweep_culprits(const struct sweep_hops *h, struct sweep_model *m)
{
	int kept = 0;

	for (int k = 0; k < m->nculprits; k++) {
		if (in_sweep(h, m, &m->culprits[k]))
			m->culprits[kept++] = m->culprits[k];
	}
	if (m->nculprits && !kept) {
		m->kind = SWEEP_NONE;
		snprintf(m->v.reason, sizeof(m->v.reason),
			 "none of this sweep's pairs is below the baseline's (what the model names "
			 "is the baseline's own: %s)", m->culprits[0].culprit);
	} else if (kept && m->culprits[0].finding) {
		/* the model's first culprit was the baseline's: the first of the sweep's leads */
		const struct fl_finding *f = &m->v.findings[m->culprits[0].finding];

		m->kind = m->culprits[0].kind;
		m->v.confidence = f->confidence;
		memcpy(m->v.reason, f->reason, sizeof(m->v.reason));
	}
	m->nculprits = kept;
}

static int node_of_dev(const struct sweep_hops *h, const char *dev)
{
	for (int i = 0; i < h->nnodes; i++) {
		if (!strcmp(h->dev[i], dev))
			return i;
	}
	return -1;
}

static void add_finding(const struct sweep_result *res, const struct sweep_hops *h,
			const struct sweep_model *m, const struct sweep_culprit *c,
			struct sweep_verdict *v)
{
	struct sweep_finding *f = &v->findings[v->nfindings];
	int rail = c->kind == SWEEP_RAIL ? node_of_dev(h, c->rail) : -1;

	for (int k = 0; k < v->nfindings; k++) {
		if (!strcmp(v->findings[k].c->culprit, c->culprit))
			return; /* both judgements name it */
	}
	*f = (struct sweep_finding){ .kind = c->kind, .node = -1, .other = -1, .c = c, .m = m };
	if (c->kind == SWEEP_RAIL)
		snprintf(f->rail, sizeof(f->rail), "%s", rail >= 0 ? res->nodes[rail].dev : c->rail);
	else
		f->node = sweep_hops_node(h, c->node);
	if (c->kind == SWEEP_LINK)
		f->other = sweep_hops_node(h, c->other);
	v->nfindings++;
}

/* The entries a judgement's culprits slow, flagged as slow against what it judged. */
static void flag(const struct sweep_hops *h, const struct sweep_model *m, bool baseline,
		 struct sweep_verdict *v)
{
	for (int k = 0; m && k < m->nculprits; k++) {
		for (size_t i = 0; i < v->nentries; i++) {
			struct sweep_entry *e = &v->entries[i];
			bool below_base = e->flag == SWEEP_BELOW_BASELINE || e->flag == SWEEP_BELOW_BOTH;
			bool below_median = e->flag == SWEEP_BELOW_MEDIAN || e->flag == SWEEP_BELOW_BOTH;

			if (!sweep_finding_has(&m->v.findings[m->culprits[k].finding], h->figs, i))
				continue;
			below_base |= baseline;
			below_median |= !baseline;
			e->flag = below_median && below_base ? SWEEP_BELOW_BOTH
				  : below_base		     ? SWEEP_BELOW_BASELINE
							     : SWEEP_BELOW_MEDIAN;
		}
	}
}

/* The judgement given: the first naming a culprit, else the first unsure, else the first. */
static void choose(struct sweep_verdict *v)
{
	struct sweep_model *first = v->among ? v->among : v->baseline;
	struct sweep_model *second = v->among ? v->baseline : NULL;
	const struct sweep_model *m = first;

	if (first->nculprits)
		m = first;
	else if (second && second->nculprits)
		m = second;
	else if (first->kind == SWEEP_UNSURE)
		m = first;
	else if (second && second->kind == SWEEP_UNSURE)
		m = second;
	v->model = m;
	v->against_baseline = m == v->baseline;
	v->kind = m->kind;
	v->reference_gbs = m->v.median_gbs;
	snprintf(v->reason, sizeof(v->reason), "against %s: %s",
		 v->against_baseline ? "each pair's baseline" : "the other pairs", m->v.reason);
}

static void headline(const struct sweep_result *res, const struct sweep_hops *h,
		     struct sweep_verdict *v)
{
	const struct sweep_model *other = v->model == v->among ? v->baseline : v->among;

	for (int k = 0; k < v->model->nculprits; k++)
		add_finding(res, h, v->model, &v->model->culprits[k], v);
	for (int k = 0; other && k < other->nculprits; k++)
		add_finding(res, h, other, &other->culprits[k], v);
	if (!v->nfindings)
		return;
	v->node = v->findings[0].node;
	v->other = v->findings[0].other;
	memcpy(v->rail, v->findings[0].rail, sizeof(v->rail));
	/* A sweep runs one rail: a spine every pair crosses would read the same. */
	if (v->kind == SWEEP_RAIL && v->nslow == v->nentries)
		snprintf(v->reason + strlen(v->reason), sizeof(v->reason) - strlen(v->reason),
			 "; every direction of this sweep is on it, so a spine they all cross "
			 "reads the same: sweep another rail (FABRICLAB_SHIM_DEV) to tell them apart");
}

/* Every measured direction, in the order of the hops (sweep_hops_build). */
static int entries(const struct sweep_result *res, const struct sweep_baseline *base,
		   struct sweep_verdict *v)
{
	const struct sweep_size *s = &res->sizes[res->nsizes - 1];
	size_t nn = (size_t)res->n * (size_t)res->n;
	double *gbs = malloc((nn + 1) * sizeof(*gbs));

	v->entries = calloc(nn + 1, sizeof(*v->entries));
	if (!v->entries || !gbs) {
		free(gbs);
		return shim_fail(FL_ERR_SYSTEM, "out of memory");
	}
	for (int a = 0; a < res->n; a++) {
		for (int b = 0; b < res->n; b++) {
			double t = s->time_us[a * res->n + b];
			struct sweep_entry *e = &v->entries[v->nentries];

			if (a == b || t < 0)
				continue;
			*e = (struct sweep_entry){ a, b, sweep_gbs(s->bytes, t), 0, SWEEP_FINE };
			if (base)
				e->base_gbs = sweep_baseline_find(base, res->nodes[a].name,
								  res->nodes[b].name);
			gbs[v->nentries++] = e->gbs;
		}
	}
	v->median_gbs = sweep_median(gbs, v->nentries);
	free(gbs);
	return FL_OK;
}

/* One judgement: the model on hops, its culprits those of the sweep's own hops. */
static int judge_one(const struct sweep_hops *h, double min_ratio, struct sweep_model **out)
{
	*out = calloc(1, sizeof(**out));
	if (!*out)
		return shim_fail(FL_ERR_SYSTEM, "out of memory");
	sweep_judge_hops(h->figs, h->n, min_ratio, *out);
	keep_sweep_culprits(h, *out);
	return FL_OK;
}

static int judge(const struct sweep_result *res, const struct sweep_opts *o,
		 const struct sweep_baseline *base, struct sweep_hops *among,
		 struct sweep_hops *against, struct sweep_verdict *v)
{
	bool held = base && base->npairs; /* a baseline of no pairs holds nothing */
	int rc = entries(res, base, v);

	/* A gate with a baseline measures no peer pairs: its node is held to the baseline only. */
	if (!rc && !(o->gate && held))
		rc = sweep_hops_build(res, among);
	if (!rc && among->figs)
		rc = judge_one(among, o->threshold, &v->among);
	if (!rc && held)
		rc = sweep_hops_against(res, base, against);
	if (!rc && held)
		rc = judge_one(against, o->baseline_min, &v->baseline);
	if (rc)
		return rc;
	flag(among, v->among, false, v);
	flag(against, v->baseline, true, v);
	for (size_t i = 0; i < v->nentries; i++)
		v->nslow += v->entries[i].flag != SWEEP_FINE;
	choose(v);
	headline(res, among->figs ? among : against, v); /* both name the sweep's nodes alike */
	return FL_OK;
}

int sweep_judge(const struct sweep_result *res, const struct sweep_opts *o,
		const struct sweep_baseline *base, struct sweep_verdict *v)
{
	struct sweep_hops among = { 0 }, against = { 0 };
	int rc;

	*v = (struct sweep_verdict){ .node = -1, .other = -1 };
	rc = judge(res, o, base, &among, &against, v);
	sweep_hops_free(&among);
	sweep_hops_free(&against);
	if (rc)
		sweep_verdict_free(v);
	return rc;
}

void sweep_verdict_free(struct sweep_verdict *v)
{
	free(v->entries);
	free(v->among);
	free(v->baseline);
	*v = (struct sweep_verdict){ .node = -1, .other = -1 };
}
