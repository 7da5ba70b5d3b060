/*
 * From events to figures: each process's connections and hops rebuilt from
 * conn_up and the request events, with the same arithmetic the plugin's
 * counters use (plugin/stats.h), then handed over as one report file per
 * process so `fabriclab report`'s join and verdict judge them.
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "plugin/base/error.h"
#include "plugin/base/fl_text.h"
#include "plugin/base/version.h"
#include "trace.h"

static int grow(void **v, size_t *cap, size_t need, size_t size)
{
	size_t n = *cap ? *cap : 16;
	void *p;

	if (need <= *cap)
		return 0;
	while (n < need)
		n *= 2;
	p = realloc(*v, n * size);
	if (!p)
		return fl_fail(FL_ERR_SYSTEM, "out of memory reading the trace");
	memset((char *)p + *cap * size, 0, (n - *cap) * size);
	*v = p;
	*cap = n;
	return 0;
}

/* Cut between whole characters: src is already escaped (trace_field_str), dst stays UTF-8. */
static void copy(char *dst, size_t len, const char *src)
{
	fl_text_escape(dst, len, src);
}

static struct trace_process *process(struct trace_model *m, const char *host, int64_t vpid)
{
	struct trace_process *p;

	for (size_t i = 0; i < m->nprocs; i++)
		if (m->procs[i].vpid == vpid && !strcmp(m->procs[i].host, host))
			return &m->procs[i];
	if (grow((void **)&m->procs, &m->procs_cap, m->nprocs + 1, sizeof(*m->procs)))
		return NULL;
	p = &m->procs[m->nprocs++];
	copy(p->host, sizeof(p->host), host);
	p->vpid = vpid;
	p->rank = -1;
	return p;
}

static struct trace_conn *conn(struct trace_process *p, uint32_t id)
{
	/* The newest first: an id is unique in a process, and the busy ones are recent. */
	for (size_t i = p->nconns; i-- > 0;)
		if (p->conns[i].id == id)
			return &p->conns[i];
	return NULL;
}

static bool same_hop(const struct trace_hop *h, uint32_t hop_id, bool is_send,
		     const struct report_view_key *k)
{
	return h->hop_id == hop_id && h->is_send == is_send &&
	       !strcmp(h->key.src_node, k->src_node) && !strcmp(h->key.src_dev, k->src_dev) &&
	       !strcmp(h->key.dst_node, k->dst_node) && !strcmp(h->key.dst_dev, k->dst_dev);
}

static long rank_or(long known, int64_t seen)
{
	return known >= 0 ? known : seen >= 0 ? (long)seen : -1;
}

static int conn_up(struct trace_model *m, struct trace_process *p, const struct trace_fields *f)
{
	bool is_send = !strcmp(trace_field_str(f, "view"), "send");
	uint32_t hop_id = (uint32_t)trace_field_u64(f, "hop_id");
	struct report_view_key k;
	struct trace_hop *h = NULL;
	struct trace_conn *c;

	memset(&k, 0, sizeof(k));
	copy(k.src_node, sizeof(k.src_node), trace_field_str(f, "src_node"));
	copy(k.src_dev, sizeof(k.src_dev), trace_field_str(f, "src_dev"));
	copy(k.dst_node, sizeof(k.dst_node), trace_field_str(f, "dst_node"));
	copy(k.dst_dev, sizeof(k.dst_dev), trace_field_str(f, "dst_dev"));
	for (size_t i = 0; !h && i < p->nhops; i++)
		if (same_hop(&p->hops[i], hop_id, is_send, &k))
			h = &p->hops[i];
	if (!h) {
		if (grow((void **)&p->hops, &p->hops_cap, p->nhops + 1, sizeof(*p->hops)))
			return -1;
		h = &p->hops[p->nhops++];
		h->hop_id = hop_id;
		h->is_send = is_send;
		h->key = k;
		h->src_rank = h->dst_rank = -1;
	}
	copy(h->transport, sizeof(h->transport), trace_field_str(f, "transport"));
	h->speed_mbps = (int)trace_field_s64(f, "speed_mbps");
	h->gdr_capable = trace_field_s64(f, "gdr_capable") != 0;
	h->src_rank = rank_or(h->src_rank, trace_field_s64(f, "src_rank"));
	h->dst_rank = rank_or(h->dst_rank, trace_field_s64(f, "dst_rank"));
	h->connections++;
	copy(p->node, sizeof(p->node), is_send ? k.src_node : k.dst_node);
	m->reused_ids += conn(p, (uint32_t)trace_field_u64(f, "conn_id")) != NULL;
	if (grow((void **)&p->conns, &p->conns_cap, p->nconns + 1, sizeof(*p->conns)))
		return -1;
	c = &p->conns[p->nconns++];
	c->id = (uint32_t)trace_field_u64(f, "conn_id");
	c->hop = (size_t)(h - p->hops);
	c->first_tag = -1;
	return 0;
}

