/*
 * `--svg`: what people would rather see than read. Left, a node x node heatmap
 * of wire GB/s (the slowest hop of each pair, colour scale with legend); right,
 * the nodes on a circle with every hop as an arrow labelled with its rate, the
 * culprit's hops in red. Beyond a few hundred nodes both show blocks of nodes,
 * the culprits and their neighbours alone (report_svg_rows.h). Drawn from a
 * compact record per hop (its two rows, rate and blame), never a copy of the
 * hops. Standalone SVG: no scripts, fonts or links outside it.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "plugin/base/error.h"
#include "plugin/base/version.h"
#include "report.h"
#include "report_svg_rows.h"
#include "tools/common/tool_svg.h"

#define WIDTH 1280
#define HEIGHT 860
#define MAP_X 110.0 /* heatmap top-left corner and side */
#define MAP_Y 215.0
#define MAP_SIDE 500.0
#define RING_X 960.0
#define RING_Y 465.0
#define RING_R 210.0
#define REASON_LINE 135 /* characters per line of the reason */
#define MAX_LABELS 40 /* axis labels drawn before thinning them out */
#define BAD "#d62728"
#define GOOD "#2a7d2a"

/* Every hop between two rows (nodes or blocks), folded into one cell and one arrow. */
struct pair {
	size_t src, dst; /* indices into the rows */
	double gbs; /* the slowest hop between them */
	size_t hops;
	bool culprit;
};

struct picture {
	const struct report_set *set;
	struct report_svg_axis axis;
	const struct report_svg_row *rows;
	size_t nnodes; /* rows: nodes, or blocks of them and nodes alone */
	struct pair *pairs;
	size_t npairs;
	double scale_max; /* GB/s at the top of the colour scale */
};

static int cmp_pair(const void *pa, const void *pb)
{
	const struct pair *a = pa, *b = pb;

	if (a->src != b->src)
		return a->src < b->src ? -1 : 1;
	return (a->dst > b->dst) - (a->dst < b->dst);
}

/* The first of steps x 10^k at or above x: the top of the colour scale. */
static double nice_ceiling(double x)
{
	/* Each divides by 4 into round numbers, for the legend's ticks. */
	static const double steps[] = { 1.0, 1.2, 1.6, 2.0, 2.4, 3.2, 4.0, 6.0, 8.0, 10.0 };
	double base;

	if (x <= 0)
		return 1.0;
	base = pow(10.0, floor(log10(x)));
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		if (steps[i] * base >= x * 0.999)
			return steps[i] * base;
	}
	return 10.0 * base;
}

static void collect_pairs(struct picture *p)
{
	const struct report_set *set = p->set;
	size_t n = 0;
	double max = 0;

	for (size_t i = 0; i < set->nhops; i++) {
		double gbs = set->figures[i].wire_gbs;

		p->pairs[n++] = (struct pair){ p->axis.row_of[p->axis.hop_src[i]],
					       p->axis.row_of[p->axis.hop_dst[i]], gbs, 1,
					       report_is_culprit(set, i) };
		max = gbs > max ? gbs : max;
	}
	qsort(p->pairs, n, sizeof(*p->pairs), cmp_pair);
	p->npairs = 0;
	for (size_t i = 0; i < n; i++) {
		struct pair *last = p->npairs ? &p->pairs[p->npairs - 1] : NULL;

		if (last && !cmp_pair(last, &p->pairs[i])) {
			last->gbs = p->pairs[i].gbs < last->gbs ? p->pairs[i].gbs : last->gbs;
			last->hops++;
			last->culprit |= p->pairs[i].culprit;
		} else {
			p->pairs[p->npairs++] = p->pairs[i];
		}
	}
	p->scale_max = nice_ceiling(max);
}

#define SVG_MORE_FINDINGS 3 /* findings beyond the verdict drawn under its reason */

