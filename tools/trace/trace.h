/*
 * `fabriclab trace TRACE_DIR`: reads the `fabriclab:*` events of an LTTng
 * trace (docs/tracing.md) and rebuilds from the request events alone what
 * each process's report holds: every hop's bytes, wire union, waits. Those
 * figures go through the same join and verdict as `fabriclab report`, a
 * second, independent path to the same answer; windows show each hop's wire
 * bandwidth over time.
 */
#ifndef FABRICLAB_TRACE_H
#define FABRICLAB_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "tools/report/report.h"

/* One wire interval (or posted -> done interval) and the bytes it moved. */
struct trace_span {
	uint64_t start, end, bytes;
};

struct trace_spans {
	struct trace_span *v;
	size_t n, cap;
};

/* What a request_done event says (times on the plugin's clock, ns; 0: not observed). */
struct trace_request {
	uint32_t slot;
	uint64_t bytes, wire_bytes;
	uint64_t posted, ready, wire_start, wire_end, done;
	uint64_t peer_wait, wire_ns;
};

/* One hop as one process saw it (one view), built from its connections' events. */
struct trace_hop {
	uint32_t hop_id;
	bool is_send;
	struct report_view_key key;
	char transport[16];
	int speed_mbps;
	bool gdr_capable;
	long src_rank, dst_rank;
	long connections;
	int mem_types;
	uint64_t bytes, messages, wire_bytes, peer_wait_ns;
	uint64_t sizes[REPORT_SIZE_BUCKETS];
	struct trace_spans wire;   /* one per request with a wire time: its wire interval */
	struct trace_spans active; /* one per request: posted -> done */
	struct trace_spans wait;   /* one per request that waited for its peer: posted -> ready */
};

/* A connection's rows on the timeline: a request goes on the first row free at its post. */
struct trace_lanes {
	uint64_t *end; /* the last done_ns placed on each row */
	int *tid;
	int n, cap;
};

struct trace_conn {
	uint32_t id;
	size_t hop; /* index into the process's hops */
	int first_tag;
	struct trace_lanes lanes; /* --perfetto only */
};

/* A live_finding event: a hop the plugin found slow (or well again) while the job ran. */
struct trace_live {
	char state[12], kind[16];
	char culprit[2 * FL_NODE_NAME_LEN + 2 * FL_DEV_NAME_LEN + 8];
	uint32_t hop_id;
	double ratio, cost, line_gbs;
	int windows;
	uint64_t window_ns, at_ns;
};

/* Events of one process: told apart by the trace's host name and the pid (field or vpid). */
struct trace_process {
	char host[64];
	int64_t vpid;
	char node[FL_NODE_NAME_LEN];
	long rank;
	struct trace_conn *conns;
	size_t nconns, conns_cap;
	struct trace_hop *hops;
	size_t nhops, hops_cap;
	char verdict[32]; /* the kind its own verdict event named, "" if none */
	struct report_injected *injected; /* its fault events, one per rule */
	size_t ninjected, injected_cap;
	struct trace_live *live; /* in the order emitted */
	size_t nlive, live_cap;
};

/*
 * Events LTTng could not record (its ring buffer was full: discard mode) or
 * packets it overwrote, as babeltrace2 reports them, with the stretch of the
 * trace's clock they were lost in (0 when the trace does not say).
 */
struct trace_discard {
	char host[64];
	uint64_t events, packets;
	uint64_t start_ns, end_ns;
};

struct trace_pf;

struct trace_model {
	struct trace_process *procs;
	size_t nprocs, procs_cap;
	uint64_t events;      /* fabriclab:* events read */
	uint64_t orphans;     /* request events of a connection whose conn_up is not in the trace */
	uint64_t reused_ids;  /* conn_up for an id already up in the "same" process */
	bool vpid_seen;       /* a pid field, vpid context or environment entry told processes apart */
	uint64_t first_ns, last_ns; /* stamps of the first and last fabriclab event */
	uint64_t discarded_events, discarded_packets;
	uint64_t skipped_files; /* stream files babeltrace2 would pass over (trace_check_streams) */
	struct trace_discard *discards;
	size_t ndiscards, discards_cap;
	struct trace_pf *pf; /* the timeline being written (--perfetto), or NULL */
};

/* What one event carries, read field by field (trace_read.c fills it). */
struct trace_fields;
uint64_t trace_field_u64(const struct trace_fields *f, const char *name);
int64_t trace_field_s64(const struct trace_fields *f, const char *name);
const char *trace_field_str(const struct trace_fields *f, const char *name);
double trace_field_double(const struct trace_fields *f, const char *name);