static int add_span(struct trace_spans *s, uint64_t start, uint64_t end, uint64_t bytes)
{
	if (grow((void **)&s->v, &s->cap, s->n + 1, sizeof(*s->v)))
		return -1;
	s->v[s->n++] = (struct trace_span){ start, end, bytes };
	return 0;
}

static unsigned size_bucket(uint64_t bytes)
{
	unsigned b = bytes ? 63u - (unsigned)__builtin_clzll(bytes) : 0;

	return b < REPORT_SIZE_BUCKETS ? b : REPORT_SIZE_BUCKETS - 1;
}

static void read_request(const struct trace_fields *f, struct trace_request *r)
{
	r->slot = (uint32_t)trace_field_u64(f, "slot");
	r->bytes = trace_field_u64(f, "bytes");
	r->wire_bytes = trace_field_u64(f, "wire_bytes");
	r->posted = trace_field_u64(f, "posted_ns");
	r->ready = trace_field_u64(f, "ready_ns");
	r->wire_start = trace_field_u64(f, "wire_start_ns");
	r->wire_end = trace_field_u64(f, "wire_end_ns");
	r->done = trace_field_u64(f, "done_ns");
	r->peer_wait = trace_field_u64(f, "peer_wait_ns");
	r->wire_ns = trace_field_u64(f, "wire_ns");
}

/* fl_stats_complete, replayed: a wire interval never starts before the post. */
static int request_done(struct trace_hop *h, const struct trace_request *r)
{
	h->bytes += r->bytes;
	h->messages++;
	h->sizes[size_bucket(r->bytes)]++;
	h->peer_wait_ns += r->peer_wait;
	if (r->posted && r->ready > r->posted && add_span(&h->wait, r->posted, r->ready, 0))
		return -1;
	if (r->wire_start && r->wire_end > r->wire_start) {
		h->wire_bytes += r->wire_bytes;
		if (add_span(&h->wire, r->wire_start > r->posted ? r->wire_start : r->posted,
			     r->wire_end, r->wire_bytes))
			return -1;
	}
	return r->posted && r->done >= r->posted
		       ? add_span(&h->active, r->posted, r->done, r->bytes)
		       : 0;
}

/* The value of key in a canonical rule ("throttle:node=a,dev=eth0,dir=tx"), "" if absent. */
static void rule_value(const char *rule, const char *key, char *dst, size_t len)
{
	const char *p = strchr(rule, ':');
	size_t klen = strlen(key);

	dst[0] = '\0';
	while (p && *p) {
		p++;
		if (!strncmp(p, key, klen) && p[klen] == '=') {
			snprintf(dst, len, "%.*s", (int)strcspn(p + klen + 1, ","), p + klen + 1);
			return;
		}
		p = strchr(p, ',');
	}
}

/* What the report's `injected` lists: each rule applied, with its connections. */
static int fault(struct trace_process *p, const struct trace_fields *f)
{
	const char *rule = trace_field_str(f, "rule");
	const struct trace_conn *c = conn(p, (uint32_t)trace_field_u64(f, "conn_id"));
	struct report_injected *in = NULL;

	for (size_t i = 0; !in && i < p->ninjected; i++)
		if (!strcmp(p->injected[i].rule, rule))
			in = &p->injected[i];
	if (!in) {
		if (grow((void **)&p->injected, &p->injected_cap, p->ninjected + 1,
			 sizeof(*p->injected)))
			return -1;
		in = &p->injected[p->ninjected++];
		copy(in->node, sizeof(in->node), p->node);
		copy(in->rule, sizeof(in->rule), rule);
		copy(in->action, sizeof(in->action), trace_field_str(f, "action"));
		rule_value(rule, "dev", in->dev, sizeof(in->dev));
		if (!in->dev[0] && c) /* the device it applied on: the connection's own */
			copy(in->dev, sizeof(in->dev), p->hops[c->hop].is_send
							       ? p->hops[c->hop].key.src_dev
							       : p->hops[c->hop].key.dst_dev);
		rule_value(rule, "peer", in->peer, sizeof(in->peer));
		rule_value(rule, "dir", in->dir, sizeof(in->dir));
	}
	in->connections++;
	return 0;
}

