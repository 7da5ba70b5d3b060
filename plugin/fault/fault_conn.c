/*
 * The rules that apply to one connection, decided once it is established and
 * its peer is known: a pacer for throttle, stall and the link rate, a hold on
 * every send for slow, a deadline for fail. Each is logged at WARN, told to
 * the observer (the tracer) and listed in the report.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/error.h"
#include "fault_internal.h"
#include "base/log.h"
#include "transport/forward.h"

struct fl_fault_conn {
	struct fl_pacer pacer; /* its own rate is unlimited: it only consults shared pacers */
	uint32_t conn_id;
	/* slow */
	int slow_rule;         /* -1: none */
	double slow_factor;    /* > 1, or 0 with slow_delay_ns */
	uint64_t slow_delay_ns;
	uint64_t line_rate;    /* bytes/s, for a factor */
	uint64_t hold_until;   /* 0: the next send starts a hold */
	bool recv_side;
	uint64_t last_bytes;   /* of the last request that moved any */
	/* fail */
	int fail_rule;         /* -1: none */
	uint64_t fail_at_ns;
	uint64_t fail_after_bytes;
	uint64_t moved;
	int tripped;
};

struct attach_ctx {
	const struct fl_transport *tp;
	bool send;
	const struct fl_endpoint *self;
	const struct fl_endpoint *peer;
	struct fl_fault_conn *f;
	uint64_t line_rate;
};

static const char *dir_name(bool send)
{
	return send ? "tx" : "rx";
}

static void announce(const struct attach_ctx *a, int rule, const char *action, uint64_t rate,
		     uint64_t delay_ns, bool hop_wide)
{
	struct fl_fault_injected e = { 0 };
	const char *text = fl_fault_rule_text(rule);

	FL_WARN("injected fault on connection %u (%s %s/%s %s %s/%s): FABRICLAB_FAULT rule %d "
		"(%s)%s%.3f Gbit/s%s",
		a->f->conn_id, a->send ? "send" : "recv", a->self->node, a->self->dev_name,
		a->send ? "->" : "<-", a->peer->node, a->peer->dev_name, rule + 1, text,
		rate ? ", paced to " : "", rate ? (double)rate * 8 / 1e9 : 0.0,
		rate ? (hop_wide ? " for the hop" : " for the device") : "");
	fl_fault_observe(a->f->conn_id, action, text, delay_ns, rate);
	snprintf(e.rule, sizeof(e.rule), "%s", text);
	snprintf(e.action, sizeof(e.action), "%s", action);
	snprintf(e.dev, sizeof(e.dev), "%s", a->self->dev_name);
	snprintf(e.peer, sizeof(e.peer), "%s", hop_wide ? a->peer->node : "");
	snprintf(e.dir, sizeof(e.dir), "%s", dir_name(a->send));
	e.connections = 1;
	e.rate_bytes_per_s = rate;
	e.delay_ns = delay_ns;
	fl_fault_note_injected(rule, &e);
}

static void share(struct attach_ctx *a, struct fl_pacer *shared, int rule)
{
	if (!shared || !fl_pace_share(&a->f->pacer, shared))
		FL_WARN("FABRICLAB_FAULT rule %d (%s) not applied to connection %u: too many "
			"pacers", rule + 1, fl_fault_rule_text(rule), a->f->conn_id);
}

static uint64_t throttle_rate(const struct attach_ctx *a, const struct fl_fault_throttle *t)
{
	return t->kind == FL_FAULT_RATE_BYTES ? t->bytes_per_s
					      : (uint64_t)((double)a->line_rate * t->fraction);
}

static void apply_throttle(struct attach_ctx *a, int i, const struct fl_fault_rule *r)
{
	const struct fl_fault_throttle *t = &r->throttle;
	bool hop_wide = r->where.peer[0] != 0;
	uint64_t rate;

	if (!(t->dir & (a->send ? FL_FAULT_TX : FL_FAULT_RX)))
		return;
	rate = throttle_rate(a, t);
	if (!rate) {
		FL_WARN("FABRICLAB_FAULT rule %d (%s) not applied to connection %u: the line rate "
			"of %s is unknown (set %s)", i + 1, fl_fault_rule_text(i), a->f->conn_id,
			a->self->dev_name, FL_LINK_RATE_ENV);
		return;
	}
	share(a, fl_fault_shared_pacer(i, a->self->dev, hop_wide ? a->peer->node : "",
				       a->send ? FL_FAULT_TX : FL_FAULT_RX, rate, 0, 0), i);
	announce(a, i, "throttle", rate, 0, hop_wide);
}

