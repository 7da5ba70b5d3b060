/* Live findings: each hop's last window against its line rate (see report_live.h). */
#include "report_live.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "base/log.h"
#include "report_live_internal.h"

/*
 * A finding a window later whose rate moved by this factor either way is the
 * same finding at another size: worth one line, not one per window.
 */
#define CHANGED_FACTOR 1.25

static struct {
	struct live_hop hops[FL_MAX_HOPS];
	int n;
	/* this window's hops as the diagnosis sees them, and which state each is */
	struct fl_hop_figures figs[FL_MAX_HOPS];
	struct live_hop *of[FL_MAX_HOPS];
	double gbs[FL_MAX_HOPS], line[FL_MAX_HOPS];
	size_t nfigs;
	struct fl_verdict verdict;
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
static int window_says(const struct live_hop *s, bool slow, double ratio)
{
	if (!s->slow)
		return slow ? FL_LIVE_APPEARED : -1;
	if (!slow)
		return FL_LIVE_CLEARED;
	/* the same finding, a different size: worth a line */
	if (ratio * CHANGED_FACTOR < s->f.ratio || ratio > CHANGED_FACTOR * s->f.ratio)
		return FL_LIVE_CHANGED;
	return -1;
}

/*
 * The transition this window makes, if any (-1: none): one that low_windows
 * windows in a row agree on, so a window of a rank starved of CPU neither
 * raises, resizes nor clears a finding.
 */
static int transition(struct live_hop *s, bool slow, double ratio, const struct fl_live_params *p)
{
	int says = window_says(s, slow, ratio);

	s->low_windows = slow ? s->low_windows + 1 : 0;
	s->agreeing = says >= 0 && says == s->pending ? s->agreeing + 1 : says >= 0;
	s->pending = says;
	if (says < 0 || s->agreeing < p->low_windows)
		return -1;
	s->agreeing = 0;
	s->pending = -1;
	return says;
}

/* This window of hop h as the diagnosis takes a hop: the totals since the last window. */
static void window_figures(const struct live_hop *s, const struct fl_hop_snapshot *h,
			   const char *transport, double line, struct fl_hop_figures *out)
{
	uint64_t sizes[FL_SIZE_BUCKETS], times[FL_TIME_BUCKETS], alone[FL_TIME_BUCKETS];
	uint64_t ns = h->wire_ns - s->wire_ns;
	double outstanding = (double)(h->t.outstanding_ns - s->outstanding_ns) / 1e9;
	double wait = (double)(h->t.peer_wait_ns - s->wait_ns) / 1e9;
	const struct fl_hop_key *k = &h->key;

	memset(out, 0, sizeof(*out));
	snprintf(out->src_node, sizeof(out->src_node), "%s", k->src_node);
	snprintf(out->src_dev, sizeof(out->src_dev), "%s", k->src_dev);
	snprintf(out->dst_node, sizeof(out->dst_node), "%s", k->dst_node);
	snprintf(out->dst_dev, sizeof(out->dst_dev), "%s", k->dst_dev);
	snprintf(out->transport, sizeof(out->transport), "%s", transport);
	for (unsigned i = 0; i < FL_SIZE_BUCKETS; i++)
		sizes[i] = h->t.sizes[i] - s->sizes[i];
	for (unsigned i = 0; i < FL_TIME_BUCKETS; i++) {
		times[i] = h->t.wire_times[i] - s->wire_times[i];
		alone[i] = h->t.wire_times_alone[i] - s->wire_times_alone[i];
	}
	/* the window's own request times: how sure its rate is, and its median request */
	out->wire_p50_us = (double)fl_time_percentile(times, 50) / 1e3;
	out->wire_p99_us = (double)fl_time_percentile(times, 99) / 1e3;
	fl_report_split_figures(times, alone, h->t.acked, out);
	out->line_rate_gbs = line;
	out->bytes = h->t.wire_bytes - s->wire_bytes;
	out->messages = h->t.messages - s->messages;
	out->typical_request = fl_size_median_byte(sizes);
	out->wire_seconds = (double)ns / 1e9;
	out->wire_gbs = ns ? (double)out->bytes / (double)ns : 0.0;
	out->mem_types = h->mem_types;
	if (k->view == FL_HOP_SEND) {
		out->send_outstanding_seconds = outstanding;
		out->send_wait_seconds = wait;
	} else {
		out->outstanding_seconds = outstanding;
		out->peer_wait_seconds = wait;
		out->active_seconds = (double)(h->active_ns - s->active_ns) / 1e9;
	}
}

/* Where the next window starts. */
static void remember(struct live_hop *s, const struct fl_hop_snapshot *h)
{
	s->wire_bytes = h->t.wire_bytes;
	s->wire_ns = h->wire_ns;
	s->messages = h->t.messages;
	s->outstanding_ns = h->t.outstanding_ns;
	s->wait_ns = h->t.peer_wait_ns;
	s->active_ns = h->active_ns;
	memcpy(s->sizes, h->t.sizes, sizeof(s->sizes));
	memcpy(s->wire_times, h->t.wire_times, sizeof(s->wire_times));
	memcpy(s->wire_times_alone, h->t.wire_times_alone, sizeof(s->wire_times_alone));
}

/* A window with enough traffic to judge, for the diagnosis (else its totals just move on). */
static bool take_window(struct live_hop *s, const struct fl_hop_snapshot *h, const char *transport,
			double line, const struct fl_live_params *p)
{
	uint64_t bytes = h->t.wire_bytes - s->wire_bytes, ns = h->wire_ns - s->wire_ns;
	struct fl_hop_figures *f = &live.figs[live.nfigs];
	bool judge = !p->skip && line > 0.0 && ns && h->t.messages > s->messages &&
		     (double)bytes >= fl_live_min_bytes(line, p->window_s);

	/*
	 * Alone, a hop is judged against its line only where the wire paced its
	 * requests (fl_wire_bound): a latency-bound window says nothing of the
	 * wire, neither slow nor recovered.
	 */
	if (judge) {
		window_figures(s, h, transport, line, f);
		judge = fl_wire_bound(f->typical_request, line, fl_hop_in_flight(f));
	}
	if (judge) {
		live.of[live.nfigs] = s;
		live.gbs[live.nfigs] = (double)bytes / (double)ns;
		live.line[live.nfigs++] = line;
	}
	remember(s, h);
	return judge;
}

static bool rate_kind(enum fl_verdict_kind kind)
{
	return kind == FL_VERDICT_LINK || kind == FL_VERDICT_DEVICE || kind == FL_VERDICT_RAIL;
}

/*
 * Whether the diagnosis finds hop i slow this window. One process sees a
 * hop or two of each device, too few to compare with each other, so each
 * window is judged alone, against its line (the model's prior on where a
 * healthy hop runs): the same model as the run's report, on one hop. A
 * window is slow where a slow wire is its likeliest explanation and likelier
 * than a healthy one: the windows in a row a warning waits for
 * (FL_LIVE_LOW_WINDOWS) are what make it sure, as the run's report asks 0.9
 * of all its traffic at once.
 */
static bool slow_window(size_t i)
{
	struct fl_verdict *v = &live.verdict;

	fl_verdict_compute(&live.figs[i], 1, NULL, v);
	for (int k = 0; k < v->nfindings; k++) {
		if (rate_kind(v->findings[k].kind))
			return true;
	}
	return v->kind == FL_VERDICT_UNSURE && rate_kind(v->likeliest) && v->healthy < 0.5;
}

static int judge_window(size_t i, const struct fl_live_params *p, double unix_now,
			uint64_t mono_now, fl_live_notify_fn notify)
{
	static const char *const words[] = { "slow since", "changed at", "back to speed at" };
	struct live_hop *s = live.of[i];
	double gbs = live.gbs[i], line = live.line[i];
	int t;

	s->judged = true;
	s->last_ratio = gbs / line;
	s->last_gbs = gbs;
	s->line_gbs = line;
	t = transition(s, slow_window(i), gbs / line, p);
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

/*
 * Every hop's window goes to the diagnosis (the model of plugin/verdict: the
 * one the report and the sweep use); a hop it finds slow is slow this window.
 */
int fl_report_live_judge(const struct fl_report *r, const struct fl_live_params *p,
			 double unix_now, uint64_t mono_now, fl_live_notify_fn notify)
{
	int changes = 0;

	live.nfigs = 0;
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
		take_window(s, h, transport, d ? fl_report_line_rate(d->speed_mbps) : 0.0, p);
	}
	for (size_t i = 0; i < live.nfigs; i++)
		changes += judge_window(i, p, unix_now, mono_now, notify);
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
