/*
 * `fabriclab trace --perfetto FILE`: the trace as a timeline in Chrome's trace
 * event JSON (the "JSON Object Format" of the Trace Event Format), which the
 * Perfetto UI and chrome://tracing open offline. Layout:
 *  - one process per traced process (node, rank, pid);
 *  - in it, one row for its faults, errors and live findings (instant events
 *    with their text), one row per hop view (the union of its wire intervals,
 *    "wire busy", and counters per window: wire GB/s, peer wait ms), and rows
 *    per connection: each request is a slice from its post to its completion
 *    with its phases nested in it (posted, ready, on the wire, wire done);
 *  - LTTng's discarded events and the merged verdict as global instant events.
 * Requests overlap on a connection (NCCL keeps several in flight), and slices
 * on one row must nest, so a connection has as many rows as it had requests
 * in flight at once: a request takes the first row free at its post.
 * The request slices are written while the trace is read (memory stays that
 * of the model, the file grows as it goes); the rest once the trace is whole.
 * Times: microseconds (3 decimals: ns) from the first event, on the trace's
 * clock (CLOCK_MONOTONIC, as the events' *_ns fields).
 */
#include <inttypes.h>
#include <jansson.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "plugin/base/error.h"
#include "plugin/base/version.h"
#include "plugin/verdict/verdict.h"
#include "trace.h"

/* Thread ids are unique in the whole file: process p's rows are (p + 1) * PROC_TIDS + row. */
#define PROC_TIDS 100000
#define HOP_ROW0 1
#define LANE_ROW0 10000
#define MAX_PROCS 20000
#define ORIGIN_MARGIN_NS 1000000ULL /* a post can precede the first event by clock skew */

struct trace_pf {
	FILE *f;
	char *path;
	char *tmp; /* written here and renamed onto path once whole; NULL: path itself (no file) */
	uint64_t origin;
	bool origin_set;
	bool any; /* an event written: the next one needs a comma */
	int *lanes; /* rows given to connections so far, per process */
	size_t nlanes;
};

/*
 * A regular file (or none yet) is written aside and renamed when whole: a
 * reader, or a run that fails half-way, never sees half a timeline or an empty
 * file. Anything else (/dev/stdout, a FIFO) is written in place.
 */
static int aside(struct trace_pf *pf)
{
	struct stat st;

	if (!stat(pf->path, &st) && !S_ISREG(st.st_mode))
		return 0;
	if (asprintf(&pf->tmp, "%s.tmp.%d", pf->path, (int)getpid()) < 0) {
		pf->tmp = NULL;
		return -1;
	}
	return 0;
}

int trace_pf_open(const char *path, struct trace_pf **out)
{
	struct trace_pf *pf = calloc(1, sizeof(*pf));

	if (!pf || !(pf->path = strdup(path)) || aside(pf)) {
		if (pf)
			free(pf->path);
		free(pf);
		return fl_fail(FL_ERR_SYSTEM, "out of memory");
	}
	pf->f = fopen(pf->tmp ? pf->tmp : path, "w");
	if (!pf->f) {
		int err = fl_fail(FL_ERR_USAGE, "--perfetto %s: cannot write it: %m", path);

		free(pf->tmp);
		free(pf->path);
		free(pf);
		return err;
	}
	setvbuf(pf->f, NULL, _IOFBF, 1 << 20);
	fputs("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n", pf->f);
	*out = pf;
	return 0;
}

void trace_pf_origin(struct trace_pf *pf, uint64_t first_ns)
{
	if (pf->origin_set)
		return;
	pf->origin = first_ns > ORIGIN_MARGIN_NS ? first_ns - ORIGIN_MARGIN_NS : 0;
	pf->origin_set = true;
}

static int tid_of(size_t proc, int row)
{
	return (int)(proc + 1) * PROC_TIDS + row;
}

/* A time as microseconds from the origin, exact to the nanosecond (no double rounding). */
static void put_us(FILE *f, uint64_t ns, uint64_t origin)
{
	uint64_t d = ns >= origin ? ns - origin : origin - ns;

	fprintf(f, "%s%" PRIu64 ".%03u", ns >= origin ? "" : "-", d / 1000, (unsigned)(d % 1000));
}

static void put_dur(FILE *f, uint64_t ns)
{
	fprintf(f, "%" PRIu64 ".%03u", ns / 1000, (unsigned)(ns % 1000));
}

static void next_event(struct trace_pf *pf)
{
	if (pf->any)
		fputs(",\n", pf->f);
	pf->any = true;
}

