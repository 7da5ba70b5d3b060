/*
 * The counters that find bad links, read from sysfs: the IB port counters
 * (PMA PortCounters: narrow and saturating), the device's hw_counters, and
 * for RoCE the Ethernet interface's statistics and ethtool counters.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "port_info.h"
#include "base/sysfs_read.h"

struct known_counter {
	const char *name;
	uint8_t width;
	uint8_t severity;
};

/* Widths as the InfiniBand PortCounters attribute defines them. */
static const struct known_counter ib_counters[] = {
	{ "symbol_error", 16, FL_COUNTER_ERROR },
	{ "link_error_recovery", 8, FL_COUNTER_ERROR },
	{ "link_downed", 8, FL_COUNTER_ERROR },
	{ "port_rcv_errors", 16, FL_COUNTER_ERROR },
	{ "port_rcv_remote_physical_errors", 16, FL_COUNTER_ERROR },
	{ "local_link_integrity_errors", 4, FL_COUNTER_ERROR },
	{ "excessive_buffer_overrun_errors", 4, FL_COUNTER_ERROR },
	{ "port_rcv_switch_relay_errors", 16, FL_COUNTER_CONGESTION },
	{ "port_xmit_discards", 16, FL_COUNTER_CONGESTION },
	{ "port_xmit_constraint_errors", 8, FL_COUNTER_CONGESTION },
	{ "port_rcv_constraint_errors", 8, FL_COUNTER_CONGESTION },
	{ "VL15_dropped", 16, FL_COUNTER_CONGESTION },
	{ "port_xmit_wait", 32, FL_COUNTER_CONGESTION },
	{ "port_xmit_data", 64, FL_COUNTER_INFO },
	{ "port_rcv_data", 64, FL_COUNTER_INFO },
};

/* The interface's statistics (unsigned long in the kernel). */
static const struct known_counter netdev_counters[] = {
	{ "rx_crc_errors", 0, FL_COUNTER_ERROR },
	{ "rx_frame_errors", 0, FL_COUNTER_ERROR },
	{ "tx_carrier_errors", 0, FL_COUNTER_ERROR },
	{ "rx_errors", 0, FL_COUNTER_ERROR },
	{ "tx_errors", 0, FL_COUNTER_ERROR },
	{ "rx_dropped", 0, FL_COUNTER_CONGESTION },
	{ "tx_dropped", 0, FL_COUNTER_CONGESTION },
	{ "rx_missed_errors", 0, FL_COUNTER_CONGESTION },
	{ "rx_fifo_errors", 0, FL_COUNTER_CONGESTION },
};

void fl_counter_add(struct fl_counter_set *s, const char *name, uint64_t value, int width,
		    bool saturating, int severity)
{
	struct fl_counter *c;

	if (s->n >= FL_PORT_COUNTERS || strlen(name) >= FL_COUNTER_NAME_LEN)
		return;
	c = &s->c[s->n++];
	snprintf(c->name, sizeof(c->name), "%s", name);
	c->value = value;
	c->width = (uint8_t)width;
	c->saturating = saturating;
	c->severity = (uint8_t)severity;
}

const struct fl_counter *fl_counter_find(const struct fl_counter_set *s, const char *name)
{
	for (int i = 0; i < s->n; i++)
		if (!strcmp(s->c[i].name, name))
			return &s->c[i];
	return NULL;
}

static uint64_t width_max(int width)
{
	return width >= 64 ? UINT64_MAX : (1ULL << width) - 1;
}

enum fl_delta_kind fl_counter_delta(const struct fl_counter *before, const struct fl_counter *after,
				    uint64_t *delta)
{
	uint64_t max = width_max(after->width);

	*delta = 0;
	if (!before)
		return FL_DELTA_MISSING;
	if (after->value >= before->value) {
		*delta = after->value - before->value;
		return after->saturating && after->value == max ? FL_DELTA_SATURATED : FL_DELTA_OK;
	}
	if (!after->saturating && after->width < 64 && before->value <= max) {
		*delta = max - before->value + after->value + 1;
		return FL_DELTA_WRAPPED;
	}
	*delta = after->value;
	return FL_DELTA_RESET;
}

const char *fl_delta_kind_name(enum fl_delta_kind kind)
{
	switch (kind) {
	case FL_DELTA_OK: return "ok";
	case FL_DELTA_WRAPPED: return "wrapped";
	case FL_DELTA_RESET: return "reset";
	case FL_DELTA_SATURATED: return "saturated";
	case FL_DELTA_MISSING: return "missing";
	}
	return "unknown";
}

const char *fl_counter_severity_name(int severity)
{
	return severity == FL_COUNTER_ERROR	   ? "error"
	       : severity == FL_COUNTER_CONGESTION ? "congestion"
						   : "info";
}

/* A file holding one unsigned number; -1 when absent or not a number. */
static int read_u64(const char *path, uint64_t *out)
{
	char line[32];
	unsigned long long v;

	if (fl_read_first_line(line, sizeof(line), "%s", path) || sscanf(line, "%llu", &v) != 1)
		return -1;
	*out = v;
	return 0;
}