/* The verdict is the costliest finding; the others are named under it, never hidden. */
static void other_findings(const struct picture *p, double y, FILE *out)
{
	const struct fl_verdict *v = &p->set->verdict;
	char line[2 * FL_NODE_NAME_LEN + 2 * FL_DEV_NAME_LEN + 96], culprit[sizeof(line) - 80];

	for (int i = 1; i < v->nfindings && i <= SVG_MORE_FINDINGS; i++, y += 18) {
		const struct fl_finding *f = &v->findings[i];

		fl_finding_culprit(f, p->set->figures, culprit, sizeof(culprit));
		snprintf(line, sizeof(line),
			 "also: %s %s (ratio %.2f, costs %.0f%% of the ring's time)",
			 fl_verdict_kind_name(f->kind), culprit, f->ratio, 100.0 * f->cost);
		fprintf(out, "<text x=\"30\" y=\"%.0f\" font-size=\"14\" fill=\"%s\">", y, BAD);
		tool_svg_text(out, line);
		fputs("</text>\n", out);
	}
}

/* The model's confidence in the verdict and what it ranked next: "confidence 0.97; next: ...". */
static void confidence(const struct fl_verdict *v, FILE *out)
{
	const struct fl_runner_up *r = &v->runner_up;

	fprintf(out,
		"<text x=\"30\" y=\"62\" font-size=\"13\" fill=\"#555\">confidence %.2f; next: %s",
		v->confidence, fl_verdict_kind_name(r->kind));
	if (r->culprit[0]) {
		fputs(" ", out);
		tool_svg_text(out, r->culprit);
	}
	fprintf(out, ", %.2f</text>\n", r->confidence);
}

static void title(const struct picture *p, FILE *out)
{
	const struct fl_verdict *v = &p->set->verdict;
	const char *reason = v->reason;
	size_t cut = strlen(reason);
	double y = 82;

	fprintf(out,
		"<text x=\"30\" y=\"42\" font-size=\"24\" font-weight=\"bold\" fill=\"%s\">"
		"fabriclab verdict: %s",
		v->kind == FL_VERDICT_NONE ? GOOD : BAD, fl_verdict_kind_name(v->kind));
	if (v->kind == FL_VERDICT_DEVICE) {
		fputs(" ", out);
		tool_svg_text(out, v->node);
		fputs("/", out);
		tool_svg_text(out, v->dev);
	} else if (v->kind == FL_VERDICT_RAIL) {
		fputs(" ", out);
		tool_svg_text(out, v->dev);
	} else if (*v->node) {
		fputs(" ", out);
		tool_svg_text(out, v->node);
	}
	if (v->kind != FL_VERDICT_NONE)
		fprintf(out, " (ratio %.2f, ring about %.2fx faster without it)", v->ratio,
			v->speedup);
	fputs("</text>\n", out);
	confidence(v, out);
	/* The reason on up to two lines, broken at a space. */
	while (*reason) {
		char line[160];

		cut = strlen(reason);
		if (cut > REASON_LINE) {
			for (cut = REASON_LINE; cut > 0 && reason[cut] != ' '; cut--)
				;
			cut = cut ? cut : REASON_LINE;
		}
		snprintf(line, sizeof(line), "%.*s", (int)cut, reason);
		fprintf(out, "<text x=\"30\" y=\"%.0f\" font-size=\"15\" fill=\"#333\">", y);
		tool_svg_text(out, line);
		fputs("</text>\n", out);
		reason += cut + (reason[cut] == ' ');
		y += 20;
	}
	other_findings(p, y, out);
}

static size_t label_step(size_t n)
{
	return n > MAX_LABELS ? (n + MAX_LABELS - 1) / MAX_LABELS : 1;
}

/* The most nodes one row holds. */
static size_t block_size(const struct picture *p)
{
	size_t most = 1;

	for (size_t i = 0; i < p->nnodes; i++)
		most = p->rows[i].count > most ? p->rows[i].count : most;
	return most;
}

