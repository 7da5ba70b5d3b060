/* Live findings: each hop's last window against its line rate (see report_live.h). */
#include "report_live.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "base/log.h"

/*
 * How much faster than min_ratio a slow hop must run before it counts as
 * recovered: a hop hovering at the threshold logs once, not every window.
 */
#define RECOVERY_MARGIN 0.03
/*
 * Windows in a row a hop must be slow: a rank starved of CPU for a second read
 * 0.60x once in a healthy 16-rank lab run; a bad cable stays slow.
 */
#define LOW_WINDOWS 2

struct live_hop {
	struct fl_hop_key key;
	uint64_t wire_bytes, wire_ns; /* totals at the last window */
	bool slow;
	int low_windows; /* consecutive windows below the ratio */
	double since_unix, ratio;
};

static struct {
	struct live_hop hops[FL_MAX_HOPS];
	int n;
} live;

void fl_report_live_reset(void)
{
	live.n = 0;
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

static void say(const struct live_hop *s, const char *what, double gbs, double line,
		double unix_s)
{
	char at[16];

	clock_text(unix_s, at, sizeof(at));
	FL_WARN("fabriclab: %s/%s -> %s/%s %s %s, %.2fx its line rate (%.3f of %.3f GB/s, "
		"last %.0f s)",
		s->key.src_node, s->key.src_dev, s->key.dst_node, s->key.dst_dev, what, at,
		gbs / line, gbs, line, (double)FL_LIVE_WINDOW_NS / 1e9);
}

static void judge_window(struct live_hop *s, const struct fl_hop_snapshot *h, double line,
			 double min_ratio, double unix_now)
{
	uint64_t bytes = h->t.wire_bytes - s->wire_bytes, ns = h->wire_ns - s->wire_ns;
	double gbs, ratio;

	s->wire_bytes = h->t.wire_bytes;
	s->wire_ns = h->wire_ns;
	if (bytes < FL_LIVE_MIN_BYTES || !ns || line <= 0.0)
		return;
	gbs = (double)bytes / (double)ns;
	ratio = gbs / line;
	s->low_windows = ratio < min_ratio ? s->low_windows + 1 : 0;
	if (!s->slow && s->low_windows == LOW_WINDOWS) {
		s->slow = true;
		s->since_unix = unix_now;
		s->ratio = ratio;
		say(s, "slow since", gbs, line, unix_now);
	} else if (s->slow && ratio >= min_ratio + RECOVERY_MARGIN) {
		s->slow = false;
		say(s, "back to speed at", gbs, line, unix_now);
	} else if (s->slow && (ratio < 0.8 * s->ratio || ratio > 1.25 * s->ratio)) {
		/* the same finding, a different size: worth a line */
		s->ratio = ratio;
		say(s, "changed at", gbs, line, unix_now);
	}
}

void fl_report_live_judge(const struct fl_report *r, double min_ratio, double unix_now)
{
	int view = fl_report_best_view(r->transport);

	for (int i = 0; i < r->nhops; i++) {
		const struct fl_hop_snapshot *h = &r->hops[i];
		const struct fl_report_device *d = fl_report_device(r, h->local_dev);
		struct live_hop *s;

		if (h->key.view != view || !strcmp(h->key.src_node, FL_HOP_OTHER))
			continue;
		s = state_of(&h->key);
		if (s)
			judge_window(s, h, d ? fl_report_line_rate(d->speed_mbps) : 0.0, min_ratio,
				     unix_now);
	}
}
