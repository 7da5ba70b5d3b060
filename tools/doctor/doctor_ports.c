/* The doctor's RDMA checks: libibverbs, each port's state and rate, its counters. */
#include <stdlib.h>
#include <string.h>

#include "plugin/base/error.h"
#include "plugin/transport/ib/gdr_detect.h"
#include "plugin/transport/ib/verbs_load.h"
#include "doctor.h"

#define NAMES_LEN 256

static bool is_ethernet(const struct fl_port *p)
{
	return !strcmp(p->link_layer, "Ethernet");
}

static int sysfs_devices(const struct doctor *d)
{
	int n = 0;

	for (int i = 0; i < d->ports->n; i++)
		n += i == 0 || strcmp(d->ports->p[i].dev, d->ports->p[i - 1].dev);
	return n;
}

static void append_name(char *names, const char *name)
{
	size_t used = strlen(names);

	if (used + strlen(name) + 3 < NAMES_LEN)
		snprintf(names + used, NAMES_LEN - used, "%s%s", used ? ", " : "", name);
}

/* Opens the device once: the dma-buf probe needs a protection domain on it. */
static void probe_device(struct doctor *d, const struct fl_verbs *v, struct ibv_device *dev)
{
	struct ibv_context *ctx = v->open_device(dev);
	struct ibv_pd *pd;

	if (!ctx)
		return;
	pd = v->alloc_pd(ctx);
	if (pd) {
		d->dmabuf_probed = true;
		d->dmabuf_probe = gdr_dmabuf_supported(v, pd) == 1;
		v->dealloc_pd(pd);
	}
	v->close_device(ctx);
}

void doctor_check_verbs(struct doctor *d)
{
	const struct fl_verbs *v = fl_verbs_get();
	int in_sysfs = sysfs_devices(d), n = 0;
	struct ibv_device **list;
	char names[NAMES_LEN] = "";

	if (!v) {
		doctor_add(d, in_sysfs ? DOCTOR_WARN : DOCTOR_INFO, "verbs", "",
			   "ldconfig -p | grep libibverbs; ibv_devinfo",
			   "verbs could not be loaded (%s): the checks below read sysfs only%s",
			   fl_error_text(),
			   in_sysfs ? "; NCCL needs libibverbs to use these devices" : "");
		return;
	}
	list = v->get_device_list(&n);
	for (int i = 0; list && i < n; i++)
		append_name(names, v->get_device_name(list[i]));
	if (list && n > 0)
		probe_device(d, v, list[0]);
	if (list)
		v->free_device_list(list);
	d->nverbs_devices = list ? n : 0;
	if (n > 0)
		doctor_add(d, DOCTOR_PASS, "verbs", "", "ibv_devinfo", "%s opened, %d device%s: %s",
			   v->path, n, n == 1 ? "" : "s", names);
	else
		doctor_add(d, in_sysfs ? DOCTOR_WARN : DOCTOR_INFO, "verbs", "",
			   "ibv_devinfo; ls /usr/lib/*/libibverbs/", "%s opened, no device%s",
			   v->path,
			   in_sysfs ? " although sysfs lists some: is the provider library "
				      "(libmlx5 from rdma-core) installed?"
				    : "");
}

static void state_check(struct doctor *d, const struct fl_port *p)
{
	char cmd[160];
	int level = DOCTOR_PASS;
	const char *why = "";

	if (is_ethernet(p))
		snprintf(cmd, sizeof(cmd), "ibv_devinfo -d %s; ip link show %s", p->dev,
			 p->netdev[0] ? p->netdev : "<netdev>");
	else
		snprintf(cmd, sizeof(cmd), "ibstat %s %d", p->dev, p->num);
	if (p->state == FL_PORT_INIT || p->state == FL_PORT_ARMED) {
		level = DOCTOR_FAIL;
		why = ": the link is up but the subnet manager has not activated the port (sminfo)";
	} else if (p->state == FL_PORT_DOWN) {
		level = DOCTOR_WARN;
		why = ": no link (no cable, or the other end is down); fine if this port is unused";
	} else if (!fl_port_is_active(p)) {
		level = DOCTOR_WARN;
		why = ": state unreadable";
	} else if (p->phys_state && p->phys_state != FL_PHYS_LINK_UP) {
		level = DOCTOR_WARN;
		why = ": active, but the physical link is not LinkUp";
	}
	doctor_add(d, level, "port", p->name, cmd, "%s%s%s, %s, %s, rate %s%s",
		   p->state_name[0] ? p->state_name : "?", p->phys_name[0] ? " " : "", p->phys_name,
		   p->link_layer[0] ? p->link_layer : "link layer unknown",
		   p->netdev[0] ? p->netdev : "no netdev", p->rate_text[0] ? p->rate_text : "?",
		   why);
}

static void rate_check(struct doctor *d, const struct fl_port *p)
{
	char cmd[200];

	if (!fl_port_is_active(p))
		return;
	if (is_ethernet(p))
		snprintf(cmd, sizeof(cmd), "ethtool %s   # Speed vs Supported link modes",
			 p->netdev[0] ? p->netdev : "<netdev>");
	else
		snprintf(cmd, sizeof(cmd), "ibstat %s %d | grep Rate; mlxlink -d %s -p %d", p->dev,
			 p->num, p->dev, p->num);
	if (fl_port_trained_down(p))
		doctor_add(d, DOCTOR_FAIL, "rate", p->name, cmd,
			   "trained down: active %g Gb/s of %g Gb/s (%s): reseat or replace the "
			   "cable or transceiver; this port slows every ring through it",
			   p->active_gbps, p->max_gbps, p->max_from);
	else if (p->max_gbps > 0)
		doctor_add(d, DOCTOR_PASS, "rate", p->name, cmd, "%g Gb/s, the highest (%s)",
			   p->active_gbps, p->max_from);
	else
		doctor_add(d, DOCTOR_INFO, "rate", p->name, cmd,
			   "%g Gb/s; highest rate unknown (no other active %s port of model %s on "
			   "this node to compare with)",
			   p->active_gbps, p->link_layer, p->hca_type[0] ? p->hca_type : "?");
}

