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
	char dir[PATH_MAX];  /* absolute */
};

/* FABRICLAB_REPORT, FABRICLAB_REPORT_DIR, FABRICLAB_REPORT_INTERVAL; FL_ERR_USAGE on bad values. */
int fl_report_config_from_env(struct fl_report_config *cfg);

struct fl_report;

/*
 * What the report thread tells whoever listens (the wrap points these at the
 * tracer); a NULL member is skipped.
 */
struct fl_report_hooks {
	void (*built)(const struct fl_report *r); /* a report was gathered, before it is written */
	void (*tick)(uint64_t now_ns);            /* every drain of the hop table */
	void (*stop)(void);                       /* the plugin may be unmapped: emit no more */
};

/*
 * Once per process, at the first init: reads the configuration and starts the
 * background thread (which also keeps the connections' interval rings drained).
 */
int fl_report_start(const struct fl_transport *tp, const struct fl_report_hooks *hooks);
/*
 * The final report; only the first call in the process that started it writes.
 * `why` names the trigger in the log ("last communicator finalized", ...).
 */
void fl_report_final(const char *why);

#endif
