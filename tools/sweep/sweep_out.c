/*
 * The sweep as text (the matrix, the slow pairs, the finding and the commands
 * that confirm it) and as JSON (every size and pair, the same judgement).
 */
#include "sweep.h"

#include <jansson.h>
#include <stdlib.h>

#include "plugin/base/version.h"
#include "plugin/report/report.h"
#include "shim/shim.h"
#include "tools/common/tool_text.h"

static const char *why(enum sweep_flag f)
{
	static const char *const names[] = { "fine", "below the reference", "below its baseline",
					     "below the reference and its baseline" };

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

static void slow_pairs(const struct sweep_result *res, const struct sweep_verdict *v,
		       const struct sweep_opts *o, FILE *out)
{
	fprintf(out, "#\n# median %.3f GB/s; slow = below %.0f%% of %.3f GB/s (%s)%s\n",
		v->median_gbs, o->threshold * 100, v->reference_gbs,
		o->gate ? "the fleet: the peers among themselves, else the baseline's median" :
		"the median", o->baseline ? "" : "; no baseline given");
	if (o->baseline)
		fprintf(out, "# or below %.0f%% of the pair's own baseline (%s)\n",
			o->baseline_min * 100, o->baseline);
	fprintf(out, "# slow directions: %zu\n", v->nslow);
	for (size_t i = 0; i < v->nentries; i++) {
		const struct sweep_entry *e = &v->entries[i];

		if (e->flag == SWEEP_FINE)
			continue;
		fprintf(out, "  %s -> %s: %.3f GB/s, %.0f%% of the reference",
			res->nodes[e->src].name, res->nodes[e->dst].name, e->gbs,
			pct(e->gbs, v->reference_gbs));
		if (e->base_gbs > 0)
			fprintf(out, ", %.0f%% of its baseline %.3f GB/s", pct(e->gbs, e->base_gbs),
				e->base_gbs);
		fprintf(out, ": %s\n", why(e->flag));
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
	fprintf(out, "#\n# finding: %s", sweep_kind_name(v->kind));
	if (v->kind == SWEEP_NODE || v->kind == SWEEP_LINK)
		fprintf(out, " %s", res->nodes[v->node].name);
	if (v->kind == SWEEP_LINK)
		fprintf(out, " <-> %s", res->nodes[v->other].name);
	if (v->kind == SWEEP_RAIL)
		fprintf(out, " %s", v->rail);
	fprintf(out, ": %s\n", v->reason);
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

static json_t *finding_json(const struct sweep_result *res, const struct sweep_verdict *v,
			    const struct sweep_opts *o)
{
	struct sweep_commands c;
	json_t *cmds = json_array();

	sweep_commands(res, v, o, &c);
	for (int i = 0; i < c.count; i++)
		json_array_append_new(cmds, json_string(c.line[i]));
	return json_pack("{s:s, s:o, s:o, s:o, s:s, s:o}", "kind", sweep_kind_name(v->kind),
			 "node", v->node >= 0 ? json_string(res->nodes[v->node].name) : json_null(),
			 "other", v->other >= 0 ? json_string(res->nodes[v->other].name) :
			 json_null(), "rail", v->kind == SWEEP_RAIL ? json_string(v->rail) :
			 json_null(), "reason", v->reason, "commands", cmds);
}

int sweep_print_json(const struct sweep_result *res, const struct sweep_verdict *v,
		     const struct sweep_opts *o, FILE *out)
{
	json_t *root = json_pack("{s:s, s:s, s:b, s:o, s:o, s:f, s:f, s:f, s:o, s:I, s:o}",
				 "format", "fabriclab-sweep", "fabriclab", fl_version(),
				 "gate", o->gate, "nodes", nodes_json(res), "sizes",
				 sizes_json(res), "median_gbs", v->median_gbs, "reference_gbs",
				 v->reference_gbs, "threshold", o->threshold, "slow",
				 slow_json(res, v), "wrong_bytes", (json_int_t)res->wrong,
				 "finding", finding_json(res, v, o));
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