void doctor_check_ports(struct doctor *d)
{
	const char *cmd = "ls /sys/class/infiniband; lspci | grep -i -E 'mellanox|infiniband'";

	if (!d->ports->n) {
		doctor_add(d, d->require_rdma ? DOCTOR_FAIL : DOCTOR_WARN, "rdma", "", cmd,
			   "no RDMA device under %s/class/infiniband: NCCL will carry traffic over "
			   "TCP sockets",
			   d->root);
		return;
	}
	if (!fl_ports_first_active(d->ports))
		doctor_add(d, d->require_rdma ? DOCTOR_FAIL : DOCTOR_WARN, "rdma", "", cmd,
			   "%d RDMA port%s, none active", d->ports->n, d->ports->n == 1 ? "" : "s");
	else
		doctor_add(d, DOCTOR_PASS, "rdma", "", cmd, "%d RDMA port%s on %d device%s",
			   d->ports->n, d->ports->n == 1 ? "" : "s", sysfs_devices(d),
			   sysfs_devices(d) == 1 ? "" : "s");
	for (int i = 0; i < d->ports->n; i++) {
		state_check(d, &d->ports->p[i]);
		rate_check(d, &d->ports->p[i]);
	}
}

/* "symbol_error +60, link_downed +1" from the changes; returns the worst severity. */
static int describe(const struct fl_counter_change *ch, int n, char *buf, size_t len)
{
	int worst = FL_COUNTER_INFO;
	size_t used = 0;

	buf[0] = '\0';
	for (int i = 0; i < n && used < len; i++) {
		const char *name = strchr(ch[i].counter->name, '/') + 1;
		int w = snprintf(buf + used, len - used, "%s%s +%llu%s%s", i ? ", " : "", name,
				 (unsigned long long)ch[i].delta,
				 ch[i].kind != FL_DELTA_OK ? " " : "",
				 ch[i].kind != FL_DELTA_OK ? fl_delta_kind_name(ch[i].kind) : "");

		used += w > 0 ? (size_t)w : 0;
		worst = ch[i].counter->severity > worst ? ch[i].counter->severity : worst;
	}
	return worst;
}

/* Without a second sample: errors counted since the last reset, or saturated counters. */
static int standing_errors(const struct fl_port *p, char *buf, size_t len)
{
	size_t used = 0;
	int n = 0;

	buf[0] = '\0';
	for (int i = 0; i < p->counters.n && used < len; i++) {
		const struct fl_counter *c = &p->counters.c[i];
		bool full = c->saturating && c->width < 64 && c->value == (1ULL << c->width) - 1;
		int w;

		if (c->severity != FL_COUNTER_ERROR || !c->value)
			continue;
		w = snprintf(buf + used, len - used, "%s%s %llu%s", n ? ", " : "",
			     strchr(c->name, '/') + 1, (unsigned long long)c->value,
			     full ? " (saturated)" : "");
		used += w > 0 ? (size_t)w : 0;
		n++;
	}
	return n;
}

static void counter_command(const struct fl_port *p, char *cmd, size_t len)
{
	if (is_ethernet(p) && p->netdev[0])
		snprintf(cmd, len,
			 "ethtool -S %s | grep -E 'pause|discard|err'; perfquery -x -C %s -P %d",
			 p->netdev, p->dev, p->num);
	else
		snprintf(cmd, len, "perfquery -x -C %s -P %d", p->dev, p->num);
}

static void counters_check(struct doctor *d, const struct fl_port *p)
{
	const struct fl_port *b = d->base ? fl_ports_find(d->base, p->name) : NULL;
	struct fl_counter_change ch[FL_PORT_COUNTERS];
	char cmd[200], what[480];
	int n, worst;

	counter_command(p, cmd, sizeof(cmd));
	if (!b) {
		if (standing_errors(p, what, sizeof(what)))
			doctor_add(d, DOCTOR_WARN, "counters", p->name, cmd,
				   "errors counted since the last reset: %s; `fabriclab doctor "
				   "--interval 10` shows whether they still rise",
				   what);
		else
			doctor_add(d, DOCTOR_PASS, "counters", p->name, cmd,
				   "%d counters read, no link error counted", p->counters.n);
		return;
	}
	n = fl_port_rising(p, b, FL_COUNTER_CONGESTION, ch, FL_PORT_COUNTERS);
	worst = describe(ch, n, what, sizeof(what));
	if (!n)
		doctor_add(d, DOCTOR_PASS, "counters", p->name, cmd,
			   "no error or congestion counter rose in %g s (%d counters)",
			   d->interval_s, p->counters.n);
	else if (worst == FL_COUNTER_ERROR)
		doctor_add(d, DOCTOR_FAIL, "counters", p->name, cmd,
			   "link errors rising in %g s: %s: a bad cable, transceiver or port",
			   d->interval_s, what);
	else
		doctor_add(d, DOCTOR_WARN, "counters", p->name, cmd,
			   "congestion counters rising in %g s: %s", d->interval_s, what);
}

void doctor_check_counters(struct doctor *d)
{
	for (int i = 0; i < d->ports->n; i++)
		counters_check(d, &d->ports->p[i]);
}