/* A row label left of the map and one above it; alone rows (a fleet's culprits) in bold. */
static void axis_labels(const struct picture *p, size_t i, double cell, size_t step, double font,
			FILE *out)
{
	double c = (double)i * cell + cell / 2;
	const char *bold = p->rows[i].alone ? " font-weight=\"bold\" fill=\"" BAD "\"" : "";

	fprintf(out,
		"<text x=\"%.1f\" y=\"%.1f\" font-size=\"%.0f\" text-anchor=\"end\" "
		"dominant-baseline=\"middle\"%s>",
		MAP_X - 6, MAP_Y + c, font, bold);
	tool_svg_text(out, p->rows[i].name);
	fputs("</text>\n", out);
	/* Blocks' long names stand once, left: above, they would climb into the verdict. */
	if (p->axis.aggregated && !p->rows[i].alone)
		return;
	fprintf(out,
		"<text x=\"%.1f\" y=\"%.1f\" font-size=\"%.0f\" "
		"dominant-baseline=\"middle\" transform=\"rotate(%d %.1f %.1f)\"%s>",
		MAP_X + c, MAP_Y - 6, font, cell * (double)step < 20 ? -90 : -45, MAP_X + c,
		MAP_Y - 6, bold);
	tool_svg_text(out, p->rows[i].name);
	fputs("</text>\n", out);
}

/* Thinned labels give way to the alone rows' (which are always labelled) and their neighbours. */
static bool axis_labelled(const struct picture *p, size_t i, size_t step)
{
	if (p->rows[i].alone)
		return true;
	if (i % step)
		return false;
	for (size_t k = i > 0 ? i - 1 : 0; k <= i + 1 && k < p->nnodes; k++) {
		if (p->rows[k].alone)
			return false;
	}
	return true;
}

static void heatmap_axes(const struct picture *p, double cell, FILE *out)
{
	size_t step = label_step(p->nnodes);
	double font = cell * (double)step * 0.7;

	font = font > 12 ? 12 : font < 8 ? 8 : font;
	/* a block's name ("node00000..00511") must fit left of the map */
	font = p->axis.aggregated && font > 9 ? 9 : font;
	fprintf(out,
		"<text x=\"%.0f\" y=\"%.0f\" font-size=\"16\" font-weight=\"bold\">"
		"Wire GB/s, %s (slowest hop of each pair)</text>\n",
		MAP_X, MAP_Y - 85, p->axis.aggregated ? "blocks of nodes" : "node x node");
	fprintf(out,
		"<text x=\"%.0f\" y=\"%.0f\" font-size=\"13\" text-anchor=\"middle\">"
		"destination node</text>\n",
		MAP_X + MAP_SIDE / 2, MAP_Y - 60);
	fprintf(out,
		"<text x=\"%.0f\" y=\"%.0f\" font-size=\"13\" text-anchor=\"middle\" "
		"transform=\"rotate(-90 %.0f %.0f)\">source node</text>\n",
		MAP_X - 80, MAP_Y + MAP_SIDE / 2, MAP_X - 80, MAP_Y + MAP_SIDE / 2);
	for (size_t i = 0; i < p->nnodes; i++) {
		if (axis_labelled(p, i, step))
			axis_labels(p, i, cell, step, font, out);
	}
}

