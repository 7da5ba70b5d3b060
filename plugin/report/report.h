/*
 * The per-process report (docs/report-format.md): <node>-<pid>.json and .txt
 * in FABRICLAB_REPORT_DIR, rewritten every FABRICLAB_REPORT_INTERVAL seconds by
 * one background thread, and written once more, final, at the first of: the
 * finalize of the last communicator, NCCL unloading the plugin, process exit.
 */
#ifndef FL_REPORT_H
#define FL_REPORT_H

#include <limits.h>

#include "transport/transport.h"

#define FL_REPORT_SCHEMA "fabriclab-report"
#define FL_REPORT_SCHEMA_VERSION 1

enum fl_report_mode {
	FL_REPORT_OFF,   /* nothing written, nothing printed */
	FL_REPORT_BRIEF, /* the JSON file and the stderr line */
	FL_REPORT_FULL,  /* also the readable .txt */
};

struct fl_report_config {
	enum fl_report_mode mode;
	long interval_s;     /* 0: no periodic snapshot */
	long live_window_ms; /* the window each hop is judged on while the job runs */
	char dir[PATH_MAX];  /* absolute */
};

/*
 * FABRICLAB_REPORT, FABRICLAB_REPORT_DIR, FABRICLAB_REPORT_INTERVAL,
 * FABRICLAB_LIVE_WINDOW_MS; FL_ERR_USAGE on bad values.
 */
int fl_report_config_from_env(struct fl_report_config *cfg);

struct fl_report;
struct fl_live_finding;

/*
 * What the report thread tells whoever listens (the wrap points these at the
 * tracer); a NULL member is skipped.
 */
struct fl_report_hooks {
	void (*built)(const struct fl_report *r); /* a report was gathered, before it is written */
	void (*tick)(uint64_t now_ns);            /* every drain of the hop table */
	void (*stop)(void);                       /* the plugin may be unmapped: emit no more */
	/* a live finding appeared, changed or cleared (state: enum fl_live_state) */
	void (*live)(int state, const struct fl_live_finding *f);
};

/*
 * Once per process, at the first init of either role: reads the configuration
 * and starts the background thread (which also keeps the connections' interval
 * rings drained). The net role passes its transport, whose devices the report
 * lists; the profiler role passes NULL (NCCL's own transport: no devices
 * known). A later call only adds the transport if the first had none.
 */
int fl_report_start(const struct fl_transport *tp, const struct fl_report_hooks *hooks);
/* The transport name reports give hops that NCCL's own transports carried. */
#define FL_REPORT_NCCL_TRANSPORT "nccl"
/*
 * A rank this process holds in a communicator (profiler role, at its init);
 * written into every report so that `fabriclab report` can join ranks to nodes.
 */
void fl_report_note_rank(uint64_t comm_hash, int rank, int nranks, int nnodes,
			 const char *comm_name);

/* What the profiler counted in one rank's context: written at its finalize, then read. */
struct fl_report_prof_counts {
	uint64_t ops;             /* ProxyOps seen */
	uint64_t relayed_ops;     /* of those, another rank's (PXN) moved by this proxy */
	uint64_t dropped_ops;     /* not measured: no link (links cap) or op object (ops cap) */
	uint64_t dropped_links;   /* of those, for want of a link */
	uint64_t dropped_steps;   /* not measured: every stats slot of their link held */
	uint64_t abandoned_steps; /* lost: their slot reused before they stopped */
};

/* The profiler's counts of that rank's context, at its finalize; added to earlier ones. */
void fl_report_note_prof_counts(uint64_t comm_hash, int rank,
				const struct fl_report_prof_counts *counts);
/*
 * Relayed (PXN) ops this process could not measure (no context on their proxy thread yet),
 * a process-wide running total: the report keeps the largest it was told.
 */
void fl_report_note_prof_unhomed(uint64_t unhomed_ops);

/*
 * The final report; only the first call since the start (or the last resume) writes.
 * `why` names the trigger in the log ("last communicator finalized", ...).
 */
void fl_report_final(const char *why);
/*
 * A communicator was initialized: after a final report (its predecessors all finalized, NCCL
 * kept the plugin loaded, NCCL_NET_PLUGIN_REF_COUNT), the report thread runs again, and the
 * next final report holds everything measured since the start, the earlier communicators
 * too: a later report is never emptier than the one it replaces.
 */
void fl_report_resume(void);

#endif
