/*
 * The process-wide side of fault injection: the rules parsed at init, the
 * lab's link rate, the pacers shared by the connections of a device or hop,
 * and the list of faults applied that the report shows.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/clock.h"
#include "base/error.h"
#include "fault_internal.h"
#include "fault_units.h"
#include "base/identity.h"
#include "base/log.h"

#define MAX_SHARED_PACERS 256

struct shared_pacer {
	int rule;
	int dev;
	int dir;
	char peer[FL_NODE_NAME_LEN];
	struct fl_pacer pacer;
};

struct injected_slot {
	int rule;
	struct fl_fault_injected e;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct fl_fault_spec spec;
static char rule_texts[FL_FAULT_MAX_RULES][FL_FAULT_DESCRIBE_LEN];
static uint64_t link_rate;
static uint64_t port_speed; /* FABRICLAB_PORT_SPEED in bytes/s, 0 unset */
static int nshared;
static struct shared_pacer shared[MAX_SHARED_PACERS];
static int ninjected;
static struct injected_slot injected[FL_FAULT_MAX_INJECTED];

const struct fl_fault_spec *fl_fault_rules(void)
{
	return &spec;
}

uint64_t fl_fault_link_rate(void)
{
	return link_rate;
}

uint64_t fl_fault_port_speed(void)
{
	return port_speed;
}

const char *fl_fault_rule_text(int rule)
{
	if (rule == FL_FAULT_LINK_RATE_RULE)
		return FL_LINK_RATE_ENV;
	return rule >= 0 && rule < spec.nrules ? rule_texts[rule] : "";
}

bool fl_fault_active(void)
{
	return spec.nrules > 0 || link_rate > 0;
}

/* FABRICLAB_LINK_RATE, FABRICLAB_PORT_SPEED: a number and a rate unit of the fault grammar,
 * e.g. 2gbit. */
static int parse_rate_env(const char *env, const char *text, uint64_t *out)
{
	char *end;
	double x = strtod(text, &end), bytes;

	*out = 0;
	while (*end == ' ')
		end++;
	for (size_t i = 0; end != text && x > 0 && i < FL_FAULT_N_UNITS(fl_fault_rate_units); i++) {
		if (strcasecmp(end, fl_fault_rate_units[i].name))
			continue;
		bytes = x * fl_fault_rate_units[i].scale;
		if (bytes >= 125.0 && bytes <= 12.5e12) {
			*out = (uint64_t)(bytes + 0.5);
			return FL_OK;
		}
	}
	return fl_fail(FL_ERR_USAGE,
		       "%s \"%.40s\": expected a rate from 1kbit to 100tbit with a unit kbit, mbit, "
		       "gbit, tbit, kbyte, mbyte, gbyte or tbyte, e.g. %s=2gbit",
		       env, text, env);
}

static bool has_device(const struct fl_transport *tp, const char *name)
{
	int ndev = 0;

	if (tp->devices(&ndev) != FL_OK)
		return false;
	for (int i = 0; i < ndev; i++) {
		struct fl_props p = { 0 };

		if (tp->get_properties(i, &p) == FL_OK && p.name && !strcmp(p.name, name))
			return true;
	}
	return false;
}

/* A rule that can never apply here is said once, so a typo in a node name is noticed. */
static void say_unmatched(const struct fl_transport *tp, const struct fl_endpoint *me)
{
	for (int i = 0; i < spec.nrules; i++) {
		const struct fl_fault_where *w = &spec.rules[i].where;

		if (!fl_fault_rule_targets_node(&spec.rules[i], me->node))
			FL_INFO("FABRICLAB_FAULT rule %d (%s) matches nothing on node %s (it is for "
				"node %s)", i + 1, rule_texts[i], me->node, w->node);
		else if (w->dev[0] && !has_device(tp, w->dev))
			FL_INFO("FABRICLAB_FAULT rule %d (%s) matches nothing on node %s (no device "
				"%s here)", i + 1, rule_texts[i], me->node, w->dev);
		else if (w->rank >= 0 && me->rank >= 0 && w->rank != me->rank)
			FL_INFO("FABRICLAB_FAULT rule %d (%s) matches nothing on node %s (this is "
				"rank %d)", i + 1, rule_texts[i], me->node, me->rank);
		else
			FL_INFO("FABRICLAB_FAULT rule %d (%s) may apply on node %s", i + 1,
				rule_texts[i], me->node);
	}
}

