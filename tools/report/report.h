/*
 * `fabriclab report`: reads the per-process JSON reports (docs/report-format.md),
 * joins the two views of each hop, and reaches the cluster verdict with the
 * plugin's own verdict code.
 */
#ifndef FABRICLAB_REPORT_H
#define FABRICLAB_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "plugin/base/fl_types.h"
#include "plugin/port/port_info.h"
#include "plugin/verdict/verdict.h"

#define REPORT_SCHEMA "fabriclab-report"
#define REPORT_MERGED_SCHEMA "fabriclab-merged-report"
#define REPORT_SCHEMA_VERSION 1
#define REPORT_MAX_BYTES (256UL << 20) /* a report larger than this is not one of ours */
/* More ranks than any job of today: the merge keeps a flag per rank of the world size. */
#define REPORT_MAX_WORLD (1L << 24)
#define REPORT_MAX_WORLD_TEXT "16777216"
#define REPORT_SIZE_BUCKETS 48 /* power-of-two message size buckets, 1 B .. 128 TiB */
#define REPORT_COMMANDS_LEN 4096

/*
 * One end's figures for one hop, as that process wrote them. Kept small (a
 * joined hop points at up to two, 10^6 hops are read in one report): flags
 * first, the size histogram and the port name out of line.
 */
struct report_view {
	bool present;
	bool profiler;           /* measured from NCCL's profiler events, not our transport */
	bool gdr;
	bool dev_gdr_capable;  /* the writer's device advertised CUDA or dma-buf */
	bool rdma_port_active; /* the writer's node has an active RDMA port */
	int mem_types;         /* FL_PTR_* */
	int processes; /* processes that wrote this view: more than one share a device */
	int input;     /* the file it came from (the first, when several) */
	int last_input;      /* the last file that added to it, and at which hops[] entry: */
	size_t last_index;   /* one file holding the same view twice is refused (duplicated) */
	long src_rank, dst_rank;
	long connections;
	uint64_t bytes, messages;
	uint64_t unsized_messages; /* of messages, those of a size the end was not told */
	uint64_t wire_bytes; /* the part of bytes whose wire time this end saw */
	double line_rate_gbs;
	double wire_seconds, wire_gbs;
	uint64_t wire_runs; /* busy stretches of wire_seconds; 0 unknown (older reports) */
	double active_seconds, peer_wait_seconds;
	double gpu_wait_seconds; /* profiler mode: the GPU filling or draining steps */
	double outstanding_seconds; /* posted -> done summed over requests; 0 in older reports */
	double p50_us, p99_us, max_us;
	/* of the timed messages, those alone on their connection's wire and those queued
	 * behind the one before, with each kind's median (us); 0 unknown (older reports) */
	double alone, queued, alone_p50_us, queued_p50_us;
	/*
	 * Message size counts, bucket b holding [2^b, 2^(b+1)), 1 B .. 128 TiB: bit b of
	 * size_mask says bucket b has some, size_counts their counts in bucket order
	 * (report_sizes_get() gives all buckets).
	 */
	uint64_t size_mask;
	const uint64_t *size_counts;
	const char *rdma_port; /* which ("mlx5_0/1", a name in its file's ports), NULL unknown */
	char link_layer[FL_LINK_LAYER_LEN]; /* of the writer's device: FL_LINK_*, "" unknown */
};

/* Where the views' size counts live (report_sizes.c); zeroed, it is empty. */
struct report_arena {
	struct report_arena_chunk *head;
};

/* A hop's names as one view of it was read (a file's, a trace's). */
struct report_view_key {
	char src_node[FL_NODE_NAME_LEN];
	char src_dev[FL_DEV_NAME_LEN];
	char dst_node[FL_NODE_NAME_LEN];
	char dst_dev[FL_DEV_NAME_LEN];
	uint64_t comm_hash; /* profiler mode: hops are a communicator's rank pairs; 0 net mode */
};

/*
 * A joined hop's names: each distinct name once in the set (report_names.h),
 * where 10^6 hops held 128 bytes of names each.
 */
