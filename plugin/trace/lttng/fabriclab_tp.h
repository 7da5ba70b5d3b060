/*
 * The `fabriclab` LTTng-UST tracepoint provider (lttng-ust 2.13, API v1 names),
 * compiled only into build/libfabriclab-lttng.so (see fabriclab_tp_api.h).
 * Field names and meanings: docs/tracing.md. Times named *_ns are the plugin's
 * CLOCK_MONOTONIC nanoseconds (plugin/clock.h), the time line LTTng stamps
 * events on; durations are ns. conn_id is the wrap's connection id, hop_id the
 * FNV-1a hash of the hop's names (see fl_trace_hop_id), so both ends of a hop,
 * every process and the report agree on it.
 */
/*
 * The emitting process's id (getpid(), kept by fabriclab_emit.c and renewed in
 * a forked child): every event carries it as `pid`, so the events of several
 * processes sharing per-user buffers are told apart without the vpid context.
 * Read only inside an enabled probe. Outside the multi-read part: lttng-ust
 * expands that part inside its own tables.
 */
#ifndef FABRICLAB_TP_PID_H
#define FABRICLAB_TP_PID_H
#include <stdint.h>
extern int32_t fl_tp_pid __attribute__((visibility("hidden")));
#endif

#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER fabriclab

#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "fabriclab_tp.h"

#if !defined(FABRICLAB_TP_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define FABRICLAB_TP_H

#include <stdint.h>

#include <lttng/tracepoint.h>

#include "fabriclab_tp_api.h"

/* Both ends of a hop: the connection's view of it and its local device. */
LTTNG_UST_TRACEPOINT_EVENT(fabriclab, conn_up,
	LTTNG_UST_TP_ARGS(const struct fl_tp_conn *, c),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(int32_t, pid, fl_tp_pid)
		lttng_ust_field_integer(uint32_t, conn_id, c->conn_id)
		lttng_ust_field_integer(uint32_t, hop_id, c->hop_id)
		lttng_ust_field_string(view, c->view)
		lttng_ust_field_string(src_node, c->src_node)
		lttng_ust_field_string(src_dev, c->src_dev)
		lttng_ust_field_string(dst_node, c->dst_node)
		lttng_ust_field_string(dst_dev, c->dst_dev)
		lttng_ust_field_integer(int32_t, src_rank, c->src_rank)
		lttng_ust_field_integer(int32_t, dst_rank, c->dst_rank)
		lttng_ust_field_string(transport, c->transport)
		lttng_ust_field_integer(int32_t, local_dev, c->local_dev)
		lttng_ust_field_integer(int32_t, speed_mbps, c->speed_mbps)
		lttng_ust_field_integer(int32_t, gdr_capable, c->gdr_capable)))

LTTNG_UST_TRACEPOINT_EVENT(fabriclab, conn_down,
	LTTNG_UST_TP_ARGS(const struct fl_tp_conn_down *, e),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(int32_t, pid, fl_tp_pid)
		lttng_ust_field_integer(uint32_t, conn_id, e->conn_id)
		lttng_ust_field_integer(uint32_t, hop_id, e->hop_id)
		lttng_ust_field_integer(uint64_t, bytes, e->bytes)
		lttng_ust_field_integer(uint64_t, messages, e->messages)
		lttng_ust_field_integer_hex(int32_t, mem_types, e->mem_types)
		lttng_ust_field_integer(int32_t, gdr, e->gdr)))

LTTNG_UST_TRACEPOINT_EVENT(fabriclab, request_posted,
	LTTNG_UST_TP_ARGS(const struct fl_tp_posted *, e),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(int32_t, pid, fl_tp_pid)
		lttng_ust_field_integer(uint32_t, conn_id, e->conn_id)
		lttng_ust_field_integer(uint32_t, hop_id, e->hop_id)
		lttng_ust_field_integer(uint32_t, slot, e->slot)
		lttng_ust_field_integer(int32_t, nbufs, e->nbufs)
		lttng_ust_field_integer(uint64_t, bytes, e->bytes)
		lttng_ust_field_integer(int32_t, tag, e->tag)
		lttng_ust_field_integer(uint64_t, posted_ns, e->posted_ns)))

LTTNG_UST_TRACEPOINT_EVENT(fabriclab, request_ready,
	LTTNG_UST_TP_ARGS(const struct fl_tp_ready *, e),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(int32_t, pid, fl_tp_pid)
		lttng_ust_field_integer(uint32_t, conn_id, e->conn_id)
		lttng_ust_field_integer(uint32_t, hop_id, e->hop_id)
		lttng_ust_field_integer(uint32_t, slot, e->slot)
		lttng_ust_field_integer(uint64_t, ready_ns, e->ready_ns)
		lttng_ust_field_integer(uint64_t, peer_wait_ns, e->peer_wait_ns)))

LTTNG_UST_TRACEPOINT_EVENT(fabriclab, request_done,
	LTTNG_UST_TP_ARGS(const struct fl_tp_done *, d),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(int32_t, pid, fl_tp_pid)
		lttng_ust_field_integer(uint32_t, conn_id, d->conn_id)
		lttng_ust_field_integer(uint32_t, hop_id, d->hop_id)
		lttng_ust_field_integer(uint32_t, slot, d->slot)
		lttng_ust_field_integer(uint64_t, bytes, d->bytes)
		lttng_ust_field_integer(uint64_t, wire_bytes, d->wire_bytes)
		lttng_ust_field_integer(uint64_t, posted_ns, d->posted_ns)
		lttng_ust_field_integer(uint64_t, ready_ns, d->ready_ns)
		lttng_ust_field_integer(uint64_t, wire_start_ns, d->wire_start_ns)
		lttng_ust_field_integer(uint64_t, wire_end_ns, d->wire_end_ns)
		lttng_ust_field_integer(uint64_t, done_ns, d->done_ns)
		lttng_ust_field_integer(uint64_t, wire_ns, d->wire_ns)
		lttng_ust_field_integer(uint64_t, peer_wait_ns, d->peer_wait_ns)))

