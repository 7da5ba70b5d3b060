/*
 * Live device findings. One process sees a hop from one end only, so alone it
 * cannot compare a hop with its peers the way the run's verdict does; but it
 * does see both directions of its own devices: what they receive (timed by
 * the receiver) and what they send (timed by the sender). A device whose every
 * judged hop is slow, in both directions, is a slow NIC or cable rather than
 * one slow path: it is named once, as "node/dev", instead of as its links.
 */
#include <stdio.h>
#include <string.h>

#include "report_live_internal.h"

#define LIVE_MAX_DEVICES 32 /* local devices a process drives */

struct live_device {
	char node[FL_NODE_NAME_LEN];
	char dev[FL_DEV_NAME_LEN];
	bool slow;
	struct fl_live_finding f;
};

static struct {
	struct live_device devs[LIVE_MAX_DEVICES];
	int n;
} ld;

/* What the hops through one device say this window. */
struct device_evidence {
	bool all_slow, sends, receives, best;
	int windows;                 /* the fewest slow windows in a row among them */
	const struct live_hop *fastest; /* the figures the finding quotes */
};

void live_devices_reset(void)
{
	ld.n = 0;
}

static bool is_device(const struct live_device *d, const char *node, const char *dev)
{
	return !strcmp(d->node, node) && !strcmp(d->dev, dev);
}

static void add_device(const char *node, const char *dev)
{
	struct live_device *d;

	for (int i = 0; i < ld.n; i++)
		if (is_device(&ld.devs[i], node, dev))
			return;
	if (ld.n == LIVE_MAX_DEVICES)
		return;
	d = &ld.devs[ld.n++];
	memset(d, 0, sizeof(*d));
	snprintf(d->node, sizeof(d->node), "%s", node);
	snprintf(d->dev, sizeof(d->dev), "%s", dev);
}

static bool through(const struct live_hop *h, const struct live_device *d)
{
	const char *node, *dev;

	live_local_end(&h->key, &node, &dev);
	return h->key.mode == FL_HOP_NET && is_device(d, node, dev);
}

static struct device_evidence gather(const struct live_hop *hops, int n,
				     const struct live_device *d)
{
	struct device_evidence e = { .all_slow = true };

	for (int i = 0; i < n; i++) {
		const struct live_hop *h = &hops[i];

		if (!h->judged || !through(h, d))
			continue;
		e.all_slow &= h->slow;
		e.sends |= h->key.view == FL_HOP_SEND;
		e.receives |= h->key.view == FL_HOP_RECV;
		e.best |= h->best;
		if (!e.fastest || h->low_windows < e.windows)
			e.windows = h->low_windows;
		if (!e.fastest || h->last_ratio > e.fastest->last_ratio)
			e.fastest = h;
	}
	return e;
}

/*
 * The finding quotes the device's fastest hop: every direction of it runs at
 * most that fast, and that is what replacing it would win.
 */
static void describe(struct live_device *d, const struct device_evidence *e, uint64_t mono_now)
{
	struct fl_live_finding *f = &d->f;
	const struct live_hop *h = e->fastest;

	memset(&f->key, 0, sizeof(f->key));
	f->key.view = h->key.view;
	snprintf(f->key.src_node, sizeof(f->key.src_node), "%s", d->node);
	snprintf(f->key.src_dev, sizeof(f->key.src_dev), "%s", d->dev);
	f->kind = "device";
	snprintf(f->culprit, sizeof(f->culprit), "%s/%s", d->node, d->dev);
	f->gbs = h->last_gbs;
	f->line_gbs = h->line_gbs;
	f->ratio = h->last_ratio;
	f->cost = f->ratio < 1.0 ? 1.0 - f->ratio : 0.0;
	f->window_s = h->f.window_s;
	f->windows = e->windows;
	f->at_ns = mono_now;
}

static int judge_device(struct live_device *d, const struct live_hop *hops, int n,
			double unix_now, uint64_t mono_now, fl_live_notify_fn notify)
{
	struct device_evidence e = gather(hops, n, d);
	bool slow = e.fastest && e.all_slow && e.sends && e.receives && e.best;
	enum fl_live_state t;

	/* a cleared finding quotes the window that recovered, as a link's does */
	if (e.fastest)
		describe(d, &e, mono_now);
	if (slow == d->slow)
		return 0;
	t = slow ? FL_LIVE_APPEARED : FL_LIVE_CLEARED;
	if (slow)
		d->f.since_unix = unix_now;
	d->slow = slow;
	live_say(&d->f, slow ? "slow since" : "back to speed at", unix_now);
	if (notify)
		notify(t, &d->f);
	return 1;
}

int live_devices_judge(double unix_now, uint64_t mono_now, fl_live_notify_fn notify)
{
	int n, changes = 0;
	const struct live_hop *hops = live_hops(&n);

	for (int i = 0; i < n; i++) {
		const char *node, *dev;

		live_local_end(&hops[i].key, &node, &dev);
		if (hops[i].key.mode == FL_HOP_NET && hops[i].judged)
			add_device(node, dev);
	}
	for (int i = 0; i < ld.n; i++)
		changes += judge_device(&ld.devs[i], hops, n, unix_now, mono_now, notify);
	return changes;
}

int live_devices_current(struct fl_live_finding *out, int max)
{
	int n = 0;

	for (int i = 0; i < ld.n && n < max; i++)
		if (ld.devs[i].slow)
			out[n++] = ld.devs[i].f;
	return n;
}

bool live_device_explains(const struct fl_hop_key *k)
{
	const char *node, *dev;

	live_local_end(k, &node, &dev);
	for (int i = 0; i < ld.n; i++)
		if (ld.devs[i].slow && k->mode == FL_HOP_NET && is_device(&ld.devs[i], node, dev))
			return true;
	return false;
}
