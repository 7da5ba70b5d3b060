/*
 * Shared by the live judgement's two passes: report_live.c judges each hop's
 * window, report_live_device.c then joins the hops of one local device.
 */
#ifndef FL_REPORT_LIVE_INTERNAL_H
#define FL_REPORT_LIVE_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "report_live.h"

struct live_hop {
	struct fl_hop_key key;
	uint64_t wire_bytes, wire_ns, messages; /* totals at the last window */
	uint64_t outstanding_ns, wait_ns, active_ns; /* likewise: requests in flight */
	uint64_t sizes[FL_SIZE_BUCKETS]; /* its size histogram then */
	uint64_t wire_times[FL_TIME_BUCKETS]; /* and its wire-time histogram */
	uint64_t wire_times_alone[FL_TIME_BUCKETS]; /* ... of requests alone on their wire */
	/*
	 * Judged from the transport's better end: its transitions are findings.
	 * A hop seen from the other end (a socket sender) is judged the same way
	 * but silently: it is only evidence for a device finding, since a slow
	 * receiver also slows what its senders see.
	 */
	bool best;
	bool judged;      /* at least one window had enough traffic */
	double last_ratio; /* the last judged window's rate over the line rate */
	double last_gbs, line_gbs;
	bool slow;
	int low_windows; /* consecutive windows the diagnosis found it slow */
	int pending;     /* the transition the last windows point to (-1: none) */
	int agreeing;    /* windows in a row that point to it */
	struct fl_live_finding f; /* while slow: the finding as it stands */
};

/* The hop states kept between windows, *n of them. */
const struct live_hop *live_hops(int *n);
/* The local end of a hop as this process sees it: the sender's for send views. */
void live_local_end(const struct fl_hop_key *k, const char **node, const char **dev);
/* Logs a transition: "fabriclab: <culprit> <what> <time>, <ratio>x ...". */
void live_say(const struct fl_live_finding *f, const char *what, double unix_s);

/*
 * The device pass: a local device every judged hop of which is slow, in both
 * directions, becomes one finding of kind "device" (node/dev), which appears
 * and clears with its hops. Returns the transitions it made.
 */
int live_devices_judge(double unix_now, uint64_t mono_now, fl_live_notify_fn notify);
/* Device findings standing now, up to max; returns how many were copied. */
int live_devices_current(struct fl_live_finding *out, int max);
/* A standing device finding explains this hop (its local end is that device). */
bool live_device_explains(const struct fl_hop_key *k);
void live_devices_reset(void);

#endif
