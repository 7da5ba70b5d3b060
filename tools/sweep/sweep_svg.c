/*
 * `--svg`: the sweep's matrix as a heatmap in the report's style (viridis-like
 * scale, the cells a named culprit slows framed in red, the finding with its
 * confidence and runner-up as the title). Standalone SVG:
 * no scripts, fonts or links outside it.
 */
#include "sweep.h"


#include "plugin/base/version.h"
#include "plugin/report/report.h"
#include "shim/shim.h"
#include "tools/common/tool_svg.h"

#define WIDTH 820
#define HEIGHT 820
#define MAP_X 130.0
#define MAP_Y 190.0
#define MAP_SIDE 560.0
#define BAD "#d62728"
#define GOOD "#2a7d2a"

static double scale_max(const struct sweep_verdict *v)
{
	double max = 0;

	for (size_t i = 0; i < v->nentries; i++)
		max = v->entries[i].gbs > max ? v->entries[i].gbs : max;
	return max > 0 ? max : 1;
}

static void title(const struct sweep_result *res, const struct sweep_verdict *v, FILE *out)
{
	char conf[160];

	fprintf(out, "<text x=\"30\" y=\"42\" font-size=\"22\" font-weight=\"bold\" "
		"fill=\"%s\">fabriclab sweep: %s", v->kind != SWEEP_NONE ? BAD : GOOD,
		sweep_kind_name(v->kind));
	if (v->node >= 0) {
		fputc(' ', out);
		tool_svg_text(out, res->nodes[v->node].name);
	}
	if (v->other >= 0) {
		fputs(" -&gt; ", out);
		tool_svg_text(out, res->nodes[v->other].name);
	}
	if (v->kind == SWEEP_RAIL) {
		fputc(' ', out);
		tool_svg_text(out, v->rail);
	}
	sweep_say_confidence(v, conf, sizeof(conf));
	fprintf(out, "</text>\n<text x=\"30\" y=\"70\" font-size=\"13\" fill=\"#333\">"
		"%zu slow of %zu directions; median %.3f GB/s at %zu bytes; ", v->nslow,
		v->nentries, v->median_gbs, res->sizes[res->nsizes - 1].bytes);
	tool_svg_text(out, conf);
	fputs("</text>\n<text x=\"30\" y=\"92\" font-size=\"12\" fill=\"#333\">", out);
	tool_svg_text(out, v->reason);
	fputs("</text>\n", out);
}

static void axes(const struct sweep_result *res, double cell, FILE *out)
{
	double font = cell * 0.6 > 12 ? 12 : cell * 0.6 < 7 ? 7 : cell * 0.6;

	fprintf(out, "<text x=\"%.0f\" y=\"%.0f\" font-size=\"13\" text-anchor=\"middle\">"
		"receiver</text>\n<text x=\"%.0f\" y=\"%.0f\" font-size=\"13\" "
		"text-anchor=\"middle\" transform=\"rotate(-90 %.0f %.0f)\">sender</text>\n",
		MAP_X + MAP_SIDE / 2, MAP_Y - 60, MAP_X - 95, MAP_Y + MAP_SIDE / 2, MAP_X - 95,
		MAP_Y + MAP_SIDE / 2);
	for (int i = 0; i < res->n; i++) {
		double c = (double)i * cell + cell / 2;

		fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"%.0f\" text-anchor=\"end\" "
			"dominant-baseline=\"middle\">", MAP_X - 6, MAP_Y + c, font);
		tool_svg_text(out, res->nodes[i].name);
		fprintf(out, "</text>\n<text x=\"%.1f\" y=\"%.1f\" font-size=\"%.0f\" "
			"transform=\"rotate(-45 %.1f %.1f)\">", MAP_X + c, MAP_Y - 6, font,
			MAP_X + c, MAP_Y - 6);
		tool_svg_text(out, res->nodes[i].name);
		fputs("</text>\n", out);
	}
}

static void cells(const struct sweep_result *res, const struct sweep_verdict *v, double cell,
		  double max, FILE *out)
{
	fprintf(out, "<rect x=\"%.0f\" y=\"%.0f\" width=\"%.0f\" height=\"%.0f\" "
		"fill=\"#eeeeee\"/>\n", MAP_X, MAP_Y, MAP_SIDE, MAP_SIDE);
	for (size_t i = 0; i < v->nentries; i++) {
		const struct sweep_entry *e = &v->entries[i];
		bool slow = e->flag != SWEEP_FINE;
		char fill[8];

		tool_svg_colour(e->gbs / max, fill, sizeof(fill));
		fprintf(out, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" "
			"fill=\"%s\"%s><title>", MAP_X + e->dst * cell, MAP_Y + e->src * cell,
			cell, cell, fill, slow ? " stroke=\"" BAD "\" stroke-width=\"3\"" : "");
		tool_svg_text(out, res->nodes[e->src].name);
		fputs(" -&gt; ", out);
		tool_svg_text(out, res->nodes[e->dst].name);
		fprintf(out, ": %.3f GB/s%s</title></rect>\n", e->gbs, slow ? " (slow)" : "");
		if (cell >= 40)
			fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" "
				"text-anchor=\"middle\" dominant-baseline=\"middle\" fill=\"%s\">"
				"%.3g</text>\n", MAP_X + (e->dst + 0.5) * cell,
				MAP_Y + (e->src + 0.5) * cell, e->gbs / max > 0.6 ? "#000" : "#fff",
				e->gbs);
	}
}

static void legend(double max, FILE *out)
{
	double y = MAP_Y + MAP_SIDE + 30;

	tool_svg_scale(out, MAP_X, y, MAP_SIDE, max, 3);
	fprintf(out, "<text x=\"%.0f\" y=\"%.0f\" font-size=\"12\">busbw GB/s (grey: not "
		"measured; red frame: slow)</text>\n<text x=\"30\" y=\"%d\" font-size=\"12\" "
		"fill=\"#666\">fabriclab %s sweep</text>\n", MAP_X, y + 50, HEIGHT - 16,
		fl_version());
}

static int emit(const struct sweep_result *res, const struct sweep_verdict *v, FILE *out)
{
	double cell = MAP_SIDE / (res->n ? res->n : 1), max = scale_max(v);

	tool_svg_begin(out, WIDTH, HEIGHT);
	title(res, v, out);
	axes(res, cell, out);
	cells(res, v, cell, max, out);
	legend(max, out);
	fputs("</svg>\n", out);
	return ferror(out) ? -1 : 0;
}

int sweep_write_svg(const struct sweep_result *res, const struct sweep_verdict *v,
		    const char *path)
{
	char tmp[4096];
	FILE *f;
	int rc;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f)
		return shim_fail(FL_ERR_SYSTEM, "cannot write %s", tmp);
	rc = emit(res, v, f);
	if (fclose(f) || rc || rename(tmp, path)) {
		remove(tmp);
		return shim_fail(FL_ERR_SYSTEM, "cannot write the SVG %s", path);
	}
	return FL_OK;
}
