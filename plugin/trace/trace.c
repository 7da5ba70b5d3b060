/*
 * The tracing hooks behind trace.h: loading the provider object at run time
 * (so the plugin needs no liblttng-ust to load, and runs the same without
 * it), and building each event's arguments once it is known to be enabled.
 */
#ifndef FABRICLAB_NO_TRACING

#include "trace.h"

#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/config.h"
#include "base/error.h"
#include "stats/hop.h"
#include "base/log.h"
#include "report/report_live.h"
#include "report/report_model.h"
#include "verdict/verdict.h"

#define PROVIDER_NAME "libfabriclab-lttng.so"
#define HOP_IDS 1024 /* conn_id -> hop_id for fault events, which know only the connection */
#define TICK_DEFAULT_MS 1000

struct fl_tp_point fl_trace_points[FL_TP_EVENTS];
static struct fl_tp_point *point_list[FL_TP_EVENTS];
static const struct fl_tp_api *tp;
static int attached;

static pthread_once_t start_once = PTHREAD_ONCE_INIT;
static uint64_t tick_period_ns;
static uint64_t next_tick_ns;
static _Atomic uint64_t hop_of_conn[HOP_IDS]; /* (conn_id << 32) | hop_id */

uint32_t fl_trace_hop_id(const char *src_node, const char *src_dev, const char *dst_node,
			 const char *dst_dev)
{
	const char *parts[] = { src_node, "/", src_dev, ">", dst_node, "/", dst_dev };
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++)
		for (const unsigned char *p = (const unsigned char *)parts[i]; *p; p++)
			h = (h ^ *p) * 16777619u;
	return h;
}

uint32_t fl_trace_profiler_hop_id(const char *src_node, const char *src_dev, const char *dst_node,
				  const char *dst_dev, int src_rank, int dst_rank,
				  uint64_t comm_hash)
{
	uint32_t h = fl_trace_hop_id(src_node, src_dev, dst_node, dst_dev);
	char tail[64];

	snprintf(tail, sizeof(tail), "|%d>%d@%016llx", src_rank, dst_rank,
		 (unsigned long long)comm_hash);
	for (const unsigned char *p = (const unsigned char *)tail; *p; p++)
		h = (h ^ *p) * 16777619u;
	return h;
}

uint32_t fl_trace_key_hop_id(const struct fl_hop_key *k)
{
	if (k->mode == FL_HOP_PROFILER)
		return fl_trace_profiler_hop_id(k->src_node, k->src_dev, k->dst_node, k->dst_dev,
						k->src_rank, k->dst_rank, k->comm_hash);
	return fl_trace_hop_id(k->src_node, k->src_dev, k->dst_node, k->dst_dev);
}

/* The provider next to the object this code is in (the plugin, or a tool that links it). */
static int provider_path(char *buf, size_t len)
{
	const char *env = getenv("FABRICLAB_LTTNG_PROVIDER");
	Dl_info info;
	const char *slash;

	if (env && *env) {
		snprintf(buf, len, "%s", env);
		return 0;
	}
	if (!dladdr((void *)provider_path, &info) || !info.dli_fname)
		return -1;
	slash = strrchr(info.dli_fname, '/');
	if (!slash)
		snprintf(buf, len, "%s", PROVIDER_NAME);
	else
		snprintf(buf, len, "%.*s/%s", (int)(slash - info.dli_fname), info.dli_fname,
			 PROVIDER_NAME);
	return 0;
}

static int open_provider(const char *path)
{
	/* Never unloaded: lttng-ust must not see its probes vanish while a session runs. */
	void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
	fl_tp_api_fn api;

	if (!lib)
		return fl_fail(FL_ERR_SYSTEM, "%s", dlerror());
	*(void **)&api = dlsym(lib, FL_TP_API_SYMBOL);
	tp = api ? api() : NULL;
	if (!tp || tp->version != FL_TP_API_VERSION || tp->struct_size < sizeof(*tp)) {
		tp = NULL;
		return fl_fail(FL_ERR_USAGE, "%s is not a fabriclab provider of version %d", path,
			       FL_TP_API_VERSION);
	}
	for (int i = 0; i < FL_TP_EVENTS; i++) {
		fl_trace_points[i] = (struct fl_tp_point){
			.struct_size = sizeof(struct fl_tp_point),
			.provider_name = tp->provider_name,
			.event_name = tp->event_name[i], .signature = tp->signature[i],
		};
		point_list[i] = &fl_trace_points[i];
	}
	if (tp->attach(point_list, FL_TP_EVENTS)) {
		tp = NULL;
		return fl_fail(FL_ERR_SYSTEM, "%s could not register the tracepoints", path);
	}
	attached = 1;
	return FL_OK;
}

