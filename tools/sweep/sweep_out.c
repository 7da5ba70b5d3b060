/*
 * The sweep as text (the matrix, the slow pairs, the finding with the model's
 * confidence and runner-up, and the commands that confirm it) and as JSON
 * (every size and pair, the same judgement).
 */
#include "sweep.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "plugin/base/version.h"
#include "plugin/report/report.h"
#include "shim/shim.h"
#include "tools/common/tool_text.h"

static const char *why(enum sweep_flag f)
{
	static const char *const names[] = { "fine", "slow against the other pairs",
					     "slow against its baseline",
					     "slow against the other pairs and its baseline" };

	return names[f];
}

static double pct(double part, double whole)
{
	return whole > 0 ? 100.0 * part / whole : 0;
}

static void header(const struct sweep_result *res, const struct sweep_opts *o, FILE *out)
{
	fprintf(out, "# fabriclab sweep: %d nodes, one rank each; every direction of every "
		"pair on its own, %.2f s per direction and size\n", res->n, o->seconds);
	for (int i = 0; i < res->n; i++)
		fprintf(out, "#  %-12s device %d [%s] %d Mbps, net plugin v%d, pid %d\n",
			res->nodes[i].name, res->nodes[i].dev_index, res->nodes[i].dev,
			res->nodes[i].speed_mbps, res->nodes[i].net_version, res->nodes[i].pid);
}

/* min, median and max over the pairs of one size: the nccl-tests line of a sweep. */
static void sizes_table(const struct sweep_result *res, FILE *out)
{
	size_t nn = (size_t)res->n * (size_t)res->n;
	double *gbs = malloc(nn * sizeof(*gbs));

	if (!gbs)
		return;
	fprintf(out, "#\n# %10s %6s %12s %12s %12s   (sendrecv: busbw = algbw)\n", "size",
		"pairs", "min GB/s", "median GB/s", "max GB/s");
	for (size_t s = 0; s < res->nsizes; s++) {
		const struct sweep_size *z = &res->sizes[s];
		size_t k = 0;

		for (size_t i = 0; i < nn; i++) {
			if (z->time_us[i] >= 0)
				gbs[k++] = sweep_gbs(z->bytes, z->time_us[i]);
		}
		if (!k)
			continue;
		double med = sweep_median(gbs, k);

		fprintf(out, "  %10zu %6zu %12.3f %12.3f %12.3f\n", z->bytes, k, gbs[0], med,
			gbs[k - 1]);
	}
	free(gbs);
}

static void matrix(const struct sweep_result *res, FILE *out)
{
	const struct sweep_size *z = &res->sizes[res->nsizes - 1];
	int n = res->n;

	fprintf(out, "#\n# busbw GB/s at %zu bytes: row = sender, column = receiver\n%-12s",
		z->bytes, "");
	for (int j = 0; j < n; j++)
		fprintf(out, " %9.9s", res->nodes[j].name);
	fputc('\n', out);
	for (int i = 0; i < n; i++) {
		fprintf(out, "%-12.12s", res->nodes[i].name);
		for (int j = 0; j < n; j++) {
			double t = z->time_us[i * n + j];

			if (t < 0)
				fprintf(out, " %9s", "-");
			else
				fprintf(out, " %9.3f", sweep_gbs(z->bytes, t));
		}
		fputc('\n', out);
	}
}

/* What the judgements compared the sweep with, and the smallest effect each names. */
static void judged_against(const struct sweep_verdict *v, const struct sweep_opts *o, FILE *out)
{
	fprintf(out, "#\n# judged by the diagnosis model, as `fabriclab report` judges hops "
		"(docs/report-format.md): each direction a hop\n");
	if (v->among)
		fprintf(out, "#  against %s: culprits %.0f%% or more below them (--threshold %.0f)\n",
			o->gate ? "the fleet: the peers among themselves" : "the other directions",
			100 - o->threshold * 100, o->threshold * 100);
	if (v->baseline)
		fprintf(out, "#  against each pair's own baseline (%s): culprits %.0f%% or more below "
			"it (--baseline-min %.0f)\n", o->baseline, 100 - o->baseline_min * 100,
			o->baseline_min * 100);
	else
		fprintf(out, "#  %s\n", o->baseline ? "the baseline holds no pairs" :
			"no baseline given");
}

static void slow_pairs(const struct sweep_result *res, const struct sweep_verdict *v,
		       const struct sweep_opts *o, FILE *out)
{
	judged_against(v, o, out);
	fprintf(out, "# median %.3f GB/s; the healthy level the model fitted %.3f GB/s\n",
		v->median_gbs, v->reference_gbs);
	fprintf(out, "# slow directions (a culprit named slows them): %zu\n", v->nslow);
	for (size_t i = 0; i < v->nentries; i++) {
		const struct sweep_entry *e = &v->entries[i];

		if (e->flag == SWEEP_FINE)
			continue;
		fprintf(out, "  %s -> %s: %.3f GB/s, %.0f%% of the healthy level",
			res->nodes[e->src].name, res->nodes[e->dst].name, e->gbs,
			pct(e->gbs, v->reference_gbs));
		if (e->base_gbs > 0)
			fprintf(out, ", %.0f%% of its baseline %.3f GB/s", pct(e->gbs, e->base_gbs),
				e->base_gbs);
		fprintf(out, ": %s\n", why(e->flag));
	}
}

