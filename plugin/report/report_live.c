/* Live findings: each hop's last window against its line rate (see report_live.h). */
#include "report_live.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "base/log.h"
#include "report_live_internal.h"

/*
 * How much faster than min_ratio a slow hop must run before it counts as
 * recovered: a hop hovering at the threshold logs once, not every window.
 */
#define RECOVERY_MARGIN 0.03

static struct {
	struct live_hop hops[FL_MAX_HOPS];
	int n;
} live;

static const char *const state_names[] = { "appeared", "changed", "cleared" };

const char *fl_live_state_name(enum fl_live_state state)
{
	return (unsigned)state < sizeof(state_names) / sizeof(state_names[0]) ? state_names[state]
									      : "?";
}

void fl_report_live_reset(void)
{
	live.n = 0;
	live_devices_reset();
}

const struct live_hop *live_hops(int *n)
{
	*n = live.n;
	return live.hops;
}

void live_local_end(const struct fl_hop_key *k, const char **node, const char **dev)
{
	bool send = k->view == FL_HOP_SEND;

	*node = send ? k->src_node : k->dst_node;
	*dev = send ? k->src_dev : k->dst_dev;
}

static bool same_key(const struct fl_hop_key *a, const struct fl_hop_key *b)
{
	/* A profiler-mode hop the net role named has a net-mode twin: the mode tells them apart. */
	return a->view == b->view && a->mode == b->mode && a->comm_hash == b->comm_hash &&
	       a->src_rank == b->src_rank && a->dst_rank == b->dst_rank &&
	       !strcmp(a->src_node, b->src_node) && !strcmp(a->src_dev, b->src_dev) &&
	       !strcmp(a->dst_node, b->dst_node) && !strcmp(a->dst_dev, b->dst_dev);
}

/* The state of a hop, added (from zero) when new; NULL when the table is full. */
static struct live_hop *state_of(const struct fl_hop_key *key)
{
	for (int i = 0; i < live.n; i++) {
		if (same_key(&live.hops[i].key, key))
			return &live.hops[i];
	}
	if (live.n == FL_MAX_HOPS)
		return NULL;
	memset(&live.hops[live.n], 0, sizeof(live.hops[0]));
	live.hops[live.n].key = *key;
	live.hops[live.n].pending = -1;
	return &live.hops[live.n++];
}

static void clock_text(double unix_s, char *buf, size_t len)
{
	time_t t = (time_t)unix_s;
	struct tm tm;

	if (localtime_r(&t, &tm))
		strftime(buf, len, "%H:%M:%S", &tm);
	else
		snprintf(buf, len, "?");
}

void live_say(const struct fl_live_finding *f, const char *what, double unix_s)
{
	char at[16];

	clock_text(unix_s, at, sizeof(at));
	FL_WARN("fabriclab: %s %s %s, %.2fx its line rate (%.3f of %.3f GB/s, last %.1f s)",
		f->culprit, what, at, f->ratio, f->gbs, f->line_gbs, f->window_s);
}

/* The finding's figures from this window. */
static void measure(struct live_hop *s, double gbs, double line, const struct fl_live_params *p,
		    uint64_t mono_now)
{
	struct fl_live_finding *f = &s->f;
	const struct fl_hop_key *k = &s->key;

	f->key = *k;
	f->kind = "link";
	snprintf(f->culprit, sizeof(f->culprit), "%s/%s -> %s/%s", k->src_node, k->src_dev,
		 k->dst_node, k->dst_dev);
	f->gbs = gbs;
	f->line_gbs = line;
	f->ratio = gbs / line;
	f->cost = f->ratio < 1.0 ? 1.0 - f->ratio : 0.0;
	f->window_s = p->window_s;
	f->windows = s->low_windows;
	f->at_ns = mono_now;
}

/* What this one window alone would make of the hop (-1: nothing). */
static int window_says(const struct live_hop *s, double ratio, const struct fl_live_params *p)
{
	if (!s->slow)
		return ratio < p->min_ratio ? FL_LIVE_APPEARED : -1;
	if (ratio >= p->min_ratio + RECOVERY_MARGIN)
		return FL_LIVE_CLEARED;
	/* the same finding, a different size: worth a line */
	if (ratio < 0.8 * s->f.ratio || ratio > 1.25 * s->f.ratio)
		return FL_LIVE_CHANGED;
	return -1;
}

/*
 * The transition this window makes, if any (-1: none): one that low_windows
 * windows in a row agree on, so a window of a rank starved of CPU neither
 * raises, resizes nor clears a finding.
 */
static int transition(struct live_hop *s, double ratio, const struct fl_live_params *p)
{
	int says = window_says(s, ratio, p);

	s->low_windows = ratio < p->min_ratio ? s->low_windows + 1 : 0;
	s->agreeing = says >= 0 && says == s->pending ? s->agreeing + 1 : says >= 0;
	s->pending = says;
	if (says < 0 || s->agreeing < p->low_windows)
		return -1;
	s->agreeing = 0;
	s->pending = -1;
	return says;
}

