/*
 * Each hop's wire bandwidth over time: the hop's wire intervals (from the
 * view its verdict judges) cut into windows. A request's bytes count in a
 * window in proportion to how much of its wire interval lies there, and the
 * wire time of a window is the union of the intervals inside it, so a window's
 * rate is what the report's wire_gbs would be for that stretch of the run.
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "plugin/base/error.h"
#include "trace.h"

#define MAX_WINDOWS 100000

struct window {
	double bytes;
	uint64_t wire_ns;
};

struct hop_windows {
	const struct report_hop *hop;
	bool is_send;
	uint32_t hop_id;
	struct window *w; /* nwindows */
};

struct windows {
	uint64_t t0, width;
	size_t nwindows, nhops;
	struct hop_windows *hops;
};

static bool same_key(const struct report_hop_key *a, const struct report_hop_key *b)
{
	return !strcmp(a->src_node, b->src_node) && !strcmp(a->src_dev, b->src_dev) &&
	       !strcmp(a->dst_node, b->dst_node) && !strcmp(a->dst_dev, b->dst_dev);
}

static uint64_t overlap(uint64_t a0, uint64_t a1, uint64_t b0, uint64_t b1)
{
	uint64_t s = a0 > b0 ? a0 : b0, e = a1 < b1 ? a1 : b1;

	return e > s ? e - s : 0;
}

/* Adds [start, end) to the windows it touches: as wire time, and bytes pro rata. */
static void spread(const struct windows *ws, struct window *w, uint64_t start, uint64_t end,
		   double bytes, int as_time)
{
	size_t first = (start - ws->t0) / ws->width, last = (end - ws->t0) / ws->width;

	for (size_t k = first; k <= last && k < ws->nwindows; k++) {
		uint64_t w0 = ws->t0 + k * ws->width;
		uint64_t o = overlap(start, end, w0, w0 + ws->width);

		if (as_time)
			w[k].wire_ns += o;
		else if (end > start)
			w[k].bytes += bytes * (double)o / (double)(end - start);
		else if (k == first)
			w[k].bytes += bytes;
	}
}

/* The spans are sorted (trace_spans_union ran on them): their union, segment by segment. */
static void add_spans(const struct windows *ws, struct window *w, const struct trace_spans *s)
{
	uint64_t start = 0, end = 0;

	for (size_t i = 0; i < s->n; i++) {
		spread(ws, w, s->v[i].start, s->v[i].end, (double)s->v[i].bytes, 0);
		if (i && s->v[i].start <= end) {
			end = s->v[i].end > end ? s->v[i].end : end;
			continue;
		}
		if (i)
			spread(ws, w, start, end, 0, 1);
		start = s->v[i].start;
		end = s->v[i].end;
	}
	if (s->n)
		spread(ws, w, start, end, 0, 1);
}

static void span_range(const struct trace_model *m, uint64_t *lo, uint64_t *hi)
{
	*lo = UINT64_MAX;
	*hi = 0;
	for (size_t p = 0; p < m->nprocs; p++)
		for (size_t h = 0; h < m->procs[p].nhops; h++) {
			const struct trace_spans *s = &m->procs[p].hops[h].wire;

			for (size_t i = 0; i < s->n; i++) {
				*lo = s->v[i].start < *lo ? s->v[i].start : *lo;
				*hi = s->v[i].end > *hi ? s->v[i].end : *hi;
			}
		}
}

/* Every process's spans of the hop's judged view (several when processes share a device). */
static void add_views(const struct trace_model *m, const struct windows *ws,
		      struct hop_windows *hw)
{
	for (size_t p = 0; p < m->nprocs; p++) {
		for (size_t h = 0; h < m->procs[p].nhops; h++) {
			const struct trace_hop *th = &m->procs[p].hops[h];

			if (th->is_send != hw->is_send || !same_key(&th->key, &hw->hop->key))
				continue;
			hw->hop_id = th->hop_id;
			add_spans(ws, hw->w, &th->wire);
		}
	}
}

static int compute(const struct trace_model *m, const struct report_set *set, uint64_t width,
		   struct windows *ws)
{
	uint64_t hi;

	memset(ws, 0, sizeof(*ws));
	ws->width = width;
	span_range(m, &ws->t0, &hi);
	ws->nwindows = hi > ws->t0 ? (hi - ws->t0) / width + 1 : 0;
	if (ws->nwindows > MAX_WINDOWS)
		return fl_fail(FL_ERR_USAGE, "%zu windows of %.6f s: give a wider --window",
			       ws->nwindows, (double)width / 1e9);
	ws->hops = calloc(set->nhops + 1, sizeof(*ws->hops));
	if (!ws->hops)
		return fl_fail(FL_ERR_SYSTEM, "out of memory");
	for (size_t i = 0; i < set->nhops; i++) {
		struct hop_windows *hw = &ws->hops[ws->nhops++];

		hw->hop = &set->hops[i];
		hw->is_send = report_wire_view(hw->hop) == &hw->hop->send;
		hw->w = calloc(ws->nwindows + 1, sizeof(*hw->w));
		if (!hw->w)
			return fl_fail(FL_ERR_SYSTEM, "out of memory");
		add_views(m, ws, hw);
	}
	return 0;
}