LTTNG_UST_TRACEPOINT_EVENT(fabriclab, error,
	LTTNG_UST_TP_ARGS(const struct fl_tp_error *, e),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(int32_t, pid, fl_tp_pid)
		lttng_ust_field_integer(uint32_t, conn_id, e->conn_id)
		lttng_ust_field_integer(uint32_t, hop_id, e->hop_id)
		lttng_ust_field_string(op, e->op)
		lttng_ust_field_integer(int32_t, code, e->code)
		lttng_ust_field_string(message, e->message)))

LTTNG_UST_TRACEPOINT_EVENT(fabriclab, fault,
	LTTNG_UST_TP_ARGS(const struct fl_tp_fault *, e),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(int32_t, pid, fl_tp_pid)
		lttng_ust_field_integer(uint32_t, conn_id, e->conn_id)
		lttng_ust_field_integer(uint32_t, hop_id, e->hop_id)
		lttng_ust_field_string(action, e->action)
		lttng_ust_field_string(rule, e->rule)
		lttng_ust_field_integer(uint64_t, delay_ns, e->delay_ns)
		lttng_ust_field_integer(uint64_t, rate_bytes_per_s, e->rate_bytes_per_s)))

LTTNG_UST_TRACEPOINT_EVENT(fabriclab, hop_snapshot,
	LTTNG_UST_TP_ARGS(const struct fl_tp_hop *, h),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(int32_t, pid, fl_tp_pid)
		lttng_ust_field_integer(uint32_t, hop_id, h->hop_id)
		lttng_ust_field_string(view, h->view)
		lttng_ust_field_string(src_node, h->src_node)
		lttng_ust_field_string(src_dev, h->src_dev)
		lttng_ust_field_string(dst_node, h->dst_node)
		lttng_ust_field_string(dst_dev, h->dst_dev)
		lttng_ust_field_integer(int32_t, src_rank, h->src_rank)
		lttng_ust_field_integer(int32_t, dst_rank, h->dst_rank)
		lttng_ust_field_integer(int32_t, connections, h->connections)
		lttng_ust_field_integer(uint64_t, bytes, h->bytes)
		lttng_ust_field_integer(uint64_t, wire_bytes, h->wire_bytes)
		lttng_ust_field_integer(uint64_t, messages, h->messages)
		lttng_ust_field_integer(uint64_t, wire_ns, h->wire_ns)
		lttng_ust_field_float(double, wire_gbs, h->wire_gbs)
		lttng_ust_field_integer(uint64_t, active_ns, h->active_ns)
		lttng_ust_field_integer(uint64_t, peer_wait_ns, h->peer_wait_ns)
		lttng_ust_field_integer_hex(int32_t, mem_types, h->mem_types)
		lttng_ust_field_integer(int32_t, final, h->final)))

LTTNG_UST_TRACEPOINT_EVENT(fabriclab, verdict,
	LTTNG_UST_TP_ARGS(const struct fl_tp_verdict *, v),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(int32_t, pid, fl_tp_pid)
		lttng_ust_field_string(kind, v->kind)
		lttng_ust_field_integer(uint32_t, hop_id, v->hop_id)
		lttng_ust_field_string(node, v->node)
		lttng_ust_field_string(dev, v->dev)
		lttng_ust_field_float(double, ratio, v->ratio)
		lttng_ust_field_float(double, median_gbs, v->median_gbs)
		lttng_ust_field_float(double, culprit_gbs, v->culprit_gbs)
		lttng_ust_field_float(double, speedup, v->speedup)
		lttng_ust_field_integer(int32_t, judged_hops, v->judged_hops)
		lttng_ust_field_string(reason, v->reason)))

/* at_ns: when the judgement was made, on the plugin's clock (the same as the event's stamp). */
LTTNG_UST_TRACEPOINT_EVENT(fabriclab, live_finding,
	LTTNG_UST_TP_ARGS(const struct fl_tp_live *, l),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(int32_t, pid, fl_tp_pid)
		lttng_ust_field_string(state, l->state)
		lttng_ust_field_string(kind, l->kind)
		lttng_ust_field_string(culprit, l->culprit)
		lttng_ust_field_integer(uint32_t, hop_id, l->hop_id)
		lttng_ust_field_string(view, l->view)
		lttng_ust_field_string(src_node, l->src_node)
		lttng_ust_field_string(src_dev, l->src_dev)
		lttng_ust_field_string(dst_node, l->dst_node)
		lttng_ust_field_string(dst_dev, l->dst_dev)
		lttng_ust_field_float(double, ratio, l->ratio)
		lttng_ust_field_float(double, wire_gbs, l->wire_gbs)
		lttng_ust_field_float(double, line_gbs, l->line_gbs)
		lttng_ust_field_float(double, cost, l->cost)
		lttng_ust_field_float(double, since_unix, l->since_unix)
		lttng_ust_field_integer(int32_t, windows, l->windows)
		lttng_ust_field_integer(uint64_t, window_ns, l->window_ns)
		lttng_ust_field_integer(uint64_t, at_ns, l->at_ns)))

#endif /* FABRICLAB_TP_H */

#include <lttng/tracepoint-event.h>
