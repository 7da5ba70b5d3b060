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

/* One hop as one process saw it (one view), built from its connections' events. */
struct trace_hop {
	uint32_t hop_id;
	bool is_send;
	struct report_hop_key key;
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
};

struct trace_conn {
	uint32_t id;
	size_t hop; /* index into the process's hops */
	int first_tag;
};

/* A live_finding event: a hop the plugin found slow (or well again) while the job ran. */
struct trace_live {
	char state[12], kind[16];
	char culprit[2 * FL_NODE_NAME_LEN + 2 * FL_DEV_NAME_LEN + 8];
	uint32_t hop_id;
	double ratio, cost;
	int windows;
	uint64_t window_ns, at_ns;
};

/* Events of one process: told apart by the trace's host name and the vpid. */
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

struct trace_model {
	struct trace_process *procs;
	size_t nprocs, procs_cap;
	uint64_t events;      /* fabriclab:* events read */
	uint64_t orphans;     /* request events of a connection whose conn_up is not in the trace */
	uint64_t reused_ids;  /* conn_up for an id already up in the "same" process */
	bool vpid_seen;       /* a vpid context or environment entry told processes apart */
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
 * Arms FABRICLAB_TRACE_TIMEOUT_MS (default 10 min): past it the process exits 2
 * with a message, for damage the check could not see; trace_read_done disarms.
 */
int trace_read_deadline(void);
void trace_read_done(void);

/* trace_read.c: every fabriclab event under dir (any depth) into the model. */
int trace_read(const char *dir, struct trace_model *m);

/* trace_model.c */
int trace_model_event(struct trace_model *m, const char *host, int64_t vpid, const char *name,
		      const struct trace_fields *f);
/* Each process becomes one report file of the set, ready for report_merge. */
int trace_model_to_reports(struct trace_model *m, struct report_set *set);
void trace_model_free(struct trace_model *m);
/* Length of the union of the spans (sorts them). */
uint64_t trace_spans_union(struct trace_spans *s);

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

int trace_main(int argc, char **argv);
void trace_usage(FILE *out);

#endif
