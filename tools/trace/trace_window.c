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

struct hop_windows {
	const struct report_hop *hop;
	bool is_send;
	uint32_t hop_id;
	struct trace_window *w; /* nwindows */
};

struct windows {
	uint64_t t0, width;
	size_t nwindows, nhops;
	struct hop_windows *hops;
};

static bool same_key(const struct report_view_key *a, const struct report_hop_key *b)
{
	return !strcmp(a->src_node, b->src_node) && !strcmp(a->src_dev, b->src_dev) &&
	       !strcmp(a->dst_node, b->dst_node) && !strcmp(a->dst_dev, b->dst_dev);
}

static uint64_t overlap(uint64_t a0, uint64_t a1, uint64_t b0, uint64_t b1)
{
	uint64_t s = a0 > b0 ? a0 : b0, e = a1 < b1 ? a1 : b1;

	return e > s ? e - s : 0;
}

enum spread_as { AS_BYTES, AS_WIRE, AS_WAIT };

/* Adds [start, end) to the windows it touches: as wire or wait time, or bytes pro rata. */
static void spread(const struct windows *ws, struct trace_window *w, uint64_t start, uint64_t end,
		   double bytes, enum spread_as as)
{
	size_t first, last;

	if (end < ws->t0)
		return;
	start = start < ws->t0 ? ws->t0 : start;
	first = (start - ws->t0) / ws->width;
	last = (end - ws->t0) / ws->width;
	for (size_t k = first; k <= last && k < ws->nwindows; k++) {
		uint64_t w0 = ws->t0 + k * ws->width;
		uint64_t o = overlap(start, end, w0, w0 + ws->width);

		if (as == AS_WIRE)
			w[k].wire_ns += o;
		else if (as == AS_WAIT)
			w[k].wait_ns += o;
		else if (end > start)
			w[k].bytes += bytes * (double)o / (double)(end - start);
		else if (k == first)
			w[k].bytes += bytes;
	}
}

/* The spans are sorted (trace_spans_union ran on them): their union, segment by segment. */
static void add_spans(const struct windows *ws, struct trace_window *w, const struct trace_spans *s)
{
	uint64_t start = 0, end = 0;

	for (size_t i = 0; i < s->n; i++) {
		spread(ws, w, s->v[i].start, s->v[i].end, (double)s->v[i].bytes, AS_BYTES);
		if (i && s->v[i].start <= end) {
			end = s->v[i].end > end ? s->v[i].end : end;
			continue;
		}
		if (i)
			spread(ws, w, start, end, 0, AS_WIRE);
		start = s->v[i].start;
		end = s->v[i].end;
	}
	if (s->n)
		spread(ws, w, start, end, 0, AS_WIRE);
}

void trace_window_hop(const struct trace_hop *h, uint64_t t0, uint64_t width, size_t n,
		      struct trace_window *w)
{
	struct windows ws = { .t0 = t0, .width = width, .nwindows = n };

	add_spans(&ws, w, &h->wire);
	for (size_t i = 0; i < h->wait.n; i++)
		spread(&ws, w, h->wait.v[i].start, h->wait.v[i].end, 0, AS_WAIT);
}

uint64_t trace_window_lost(const struct trace_model *m, uint64_t start, uint64_t width)
{
	uint64_t lost = 0;

	for (size_t i = 0; i < m->ndiscards; i++) {
		const struct trace_discard *d = &m->discards[i];

		/* Lost where the trace cannot say when: every window lacks them. */
		if (!d->end_ns || (d->start_ns < start + width && d->end_ns >= start))
			lost += d->events + d->packets;
	}
	return lost;
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
			trace_window_hop(th, ws->t0, ws->width, ws->nwindows, hw->w);
		}
	}
}

void trace_window_range(const struct trace_model *m, uint64_t width, uint64_t *t0, size_t *n)
{
	uint64_t hi;

	span_range(m, t0, &hi);
	*n = hi > *t0 ? (hi - *t0) / width + 1 : 0;
	if (!*n)
		*t0 = 0;
}