struct report_hop_key {
	const char *src_node, *src_dev, *dst_node, *dst_dev;
	uint64_t comm_hash; /* as report_view_key's */
};

/* One view as read from one file, before the join. */
struct report_file_view {
	struct report_view_key key;
	char transport[16];
	bool is_send;
	struct report_view v;
};

/* An RDMA port of the writer's node as its report read it from sysfs (report_ports.c). */
struct report_port {
	char node[FL_NODE_NAME_LEN];
	char name[48];   /* "mlx5_0/1" */
	char device[48]; /* "mlx5_0" */
	char netdev[20]; /* RoCE interface, "" if none */
	bool active, trained_down;
	double active_gbps, max_gbps; /* max 0 unknown */
	double seconds;               /* what the counter deltas cover */
	const char *rising;           /* "symbol_error +60, ..." since the writer's init, "" none
					 (in the set's arena: 10^6 ports of a fleet, few rising) */
	bool errors_rising;           /* an error counter among them, not only congestion */
	struct fl_port_qos qos;       /* RoCE lossless settings as the writer read them */
};

/* One RoCE setting where a port differs from most ports of the job (report_lossless.c). */
struct report_lossless_diff {
	char node[FL_NODE_NAME_LEN];
	char netdev[20];
	char setting[8];     /* "trust", "pfc", "ecn_np", "ecn_rp" */
	int prio;            /* -1 for trust */
	char value[8];       /* this port's: "on", "off", "pcp", "dscp" */
	char others_value[8];
	size_t others;       /* ports that have others_value */
	bool split;          /* no majority: as many ports one way as the other */
	char text[256];      /* "node5/eth2: PFC off on priority 3, on for 15 others" */
};

/* A fault FABRICLAB_FAULT applied on the writer's node (`injected`, report_injected.c). */
struct report_injected {
	char node[FL_NODE_NAME_LEN];
	char rule[256];
	char action[16];
	char dev[FL_DEV_NAME_LEN];
	char peer[FL_NODE_NAME_LEN];
	char dir[8];
	long connections;
};

/* A rank the writer held in a communicator (`ranks`): how profiler hops get node names. */
struct report_rank {
	uint64_t comm_hash;
	long rank;
};

/* The node name profiler-mode reports give a peer rank they cannot name themselves. */
#define REPORT_UNKNOWN_NODE "?"

/*
 * What a report's profiler role relayed and saw but did not measure: summed over its ranks
 * (`ranks[]`), and the process's relayed ops with no context (`profiler_unhomed_ops`).
 */
struct report_prof_gaps {
	uint64_t relayed_ops, dropped_ops, dropped_links, dropped_steps, abandoned_steps;
	uint64_t unhomed_ops;
};

/* One process's report. */
struct report_file {
	char *path;
	char node[FL_NODE_NAME_LEN];
	char version[32];
	long long pid, rank;
	long long world_size; /* ranks in the job as the writer's environment said, -1 unknown */
	bool final;
	double written_unix;
	long superseded_by; /* a later file of the same process (final, newer), else -1 */
	struct report_file_view *views;
	size_t nviews;
	struct report_port *ports; /* the writer's node's RDMA ports (`ports`) */
	size_t nports;
	struct report_injected *injected; /* faults applied on its node (`injected`) */
	size_t ninjected;
	struct report_rank *ranks; /* the ranks it held (`ranks`), profiler mode */
	size_t nranks;
	struct report_prof_gaps prof; /* its profiler's ops relayed and what it did not measure */
	/*
	 * Why its figures are bounds (`incomplete`, up to 1023 characters as the plugin writes),
	 * malloc'd; NULL when complete, as nearly every report of a fleet is.
	 */
	char *incomplete;
};

/*
 * One directed hop with both ends' views. Processes of one node (one per GPU,
 * same host name) keep their hops apart by rank: views join only when their
 * ranks agree, or one of them does not know its ranks (-1).
 *
 * The views live in the set's views[] (a hop of one report has one view, 10^6
 * such hops held their absent halves for nothing: 206 MiB); a view no end
 * wrote points at report_no_view (present false, all zero), never NULL, and
 * is never written through.
 */
