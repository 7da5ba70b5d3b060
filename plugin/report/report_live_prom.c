/*
 * The live findings as a node_exporter textfile (docs/report-format.md lists
 * the metrics): every series carries node, pid and rank, so the files of
 * several processes on one node never give the collector the same series twice.
 */
#include <stdio.h>
#include <stdlib.h>

#include "base/error.h"
#include "base/prom_out.h"
#include "report_live.h"

static void process_labels(FILE *out, const struct fl_live_prom *p, bool last)
{
	char num[16];

	fl_prom_label(out, "node", p->node, false);
	snprintf(num, sizeof(num), "%d", p->pid);
	fl_prom_label(out, "pid", num, false);
	snprintf(num, sizeof(num), "%d", p->rank);
	fl_prom_label(out, "rank", num, last);
}

static void process_gauge(FILE *out, const struct fl_live_prom *p, const char *name,
			  const char *help, double value)
{
	fl_prom_header(out, name, "gauge", help);
	fprintf(out, "%s{", name);
	process_labels(out, p, true);
	fprintf(out, "} %.17g\n", value);
}

static void finding_gauge(FILE *out, const struct fl_live_prom *p, const char *name,
			  const char *help, double (*value)(const struct fl_live_finding *),
			  const char *format)
{
	fl_prom_header(out, name, "gauge", help);
	for (int i = 0; i < p->nfindings; i++) {
		const struct fl_live_finding *f = &p->findings[i];

		fprintf(out, "%s{", name);
		process_labels(out, p, false);
		fl_prom_label(out, "kind", f->kind, false);
		fl_prom_label(out, "culprit", f->culprit, false);
		fl_prom_label(out, "src_node", f->key.src_node, false);
		fl_prom_label(out, "src_dev", f->key.src_dev, false);
		fl_prom_label(out, "dst_node", f->key.dst_node, false);
		fl_prom_label(out, "dst_dev", f->key.dst_dev, true);
		fputs("} ", out);
		fprintf(out, format, value(f));
		fputc('\n', out);
	}
}

static double ratio_of(const struct fl_live_finding *f)
{
	return f->ratio;
}

static double cost_of(const struct fl_live_finding *f)
{
	return f->cost;
}

static double since_of(const struct fl_live_finding *f)
{
	return f->since_unix;
}

static void emit(FILE *out, const struct fl_live_prom *p)
{
	process_gauge(out, p, "fabriclab_live_up", "1 while the process runs and judges its "
		      "hops, 0 once its final report is written (its findings then cleared).",
		      p->up);
	process_gauge(out, p, "fabriclab_live_updated_seconds", "Unix time this file "
		      "was written (the last window judged, or the final report).",
		      p->updated_unix);
	process_gauge(out, p, "fabriclab_live_window_seconds", "Length of the window each "
		      "hop is judged on (FABRICLAB_LIVE_WINDOW_MS).", p->window_s);
	process_gauge(out, p, "fabriclab_live_findings", "Live findings standing now.",
		      p->nfindings);
	finding_gauge(out, p, "fabriclab_live_finding_ratio", "A hop slow on its last windows: "
		      "its wire rate over its line rate in the last one.", ratio_of, "%.6g");
	finding_gauge(out, p, "fabriclab_live_finding_cost", "The share of the ring's time "
		      "the slow hop costs if it sets the pace (1 - ratio).", cost_of, "%.6g");
	finding_gauge(out, p, "fabriclab_live_finding_since_seconds", "Unix time the finding "
		      "appeared.", since_of, "%.3f");
}

int fl_report_live_prom(const struct fl_live_prom *p, char **text, size_t *len)
{
	FILE *out = open_memstream(text, len);
	int err;

	if (!out)
		return fl_fail(FL_ERR_SYSTEM, "out of memory for the textfile");
	emit(out, p);
	err = ferror(out);
	if (fclose(out) || err) {
		free(*text);
		*text = NULL;
		return fl_fail(FL_ERR_SYSTEM, "out of memory for the textfile");
	}
	return FL_OK;
}