int fl_fault_init(const struct fl_transport *tp)
{
	const char *rate = getenv(FL_LINK_RATE_ENV), *speed = getenv(FL_PORT_SPEED_ENV);
	struct fl_endpoint me;
	int rc;

	pthread_mutex_lock(&lock);
	rc = fl_fault_from_env(&spec);
	if (!rc && rate && rate[0])
		rc = parse_rate_env(FL_LINK_RATE_ENV, rate, &link_rate);
	if (!rc && speed && speed[0])
		rc = parse_rate_env(FL_PORT_SPEED_ENV, speed, &port_speed);
	for (int i = 0; !rc && i < spec.nrules; i++)
		fl_fault_describe(&spec.rules[i], rule_texts[i], sizeof(rule_texts[i]));
	pthread_mutex_unlock(&lock);
	if (rc) {
		spec.nrules = 0;
		link_rate = 0;
		port_speed = 0;
		return rc;
	}
	fl_identity_local(&me, 0, "", 0);
	if (link_rate)
		FL_INFO("%s: every device of node %s sends at most %.3f Gbit/s",
			FL_LINK_RATE_ENV, me.node, (double)link_rate * 8 / 1e9);
	if (port_speed)
		FL_INFO("%s: every device of node %s is reported at %.3f Gbit/s (not paced)",
			FL_PORT_SPEED_ENV, me.node, (double)port_speed * 8 / 1e9);
	say_unmatched(tp, &me);
	return FL_OK;
}

uint64_t fl_fault_line_rate(const struct fl_transport *tp, int dev)
{
	struct fl_props p = { 0 };

	if (link_rate || port_speed)
		return link_rate ? link_rate : port_speed;
	if (!tp || tp->get_properties(dev, &p) != FL_OK || p.speed_mbps <= 0)
		return 0;
	return (uint64_t)p.speed_mbps * 125000u;
}

struct fl_pacer *fl_fault_shared_pacer(int rule, int dev, const char *peer, int dir,
				       uint64_t rate_bytes_per_s, uint64_t stall_for_ns,
				       uint64_t stall_every_ns)
{
	struct fl_pacer *p = NULL;

	pthread_mutex_lock(&lock);
	for (int i = 0; i < nshared && !p; i++)
		if (shared[i].rule == rule && shared[i].dev == dev && shared[i].dir == dir &&
		    !strcasecmp(shared[i].peer, peer))
			p = &shared[i].pacer;
	if (!p && nshared < MAX_SHARED_PACERS) {
		struct shared_pacer *s = &shared[nshared++];
		uint64_t now = fl_clock_ns();

		s->rule = rule;
		s->dev = dev;
		s->dir = dir;
		snprintf(s->peer, sizeof(s->peer), "%s", peer);
		fl_pace_init(&s->pacer, rate_bytes_per_s, 0, now);
		s->pacer.is_cable = rule == FL_FAULT_LINK_RATE_RULE;
		if (stall_for_ns)
			fl_pace_set_stall(&s->pacer, stall_for_ns, stall_every_ns, now);
		p = &s->pacer;
	}
	pthread_mutex_unlock(&lock);
	return p;
}

/* Set once at init, before any connection; read when a fault is applied. */
static _Atomic(fl_fault_observer_fn) observer;

void fl_fault_set_observer(fl_fault_observer_fn fn)
{
	atomic_store_explicit(&observer, fn, memory_order_release);
}

void fl_fault_observe(uint32_t conn_id, const char *action, const char *rule, uint64_t delay_ns,
		      uint64_t rate_bytes_per_s)
{
	fl_fault_observer_fn fn = atomic_load_explicit(&observer, memory_order_acquire);

	if (fn)
		fn(conn_id, action, rule, delay_ns, rate_bytes_per_s);
}

void fl_fault_note_injected(int rule, const struct fl_fault_injected *e)
{
	struct injected_slot *hit = NULL;

	pthread_mutex_lock(&lock);
	for (int i = 0; i < ninjected && !hit; i++)
		if (injected[i].rule == rule && !strcmp(injected[i].e.dev, e->dev) &&
		    !strcasecmp(injected[i].e.peer, e->peer) && !strcmp(injected[i].e.dir, e->dir))
			hit = &injected[i];
	if (!hit && ninjected < FL_FAULT_MAX_INJECTED) {
		hit = &injected[ninjected++];
		hit->rule = rule;
		hit->e = *e;
		hit->e.connections = 0;
	}
	if (hit && e->connections)
		hit->e.connections += e->connections;
	pthread_mutex_unlock(&lock);
}

int fl_fault_injected_list(struct fl_fault_injected *out, int max)
{
	int n;

	pthread_mutex_lock(&lock);
	n = ninjected < max ? ninjected : max;
	for (int i = 0; i < n; i++)
		out[i] = injected[i].e;
	pthread_mutex_unlock(&lock);
	return n;
}

void fl_fault_reset_for_tests(void)
{
	pthread_mutex_lock(&lock);
	memset(&spec, 0, sizeof(spec));
	link_rate = 0;
	port_speed = 0;
	nshared = 0;
	ninjected = 0;
	pthread_mutex_unlock(&lock);
}