struct report_hop {
	struct report_hop_key key;
	long src_rank, dst_rank; /* as the views told them, -1 unknown */
	char transport[16];
	struct report_view *send, *recv;
};

/* The view of an end that did not report: all zero, shared by every such hop. */
extern struct report_view report_no_view;

struct report_set {
	struct report_file *files;
	size_t nfiles, files_cap;
	struct report_hop *hops; /* sorted by src, dst after report_merge */
	size_t nhops;
	struct report_view *views; /* the hops' views (report_hop), in the order they joined */
	size_t nviews;
	struct fl_hop_figures *figures; /* figures[i] is hops[i] as the verdict sees it */
	/* the topology's shared elements the verdict was given (--topology), else NULL */
	const struct fl_hop_elements *elements;
	struct fl_verdict verdict;
	char commands[REPORT_COMMANDS_LEN];
	int ncommands;
	size_t nodes; /* distinct node names in the hops */
	bool ranked_names; /* two hops share node and device names: their names carry ranks */
	long world_size;   /* the largest world size the reports carry, -1 unknown */
	long *missing_ranks; /* ranks below world_size without a report */
	size_t nmissing_ranks;
	char (*missing_nodes)[FL_NODE_NAME_LEN]; /* hop ends whose node wrote no report */
	size_t nmissing_nodes;
	struct report_port *suspects; /* ports trained down or with counters rising, one per port */
	size_t nsuspects;
	size_t skipped; /* files in folders that were no fabriclab reports */
	size_t nroce;   /* RoCE interfaces (node, netdev) whose lossless settings were read */
	struct report_lossless_diff *lossless; /* where one differs from the rest */
	size_t nlossless;
	struct report_arena sizes; /* the views' size counts, the ports' rising counters */
};

/* Loading (report_load.c): 0, or FL_ERR_USAGE with fl_error_text() naming the file. */
int report_add_path(struct report_set *set, const char *path);
int report_add_file(struct report_set *set, const char *path);
struct report_hops_text;
struct report_json;
/*
 * The `ports` of one report into f, and the active one into its views
 * (report_ports_read.c): from the array's text element by element (stream),
 * or root's `ports` when the text scan found none (stream NULL), each parsed
 * into j; the rising counters' text kept in texts.
 */
int report_read_ports(const char *path, json_t *root, struct report_hops_text *stream,
		      struct report_json *j, struct report_arena *texts, struct report_file *f);
/* Suspect ports of the files in use, after the join. */
int report_collect_ports(struct report_set *set);
/* The active RDMA port beside a hop for the verdict: the sender's node's, else the receiver's. */
void report_rdma_figures(const struct report_hop *h, struct fl_hop_figures *f);
/* The suspect port is the device the verdict names. */
bool report_port_is_culprit(const struct report_set *set, const struct report_port *p);
void report_print_ports(const struct report_set *set, FILE *out);
/* Suspect port i as the merged JSON lists it (one at a time: every port of a fleet may be one). */
json_t *report_port_json(const struct report_set *set, size_t i);
/* RoCE lossless settings compared across the job's nodes (report_lossless.c). */
int report_compare_lossless(struct report_set *set);
void report_print_lossless(const struct report_set *set, FILE *out);
json_t *report_lossless_json(const struct report_set *set);
/* The `injected` list of one report into f; shown beside the verdict, never judged. */
int report_read_injected(const char *path, json_t *root, struct report_file *f);
void report_print_injected(const struct report_set *set, FILE *out);
json_t *report_injected_json(const struct report_set *set);

/* The `ranks` list and the hops' `mode`/`comm_hash` of one report (report_ranks.c). */
int report_read_ranks(const char *path, json_t *root, struct report_file *f);
/* Reports that say their data is incomplete, and the profiler's relayed and dropped ops
 * (report_gaps.c): said beside the verdict, so no figure is taken for more than it is. */