static void load_provider(void)
{
	char path[PATH_MAX];
	long ms = TICK_DEFAULT_MS;

	/* Checked by fl_trace_start before; set here, once, whatever thread starts first. */
	if (fl_env_long("FABRICLAB_TRACE_INTERVAL_MS", TICK_DEFAULT_MS, 10, 3600000, &ms))
		ms = TICK_DEFAULT_MS;
	tick_period_ns = (uint64_t)ms * 1000000ULL;

	if (provider_path(path, sizeof(path))) {
		FL_INFO("LTTng tracing unavailable: cannot locate %s", PROVIDER_NAME);
		return;
	}
	if (!strcmp(path, "off")) {
		FL_INFO("LTTng tracing off (FABRICLAB_LTTNG_PROVIDER=off)");
		return;
	}
	if (open_provider(path)) {
		FL_INFO("LTTng tracing unavailable: %s", fl_error_text());
		return;
	}
	FL_INFO("LTTng tracing available: provider %s loaded (events fabriclab:*)", path);
}

int fl_trace_start(void)
{
	long ms;
	int rc = fl_env_long("FABRICLAB_TRACE_INTERVAL_MS", TICK_DEFAULT_MS, 10, 3600000, &ms);

	if (rc)
		return rc;
	pthread_once(&start_once, load_provider);
	return FL_OK;
}

/* lttng-ust forgets the records (and waits out readers) before their memory can go. */
void fl_trace_stop(void)
{
	if (!attached)
		return;
	attached = 0;
	tp->detach(point_list);
	for (int i = 0; i < FL_TP_EVENTS; i++)
		__atomic_store_n(&fl_trace_points[i].state, 0, __ATOMIC_RELAXED);
}

/*
 * A plugin whose report never started still detaches before it is unmapped;
 * the lowest priority runs after the report's own unload hook, so its final
 * events still go out.
 */
__attribute__((destructor(101))) static void trace_at_unload(void)
{
	fl_trace_stop();
}

static void remember_hop(uint32_t conn_id, uint32_t hop_id)
{
	atomic_store_explicit(&hop_of_conn[conn_id % HOP_IDS],
			      (uint64_t)conn_id << 32 | hop_id, memory_order_relaxed);
}

static uint32_t hop_of(uint32_t conn_id)
{
	uint64_t v = atomic_load_explicit(&hop_of_conn[conn_id % HOP_IDS], memory_order_relaxed);

	return (uint32_t)(v >> 32) == conn_id ? (uint32_t)v : 0;
}

void fl_trace_conn_up(struct fl_trace_conn *c, fl_trace_props_fn props_of)
{
	int send = c->send;
	const struct fl_endpoint *src = send ? c->self : c->peer;
	const struct fl_endpoint *dst = send ? c->peer : c->self;
	struct fl_props props = { 0 };
	struct fl_tp_conn e;

	c->hop_id = c->profiler ? fl_trace_profiler_hop_id(src->node, src->dev_name, dst->node,
							     dst->dev_name, src->rank, dst->rank,
							     c->self->comm_hash)
				: fl_trace_hop_id(src->node, src->dev_name, dst->node, dst->dev_name);
	remember_hop(c->id, c->hop_id);
	if (!fl_trace_on(FL_TP_CONN_UP))
		return;
	/* The speed reports use: FABRICLAB_LINK_RATE overrides the transport's. */
	if (!props_of || props_of(c->self->dev, &props) != FL_OK)
		memset(&props, 0, sizeof(props));
	e = (struct fl_tp_conn){
		.conn_id = c->id, .hop_id = c->hop_id, .view = send ? "send" : "recv",
		.src_node = src->node, .src_dev = src->dev_name,
		.dst_node = dst->node, .dst_dev = dst->dev_name,
		.src_rank = src->rank, .dst_rank = dst->rank, .transport = c->transport,
		.local_dev = c->self->dev, .speed_mbps = props.speed_mbps,
		.gdr_capable = (props.ptr_support & (FL_PTR_CUDA | FL_PTR_DMABUF)) != 0,
	};
	tp->conn_up(&e);
}