static int live_finding(struct trace_process *p, const struct trace_fields *f)
{
	struct trace_live *l;

	if (grow((void **)&p->live, &p->live_cap, p->nlive + 1, sizeof(*p->live)))
		return -1;
	l = &p->live[p->nlive++];
	copy(l->state, sizeof(l->state), trace_field_str(f, "state"));
	copy(l->kind, sizeof(l->kind), trace_field_str(f, "kind"));
	copy(l->culprit, sizeof(l->culprit), trace_field_str(f, "culprit"));
	l->hop_id = (uint32_t)trace_field_u64(f, "hop_id");
	l->ratio = trace_field_double(f, "ratio");
	l->cost = trace_field_double(f, "cost");
	l->line_gbs = trace_field_double(f, "line_gbs");
	l->windows = (int)trace_field_s64(f, "windows");
	l->window_ns = trace_field_u64(f, "window_ns");
	l->at_ns = trace_field_u64(f, "at_ns");
	return 0;
}

static int request_event(struct trace_model *m, struct trace_process *p, const char *name,
			 const struct trace_fields *f)
{
	size_t proc = (size_t)(p - m->procs);
	struct trace_conn *c = conn(p, (uint32_t)trace_field_u64(f, "conn_id"));
	struct trace_request r;

	if (!c) {
		m->orphans += !strcmp(name, "request_done");
		return 0;
	}
	if (!strcmp(name, "request_posted")) {
		int64_t tag = trace_field_s64(f, "tag");

		if (c->first_tag < 0 && tag >= 0)
			c->first_tag = (int)tag;
		return 0;
	}
	if (!strcmp(name, "conn_down")) {
		p->hops[c->hop].mem_types |= (int)trace_field_s64(f, "mem_types");
		return 0;
	}
	if (strcmp(name, "request_done"))
		return 0;
	read_request(f, &r);
	if (request_done(&p->hops[c->hop], &r))
		return -1;
	return m->pf ? trace_pf_request(m->pf, m, proc, c, &r) : 0;
}

/* Faults, errors and live findings on the process's own row of the timeline. */
static int instant(struct trace_model *m, struct trace_process *p, uint64_t stamp_ns,
		   const char *name, const struct trace_fields *f)
{
	size_t proc = (size_t)(p - m->procs);
	char title[512];
	json_t *args;

	if (!strcmp(name, "fault")) {
		snprintf(title, sizeof(title), "fault %s: %s", trace_field_str(f, "action"),
			 trace_field_str(f, "rule"));
		args = json_pack("{s:I, s:I, s:s, s:s, s:I, s:I}", "conn_id",
				 (json_int_t)trace_field_u64(f, "conn_id"), "hop_id",
				 (json_int_t)trace_field_u64(f, "hop_id"), "action",
				 trace_field_str(f, "action"), "rule", trace_field_str(f, "rule"),
				 "delay_ns", (json_int_t)trace_field_u64(f, "delay_ns"),
				 "rate_bytes_per_s", (json_int_t)trace_field_u64(f, "rate_bytes_per_s"));
	} else if (!strcmp(name, "error")) {
		snprintf(title, sizeof(title), "error in %s: %s", trace_field_str(f, "op"),
			 trace_field_str(f, "message"));
		args = json_pack("{s:I, s:I, s:s, s:I, s:s}", "conn_id",
				 (json_int_t)trace_field_u64(f, "conn_id"), "hop_id",
				 (json_int_t)trace_field_u64(f, "hop_id"), "op",
				 trace_field_str(f, "op"), "code",
				 (json_int_t)trace_field_s64(f, "code"), "message",
				 trace_field_str(f, "message"));
	} else {
		snprintf(title, sizeof(title), "live finding %s: %s %s, %.2fx its line rate, cost %.2f",
			 trace_field_str(f, "state"), trace_field_str(f, "kind"),
			 trace_field_str(f, "culprit"), trace_field_double(f, "ratio"),
			 trace_field_double(f, "cost"));
		args = json_pack("{s:s, s:s, s:s, s:I, s:f, s:f, s:f, s:f, s:i, s:f}", "state",
				 trace_field_str(f, "state"), "kind", trace_field_str(f, "kind"),
				 "culprit", trace_field_str(f, "culprit"), "hop_id",
				 (json_int_t)trace_field_u64(f, "hop_id"), "ratio",
				 trace_field_double(f, "ratio"), "wire_gbs",
				 trace_field_double(f, "wire_gbs"), "line_gbs",
				 trace_field_double(f, "line_gbs"), "cost",
				 trace_field_double(f, "cost"), "windows",
				 (int)trace_field_s64(f, "windows"), "window_seconds",
				 (double)trace_field_u64(f, "window_ns") / 1e9);
		if (trace_field_u64(f, "at_ns"))
			stamp_ns = trace_field_u64(f, "at_ns");
	}
	return trace_pf_instant(m->pf, proc, stamp_ns, name, title, args);
}