static void slice(struct trace_pf *pf, int pid, int tid, const char *cat, const char *name,
		  uint64_t start, uint64_t end)
{
	next_event(pf);
	fprintf(pf->f, "{\"ph\":\"X\",\"cat\":\"%s\",\"name\":\"%s\",\"pid\":%d,\"tid\":%d,\"ts\":",
		cat, name, pid, tid);
	put_us(pf->f, start, pf->origin);
	fputs(",\"dur\":", pf->f);
	put_dur(pf->f, end - start);
	fputc('}', pf->f);
}

/* A json_t event written whole (names and text from the trace need escaping), then freed. */
static int put_json(struct trace_pf *pf, json_t *e)
{
	int rc;

	if (!e)
		return fl_fail(FL_ERR_SYSTEM, "out of memory writing the timeline");
	next_event(pf);
	rc = json_dumpf(e, pf->f, JSON_COMPACT | JSON_REAL_PRECISION(12));
	json_decref(e);
	return rc ? fl_fail(FL_ERR_SYSTEM, "cannot write %s", pf->path) : 0;
}

static json_t *at(const struct trace_pf *pf, uint64_t ns)
{
	return json_real(((double)ns - (double)pf->origin) / 1e3);
}

/* The first row of the connection free at the post (every request on it ended by then). */
static int lane_for(struct trace_pf *pf, size_t proc, struct trace_lanes *l, uint64_t posted,
		    uint64_t done)
{
	for (int i = 0; i < l->n; i++)
		if (l->end[i] <= posted) {
			l->end[i] = done;
			return l->tid[i];
		}
	if (l->n == l->cap) {
		int cap = l->cap ? 2 * l->cap : 4;
		uint64_t *end = realloc(l->end, (size_t)cap * sizeof(*end));
		int *tid = end ? realloc(l->tid, (size_t)cap * sizeof(*tid)) : NULL;

		if (end)
			l->end = end;
		if (!tid)
			return -1;
		l->tid = tid;
		l->cap = cap;
	}
	if (proc >= pf->nlanes) {
		size_t n = proc + 16;
		int *lanes = realloc(pf->lanes, n * sizeof(*lanes));

		if (!lanes)
			return -1;
		memset(lanes + pf->nlanes, 0, (n - pf->nlanes) * sizeof(*lanes));
		pf->lanes = lanes;
		pf->nlanes = n;
	}
	if (LANE_ROW0 + pf->lanes[proc] >= PROC_TIDS) /* beyond any real depth: share a row */
		return l->n ? l->tid[l->n - 1] : tid_of(proc, PROC_TIDS - 1);
	l->end[l->n] = done;
	l->tid[l->n] = tid_of(proc, LANE_ROW0 + pf->lanes[proc]++);
	return l->tid[l->n++];
}

static void size_name(char *buf, size_t len, const char *view, uint64_t bytes)
{
	if (bytes >= (1ULL << 20) && !(bytes % (1ULL << 20)))
		snprintf(buf, len, "%s %" PRIu64 " MiB", view, bytes >> 20);
	else if (bytes >= 1024 && !(bytes % 1024))
		snprintf(buf, len, "%s %" PRIu64 " KiB", view, bytes >> 10);
	else
		snprintf(buf, len, "%s %" PRIu64 " B", view, bytes);
}

/* The request's phases, each from its start to the next one's: a sequence inside the slice. */
static void phases(struct trace_pf *pf, int pid, int tid, uint64_t posted, uint64_t ready,
		   uint64_t wire_start, uint64_t wire_end, uint64_t done)
{
	static const char *const names[] = { "posted", "ready", "on the wire", "wire done" };
	uint64_t edge[5] = { posted, ready, wire_start, wire_end, done };

	/* Unobserved moments take the next one's time; each clamped into [previous, done]. */
	if (!wire_start || wire_end <= wire_start)
		edge[2] = edge[3] = done;
	if (!ready || ready < posted)
		edge[1] = edge[2];
	for (int i = 1; i < 5; i++) {
		if (edge[i] < edge[i - 1])
			edge[i] = edge[i - 1];
		if (edge[i] > done)
			edge[i] = done;
	}
	for (int i = 0; i < 4; i++)
		if (edge[i + 1] > edge[i])
			slice(pf, pid, tid, "phase", names[i], edge[i], edge[i + 1]);
}