/* trace_check.c: FL_ERR_USAGE, naming the file, unless dir's metadata is whole CTF. */
int trace_check_metadata(const char *dir);
/*
 * trace_check.c: the files of dir that babeltrace2 would pass over without a
 * word (not regular, empty), each said on stderr and counted in m->skipped_files.
 */
int trace_check_streams(const char *dir, struct trace_model *m);
/*
 * Arms FABRICLAB_TRACE_TIMEOUT_MS (default 10 min): past it the process exits 2
 * with a message, for damage the check could not see; trace_read_done disarms.
 */
int trace_read_deadline(void);
void trace_read_done(void);

/* trace_read.c: every fabriclab event under dir (any depth) into the model. */
int trace_read(const char *dir, struct trace_model *m);

/* trace_model.c */
/* stamp_ns: the event's time on the trace's clock (ns), 0 when it has none. */
int trace_model_event(struct trace_model *m, const char *host, int64_t vpid, uint64_t stamp_ns,
		      const char *name, const struct trace_fields *f);
/* A discarded-events or discarded-packets message. */
int trace_model_discard(struct trace_model *m, const struct trace_discard *d);
/* Each process becomes one report file of the set, ready for report_merge. */
int trace_model_to_reports(struct trace_model *m, struct report_set *set);
void trace_model_free(struct trace_model *m);
/* Length of the union of the spans (sorts them). */
uint64_t trace_spans_union(struct trace_spans *s);

/* One window of one hop: bytes (pro rata), union of wire time, sum of peer-wait time. */
struct trace_window {
	double bytes;
	uint64_t wire_ns, wait_ns;
};

/* The windows' time base: the first wire start of the trace; 0 windows without one. */
void trace_window_range(const struct trace_model *m, uint64_t width, uint64_t *t0, size_t *n);
/* The hop view's wire and wait spans cut into n windows of width from t0 (spans sorted). */
void trace_window_hop(const struct trace_hop *h, uint64_t t0, uint64_t width, size_t n,
		      struct trace_window *w);
/* Events LTTng discarded in [start, start + width): 0 when none (the window's data is whole). */
uint64_t trace_window_lost(const struct trace_model *m, uint64_t start, uint64_t width);

/* trace_window.c: per-hop wire bandwidth in windows of window_ns, from each hop's judged view. */
int trace_print_windows(const struct trace_model *m, const struct report_set *set,
			uint64_t window_ns, FILE *out);
/* The same, as a JSON array member "windows" of the merged report. */
int trace_print_json(const struct trace_model *m, const struct report_set *set,
		     uint64_t window_ns, FILE *out);

/*
 * trace_live.c: the live findings of every process, each with the time from
 * its hop's first traffic (the first 4 MiB within one window) to the event,
 * from the trace's own events. Call after trace_model_to_reports (spans sorted).
 */
void trace_print_live(const struct trace_model *m, FILE *out);
/* The same as a JSON array (jansson's json_t *, returned as void * to keep jansson out). */
void *trace_live_json(const struct trace_model *m);

/*
 * trace_perfetto.c: the timeline as Chrome trace event JSON (Perfetto UI,
 * chrome://tracing). Request slices are written while the trace is read
 * (trace_pf_request), the rest once it is whole (trace_pf_finish).
 */
int trace_pf_open(const char *path, struct trace_pf **out);
/* The first event's stamp: times in the file count from just before it. */
void trace_pf_origin(struct trace_pf *pf, uint64_t first_ns);
int trace_pf_request(struct trace_pf *pf, const struct trace_model *m, size_t proc,
		     struct trace_conn *c, const struct trace_request *r);
/* cat: "fault", "error" or "live_finding"; args: a json_t *, taken. */
int trace_pf_instant(struct trace_pf *pf, size_t proc, uint64_t at_ns, const char *cat,
		     const char *name, void *args);
/* Hop tracks, counters, names, the verdict; closes the file (also on failure). */
int trace_pf_finish(struct trace_pf *pf, const struct trace_model *m, const struct report_set *set,
		    uint64_t window_ns);
/* Closes and removes the file: the trace could not be read. */
void trace_pf_abort(struct trace_pf *pf);

/* trace_main.c: the one line saying what LTTng lost, for every output. */
void trace_print_discards(const struct trace_model *m, FILE *out);

int trace_main(int argc, char **argv);
void trace_usage(FILE *out);

#endif