void fl_trace_conn_down(const struct fl_trace_conn *c)
{
	const struct fl_conn_stats *s = c->stats;
	int mem = atomic_load_explicit(&s->mem_types, memory_order_relaxed);
	struct fl_tp_conn_down e = {
		.conn_id = c->id, .hop_id = c->hop_id, .bytes = fl_stats_load(&s->bytes),
		.messages = fl_stats_messages(s), .mem_types = mem,
		.gdr = (mem & (FL_PTR_CUDA | FL_PTR_DMABUF)) != 0,
	};

	if (fl_trace_on(FL_TP_CONN_DOWN))
		tp->conn_down(&e);
}

void fl_trace_error(const struct fl_trace_conn *c, const char *op, int code, const char *text)
{
	struct fl_tp_error e = {
		.conn_id = c ? c->id : 0, .hop_id = c ? c->hop_id : 0, .op = op ? op : "",
		.code = code, .message = text ? text : "",
	};

	if (fl_trace_on(FL_TP_ERROR))
		tp->error(&e);
}

void fl_trace_fault(uint32_t conn_id, const char *action, const char *rule, uint64_t delay_ns,
		    uint64_t rate_bytes_per_s)
{
	struct fl_tp_fault e = {
		.conn_id = conn_id, .hop_id = hop_of(conn_id), .action = action ? action : "",
		.rule = rule ? rule : "", .delay_ns = delay_ns,
		.rate_bytes_per_s = rate_bytes_per_s,
	};

	if (fl_trace_on(FL_TP_FAULT))
		tp->fault(&e);
}

void fl_trace_emit_posted(const struct fl_trace_conn *c, unsigned slot, int n,
			  const size_t *sizes, const int *tags)
{
	uint64_t posted = fl_stats_posted_at(c->stats, slot);
	struct fl_tp_posted e = {
		.conn_id = c->id, .hop_id = c->hop_id, .slot = slot, .nbufs = n,
		.tag = tags ? tags[0] : -1, .posted_ns = posted == FL_SLOT_FREE ? 0 : posted,
	};

	for (int i = 0; i < n; i++)
		e.bytes += sizes[i];

	tp->request_posted(&e);
}

/* The same arithmetic as fl_stats_complete: a trace adds up to the report. */
void fl_trace_emit_done(const struct fl_trace_conn *c, unsigned slot, uint64_t bytes,
			const struct fl_xfer_times *t)
{
	uint64_t posted = fl_stats_posted_at(c->stats, slot);

	fl_trace_emit_done_at(c, slot, bytes, t, posted == FL_SLOT_FREE ? 0 : posted,
			      fl_clock_ns());
}

void fl_trace_emit_done_at(const struct fl_trace_conn *c, unsigned slot, uint64_t bytes,
			   const struct fl_xfer_times *t, uint64_t posted_ns, uint64_t done_ns)
{
	int wired = t->wire_start_ns && t->wire_end_ns > t->wire_start_ns;
	struct fl_tp_done d = {
		.conn_id = c->id, .hop_id = c->hop_id, .slot = slot, .bytes = bytes,
		.posted_ns = posted_ns, .ready_ns = t->ready_ns, .done_ns = done_ns,
	};

	if (wired) {
		d.wire_bytes = t->wire_bytes && t->wire_bytes < bytes ? t->wire_bytes : bytes;
		d.wire_start_ns = t->wire_start_ns;
		d.wire_end_ns = t->wire_end_ns;
		d.wire_ns = t->wire_end_ns - t->wire_start_ns;
	}
	if (d.posted_ns && t->ready_ns > d.posted_ns)
		d.peer_wait_ns = t->ready_ns - d.posted_ns;
	if (t->ready_ns && fl_trace_on(FL_TP_REQUEST_READY)) {
		struct fl_tp_ready e = { .conn_id = c->id, .hop_id = c->hop_id, .slot = slot,
					 .ready_ns = t->ready_ns, .peer_wait_ns = d.peer_wait_ns };

		tp->request_ready(&e);
	}
	if (fl_trace_on(FL_TP_REQUEST_DONE))
		tp->request_done(&d);
}