int trace_pf_request(struct trace_pf *pf, const struct trace_model *m, size_t proc,
		     struct trace_conn *c, const struct trace_request *r)
{
	const struct trace_hop *h = &m->procs[proc].hops[c->hop];
	uint64_t posted = r->posted, done = r->done;
	char name[64];
	int tid, pid = (int)proc + 1;

	if (!done || proc >= MAX_PROCS)
		return 0;
	if (!posted || posted > done)
		posted = r->wire_start && r->wire_start <= done ? r->wire_start : done;
	tid = lane_for(pf, proc, &c->lanes, posted, done);
	if (tid < 0)
		return fl_fail(FL_ERR_SYSTEM, "out of memory writing the timeline");
	size_name(name, sizeof(name), h->is_send ? "send" : "recv", r->bytes);
	next_event(pf);
	fprintf(pf->f, "{\"ph\":\"X\",\"cat\":\"request\",\"name\":\"%s\",\"pid\":%d,\"tid\":%d,"
		       "\"ts\":", name, pid, tid);
	put_us(pf->f, posted, pf->origin);
	fputs(",\"dur\":", pf->f);
	put_dur(pf->f, done - posted);
	fprintf(pf->f, ",\"args\":{\"conn_id\":%u,\"slot\":%u,\"bytes\":%" PRIu64
		       ",\"wire_bytes\":%" PRIu64 ",\"peer_wait_ns\":%" PRIu64
		       ",\"wire_ns\":%" PRIu64 "}}",
		c->id, r->slot, r->bytes, r->wire_bytes, r->peer_wait, r->wire_ns);
	phases(pf, pid, tid, posted, r->ready, r->wire_start, r->wire_end, done);
	return ferror(pf->f) ? fl_fail(FL_ERR_SYSTEM, "cannot write %s", pf->path) : 0;
}

int trace_pf_instant(struct trace_pf *pf, size_t proc, uint64_t at_ns, const char *cat,
		     const char *name, void *args)
{
	if (proc >= MAX_PROCS) {
		json_decref(args);
		return 0;
	}
	return put_json(pf, json_pack("{s:s, s:s, s:s, s:s, s:i, s:i, s:o, s:o}", "ph", "i", "s",
				      "t", "cat", cat, "name", name, "pid", (int)proc + 1,
				      "tid", tid_of(proc, 0), "ts", at(pf, at_ns), "args",
				      args ? (json_t *)args : json_object()));
}

static int meta(struct trace_pf *pf, const char *what, int pid, int tid, json_t *args)
{
	return put_json(pf, json_pack("{s:s, s:s, s:i, s:i, s:o}", "ph", "M", "name", what, "pid",
				      pid, "tid", tid, "args", args));
}

static void hop_title(char *buf, size_t len, const struct trace_hop *h)
{
	snprintf(buf, len, "%s/%s -> %s/%s %s", h->key.src_node, h->key.src_dev, h->key.dst_node,
		 h->key.dst_dev, h->is_send ? "send" : "recv");
}

/* A hop view's row: when it was busy on the wire, and its counters per window. */
static int hop_row(struct trace_pf *pf, const struct trace_model *m, size_t proc, size_t i,
		   uint64_t t0, uint64_t width, size_t n)
{
	const struct trace_hop *h = &m->procs[proc].hops[i];
	const struct trace_spans *s = &h->wire;
	int pid = (int)proc + 1, tid = tid_of(proc, HOP_ROW0 + (int)i), rc;
	struct trace_window *w = calloc(n + 1, sizeof(*w));
	char title[256], row[300];
	uint64_t start = 0, end = 0;

	if (!w)
		return fl_fail(FL_ERR_SYSTEM, "out of memory");
	hop_title(title, sizeof(title), h);
	snprintf(row, sizeof(row), "hop %s (hop_id %u)", title, h->hop_id);
	rc = meta(pf, "thread_name", pid, tid, json_pack("{s:s}", "name", row));
	rc = rc ? rc : meta(pf, "thread_sort_index", pid, tid,
			    json_pack("{s:i}", "sort_index", HOP_ROW0 + (int)i));
	/* The spans are sorted (trace_model_to_reports took their union). */
	for (size_t k = 0; !rc && k <= s->n; k++) {
		if (k < s->n && k && s->v[k].start <= end) {
			end = s->v[k].end > end ? s->v[k].end : end;
			continue;
		}
		if (k)
			slice(pf, pid, tid, "hop", "wire busy", start, end);
		if (k < s->n) {
			start = s->v[k].start;
			end = s->v[k].end;
		}
	}
	trace_window_hop(h, t0, width, n, w);
	for (size_t k = 0; !rc && k < n; k++) {
		double gbs = w[k].wire_ns ? w[k].bytes / (double)w[k].wire_ns : 0.0;

		rc = put_json(pf, json_pack("{s:s, s:s, s:i, s:o, s:{s:f, s:f}}", "ph", "C",
					    "name", title, "pid", pid, "ts",
					    at(pf, t0 + k * width), "args", "wire GB/s", gbs,
					    "peer wait ms", (double)w[k].wait_ns / 1e6));
	}
	free(w);
	return rc;
}

