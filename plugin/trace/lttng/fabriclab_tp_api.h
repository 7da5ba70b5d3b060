/*
 * The interface between the plugin and its tracepoint provider object
 * (build/libfabriclab-lttng.so). The provider owns everything that links
 * LTTng: the probes and the tracepoints that emit. The plugin dlopen()s it,
 * asks fabriclab_tp_api() for this table and attaches its own tracepoint
 * records (struct fl_tp_point) through it, so lttng-ust sets each event's enable
 * word in the plugin's memory: a disabled hook is one load and a branch. Plain
 * C: the plugin needs no LTTng header to build. LTTng-UST takes at most ten
 * arguments per event, so wide events travel by pointer.
 */
#ifndef FABRICLAB_TP_API_H
#define FABRICLAB_TP_API_H

#include <stdint.h>

#define FL_TP_API_VERSION 3
#define FL_TP_API_SYMBOL "fabriclab_tp_api"

enum fl_tp_event {
	FL_TP_CONN_UP,
	FL_TP_CONN_DOWN,
	FL_TP_REQUEST_POSTED,
	FL_TP_REQUEST_READY,
	FL_TP_REQUEST_DONE,
	FL_TP_ERROR,
	FL_TP_FAULT,
	FL_TP_HOP_SNAPSHOT,
	FL_TP_VERDICT,
	FL_TP_LIVE_FINDING,
	FL_TP_EVENTS
};

struct fl_tp_conn {
	uint32_t conn_id, hop_id;
	const char *view; /* "send" or "recv" */
	const char *src_node, *src_dev, *dst_node, *dst_dev;
	int32_t src_rank, dst_rank;
	const char *transport;
	int32_t local_dev, speed_mbps, gdr_capable;
};

struct fl_tp_conn_down {
	uint32_t conn_id, hop_id;
	uint64_t bytes, messages;
	int32_t mem_types, gdr;
};

struct fl_tp_posted {
	uint32_t conn_id, hop_id, slot;
	int32_t nbufs, tag;
	uint64_t bytes, posted_ns;
};

struct fl_tp_ready {
	uint32_t conn_id, hop_id, slot;
	uint64_t ready_ns, peer_wait_ns;
};

struct fl_tp_done {
	uint32_t conn_id, hop_id, slot;
	uint64_t bytes, wire_bytes;
	uint64_t posted_ns, ready_ns, wire_start_ns, wire_end_ns, done_ns;
	uint64_t wire_ns, peer_wait_ns;
};

struct fl_tp_error {
	uint32_t conn_id, hop_id;
	const char *op;
	int32_t code;
	const char *message;
};

struct fl_tp_fault {
	uint32_t conn_id, hop_id;
	const char *action, *rule;
	uint64_t delay_ns, rate_bytes_per_s;
};

struct fl_tp_hop {
	uint32_t hop_id;
	const char *view;
	const char *src_node, *src_dev, *dst_node, *dst_dev;
	int32_t src_rank, dst_rank, connections, mem_types, final;
	uint64_t bytes, wire_bytes, messages, wire_ns, active_ns, peer_wait_ns;
	double wire_gbs;
};

struct fl_tp_verdict {
	const char *kind;
	uint32_t hop_id;
	const char *node, *dev;
	double ratio, median_gbs, culprit_gbs, speedup;
	int32_t judged_hops;
	const char *reason;
};

/* A finding of the live judgement appeared, changed or cleared (plugin/report/report_live.h). */
struct fl_tp_live {
	const char *state; /* "appeared", "changed", "cleared" */
	const char *kind, *culprit;
	uint32_t hop_id;
	const char *view, *src_node, *src_dev, *dst_node, *dst_dev;
	double ratio, wire_gbs, line_gbs, cost, since_unix;
	int32_t windows;
	uint64_t window_ns, at_ns;
};

/*
 * The base ABI of lttng-ust's struct lttng_ust_tracepoint (lttng/tracepoint-types.h,
 * "fields need to be only added at the end"); the provider asserts the two agree.
 * lttng-ust writes `state` while a session enables the event.
 */
struct fl_tp_point {
	uint32_t struct_size;
	const char *provider_name;
	const char *event_name;
	int state;
	void *probes;
	int *provider_ref;
	const char *signature;
};

struct fl_tp_api {
	uint32_t version; /* FL_TP_API_VERSION */
	uint32_t struct_size;
	/* Per event: its provider and event names and argument signature, for fl_tp_point. */
	const char *provider_name;
	const char *event_name[FL_TP_EVENTS];
	const char *signature[FL_TP_EVENTS];
	/* Registers the caller's records with lttng-ust (0 on success); detach before they go. */
	int (*attach)(struct fl_tp_point *const *points, int count);
	void (*detach)(struct fl_tp_point *const *points);
	void (*conn_up)(const struct fl_tp_conn *e);
	void (*conn_down)(const struct fl_tp_conn_down *e);
	void (*request_posted)(const struct fl_tp_posted *e);
	void (*request_ready)(const struct fl_tp_ready *e);
	void (*request_done)(const struct fl_tp_done *e);
	void (*error)(const struct fl_tp_error *e);
	void (*fault)(const struct fl_tp_fault *e);
	void (*hop_snapshot)(const struct fl_tp_hop *e);
	void (*verdict)(const struct fl_tp_verdict *e);
	void (*live_finding)(const struct fl_tp_live *e);
};

typedef const struct fl_tp_api *(*fl_tp_api_fn)(void);

#endif