/* A runner-up that is one of several culprits named is that one without the others. */
static bool one_of_several(const struct sweep_verdict *v, const char *culprit)
{
	for (int k = 0; v->nfindings > 1 && culprit[0] && k < v->nfindings; k++) {
		if (!strcmp(v->findings[k].c->culprit, culprit))
			return true;
	}
	return false;
}

void sweep_say_confidence(const struct sweep_verdict *v, char *buf, size_t len)
{
	const struct fl_verdict *m = &v->model->v;
	const struct fl_runner_up *r = &m->runner_up;

	if (r->kind == FL_VERDICT_NONE && !r->culprit[0] && r->confidence <= 0)
		snprintf(buf, len, "confidence %.2f", m->confidence);
	else
		snprintf(buf, len, "confidence %.2f; next: %s%s%s%s, %.2f", m->confidence,
			 sweep_kind_name(sweep_kind_of(r->kind)), r->culprit[0] ? " " : "",
			 r->culprit, one_of_several(v, r->culprit) ? " alone" : "", r->confidence);
}

static void finding_line(const struct sweep_result *res, const struct sweep_finding *f,
			 FILE *out)
{
	fprintf(out, "%s", sweep_kind_name(f->kind));
	if (f->node >= 0)
		fprintf(out, " %s", res->nodes[f->node].name);
	if (f->other >= 0)
		fprintf(out, " -> %s", res->nodes[f->other].name);
	if (f->kind == SWEEP_RAIL)
		fprintf(out, " %s", f->rail);
}

static void findings(const struct sweep_result *res, const struct sweep_verdict *v, FILE *out)
{
	char conf[160];

	sweep_say_confidence(v, conf, sizeof(conf));
	fprintf(out, "#\n# finding: ");
	if (v->nfindings)
		finding_line(res, &v->findings[0], out);
	else
		fprintf(out, "%s", sweep_kind_name(v->kind));
	fprintf(out, " (");
	if (v->nfindings && v->findings[0].c->model == FL_VERDICT_RAIL)
		fprintf(out, "%s; ", v->findings[0].c->culprit); /* "rail mlx5_2" */
	else if (v->nfindings)
		fprintf(out, "%s %s; ", fl_verdict_kind_name(v->findings[0].c->model),
			v->findings[0].c->culprit);
	fprintf(out, "%s): %s\n", conf, v->reason);
	for (int k = 1; k < v->nfindings; k++) {
		const struct sweep_finding *f = &v->findings[k];

		fprintf(out, "# also: ");
		finding_line(res, f, out);
		fprintf(out, " (%s %s; confidence %.2f): %s\n", fl_verdict_kind_name(f->c->model),
			f->c->culprit, f->c->confidence, f->m->v.findings[f->c->finding].reason);
	}
}

void sweep_print_text(const struct sweep_result *res, const struct sweep_verdict *v,
		      const struct sweep_opts *o, FILE *out)
{
	struct sweep_commands c;

	header(res, o, out);
	sizes_table(res, out);
	matrix(res, out);
	slow_pairs(res, v, o, out);
	findings(res, v, out);
	sweep_commands(res, v, o, &c);
	if (c.count)
		fprintf(out, "#\n# to confirm on the machines:\n");
	for (int i = 0; i < c.count; i++)
		fprintf(out, "  %s\n", c.line[i]);
}

static json_t *sizes_json(const struct sweep_result *res)
{
	json_t *a = json_array();
	int n = res->n;

	for (size_t s = 0; s < res->nsizes; s++) {
		const struct sweep_size *z = &res->sizes[s];
		json_t *pairs = json_array();

		for (int i = 0; i < n * n; i++) {
			double t = z->time_us[i], gbs = sweep_gbs(z->bytes, t);

			if (t >= 0)
				json_array_append_new(pairs, json_pack(
					"{s:s, s:s, s:f, s:f, s:f}", "src", res->nodes[i / n].name,
					"dst", res->nodes[i % n].name, "time_us", t, "algbw_gbs",
					gbs, "busbw_gbs", gbs));
		}
		json_array_append_new(a, json_pack("{s:I, s:o}", "bytes", (json_int_t)z->bytes,
						   "pairs", pairs));
	}
	return a;
}

static json_t *slow_json(const struct sweep_result *res, const struct sweep_verdict *v)
{
	json_t *a = json_array();

	for (size_t i = 0; i < v->nentries; i++) {
		const struct sweep_entry *e = &v->entries[i];

		if (e->flag != SWEEP_FINE)
			json_array_append_new(a, json_pack(
				"{s:s, s:s, s:f, s:f, s:o, s:s}", "src", res->nodes[e->src].name,
				"dst", res->nodes[e->dst].name, "busbw_gbs", e->gbs,
				"pct_reference", pct(e->gbs, v->reference_gbs), "baseline_gbs",
				e->base_gbs > 0 ? json_real(e->base_gbs) : json_null(), "why",
				why(e->flag)));
	}
	return a;
}