static int conn_rows(struct trace_pf *pf, const struct trace_process *p, size_t proc)
{
	int pid = (int)proc + 1, rc = 0;

	for (size_t c = 0; !rc && c < p->nconns; c++) {
		const struct trace_conn *tc = &p->conns[c];
		char title[256], row[320];

		hop_title(title, sizeof(title), &p->hops[tc->hop]);
		for (int k = 0; !rc && k < tc->lanes.n; k++) {
			snprintf(row, sizeof(row), "conn %u %s%s", tc->id, title,
				 k ? " (more in flight)" : "");
			rc = meta(pf, "thread_name", pid, tc->lanes.tid[k],
				  json_pack("{s:s}", "name", row));
			rc = rc ? rc : meta(pf, "thread_sort_index", pid, tc->lanes.tid[k],
					    json_pack("{s:i}", "sort_index",
						      LANE_ROW0 + (int)(c * 64) + k));
		}
	}
	return rc;
}

static int process_rows(struct trace_pf *pf, const struct trace_model *m, size_t proc,
			uint64_t t0, uint64_t width, size_t n)
{
	const struct trace_process *p = &m->procs[proc];
	int pid = (int)proc + 1, rc;
	char name[160];

	if (p->rank >= 0)
		snprintf(name, sizeof(name), "%s rank %ld (pid %lld on %s)",
			 p->node[0] ? p->node : "?", p->rank, (long long)p->vpid, p->host);
	else
		snprintf(name, sizeof(name), "%s (pid %lld on %s)", p->node[0] ? p->node : "?",
			 (long long)p->vpid, p->host);
	rc = meta(pf, "process_name", pid, 0, json_pack("{s:s}", "name", name));
	rc = rc ? rc : meta(pf, "process_sort_index", pid, 0,
			    json_pack("{s:i}", "sort_index", p->rank >= 0 ? (int)p->rank : pid));
	rc = rc ? rc : meta(pf, "thread_name", pid, tid_of(proc, 0),
			    json_pack("{s:s}", "name", "faults, errors, live findings"));
	rc = rc ? rc : meta(pf, "thread_sort_index", pid, tid_of(proc, 0),
			    json_pack("{s:i}", "sort_index", 0));
	for (size_t i = 0; !rc && i < p->nhops; i++)
		rc = hop_row(pf, m, proc, i, t0, width, n);
	return rc ? rc : conn_rows(pf, p, proc);
}

static int discards(struct trace_pf *pf, const struct trace_model *m)
{
	int rc = 0;

	for (size_t i = 0; !rc && i < m->ndiscards; i++) {
		const struct trace_discard *d = &m->discards[i];
		char name[128];

		if (d->events)
			snprintf(name, sizeof(name), "LTTng discarded %" PRIu64 " events", d->events);
		else
			snprintf(name, sizeof(name), "LTTng lost %" PRIu64 " packets", d->packets);
		rc = put_json(pf, json_pack("{s:s, s:s, s:s, s:s, s:i, s:i, s:o, s:{s:s, s:I, s:I, "
					    "s:o}}",
					    "ph", "i", "s", "g", "cat", "lost", "name", name, "pid",
					    0, "tid", 0, "ts",
					    at(pf, d->end_ns ? d->start_ns : m->first_ns), "args",
					    "host", d->host, "events", (json_int_t)d->events,
					    "packets", (json_int_t)d->packets, "until_us",
					    d->end_ns ? at(pf, d->end_ns) : json_null()));
	}
	return rc;
}