static void apply_stall(struct attach_ctx *a, int i, const struct fl_fault_rule *r)
{
	bool hop_wide = r->where.peer[0] != 0;

	share(a, fl_fault_shared_pacer(i, a->self->dev, hop_wide ? a->peer->node : "",
				       a->send ? FL_FAULT_TX : FL_FAULT_RX, 0, r->stall.for_ns,
				       r->stall.every_ns), i);
	announce(a, i, "stall", 0, r->stall.for_ns, hop_wide);
}

static void apply_slow(struct attach_ctx *a, int i, const struct fl_fault_rule *r)
{
	struct fl_fault_conn *f = a->f;

	/* Both ways: a slow GPU frees room for incoming data as late as it makes outgoing data. */
	if (f->slow_rule >= 0)
		return;
	if (r->slow.factor && !a->line_rate) {
		FL_WARN("FABRICLAB_FAULT rule %d (%s) not applied to connection %u: the line rate "
			"of %s is unknown (set %s)", i + 1, fl_fault_rule_text(i), f->conn_id,
			a->self->dev_name, FL_LINK_RATE_ENV);
		return;
	}
	f->slow_rule = i;
	f->slow_factor = r->slow.factor;
	f->slow_delay_ns = r->slow.delay_ns;
	f->line_rate = a->line_rate;
	announce(a, i, "slow", 0, r->slow.delay_ns, r->where.peer[0] != 0);
}

static void apply_fail(struct attach_ctx *a, int i, const struct fl_fault_rule *r)
{
	struct fl_fault_conn *f = a->f;

	if (f->fail_rule >= 0)
		return;
	f->fail_rule = i;
	f->fail_at_ns = r->fail.after_ns ? fl_clock_ns() + r->fail.after_ns : 0;
	f->fail_after_bytes = r->fail.after_bytes;
	announce(a, i, "fail", 0, r->fail.after_ns, r->where.peer[0] != 0);
}

static void apply_rules(struct attach_ctx *a)
{
	const struct fl_fault_spec *spec = fl_fault_rules();
	struct fl_fault_site site = { a->self->node, a->self->dev_name, a->peer->node,
				      a->self->rank };

	for (int i = 0; i < spec->nrules; i++) {
		const struct fl_fault_rule *r = &spec->rules[i];

		if (!fl_fault_rule_matches(r, &site))
			continue;
		switch (r->action) {
		case FL_FAULT_THROTTLE: apply_throttle(a, i, r); break;
		case FL_FAULT_STALL: apply_stall(a, i, r); break;
		case FL_FAULT_SLOW: apply_slow(a, i, r); break;
		case FL_FAULT_FAIL: apply_fail(a, i, r); break;
		case FL_FAULT_NOGDR: break; /* a device property: fault_props.c */
		}
	}
}

/*
 * The receive throttles of the peer, paced at this sender as well, where the
 * transport asks for it (sender_paces_peer_rx). Over ext, an inner like NCCL IB
 * or IBext hands a sender no request until the receiver posted its buffer
 * (2.28.9 src/transport/net_ib.cc:2201-2209): a receiver held to its rate then
 * slows neither end's posted -> done times, and the hop into it reads healthy.
 * Paced here, the sender's requests complete no sooner than the peer's receive
 * rate allows, as behind the slower cable. Every rank reads the same
 * FABRICLAB_FAULT, so the sender knows the rule; a fraction is of this end's
 * line rate (a cable's two ends share one). One pacer per rule and receiving
 * node in this process: several processes sending to one device each get the
 * whole rate (the receiver's own hold still bounds their sum).
 */
static void apply_peer_rx(struct attach_ctx *a)
{
	const struct fl_fault_spec *spec = fl_fault_rules();
	struct fl_fault_site site = { a->peer->node, a->peer->dev_name, a->self->node,
				      a->peer->rank };

	for (int i = 0; i < spec->nrules; i++) {
		const struct fl_fault_rule *r = &spec->rules[i];
		uint64_t rate;

		if (r->action != FL_FAULT_THROTTLE || !(r->throttle.dir & FL_FAULT_RX) ||
		    !fl_fault_rule_matches(r, &site))
			continue;
		rate = throttle_rate(a, &r->throttle);
		if (!rate)
			continue; /* the line rate is unknown: the receiver's own WARN says so */
		share(a, fl_fault_shared_pacer(i, a->self->dev, a->peer->node, FL_FAULT_PEER_RX,
					       rate, 0, 0), i);
		FL_INFO("connection %u (send %s/%s -> %s/%s): FABRICLAB_FAULT rule %d "
			"(%s) throttles the receiver; paced at this sender to %.3f Gbit/s too, "
			"as the %s transport hides a late receiver from its sender", a->f->conn_id,
			a->self->node, a->self->dev_name, a->peer->node, a->peer->dev_name, i + 1,
			fl_fault_rule_text(i), (double)rate * 8 / 1e9, a->tp->name);
	}
}