int trace_model_discard(struct trace_model *m, const struct trace_discard *d)
{
	if (grow((void **)&m->discards, &m->discards_cap, m->ndiscards + 1, sizeof(*m->discards)))
		return -1;
	m->discards[m->ndiscards++] = *d;
	m->discarded_events += d->events;
	m->discarded_packets += d->packets;
	return 0;
}

static int model_event(struct trace_model *m, struct trace_process *p, uint64_t stamp_ns,
		       const char *name, const struct trace_fields *f)
{
	if (m->pf && (!strcmp(name, "fault") || !strcmp(name, "error") ||
		      !strcmp(name, "live_finding")) &&
	    instant(m, p, stamp_ns, name, f))
		return -1;
	if (!strcmp(name, "conn_up"))
		return conn_up(m, p, f);
	if (!strcmp(name, "fault"))
		return fault(p, f);
	if (!strcmp(name, "live_finding"))
		return live_finding(p, f);
	if (!strcmp(name, "verdict")) {
		copy(p->verdict, sizeof(p->verdict), trace_field_str(f, "kind"));
		return 0;
	}
	if (!strcmp(name, "request_posted") || !strcmp(name, "request_done") ||
	    !strcmp(name, "conn_down"))
		return request_event(m, p, name, f);
	return 0;
}

int trace_model_event(struct trace_model *m, const char *host, int64_t vpid, uint64_t stamp_ns,
		      const char *name, const struct trace_fields *f)
{
	struct trace_process *p = process(m, host, vpid);

	if (!p)
		return -1;
	if (stamp_ns) {
		if (!m->first_ns || stamp_ns < m->first_ns)
			m->first_ns = stamp_ns;
		if (stamp_ns > m->last_ns)
			m->last_ns = stamp_ns;
		if (m->pf)
			trace_pf_origin(m->pf, stamp_ns);
	}
	return model_event(m, p, stamp_ns, name, f);
}

static int cmp_span(const void *a, const void *b)
{
	const struct trace_span *x = a, *y = b;

	return (x->start > y->start) - (x->start < y->start);
}