/* The merged verdict, a global instant at the end: a line across every row. */
static int verdict(struct trace_pf *pf, const struct trace_model *m, const struct report_set *set)
{
	const struct fl_verdict *v = &set->verdict;
	char name[320];

	if (v->kind == FL_VERDICT_DEVICE || v->kind == FL_VERDICT_NODE) {
		snprintf(name, sizeof(name), "verdict: %s %s%s%s, ratio %.2f, speedup %.2fx",
			 fl_verdict_kind_name(v->kind), v->node, v->dev[0] ? "/" : "", v->dev,
			 v->ratio, v->speedup);
	} else if (v->hop >= 0 && (size_t)v->hop < set->nhops) {
		const struct report_hop_key *k = &set->hops[v->hop].key;

		snprintf(name, sizeof(name), "verdict: %s %s/%s -> %s/%s, ratio %.2f, speedup %.2fx",
			 fl_verdict_kind_name(v->kind), k->src_node, k->src_dev, k->dst_node,
			 k->dst_dev, v->ratio, v->speedup);
	} else {
		snprintf(name, sizeof(name), "verdict: %s%s%s%s%s", fl_verdict_kind_name(v->kind),
			 v->node[0] ? " " : "", v->node, v->dev[0] ? "/" : "", v->dev);
	}
	return put_json(pf, json_pack("{s:s, s:s, s:s, s:s, s:i, s:i, s:o, s:{s:s, s:s, s:f, "
				      "s:f, s:f, s:i}}",
				      "ph", "i", "s", "g", "cat", "verdict", "name", name, "pid", 0,
				      "tid", 0, "ts", at(pf, m->last_ns), "args", "kind",
				      fl_verdict_kind_name(v->kind), "reason", v->reason, "ratio",
				      v->ratio, "median_gbs", v->median_gbs, "speedup", v->speedup,
				      "judged_hops", v->judged_hops));
}

static int other_data(struct trace_pf *pf, const struct trace_model *m, uint64_t window_ns,
		      size_t nprocs)
{
	json_t *o = json_pack("{s:s, s:I, s:I, s:I, s:I, s:I, s:f, s:s}", "fabriclab_version",
			      fl_version(), "events", (json_int_t)m->events, "processes",
			      (json_int_t)nprocs, "discarded_events",
			      (json_int_t)m->discarded_events, "discarded_packets",
			      (json_int_t)m->discarded_packets, "orphan_requests",
			      (json_int_t)m->orphans, "window_seconds", (double)window_ns / 1e9,
			      "clock", "ts: microseconds from origin_ns, the trace's clock "
				       "(CLOCK_MONOTONIC of the host that recorded it)");
	int rc;

	if (!o)
		return fl_fail(FL_ERR_SYSTEM, "out of memory");
	json_object_set_new(o, "origin_ns", json_integer((json_int_t)pf->origin));
	fputs("\n],\"otherData\":", pf->f);
	rc = json_dumpf(o, pf->f, JSON_COMPACT | JSON_REAL_PRECISION(12));
	json_decref(o);
	fputs("}\n", pf->f);
	return rc ? fl_fail(FL_ERR_SYSTEM, "cannot write %s", pf->path) : 0;
}

/* The file written so far goes (the timeline is not whole); a device or FIFO stays. */
static void discard(struct trace_pf *pf)
{
	if (pf->tmp)
		unlink(pf->tmp);
}

static void release(struct trace_pf *pf)
{
	free(pf->lanes);
	free(pf->tmp);
	free(pf->path);
	free(pf);
}

int trace_pf_finish(struct trace_pf *pf, const struct trace_model *m, const struct report_set *set,
		    uint64_t window_ns)
{
	uint64_t t0;
	size_t n, nprocs = m->nprocs < MAX_PROCS ? m->nprocs : MAX_PROCS;
	int rc = 0;

	trace_window_range(m, window_ns, &t0, &n);
	for (size_t p = 0; !rc && p < nprocs; p++)
		rc = process_rows(pf, m, p, t0, window_ns, n);
	rc = rc ? rc : discards(pf, m);
	rc = rc ? rc : verdict(pf, m, set);
	rc = rc ? rc : other_data(pf, m, window_ns, nprocs);
	if (fclose(pf->f) && !rc)
		rc = fl_fail(FL_ERR_SYSTEM, "cannot write %s: %m", pf->path);
	if (!rc && pf->tmp && rename(pf->tmp, pf->path))
		rc = fl_fail(FL_ERR_SYSTEM, "cannot write %s: %m", pf->path);
	if (rc)
		discard(pf);
	release(pf);
	return rc;
}

void trace_pf_abort(struct trace_pf *pf)
{
	if (!pf)
		return;
	fclose(pf->f);
	discard(pf);
	release(pf);
}
