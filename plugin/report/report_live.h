/*
 * The diagnosis while the job runs: every window (about a second) the report
 * thread hands the hop table here; each hop timed from the better end is
 * judged on the last window alone, against its line rate (one process sees
 * none of its peers' hops). When a hop turns slow, changes, or recovers, one
 * WARN line goes through NCCL's logger.
 */
#ifndef FL_REPORT_LIVE_H
#define FL_REPORT_LIVE_H

#include <stdint.h>

#include "report_model.h"

#define FL_LIVE_WINDOW_NS 1000000000ULL
#define FL_LIVE_MIN_BYTES (4ULL << 20) /* a window with less traffic is not judged */
/*
 * One window is noisier than a run: healthy lab hops (16 ranks on a busy
 * 2-core host) read down to 0.78x of their line rate over a second, so a
 * window must be below 0.7x to be called slow; a halved cable reads 0.5x. The
 * run's verdict, on all of it, finds the 10% effects.
 */
#define FL_LIVE_MIN_RATIO 0.7

/*
 * Judges the window since the last call: hops and line rates from r (hops,
 * nhops, devs, transport filled), min_ratio FL_LIVE_MIN_RATIO. Logs
 * transitions; keeps its state between calls (report thread only).
 */
void fl_report_live_judge(const struct fl_report *r, double min_ratio, double unix_now);
/* Forgets every hop (tests; a process that forgets its table). */
void fl_report_live_reset(void);

#endif