static void release(struct windows *ws)
{
	for (size_t i = 0; i < ws->nhops; i++)
		free(ws->hops[i].w);
	free(ws->hops);
}

static double gbs(const struct window *w)
{
	return w->wire_ns ? w->bytes / (double)w->wire_ns : 0.0;
}

static void print_legend(const struct windows *ws, FILE *out)
{
	fprintf(out, "wire bandwidth per hop (GB/s over the wire time in each %.3f s window; "
		     "- no wire time)\n",
		(double)ws->width / 1e9);
	for (size_t i = 0; i < ws->nhops; i++) {
		const struct report_hop_key *k = &ws->hops[i].hop->key;

		fprintf(out, "  h%-3zu %s/%s -> %s/%s (%s view, hop_id %u)\n", i, k->src_node,
			k->src_dev, k->dst_node, k->dst_dev, ws->hops[i].is_send ? "send" : "recv",
			ws->hops[i].hop_id);
	}
	fprintf(out, "%10s", "t (s)");
	for (size_t i = 0; i < ws->nhops; i++)
		fprintf(out, " %8s%-zu", "h", i);
	fputc('\n', out);
}

int trace_print_windows(const struct trace_model *m, const struct report_set *set,
			uint64_t window_ns, FILE *out)
{
	struct windows ws;
	int rc = compute(m, set, window_ns, &ws);

	if (!rc) {
		print_legend(&ws, out);
		for (size_t k = 0; k < ws.nwindows; k++) {
			fprintf(out, "%10.3f", (double)(k * window_ns) / 1e9);
			for (size_t i = 0; i < ws.nhops; i++) {
				const struct window *w = &ws.hops[i].w[k];

				if (w->wire_ns)
					fprintf(out, " %9.3f", gbs(w));
				else
					fprintf(out, " %9s", "-");
			}
			fputc('\n', out);
		}
		fputc('\n', out);
	}
	release(&ws);
	return rc;
}

static json_t *window_json(const struct windows *ws, size_t n, const struct window *x)
{
	return json_pack("{s:f, s:f, s:f, s:f}", "start_seconds", (double)(n * ws->width) / 1e9,
			 "bytes", x->bytes, "wire_seconds", (double)x->wire_ns / 1e9, "wire_gbs",
			 gbs(x));
}

static json_t *windows_json(const struct windows *ws)
{
	json_t *hops = json_array();

	for (size_t i = 0; i < ws->nhops; i++) {
		const struct hop_windows *hw = &ws->hops[i];
		const struct report_hop_key *k = &hw->hop->key;
		json_t *w = json_array();

		for (size_t n = 0; n < ws->nwindows; n++)
			json_array_append_new(w, window_json(ws, n, &hw->w[n]));
		json_array_append_new(hops, json_pack("{s:s, s:s, s:s, s:s, s:s, s:I, s:o}",
						      "src_node", k->src_node, "src_dev",
						      k->src_dev, "dst_node", k->dst_node,
						      "dst_dev", k->dst_dev, "view",
						      hw->is_send ? "send" : "recv", "hop_id",
						      (json_int_t)hw->hop_id, "windows", w));
	}
	return hops;
}

/* The merged report's JSON, unchanged, with one more member: "trace". */
int trace_print_json(const struct trace_model *m, const struct report_set *set,
		     uint64_t window_ns, FILE *out)
{
	char *text = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&text, &len);
	json_t *root = NULL;
	struct windows ws;
	int rc = mem ? report_print_json(set, mem) : fl_fail(FL_ERR_SYSTEM, "out of memory");

	if (mem)
		fclose(mem);
	if (!rc && !(root = json_loads(text, 0, NULL)))
		rc = fl_fail(FL_ERR_SYSTEM, "cannot re-read the merged report");
	free(text);
	if (!rc && (rc = compute(m, set, window_ns, &ws)))
		release(&ws);
	if (!rc) {
		json_object_set_new(root, "trace",
				    json_pack("{s:I, s:I, s:I, s:f, s:o, s:o}", "events",
					      (json_int_t)m->events, "processes",
					      (json_int_t)set->nfiles, "orphan_requests",
					      (json_int_t)m->orphans, "window_seconds",
					      (double)window_ns / 1e9, "hops", windows_json(&ws),
					      "live", (json_t *)trace_live_json(m)));
		release(&ws);
		if (json_dumpf(root, out, JSON_INDENT(1) | JSON_REAL_PRECISION(6)) ||
		    fputc('\n', out) == EOF || ferror(out))
			rc = fl_fail(FL_ERR_SYSTEM, "cannot write the JSON report");
	}
	json_decref(root);
	return rc;
}