int report_read_gaps(const char *path, json_t *root, struct report_file *f);
void report_print_gaps(const struct report_set *set, FILE *out);
json_t *report_gaps_json(const struct report_set *set);
struct report_reader;
struct report_json;
/* A parsed hop's `mode`, `comm_hash` and `gpu_wait_seconds` (report_hop_json.h). */
int report_read_hop_mode(const struct report_reader *r, const struct report_json *j,
			 struct report_file_view *fv);
/*
 * Names the peers of profiler-mode hops: a rank's node is the node of the
 * report that held that rank in that communicator. Unknown ones stay "?".
 * 0, or FL_ERR_SYSTEM out of memory.
 */
int report_name_ranks(struct report_set *set);
/* Ranks and nodes expected but without a report, and shared hop names (report_expected.c). */
int report_find_missing(struct report_set *set);

/* A view's size histogram (report_sizes.c): stored from all buckets' counts (-1 out of
 * memory), read back into all buckets. */
int report_sizes_store(struct report_arena *a, struct report_view *v,
		       const uint64_t counts[REPORT_SIZE_BUCKETS]);
void report_sizes_get(const struct report_view *v, uint64_t counts[REPORT_SIZE_BUCKETS]);
/* A copy of s in the arena, freed with it; NULL out of memory. */
const char *report_arena_text(struct report_arena *a, const char *s);
void report_arena_free(struct report_arena *a);

/* Joining and judging (report_merge.c). */
int report_merge(struct report_set *set, const struct fl_verdict_params *params);
/* Judges the merged hops again (with a topology's elements in params, once they are known). */
int report_judge(struct report_set *set, const struct fl_verdict_params *params);
/*
 * Judges them again with the topology at path (report_topology.c): its shared
 * elements filled into e (the caller frees them after set) and kept in set.
 * -1 where it cannot be read or does not match: the verdict stands as it was.
 */
int report_judge_topology(struct report_set *set, struct fl_verdict_params *params,
			  const char *path, struct fl_hop_elements *e);
void report_free(struct report_set *set);

/* A hop's name for people: "n1/eth0 -> n2/eth0", with ranks when names are shared. */
void report_hop_name(const struct report_set *set, size_t i, char *buf, size_t len);
/* "expected 4 ranks, missing rank 3; nodes without a report: node3", "" when complete. */
void report_missing_text(const struct report_set *set, char *buf, size_t len);

/* The view timed the wire: it has a rate to show. */
bool report_has_wire(const struct report_view *v);
/* The view whose wire timing is best for the hop's transport, else the one that has one. */
const struct report_view *report_wire_view(const struct report_hop *h);
/* Both ends of an ext hop, neither seeing the peer get ready: the merge estimates from both. */
bool report_ext_both_ends(const struct report_hop *h);
const char *report_wire_view_name(const struct report_hop *h);
/* What measured the hop: "net" (our transport), "profiler" (NCCL's events), or "net+profiler". */
const char *report_hop_mode(const struct report_hop *h);
/*
 * The hop's wire rate is above FL_VERDICT_MAX_LINE_FRACTION of its line rate,
 * which no cable carries: a measurement error, with its likely cause in why.
 */
bool report_rate_error(const struct report_set *set, size_t i, char *why, size_t len);
/* The hop is one the verdict blames: its hop, every hop of its device, every hop without GDR... */
bool report_is_culprit(const struct report_set *set, size_t i);

/* Outputs. Each returns 0, or -1 with fl_error_text() saying why. */
int report_print_text(const struct report_set *set, FILE *out);
int report_print_json(const struct report_set *set, FILE *out);
int report_write_svg(const struct report_set *set, const char *path);
int report_write_prom(const struct report_set *set, const char *path);
/* Writes through emit into a temporary file next to path, then renames it over path. */
int report_write_atomic(const char *path, int (*emit)(const struct report_set *, FILE *),
			const struct report_set *set);
int report_emit_svg(const struct report_set *set, FILE *out);
int report_emit_prom(const struct report_set *set, FILE *out);
/* One self-contained page: verdict, the SVG drawing inline, the text report (report_html.c). */
int report_emit_html(const struct report_set *set, FILE *out);
int report_write_html(const struct report_set *set, const char *path);

int report_main(int argc, char **argv);
void report_usage(FILE *out);

#endif