static bool applies_at_all(const struct fl_fault_conn *f)
{
	return f->pacer.nshared || f->slow_rule >= 0 || f->fail_rule >= 0;
}

int fl_fault_attach(const struct fl_transport *tp, void *tcomm, bool send, uint32_t conn_id,
		    const struct fl_endpoint *self, const struct fl_endpoint *peer,
		    struct fl_fault_conn **out)
{
	struct attach_ctx a = { tp, send, self, peer, NULL, 0 };
	uint64_t link_rate = fl_fault_link_rate();

	*out = NULL;
	if (!fl_fault_active())
		return FL_OK;
	a.f = calloc(1, sizeof(*a.f));
	if (!a.f)
		return fl_fail(FL_ERR_SYSTEM, "out of memory for a connection's faults");
	fl_pace_init(&a.f->pacer, 0, 0, 0);
	a.f->conn_id = conn_id;
	a.f->recv_side = !send;
	a.f->slow_rule = -1;
	a.f->fail_rule = -1;
	a.line_rate = fl_fault_line_rate(tp, self->dev);
	/*
	 * The link rate paces what a device sends: every byte on a hop is sent by
	 * someone, and a second bucket in series on the receiver would only lose
	 * rate to the two buckets' phase.
	 */
	if (link_rate && send)
		share(&a, fl_fault_shared_pacer(FL_FAULT_LINK_RATE_RULE, self->dev, "",
						FL_FAULT_TX, link_rate, 0, 0),
		      FL_FAULT_LINK_RATE_RULE);
	apply_rules(&a);
	if (send && tp->forward && tp->forward->sender_paces_peer_rx)
		apply_peer_rx(&a);
	if (!applies_at_all(a.f)) {
		free(a.f);
		return FL_OK;
	}
	if (a.f->pacer.nshared && tp->set_pacer)
		tp->set_pacer(tcomm, &a.f->pacer);
	else if (a.f->pacer.nshared)
		FL_WARN("connection %u: the %s transport cannot be paced; throttle, stall and %s "
			"are not applied", conn_id, tp->name, FL_LINK_RATE_ENV);
	*out = a.f;
	return FL_OK;
}

void fl_fault_release(struct fl_fault_conn *f)
{
	free(f);
}

bool fl_fault_hold_post(struct fl_fault_conn *f, size_t size, uint64_t now_ns)
{
	uint64_t delay;

	if (f->slow_rule < 0)
		return false;
	if (f->hold_until)
		return now_ns < f->hold_until;
	/*
	 * A receive posts a whole slot, more than most messages bring (NCCL 2.30.7
	 * src/transport/net.cc:1566-1572): it is held as long as its message would be, taken to be
	 * as large as the last one this connection moved (none yet: no hold).
	 */
	if (f->recv_side && size > f->last_bytes)
		size = f->last_bytes;
	delay = f->slow_delay_ns;
	if (!delay)
		delay = (uint64_t)((f->slow_factor - 1.0) * (double)size * 1e9 /
				   (double)f->line_rate);
	if (!delay)
		return false;
	f->hold_until = now_ns + delay;
	return true;
}

void fl_fault_post_taken(struct fl_fault_conn *f)
{
	f->hold_until = 0;
}

void fl_fault_moved(struct fl_fault_conn *f, uint64_t bytes)
{
	f->moved += bytes;
	if (bytes)
		f->last_bytes = bytes;
}

int fl_fault_check_fail(struct fl_fault_conn *f, uint64_t now_ns)
{
	if (f->fail_rule < 0)
		return FL_OK;
	if (!f->tripped && ((f->fail_at_ns && now_ns >= f->fail_at_ns) ||
			    (f->fail_after_bytes && f->moved >= f->fail_after_bytes)))
		f->tripped = 1;
	if (!f->tripped)
		return FL_OK;
	return fl_fail(FL_ERR_SYSTEM,
		       "injected fault: FABRICLAB_FAULT rule %d (%s) failed this connection after "
		       "%llu bytes",
		       f->fail_rule + 1, fl_fault_rule_text(f->fail_rule),
		       (unsigned long long)f->moved);
}