static json_t *nodes_json(const struct sweep_result *res)
{
	json_t *a = json_array();

	for (int i = 0; i < res->n; i++) {
		const struct sweep_node *n = &res->nodes[i];

		json_array_append_new(a, json_pack("{s:s, s:s, s:i, s:i}", "name", n->name,
						   "device", n->dev, "dev_index", n->dev_index,
						   "speed_mbps", n->speed_mbps));
	}
	return a;
}

static json_t *name_or_null(const struct sweep_result *res, int node)
{
	return node >= 0 ? json_string(res->nodes[node].name) : json_null();
}

static json_t *runner_up_json(const struct fl_runner_up *r)
{
	return json_pack("{s:s, s:s, s:o, s:f}", "kind", sweep_kind_name(sweep_kind_of(r->kind)),
			 "model_kind", fl_verdict_kind_name(r->kind), "culprit",
			 tool_text_json(r->culprit), "confidence", r->confidence);
}

/* Every culprit named, as the sweep names it and as the model does. */
static json_t *findings_json(const struct sweep_result *res, const struct sweep_verdict *v)
{
	json_t *a = json_array();

	for (int k = 0; k < v->nfindings; k++) {
		const struct sweep_finding *f = &v->findings[k];
		const struct fl_finding *m = &f->m->v.findings[f->c->finding];

		json_array_append_new(a, json_pack(
			"{s:s, s:s, s:o, s:o, s:o, s:o, s:s, s:f, s:f, s:f, s:f, s:o}", "kind",
			sweep_kind_name(f->kind), "model_kind", fl_verdict_kind_name(f->c->model),
			"culprit", tool_text_json(f->c->culprit), "node", name_or_null(res, f->node), "other",
			name_or_null(res, f->other), "rail",
			f->kind == SWEEP_RAIL ? json_string(f->rail) : json_null(), "against",
			f->m == v->baseline ? "baseline" : "pairs", "confidence", m->confidence,
			"ratio", m->ratio, "speedup", m->speedup, "line_share", m->line_share,
			"reason", tool_text_json(m->reason)));
	}
	return a;
}

static json_t *finding_json(const struct sweep_result *res, const struct sweep_verdict *v,
			    const struct sweep_opts *o)
{
	const struct fl_verdict *m = &v->model->v;
	struct sweep_commands c;
	json_t *cmds = json_array();

	sweep_commands(res, v, o, &c);
	for (int i = 0; i < c.count; i++)
		json_array_append_new(cmds, json_string(c.line[i]));
	return json_pack("{s:s, s:s, s:o, s:o, s:o, s:o, s:s, s:f, s:o, s:f, s:f, s:f, s:o, "
			 "s:o, s:o}",
			 "kind", sweep_kind_name(v->kind), "model_kind", fl_verdict_kind_name(m->kind),
			 "node", name_or_null(res, v->node), "other", name_or_null(res, v->other),
			 "rail", v->kind == SWEEP_RAIL ? json_string(v->rail) : json_null(),
			 "culprit", tool_text_json(v->nfindings ? v->findings[0].c->culprit : ""),
			 "against",
			 v->against_baseline ? "baseline" : "pairs", "confidence", m->confidence,
			 "runner_up", runner_up_json(&m->runner_up), "ratio", m->ratio, "speedup",
			 m->speedup, "line_share", m->line_share, "reason", tool_text_json(v->reason),
			 "findings",
			 findings_json(res, v), "commands", cmds);
}

int sweep_print_json(const struct sweep_result *res, const struct sweep_verdict *v,
		     const struct sweep_opts *o, FILE *out)
{
	json_t *root = json_pack("{s:s, s:s, s:b, s:o, s:o, s:f, s:f, s:f, s:f, s:o, s:I, s:o}",
				 "format", "fabriclab-sweep", "fabriclab", fl_version(),
				 "gate", o->gate, "nodes", nodes_json(res), "sizes",
				 sizes_json(res), "median_gbs", v->median_gbs, "reference_gbs",
				 v->reference_gbs, "threshold", o->threshold, "baseline_min",
				 o->baseline_min, "slow", slow_json(res, v), "wrong_bytes",
				 (json_int_t)res->wrong, "finding", finding_json(res, v, o));
	int rc;

	if (!root)
		return shim_fail(FL_ERR_SYSTEM, "cannot build the JSON output");
	rc = json_dumpf(root, out, JSON_INDENT(1));
	fputc('\n', out);
	json_decref(root);
	return rc ? shim_fail(FL_ERR_SYSTEM, "cannot write the JSON output") : FL_OK;
}

void sweep_print_error(const char *text)
{
	char *shown = tool_text_dup(text);

	/* one write, as report_failure's: other ranks may be writing too */
	fprintf(stderr, "fabriclab sweep: %s\n", shown ? shown : "(no memory to show the error)");
	free(shown);
}