static void emit_hop(const struct fl_hop_snapshot *h, int final)
{
	const struct fl_hop_key *k = &h->key;
	struct fl_tp_hop e = {
		.hop_id = fl_trace_key_hop_id(k),
		.view = k->view == FL_HOP_SEND ? "send" : "recv",
		.src_node = k->src_node, .src_dev = k->src_dev,
		.dst_node = k->dst_node, .dst_dev = k->dst_dev,
		.src_rank = h->src_rank, .dst_rank = h->dst_rank,
		.connections = h->connections, .mem_types = h->mem_types, .final = final,
		.bytes = h->t.bytes, .wire_bytes = h->t.wire_bytes, .messages = h->t.messages,
		.wire_ns = h->wire_ns, .active_ns = h->active_ns, .peer_wait_ns = h->t.peer_wait_ns,
		.wire_gbs = fl_report_wire_gbs(h),
	};

	tp->hop_snapshot(&e);
}

void fl_trace_tick(uint64_t now_ns)
{
	struct fl_hop_snapshot *hops;
	int n;

	if (!fl_trace_on(FL_TP_HOP_SNAPSHOT) || now_ns < next_tick_ns)
		return;
	next_tick_ns = now_ns + tick_period_ns;
	n = fl_hops_snapshot(&hops);
	for (int i = 0; i < n; i++)
		emit_hop(&hops[i], 0);
	if (n >= 0)
		free(hops);
}

static void emit_verdict(const struct fl_report *r)
{
	const struct fl_verdict *v = &r->verdict;
	uint32_t hop = 0;
	struct fl_tp_verdict e;

	if (v->hop >= 0 && v->hop < r->nhops) {
		const struct fl_hop_key *k = &r->hops[v->hop].key;

		hop = fl_trace_key_hop_id(k);
	}
	e = (struct fl_tp_verdict){
		.kind = fl_verdict_kind_name(v->kind), .hop_id = hop, .node = v->node,
		.dev = v->dev, .ratio = v->ratio, .median_gbs = v->median_gbs,
		.culprit_gbs = v->culprit_gbs, .speedup = v->speedup,
		.judged_hops = v->judged_hops, .reason = v->reason,
	};
	tp->verdict(&e);
}

void fl_trace_report(const struct fl_report *r)
{
	if (fl_trace_on(FL_TP_HOP_SNAPSHOT))
		for (int i = 0; i < r->nhops; i++)
			emit_hop(&r->hops[i], r->final);
	if (r->final && fl_trace_on(FL_TP_VERDICT))
		emit_verdict(r);
}

void fl_trace_live(int state, const struct fl_live_finding *f)
{
	const struct fl_hop_key *k = &f->key;
	struct fl_tp_live e;

	if (!fl_trace_on(FL_TP_LIVE_FINDING))
		return;
	e = (struct fl_tp_live){
		.state = fl_live_state_name((enum fl_live_state)state), .kind = f->kind,
		.culprit = f->culprit,
		.hop_id = fl_trace_hop_id(k->src_node, k->src_dev, k->dst_node, k->dst_dev),
		.view = k->view == FL_HOP_SEND ? "send" : "recv",
		.src_node = k->src_node, .src_dev = k->src_dev,
		.dst_node = k->dst_node, .dst_dev = k->dst_dev,
		.ratio = f->ratio, .wire_gbs = f->gbs, .line_gbs = f->line_gbs, .cost = f->cost,
		.since_unix = f->since_unix, .windows = f->windows,
		.window_ns = (uint64_t)(f->window_s * 1e9), .at_ns = f->at_ns,
	};
	tp->live_finding(&e);
}

#endif /* FABRICLAB_NO_TRACING */