static void heatmap_cells(const struct picture *p, double cell, FILE *out)
{
	fprintf(out,
		"<rect x=\"%.0f\" y=\"%.0f\" width=\"%.0f\" height=\"%.0f\" fill=\"#eeeeee\"/>\n",
		MAP_X, MAP_Y, MAP_SIDE, MAP_SIDE);
	for (size_t i = 0; i < p->npairs; i++) {
		const struct pair *q = &p->pairs[i];
		char fill[8];

		tool_svg_colour(q->gbs / p->scale_max, fill, sizeof(fill));
		fprintf(out,
			"<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" "
			"fill=\"%s\"%s><title>",
			MAP_X + (double)q->dst * cell, MAP_Y + (double)q->src * cell, cell, cell,
			fill, q->culprit ? " stroke=\"" BAD "\" stroke-width=\"3\"" : "");
		tool_svg_text(out, p->rows[q->src].name);
		fputs(" -&gt; ", out);
		tool_svg_text(out, p->rows[q->dst].name);
		fprintf(out, ": %.2f GB/s (%zu hop%s)</title></rect>\n", q->gbs, q->hops,
			q->hops == 1 ? "" : "s");
		if (cell >= 34)
			fprintf(out,
				"<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" "
				"text-anchor=\"middle\" dominant-baseline=\"middle\" "
				"fill=\"%s\">%.1f</text>\n",
				MAP_X + ((double)q->dst + 0.5) * cell,
				MAP_Y + ((double)q->src + 0.5) * cell,
				q->gbs / p->scale_max > 0.6 ? "#000" : "#fff", q->gbs);
	}
}

static void legend(const struct picture *p, FILE *out)
{
	double y = MAP_Y + MAP_SIDE + 30;

	tool_svg_scale(out, MAP_X, y, MAP_SIDE, p->scale_max, 6);
	fprintf(out,
		"<text x=\"%.0f\" y=\"%.0f\" font-size=\"12\">GB/s (grey: no traffic; red "
		"frame: culprit)</text>\n",
		MAP_X, y + 50);
	if (p->axis.aggregated)
		fprintf(out,
			"<text x=\"%.0f\" y=\"%.0f\" font-size=\"12\" fill=\"#666\">%zu nodes in "
			"%zu rows: blocks of up to %zu neighbours in name order; the culprits and "
			"their peers alone (bold)</text>\n",
			MAP_X, y + 66, p->axis.nnodes, p->nnodes, block_size(p));
}

/*
 * Row i's place around the ring, as a turn from the top: one slot per row, but
 * RING_ALONE_SLOTS for a row alone in a fleet's picture, so that the culprit
 * and its neighbours, adjacent in name order, get room for their labels.
 */
#define RING_ALONE_SLOTS 4
static double ring_turn(const struct picture *p, size_t i)
{
	size_t before = 0, total = 0;

	for (size_t k = 0; k < p->nnodes; k++) {
		size_t slots = p->rows[k].alone ? RING_ALONE_SLOTS : 1;

		before += k < i ? slots : 0;
		total += slots;
		if (k == i)
			before += (slots - 1) / 2;
	}
	return (double)before / (double)total;
}

static void node_xy(const struct picture *p, size_t i, double radius, double *x, double *y)
{
	double a = -M_PI / 2 + 2 * M_PI * (p->axis.aggregated ? ring_turn(p, i)
							       : (double)i / (double)p->nnodes);

	*x = RING_X + radius * cos(a);
	*y = RING_Y + radius * sin(a);
}

static double node_radius(const struct picture *p)
{
	double r = RING_R * M_PI / (double)p->nnodes * 0.5;

	return r > 16 ? 16 : r < 3 ? 3 : r;
}

/* One arrow, shifted to its right so that a -> b and b -> a sit side by side. */
static void arrow(const struct picture *p, const struct pair *q, double r, FILE *out)
{
	double x1, y1, x2, y2, dx, dy, len, nx, ny, shift = r * 0.45;

	node_xy(p, q->src, RING_R, &x1, &y1);
	node_xy(p, q->dst, RING_R, &x2, &y2);
	dx = x2 - x1;
	dy = y2 - y1;
	len = sqrt(dx * dx + dy * dy);
	if (len < 2 * r + 1) {
		/* Neighbours too close for an arrow: a culprit still shows, as a red mark. */
		if (q->culprit)
			fprintf(out, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"" BAD "\"/>\n",
				(x1 + x2) / 2, (y1 + y2) / 2);
		return;
	}
	dx /= len;
	dy /= len;
	nx = -dy * shift;
	ny = dx * shift;
	fprintf(out,
		"<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
		"stroke-width=\"%s\" marker-end=\"url(#%s)\"/>\n",
		x1 + dx * r + nx, y1 + dy * r + ny, x2 - dx * (r + 2) + nx, y2 - dy * (r + 2) + ny,
		q->culprit ? BAD : "#607080", q->culprit ? "3.5" : "1.8",
		q->culprit ? "head-bad" : "head");
	if (p->npairs <= 32 || q->culprit)
		fprintf(out,
			"<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\" text-anchor=\"middle\" "
			"dominant-baseline=\"middle\" fill=\"%s\"%s>%.2f</text>\n",
			(x1 + x2) / 2 - dy * (shift + 24), (y1 + y2) / 2 + dx * (shift + 24),
			q->culprit ? BAD : "#222", q->culprit ? " font-weight=\"bold\"" : "",
			q->gbs);
}