uint64_t trace_spans_union(struct trace_spans *s)
{
	uint64_t total = 0, start = 0, end = 0;

	if (!s->n)
		return 0;
	qsort(s->v, s->n, sizeof(*s->v), cmp_span);
	for (size_t i = 0; i < s->n; i++) {
		if (i && s->v[i].start <= end) {
			if (s->v[i].end > end)
				end = s->v[i].end;
			continue;
		}
		total += end - start;
		start = s->v[i].start;
		end = s->v[i].end;
	}
	return total + (end - start);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* Exact per-message wire time percentiles (the plugin's come from a histogram). */
static void wire_percentiles(const struct trace_spans *s, struct report_view *v)
{
	uint64_t *t = malloc((s->n + 1) * sizeof(*t));

	if (!t || !s->n) {
		free(t);
		return;
	}
	for (size_t i = 0; i < s->n; i++)
		t[i] = s->v[i].end - s->v[i].start;
	qsort(t, s->n, sizeof(*t), cmp_u64);
	v->p50_us = (double)t[(s->n - 1) * 50 / 100] / 1e3;
	v->p99_us = (double)t[(s->n - 1) * 99 / 100] / 1e3;
	v->max_us = (double)t[s->n - 1] / 1e3;
	free(t);
}

/* The ranks NCCL's tags name where conn_up did not know them (as the plugin's hops do). */
static void fill_ranks(struct trace_process *p)
{
	for (size_t i = 0; i < p->nconns; i++) {
		struct trace_hop *h = &p->hops[p->conns[i].hop];

		if (h->src_rank < 0 && p->conns[i].first_tag >= 0)
			h->src_rank = p->conns[i].first_tag;
	}
	for (size_t i = 0; p->rank < 0 && i < p->nhops; i++)
		if (p->hops[i].is_send)
			p->rank = p->hops[i].src_rank;
	for (size_t i = 0; i < p->nhops; i++) {
		if (p->hops[i].is_send && p->hops[i].src_rank < 0)
			p->hops[i].src_rank = p->rank;
		if (!p->hops[i].is_send && p->hops[i].dst_rank < 0)
			p->hops[i].dst_rank = p->rank;
	}
}

static int to_view(struct trace_hop *h, int input, struct report_arena *sizes,
		   struct report_file_view *fv)
{
	struct report_view *v = &fv->v;
	uint64_t wire_ns = trace_spans_union(&h->wire);

	memset(fv, 0, sizeof(*fv));
	fv->key = h->key;
	copy(fv->transport, sizeof(fv->transport), h->transport);
	fv->is_send = h->is_send;
	v->present = true;
	/* Profiler-mode links say transport "nccl": judged apart from net-mode hops, as reports are. */
	v->profiler = !strcmp(h->transport, "nccl");
	v->processes = 1;
	v->input = input;
	v->src_rank = h->src_rank;
	v->dst_rank = h->dst_rank;
	v->connections = h->connections;
	v->bytes = h->bytes;
	v->messages = h->messages;
	v->line_rate_gbs = h->speed_mbps > 0 ? h->speed_mbps / 8000.0 : 0.0;
	v->wire_seconds = (double)wire_ns / 1e9;
	v->wire_gbs = wire_ns ? (double)h->wire_bytes / (double)wire_ns : 0.0;
	v->active_seconds = (double)trace_spans_union(&h->active) / 1e9;
	v->peer_wait_seconds = (double)h->peer_wait_ns / 1e9;
	wire_percentiles(&h->wire, v);
	v->mem_types = h->mem_types;
	v->gdr = (h->mem_types & (FL_PTR_CUDA | FL_PTR_DMABUF)) != 0;
	v->dev_gdr_capable = h->gdr_capable;
	return report_sizes_store(sizes, v, h->sizes) ? fl_fail(FL_ERR_SYSTEM, "out of memory") : 0;
}

static int to_file(struct trace_process *p, int index, struct report_arena *sizes,
		   struct report_file *f)
{
	char path[128];

	fill_ranks(p);
	memset(f, 0, sizeof(*f));
	snprintf(path, sizeof(path), "trace:%s/pid%lld", p->host, (long long)p->vpid);
	f->path = strdup(path);
	f->views = calloc(p->nhops + 1, sizeof(*f->views));
	if (!f->path || !f->views)
		return fl_fail(FL_ERR_SYSTEM, "out of memory");
	copy(f->node, sizeof(f->node), p->node);
	copy(f->version, sizeof(f->version), fl_version());
	f->pid = p->vpid;
	f->rank = p->rank;
	f->final = true;
	f->superseded_by = -1;
	for (size_t i = 0; i < p->nhops; i++) {
		if (to_view(&p->hops[i], index, sizes, &f->views[f->nviews++]))
			return -1;
	}
	/* The report set frees them from now on. */
	f->injected = p->injected;
	f->ninjected = p->ninjected;
	p->injected = NULL;
	p->ninjected = p->injected_cap = 0;
	return 0;
}

int trace_model_to_reports(struct trace_model *m, struct report_set *set)
{
	set->files = calloc(m->nprocs + 1, sizeof(*set->files));
	if (!set->files)
		return fl_fail(FL_ERR_SYSTEM, "out of memory");
	set->files_cap = m->nprocs + 1;
	for (size_t i = 0; i < m->nprocs; i++) {
		if (!m->procs[i].nhops)
			continue; /* a process without a connection has nothing to report */
		if (to_file(&m->procs[i], (int)set->nfiles, &set->sizes, &set->files[set->nfiles]))
			return -1;
		set->nfiles++;
	}
	return 0;
}

void trace_model_free(struct trace_model *m)
{
	for (size_t i = 0; i < m->nprocs; i++) {
		struct trace_process *p = &m->procs[i];

		for (size_t h = 0; h < p->nhops; h++) {
			free(p->hops[h].wire.v);
			free(p->hops[h].active.v);
			free(p->hops[h].wait.v);
		}
		for (size_t c = 0; c < p->nconns; c++) {
			free(p->conns[c].lanes.end);
			free(p->conns[c].lanes.tid);
		}
		free(p->hops);
		free(p->conns);
		free(p->injected);
		free(p->live);
	}
	free(m->procs);
	free(m->discards);
	memset(m, 0, sizeof(*m));
}
