/*
 * The diagnosis while the job runs: every window (FABRICLAB_LIVE_WINDOW_MS,
 * half a second by default) the report thread hands the hop table here; the
 * window of every hop this process times goes to the diagnosis (plugin/verdict:
 * the model the report and the sweep use), against its line; a hop it finds
 * slow is slow that window, and a local device slow both ways is one device
 * finding (report_live_device.c). When a hop turns
 * slow, changes, or recovers, one WARN line goes through NCCL's logger and the
 * caller hears of it (the tracer emits fabriclab:live_finding); the findings
 * standing now are what the Prometheus textfile carries (report_prom.c).
 */
#ifndef FL_REPORT_LIVE_H
#define FL_REPORT_LIVE_H

#include <stddef.h>
#include <stdint.h>

#include "report_model.h"

#define FL_LIVE_WINDOW_MS_DEFAULT 500
#define FL_LIVE_MIN_BYTES (4ULL << 20) /* a window with less traffic is not judged */
/*
 * ... or with less than a quarter of what the line moves in a window, where that is smaller:
 * on a port below 268 Mbit/s 4 MiB is more than a halved hop carries in 0.5 s, so its windows
 * were never judged (the lab's presets run their ports at 62.5-250 Mbit/s, time slowed
 * 3200x; the lab's tcp hops at 100 and 200 Mbit/s). Above it, 4 MiB as before.
 */
static inline double fl_live_min_bytes(double line_gbs, double window_s)
{
	double quarter = line_gbs * 1e9 * window_s / 4;

	/* an unknown line (0) is taken for a fast one */
	return quarter > 0 && quarter < (double)FL_LIVE_MIN_BYTES ? quarter
								 : (double)FL_LIVE_MIN_BYTES;
}
/*
 * Windows in a row that must agree before a finding appears, changes size or
 * clears: a rank starved of CPU for a moment read 0.60x once in a healthy
 * 16-rank lab run, and a halved cable's 0.5 s windows 0.38x once; a bad cable
 * stays slow.
 */
#define FL_LIVE_LOW_WINDOWS 2
#define FL_LIVE_MAX_FINDINGS 64 /* standing at once; more are logged, not listed */

enum fl_live_state { FL_LIVE_APPEARED, FL_LIVE_CHANGED, FL_LIVE_CLEARED };

/* "appeared", "changed", "cleared". */
const char *fl_live_state_name(enum fl_live_state state);

/* One hop found slow on its last windows, as logged, traced and exported. */
struct fl_live_finding {
	struct fl_hop_key key; /* the hop, in the view judged (the better end) */
	const char *kind;      /* "link", or "device": every hop of a local device, both ways */
	char culprit[2 * FL_NODE_NAME_LEN + 2 * FL_DEV_NAME_LEN + 8]; /* "a/d0 -> b/d1" */
	double ratio;          /* the last window's wire rate over the line rate */
	double gbs, line_gbs;  /* that window's wire rate, the line rate (GB/s) */
	double cost;           /* the ring's time this hop costs if it sets the pace: 1 - ratio */
	double since_unix;     /* when it appeared */
	double window_s;       /* the window judged */
	int windows;           /* windows in a row the diagnosis found it slow */
	uint64_t at_ns;        /* fl_clock_mono_ns of this transition (the trace's time line) */
};

struct fl_live_params {
	double window_s;    /* the nominal window, for the WARN line */
	int low_windows;    /* FL_LIVE_LOW_WINDOWS */
	/*
	 * This window's totals are taken but not judged: the report thread was held
	 * off the CPU for part of it, and so, likely, were the threads moving data,
	 * whose wire intervals then stretch (a starved healthy hop read 0.43x).
	 */
	int skip;
};
/* A wake-up of the report thread this late (a quarter window) makes its window skipped. */
#define FL_LIVE_STARVED_FRACTION 4

/* Told of each transition, with the finding as it stands (cleared: the window that recovered). */
typedef void (*fl_live_notify_fn)(enum fl_live_state state, const struct fl_live_finding *f);

/*
 * Judges the window since the last call: hops and line rates from r (hops,
 * nhops, devs, transport filled). Logs transitions and calls notify (may be
 * NULL) for each; returns how many there were. Keeps its state between calls
 * (report thread only).
 */
int fl_report_live_judge(const struct fl_report *r, const struct fl_live_params *p,
			 double unix_now, uint64_t mono_now, fl_live_notify_fn notify);
/* The findings standing now, up to max of them; returns how many were copied. */
int fl_report_live_current(struct fl_live_finding *out, int max);
/* What the textfile says of this process, and the findings standing (report_live_prom.c). */
struct fl_live_prom {
	const char *node;
	int pid, rank;
	int up;              /* 0 once the final report is written: the job is over */
	double updated_unix; /* the last window judged */
	double window_s;
	const struct fl_live_finding *findings;
	int nfindings;
};

/* The Prometheus textfile (text exposition format) in memory; the caller frees *text. */
int fl_report_live_prom(const struct fl_live_prom *p, char **text, size_t *len);

/* Forgets every hop (tests; a process that forgets its table). */
void fl_report_live_reset(void);

#endif