#define RING_ALL_NODES 64 /* beyond this, only the named node and some labels are drawn */
#define RING_MAX_LABELS 16

/* Distance between two positions on the circle, in nodes. */
static size_t around(const struct picture *p, size_t a, size_t b)
{
	size_t d = a > b ? a - b : b - a;

	return d < p->nnodes - d ? d : p->nnodes - d;
}

static bool labelled(const struct picture *p, size_t i, size_t named)
{
	size_t n = p->nnodes;
	size_t step = n > RING_ALL_NODES ? (n + RING_MAX_LABELS - 1) / RING_MAX_LABELS : 1;

	/* a fleet's blocks: a few labels beside the rows alone, which are all labelled */
	if (p->axis.aggregated)
		step = (n + RING_MAX_LABELS / 2 - 1) / (RING_MAX_LABELS / 2);

	if (i == named || step == 1 || p->rows[i].alone)
		return true;
	/* Thinned labels keep clear of the named node's and of the first one's. */
	return i % step == 0 && (named >= n || around(p, i, named) >= step) &&
	       (i == 0 || around(p, i, 0) >= step);
}

static void ring_node(const struct picture *p, size_t i, double r, bool named, FILE *out)
{
	double x, y;

	node_xy(p, i, RING_R, &x, &y);
	if (named || p->rows[i].alone)
		fprintf(out,
			"<circle cx=\"%.1f\" cy=\"%.1f\" r=\"%.1f\" fill=\"#f6c6c6\" "
			"stroke=\"" BAD "\" stroke-width=\"3\"/>\n",
			x, y, r > 6 ? r : named ? 6 : 4);
	else if (p->nnodes <= RING_ALL_NODES)
		fprintf(out,
			"<circle cx=\"%.1f\" cy=\"%.1f\" r=\"%.1f\" fill=\"#dde6f0\" "
			"stroke=\"#34495e\" stroke-width=\"1.5\"/>\n",
			x, y, r);
}

/* Labels left of the centre end at their node, those right of it start there. */
static const char *anchor(double x)
{
	if (x < RING_X - 5)
		return "end";
	return x > RING_X + 5 ? "start" : "middle";
}

static void ring_nodes(const struct picture *p, double r, FILE *out)
{
	size_t named = p->nnodes;

	for (size_t i = 0; i < p->nnodes; i++) {
		if (p->rows[i].count == 1 && !strcmp(p->rows[i].name, p->set->verdict.node))
			named = i;
	}
	for (size_t i = 0; i < p->nnodes; i++) {
		double lx, ly;

		ring_node(p, i, r, i == named, out);
		if (!labelled(p, i, named))
			continue;
		node_xy(p, i, RING_R + r + 16, &lx, &ly);
		fprintf(out,
			"<text x=\"%.1f\" y=\"%.1f\" font-size=\"13\" text-anchor=\"%s\" "
			"dominant-baseline=\"middle\"%s>",
			lx, ly, anchor(lx),
			i == named || p->rows[i].alone ? " fill=\"" BAD "\" font-weight=\"bold\"" : "");
		tool_svg_text(out, p->rows[i].name);
		fputs("</text>\n", out);
	}
}

