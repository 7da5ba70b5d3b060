/*
 * The provider object's side of fabriclab_tp_api.h: the tracepoints are
 * defined here, next to their probes, so the plugin that loads this object
 * holds no LTTng code or symbol at all (and its dynamic symbol table stays the
 * NCCL entry points alone). Each emit function is one tracepoint.
 */
#define LTTNG_UST_TRACEPOINT_DEFINE
#define LTTNG_UST_TRACEPOINT_HIDDEN_DEFINITION
#define LTTNG_UST_TRACEPOINT_PROVIDER_HIDDEN_DEFINITION
#include "fabriclab_tp.h"

#include <pthread.h>
#include <stddef.h>
#include <unistd.h>

int32_t fl_tp_pid;

/* glibc no longer caches getpid(): kept here, so an enabled event costs no system call. */
static void note_pid(void)
{
	fl_tp_pid = (int32_t)getpid();
}

__attribute__((constructor)) static void pid_at_load(void)
{
	note_pid();
	pthread_atfork(NULL, NULL, note_pid);
}

#define EMIT(event, type)                                         \
	static void emit_##event(const struct type *e)            \
	{                                                         \
		lttng_ust_tracepoint(fabriclab, event, e);        \
	}

EMIT(conn_up, fl_tp_conn)
EMIT(conn_down, fl_tp_conn_down)
EMIT(request_posted, fl_tp_posted)
EMIT(request_ready, fl_tp_ready)
EMIT(request_done, fl_tp_done)
EMIT(error, fl_tp_error)
EMIT(fault, fl_tp_fault)
EMIT(hop_snapshot, fl_tp_hop)
EMIT(verdict, fl_tp_verdict)
EMIT(live_finding, fl_tp_live)

#define POINT(event) lttng_ust_tracepoint_fabriclab___##event
_Static_assert(sizeof(struct fl_tp_point) == sizeof(struct lttng_ust_tracepoint) &&
		       offsetof(struct fl_tp_point, state) ==
			       offsetof(struct lttng_ust_tracepoint, state) &&
		       offsetof(struct fl_tp_point, signature) ==
			       offsetof(struct lttng_ust_tracepoint, signature),
	       "struct fl_tp_point must be lttng-ust's struct lttng_ust_tracepoint");

/* The plugin's records join the provider's: lttng-ust enables both by name. */
static int attach(struct fl_tp_point *const *points, int count)
{
	struct lttng_ust_tracepoint_dlopen *lib = lttng_ust_tracepoint_dlopen_ptr;

	if (!lib || !lib->lttng_ust_tracepoint_module_register)
		return -1;
	return lib->lttng_ust_tracepoint_module_register(
		(struct lttng_ust_tracepoint *const *)points, count);
}

static void detach(struct fl_tp_point *const *points)
{
	struct lttng_ust_tracepoint_dlopen *lib = lttng_ust_tracepoint_dlopen_ptr;

	if (lib && lib->lttng_ust_tracepoint_module_unregister)
		lib->lttng_ust_tracepoint_module_unregister(
			(struct lttng_ust_tracepoint *const *)points);
}

static struct fl_tp_api api = {
	.version = FL_TP_API_VERSION,
	.struct_size = sizeof(struct fl_tp_api),
	.provider_name = "fabriclab",
	.attach = attach,
	.detach = detach,
	.conn_up = emit_conn_up,
	.conn_down = emit_conn_down,
	.request_posted = emit_request_posted,
	.request_ready = emit_request_ready,
	.request_done = emit_request_done,
	.error = emit_error,
	.fault = emit_fault,
	.hop_snapshot = emit_hop_snapshot,
	.verdict = emit_verdict,
	.live_finding = emit_live_finding,
};

const struct fl_tp_api *fabriclab_tp_api(void);

static void name(enum fl_tp_event id, const struct lttng_ust_tracepoint *point)
{
	api.event_name[id] = point->event_name;
	api.signature[id] = point->signature;
}

__attribute__((visibility("default"))) const struct fl_tp_api *fabriclab_tp_api(void)
{
	name(FL_TP_CONN_UP, &POINT(conn_up));
	name(FL_TP_CONN_DOWN, &POINT(conn_down));
	name(FL_TP_REQUEST_POSTED, &POINT(request_posted));
	name(FL_TP_REQUEST_READY, &POINT(request_ready));
	name(FL_TP_REQUEST_DONE, &POINT(request_done));
	name(FL_TP_ERROR, &POINT(error));
	name(FL_TP_FAULT, &POINT(fault));
	name(FL_TP_HOP_SNAPSHOT, &POINT(hop_snapshot));
	name(FL_TP_VERDICT, &POINT(verdict));
	name(FL_TP_LIVE_FINDING, &POINT(live_finding));
	return &api;
}
