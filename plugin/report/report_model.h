/*
 * One report as data: who wrote it, the devices, every hop's figures and the
 * process's own verdict. Built from hop snapshots by report_build.c, rendered
 * by report_json.c and report_text.c; no I/O here.
 */
#ifndef FL_REPORT_MODEL_H
#define FL_REPORT_MODEL_H

#include <stddef.h>

#include "fault/fault.h"
#include "report.h"
#include "base/fl_types.h"
#include "stats/hop.h"
#include "port/port_info.h"
#include "verdict/verdict.h"

#define FL_REPORT_MAX_DEVS 32
#define FL_REPORT_COMMANDS 4096
#define FL_REPORT_MAX_RANKS 64

/* A rank this process holds in one communicator (profiler mode names hops by rank). */
struct fl_report_rank {
	uint64_t comm_hash;
	int rank, nranks, nnodes; /* -1 unknown */
	char comm_name[64];
	/* Profiler role, once its context finalized: ops seen, relayed (PXN), not measured. */
	int prof_counted;
	struct fl_report_prof_counts prof;
};

struct fl_report_device {
	int dev;
	char name[64];
	int speed_mbps;
	char pci_path[256]; /* "" for a virtual device (null in JSON) */
	int ptr_support;    /* FL_PTR_* */
	char link_layer[FL_LINK_LAYER_LEN]; /* FL_LINK_*, "" unknown (null in JSON) */
};

struct fl_report {
	char node[FL_NODE_NAME_LEN];
	int pid;
	int rank; /* -1 unknown */
	int world_size; /* ranks in the job from the environment, -1 unknown */
	int final;
	double started_unix, written_unix;
	char transport[16];
	int ndevs;
	struct fl_report_device devs[FL_REPORT_MAX_DEVS];
	int nhops;
	struct fl_hop_snapshot *hops; /* owned */
	struct fl_hop_figures *figs;  /* owned, same order as hops */
	struct fl_verdict verdict;
	char commands[FL_REPORT_COMMANDS]; /* one per line */
	int slowest; /* index of the hop with the lowest wire rate, -1 without traffic */
	struct fl_port_list *ports;            /* owned: the node's RDMA ports now; NULL unread */
	const struct fl_port_list *ports_base; /* the same at the plugin's init, not owned */
	double ports_seconds;                  /* from ports_base to ports */
	int nranks_held;
	struct fl_report_rank ranks[FL_REPORT_MAX_RANKS];
	int ranks_left_out, devs_left_out; /* past the tables above: said as incomplete */
	uint64_t prof_unhomed_ops; /* relayed (PXN) ops with no context to measure them: process-wide */
	int ninjected; /* FABRICLAB_FAULT rules applied here: shown, never judged */
	struct fl_fault_injected injected[FL_FAULT_MAX_INJECTED];
};

/* Line rate of a device in GB/s (10^9 bytes/s) from its speed in Mbit/s; 0 unknown. */
double fl_report_line_rate(int speed_mbps);
/* The device entry for an index, NULL when the transport did not list it. */
const struct fl_report_device *fl_report_device(const struct fl_report *r, int dev);
double fl_report_wire_gbs(const struct fl_hop_snapshot *h);
/* A hop's requests alone on their connection's wire and queued (fl_wire_split) into f. */
void fl_report_split_figures(const uint64_t all[FL_TIME_BUCKETS],
			     const uint64_t alone[FL_TIME_BUCKETS], int acked,
			     struct fl_hop_figures *f);
/* FL_HOP_SEND or FL_HOP_RECV: the end whose wire timing the transport makes reliable. */
int fl_report_best_view(const char *transport);
/* The transport a hop's figures name: the process's own, or NCCL's for profiler hops. */
const char *fl_report_hop_transport(const struct fl_report *r, const struct fl_hop_snapshot *h);
/*
 * The ranks this process holds, copied out (at most max); returns the count. *left_out (may be
 * NULL): rank notes that found the table full, and ranks past max.
 */
int fl_report_ranks(struct fl_report_rank *out, int max, int *left_out);
/* The profiler's relayed ops that had no context to measure them, as last noted. */
uint64_t fl_report_prof_unhomed(void);

/*
 * Takes ownership of hops[nhops] (malloc'd) and derives the rest: ranks where
 * the tags told them, the verdict's figures, the verdict, its commands and the
 * slowest hop. node, pid, rank, transport and devices must be filled first.
 */
int fl_report_fill(struct fl_report *r, struct fl_hop_snapshot *hops, int nhops,
		   const struct fl_verdict_params *params);
void fl_report_release(struct fl_report *r);
/*
 * Non-zero when figures rest on incomplete data (a ring, pending list or table overflowed, or
 * the profiler left ops or steps unmeasured); why then says what, in words (report_complete.c).
 * FL_REPORT_WHY_LEN holds every reason at once; `fabriclab report` reads up to as much.
 */
#define FL_REPORT_WHY_LEN 1024
int fl_report_incomplete(const struct fl_report *r, char *why, size_t len);

/* Renderings: malloc'd text the caller frees. */
int fl_report_json(const struct fl_report *r, char **text, size_t *len);
int fl_report_text(const struct fl_report *r, char **text, size_t *len);
/* The one line printed on stderr at the final write (no newline). */
void fl_report_summary_line(const struct fl_report *r, const char *path, char *buf, size_t len);

#endif