static void read_known(const char *dir, const char *prefix, const struct known_counter *k, size_t n,
		       bool saturating, struct fl_counter_set *s)
{
	char path[PATH_MAX + 256], name[FL_COUNTER_NAME_LEN];
	uint64_t v;

	for (size_t i = 0; i < n; i++) {
		int width = k[i].width ? k[i].width : (int)(8 * sizeof(unsigned long));

		snprintf(path, sizeof(path), "%s/%s", dir, k[i].name);
		if (read_u64(path, &v))
			continue;
		snprintf(name, sizeof(name), "%s/%s", prefix, k[i].name);
		fl_counter_add(s, name, v, width, saturating && width < 64, k[i].severity);
	}
}

/* mlx5's RoCE and transport counters: losses and retries show up here first. */
static int hw_counter_severity(const char *name)
{
	static const char *const trouble[] = {
		"err", "timeout", "out_of_", "seq", "discard", "drop"
	};

	for (size_t i = 0; i < sizeof(trouble) / sizeof(trouble[0]); i++)
		if (strstr(name, trouble[i]))
			return FL_COUNTER_CONGESTION;
	return FL_COUNTER_INFO;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * Every file of hw_counters but `lifespan` (a setting), in name order, at most
 * half the set: the interface's counters need room too.
 */
static void read_hw_counters(const char *dir, struct fl_counter_set *s)
{
	char path[PATH_MAX + 400], name[FL_COUNTER_NAME_LEN], *names[FL_PORT_COUNTERS / 2];
	DIR *d = opendir(dir);
	struct dirent *e;
	size_t n = 0;
	uint64_t v;

	if (!d)
		return;
	while ((e = readdir(d)) && n < FL_PORT_COUNTERS / 2)
		if (e->d_name[0] != '.' && strcmp(e->d_name, "lifespan"))
			if ((names[n] = strdup(e->d_name)))
				n++;
	closedir(d);
	qsort(names, n, sizeof(names[0]), cmp_names);
	for (size_t i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		snprintf(name, sizeof(name), "hw_counters/%s", names[i]);
		if (!read_u64(path, &v))
			fl_counter_add(s, name, v, 64, false, hw_counter_severity(names[i]));
		free(names[i]);
	}
}

int fl_ethtool_counter_severity(const char *name)
{
	static const char *const errors[] = { "crc", "symbol", "fcs", "err" };
	static const char *const congestion[] = { "pause", "discard", "drop", "out_of_buffer" };
	char c0 = name[0];

	/* per-queue copies (rx3_..., ch0_...) repeat the port's totals */
	if ((c0 == 'r' || c0 == 't' || c0 == 'c') && strlen(name) > 2 &&
	    (name[2] >= '0' && name[2] <= '9'))
		return -1;
	for (size_t i = 0; i < sizeof(congestion) / sizeof(congestion[0]); i++)
		if (strstr(name, congestion[i]))
			return FL_COUNTER_CONGESTION;
	for (size_t i = 0; i < sizeof(errors) / sizeof(errors[0]); i++)
		if (strstr(name, errors[i]))
			return FL_COUNTER_ERROR;
	return -1;
}

void fl_port_read_counters(const char *root, struct fl_port *p)
{
	char dir[PATH_MAX + 128];

	p->counters.n = 0;
	snprintf(dir, sizeof(dir), "%s/class/infiniband/%s/ports/%d/counters", root, p->dev,
		 p->num);
	read_known(dir, "counters", ib_counters, sizeof(ib_counters) / sizeof(ib_counters[0]), true,
		   &p->counters);
	snprintf(dir, sizeof(dir), "%s/class/infiniband/%s/ports/%d/hw_counters", root, p->dev,
		 p->num);
	read_hw_counters(dir, &p->counters);
	if (!p->netdev[0])
		return;
	snprintf(dir, sizeof(dir), "%s/class/net/%s/statistics", root, p->netdev);
	read_known(dir, "statistics", netdev_counters,
		   sizeof(netdev_counters) / sizeof(netdev_counters[0]), false, &p->counters);
	fl_ethtool_stats(root, p->netdev, &p->counters);
}

int fl_port_rising(const struct fl_port *now, const struct fl_port *base, int min_severity,
		   struct fl_counter_change *out, int max)
{
	int n = 0;

	for (int i = 0; i < now->counters.n && n < max; i++) {
		const struct fl_counter *c = &now->counters.c[i];
		uint64_t delta;
		enum fl_delta_kind kind;

		if (c->severity < min_severity || !base)
			continue;
		kind = fl_counter_delta(fl_counter_find(&base->counters, c->name), c, &delta);
		if (kind == FL_DELTA_MISSING || (!delta && kind != FL_DELTA_SATURATED))
			continue;
		out[n++] = (struct fl_counter_change){ c, delta, kind };
	}
	return n;
}