static void ring(const struct picture *p, FILE *out)
{
	double r = node_radius(p);

	fprintf(out,
		"<text x=\"%.0f\" y=\"%.0f\" font-size=\"16\" font-weight=\"bold\" "
		"text-anchor=\"middle\">Hops as arrows, wire GB/s (culprit in red)</text>\n",
		RING_X, MAP_Y - 85);
	fputs("<defs>\n", out);
	fputs("<marker id=\"head\" viewBox=\"0 0 10 10\" refX=\"8\" refY=\"5\" markerWidth=\"6\" "
	      "markerHeight=\"6\" orient=\"auto\"><path d=\"M0,0 L10,5 L0,10 z\" "
	      "fill=\"#607080\"/></marker>\n",
	      out);
	fputs("<marker id=\"head-bad\" viewBox=\"0 0 10 10\" refX=\"8\" refY=\"5\" "
	      "markerWidth=\"5\" markerHeight=\"5\" orient=\"auto\"><path d=\"M0,0 L10,5 L0,10 z\" "
	      "fill=\"" BAD "\"/></marker>\n</defs>\n",
	      out);
	if (p->nnodes > RING_ALL_NODES)
		fprintf(out,
			"<circle cx=\"%.0f\" cy=\"%.0f\" r=\"%.0f\" fill=\"none\" "
			"stroke=\"#607080\" stroke-width=\"2\"/>\n<text x=\"%.0f\" y=\"%.0f\" "
			"font-size=\"12\" fill=\"#666\" text-anchor=\"middle\">%zu %s: too many "
			"to draw each hop; the culprit's in red</text>\n",
			RING_X, RING_Y, RING_R, RING_X, MAP_Y - 62, p->nnodes,
			p->axis.aggregated ? "rows" : "nodes");
	/* Culprits last, so they are drawn on top. */
	for (int culprit = 0; culprit <= 1; culprit++) {
		for (size_t i = 0; i < p->npairs; i++) {
			if (p->pairs[i].culprit == culprit)
				arrow(p, &p->pairs[i], r, out);
		}
	}
	ring_nodes(p, r, out);
}

static void footer(const struct picture *p, FILE *out)
{
	fprintf(out,
		"<text x=\"30\" y=\"%d\" font-size=\"12\" fill=\"#666\">fabriclab %s: %zu "
		"hops between %zu nodes; wire rate from the slower end for sockets, from the "
		"sender for verbs</text>\n",
		HEIGHT - 16, fl_version(), p->set->nhops, p->axis.nnodes);
}

int report_emit_svg(const struct report_set *set, FILE *out)
{
	struct picture p = { .set = set, .scale_max = 1.0 };
	double cell;
	int err = report_svg_axis_build(set, &p.axis);

	if (err)
		return err;
	p.rows = p.axis.rows;
	p.nnodes = p.axis.nrows;
	p.pairs = malloc((set->nhops + 1) * sizeof(*p.pairs));
	if (!p.pairs) {
		report_svg_axis_free(&p.axis);
		return fl_fail(FL_ERR_SYSTEM, "out of memory drawing %zu hops", set->nhops);
	}
	collect_pairs(&p);
	cell = MAP_SIDE / (double)(p.nnodes ? p.nnodes : 1);
	tool_svg_begin(out, WIDTH, HEIGHT);
	title(&p, out);
	heatmap_axes(&p, cell, out);
	heatmap_cells(&p, cell, out);
	legend(&p, out);
	ring(&p, out);
	footer(&p, out);
	fputs("</svg>\n", out);
	report_svg_axis_free(&p.axis);
	free(p.pairs);
	return ferror(out) ? fl_fail(FL_ERR_SYSTEM, "cannot write the SVG") : 0;
}

int report_write_svg(const struct report_set *set, const char *path)
{
	return report_write_atomic(path, report_emit_svg, set);
}