static int compute(const struct trace_model *m, const struct report_set *set, uint64_t width,
		   struct windows *ws)
{
	memset(ws, 0, sizeof(*ws));
	ws->width = width;
	trace_window_range(m, width, &ws->t0, &ws->nwindows);
	if (ws->nwindows > MAX_WINDOWS)
		return fl_fail(FL_ERR_USAGE, "%zu windows of %.6f s: give a wider --window",
			       ws->nwindows, (double)width / 1e9);
	ws->hops = calloc(set->nhops + 1, sizeof(*ws->hops));
	if (!ws->hops)
		return fl_fail(FL_ERR_SYSTEM, "out of memory");
	for (size_t i = 0; i < set->nhops; i++) {
		struct hop_windows *hw = &ws->hops[ws->nhops++];

		hw->hop = &set->hops[i];
		hw->is_send = report_wire_view(hw->hop) == hw->hop->send;
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

static double gbs(const struct trace_window *w)
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

/* The windows whose figures lack events LTTng discarded, said once under the table. */
static void print_lost(const struct trace_model *m, const struct windows *ws, FILE *out)
{
	size_t marked = 0;

	for (size_t k = 0; k < ws->nwindows; k++)
		marked += trace_window_lost(m, ws->t0 + k * ws->width, ws->width) != 0;
	if (marked)
		fprintf(out, "! %zu of %zu windows lack data: LTTng discarded events in them "
			     "(their figures count only the events it kept)\n",
			marked, ws->nwindows);
}

int trace_print_windows(const struct trace_model *m, const struct report_set *set,
			uint64_t window_ns, FILE *out)
{
	struct windows ws;
	int rc = compute(m, set, window_ns, &ws);

	if (!rc) {
		print_legend(&ws, out);
		for (size_t k = 0; k < ws.nwindows; k++) {
			uint64_t lost = trace_window_lost(m, ws.t0 + k * window_ns, window_ns);

			fprintf(out, "%10.3f", (double)(k * window_ns) / 1e9);
			for (size_t i = 0; i < ws.nhops; i++) {
				const struct trace_window *w = &ws.hops[i].w[k];

				if (w->wire_ns)
					fprintf(out, " %9.3f", gbs(w));
				else
					fprintf(out, " %9s", "-");
			}
			fputs(lost ? "  !\n" : "\n", out);
		}
		print_lost(m, &ws, out);
		fputc('\n', out);
	}
	release(&ws);
	return rc;
}

static json_t *window_json(const struct windows *ws, size_t n, const struct trace_window *x,
			   uint64_t lost)
{
	return json_pack("{s:f, s:f, s:f, s:f, s:f, s:I}", "start_seconds",
			 (double)(n * ws->width) / 1e9, "bytes", x->bytes, "wire_seconds",
			 (double)x->wire_ns / 1e9, "wire_gbs", gbs(x), "peer_wait_seconds",
			 (double)x->wait_ns / 1e9, "discarded_events", (json_int_t)lost);
}

static json_t *windows_json(const struct trace_model *m, const struct windows *ws)
{
	json_t *hops = json_array();

	for (size_t i = 0; i < ws->nhops; i++) {
		const struct hop_windows *hw = &ws->hops[i];
		const struct report_hop_key *k = &hw->hop->key;
		json_t *w = json_array();

		for (size_t n = 0; n < ws->nwindows; n++)
			json_array_append_new(
				w, window_json(ws, n, &hw->w[n],
					       trace_window_lost(m, ws->t0 + n * ws->width,
								 ws->width)));
		json_array_append_new(hops, json_pack("{s:s, s:s, s:s, s:s, s:s, s:I, s:o}",
						      "src_node", k->src_node, "src_dev",
						      k->src_dev, "dst_node", k->dst_node,
						      "dst_dev", k->dst_dev, "view",
						      hw->is_send ? "send" : "recv", "hop_id",
						      (json_int_t)hw->hop_id, "windows", w));
	}
	return hops;
}

/* Each discarded-events message: where, how many, when (seconds from the windows' start). */
static json_t *trace_discards_json(const struct trace_model *m, uint64_t t0)
{
	json_t *all = json_array();

	for (size_t i = 0; i < m->ndiscards; i++) {
		const struct trace_discard *d = &m->discards[i];
		json_t *from = d->end_ns ? json_real(((double)d->start_ns - (double)t0) / 1e9)
					 : json_null();
		json_t *to = d->end_ns ? json_real(((double)d->end_ns - (double)t0) / 1e9)
				       : json_null();

		json_array_append_new(all, json_pack("{s:s, s:I, s:I, s:o, s:o}", "host", d->host,
						     "events", (json_int_t)d->events, "packets",
						     (json_int_t)d->packets, "from_seconds", from,
						     "to_seconds", to));
	}
	return all;
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
				    json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:o, s:f, s:o, s:o}",
					      "events", (json_int_t)m->events, "processes",
					      (json_int_t)set->nfiles, "skipped_files",
					      (json_int_t)m->skipped_files, "orphan_requests",
					      (json_int_t)m->orphans, "discarded_events",
					      (json_int_t)m->discarded_events, "discarded_packets",
					      (json_int_t)m->discarded_packets, "discards",
					      trace_discards_json(m, ws.t0), "window_seconds",
					      (double)window_ns / 1e9, "hops", windows_json(m, &ws),
					      "live", (json_t *)trace_live_json(m)));
		release(&ws);
		if (json_dumpf(root, out, JSON_INDENT(1) | JSON_REAL_PRECISION(6)) ||
		    fputc('\n', out) == EOF || ferror(out))
			rc = fl_fail(FL_ERR_SYSTEM, "cannot write the JSON report");
	}
	json_decref(root);
	return rc;
}