/*
 * The window's requests were paced by the wire, not latency (fl_wire_bound):
 * its typical request (the size carrying its median byte) is long enough on
 * the wire at line rate, or enough of them were in flight to cover a round
 * trip. Over ext on NCCL's Socket (lo, 1.25 GB/s line rate, 4 ranks,
 * 2026-12-03) healthy hops read 0.12x with 1 KiB requests (0.8 us at line
 * rate), 0.41-0.44x with 4 KiB (3.3 us) and no finding with 16 KiB (13 us).
 * Requests in flight: the view's outstanding time less its waits for the other
 * end, over its busy time (the sender's wire intervals, the receiver's
 * posted -> done).
 */
static bool wire_bound(const struct live_hop *s, const struct fl_hop_snapshot *h, double line)
{
	uint64_t window[FL_SIZE_BUCKETS];
	uint64_t busy = h->key.view == FL_HOP_SEND ? h->wire_ns - s->wire_ns
						   : h->active_ns - s->active_ns;
	double in_flight = fl_requests_in_flight(
		(double)(h->t.outstanding_ns - s->outstanding_ns) / 1e9,
		(double)(h->t.peer_wait_ns - s->wait_ns) / 1e9, (double)busy / 1e9);

	for (unsigned i = 0; i < FL_SIZE_BUCKETS; i++)
		window[i] = h->t.sizes[i] - s->sizes[i];
	return fl_wire_bound(fl_size_median_byte(window), line, in_flight);
}

static int judge_window(struct live_hop *s, const struct fl_hop_snapshot *h, double line,
			const struct fl_live_params *p, double unix_now, uint64_t mono_now,
			fl_live_notify_fn notify)
{
	static const char *const words[] = { "slow since", "changed at", "back to speed at" };
	uint64_t bytes = h->t.wire_bytes - s->wire_bytes, ns = h->wire_ns - s->wire_ns;
	bool judge = !p->skip && line > 0.0 && ns &&
		     (double)bytes >= fl_live_min_bytes(line, p->window_s) && wire_bound(s, h, line);
	double gbs;
	int t;

	s->wire_bytes = h->t.wire_bytes;
	s->wire_ns = h->wire_ns;
	s->outstanding_ns = h->t.outstanding_ns;
	s->wait_ns = h->t.peer_wait_ns;
	s->active_ns = h->active_ns;
	memcpy(s->sizes, h->t.sizes, sizeof(s->sizes));
	if (!judge)
		return 0;
	gbs = (double)bytes / (double)ns;
	s->judged = true;
	s->last_ratio = gbs / line;
	s->last_gbs = gbs;
	s->line_gbs = line;
	t = transition(s, gbs / line, p);
	if (t < 0)
		return 0;
	measure(s, gbs, line, p, mono_now);
	if (t == FL_LIVE_APPEARED)
		s->f.since_unix = unix_now;
	s->slow = t != FL_LIVE_CLEARED;
	if (!s->best)
		return 0;
	live_say(&s->f, words[t], unix_now);
	if (notify)
		notify((enum fl_live_state)t, &s->f);
	return 1;
}

int fl_report_live_judge(const struct fl_report *r, const struct fl_live_params *p,
			 double unix_now, uint64_t mono_now, fl_live_notify_fn notify)
{
	int changes = 0;

	for (int i = 0; i < r->nhops; i++) {
		const struct fl_hop_snapshot *h = &r->hops[i];
		const struct fl_report_device *d = fl_report_device(r, h->local_dev);
		const char *transport = fl_report_hop_transport(r, h);
		bool best = h->key.view == fl_report_best_view(transport);
		struct live_hop *s;

		/*
		 * The other end's view is evidence only where it times the wire too:
		 * a socket sender does (first byte to last handed to the kernel); a
		 * verbs receiver times nothing, and an ext receiver's posted -> done
		 * or a profiler receiver's events hold its wait for the sender.
		 */
		if ((!best && strcmp(transport, "socket")) || !strcmp(h->key.src_node, FL_HOP_OTHER))
			continue;
		s = state_of(&h->key);
		if (!s)
			continue;
		s->best = best;
		changes += judge_window(s, h, d ? fl_report_line_rate(d->speed_mbps) : 0.0, p,
					unix_now, mono_now, notify);
	}
	return changes + live_devices_judge(unix_now, mono_now, notify);
}

/* Devices first: the links a standing device finding explains are not listed again. */
int fl_report_live_current(struct fl_live_finding *out, int max)
{
	int n = live_devices_current(out, max);

	for (int i = 0; i < live.n && n < max; i++)
		if (live.hops[i].best && live.hops[i].slow &&
		    !live_device_explains(&live.hops[i].key))
			out[n++] = live.hops[i].f;
	return n;
}
