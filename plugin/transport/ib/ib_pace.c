/*
 * Pacing on the ib transport. The sender consults its pacer before each
 * RDMA write; pieces shrink to about FABRICLAB_IB_PACE_PIECE_US (100) of wire
 * time at the paced rate (at 100 Gb/s and up, a piece is a whole message), so
 * the delay shows inside each message's wire interval, as on a slower cable.
 * The receiver consults its pacer before each clear-to-send and also puts its
 * rate in the CTS: a receiving link that cannot take bytes faster holds back
 * the sender's writes (link-level flow control), so the sender mirrors that
 * rate in a bucket of its own and its wire time stretches too, the view the
 * report takes of verbs hops.
 *
 * The sender's wire interval is dated on the emulated cable, not on the host:
 * the fake NIC moves a posted write at once, so the pacer is the cable, and a
 * proxy thread descheduled between two pieces of a message (16 lab ranks on 2
 * busy cores: gaps of 10-150 ms measured) leaves the cable idle although the
 * interval is open. Each piece occupies the cable for its bytes at the paced
 * rate from when it was posted or when the cable came free, whichever is
 * later; the time between the cable coming free (and any pause window
 * ending) and the next piece's post is the host's, not the wire's, and is
 * left out, and so is a wait for send-queue room: the fake frees it when the
 * peer process's emulated NIC runs (a 16-rank lab run on 2 cores showed one
 * hop at 0.93x with its median message 3x the others' when this counted).
 Where the bucket is the cable (the lab's link rate over a fake NIC that
 * moves a write at once), completions are not waited for: they come when the
 * peer's emulated NIC gets a CPU and when this thread next polls (tens of ms
 * under load), so a paced message ends when its last piece left the cable.
 * Where the bucket is a throttle in front of a NIC that keeps its own time
 * (a real port, or the fake's physics), the message is timed as on a slower
 * NIC (ib_send.c, wire_interval). Unpaced hops keep post -> completion, the
 * NIC's clock.
 */
#include <stdlib.h>

#include "base/clock.h"
#include "ib_comm.h"
#include "ib_config.h"
#include "transport/pace.h"

static size_t piece_at(uint64_t rate_bytes_per_s)
{
	uint64_t us = ib_cfg.pace_piece_us ? (uint64_t)ib_cfg.pace_piece_us : 100; /* 0: not loaded */
	size_t bytes = (size_t)(rate_bytes_per_s * us / 1000000ULL);

	bytes = (bytes + IB_STRIPE_ALIGN - 1) / IB_STRIPE_ALIGN * IB_STRIPE_ALIGN;
	if (bytes < IB_PACE_PIECE_MIN)
		return IB_PACE_PIECE_MIN;
	return bytes < IB_PIECE_MAX ? bytes : IB_PIECE_MAX;
}

/* The slowest rate in p and the buckets it shares, bytes/s; 0 = no rate limit. */
static uint64_t slowest_rate(const struct fl_pacer *p)
{
	uint64_t slowest = 0;

	for (unsigned i = 0; p && i <= p->nshared; i++) {
		const struct fl_pacer *q = i ? p->shared[i - 1] : p;

		if (q && q->rate_bytes_per_s && (!slowest || q->rate_bytes_per_s < slowest))
			slowest = q->rate_bytes_per_s;
	}
	return slowest;
}

static void size_pieces(struct ib_link *l, uint64_t peer_rate)
{
	uint64_t own = slowest_rate(l->pacer);
	uint64_t rate = own && (!peer_rate || own < peer_rate) ? own : peer_rate;

	l->piece_max = rate ? piece_at(rate) : IB_PIECE_MAX;
}

void ib_pace_attach(struct ib_link *l, struct fl_pacer *pacer)
{
	uint64_t kib;

	l->pacer = pacer;
	l->pace_is_cable = fl_pace_is_cable(pacer);
	kib = slowest_rate(pacer) >> 10;
	l->pace_rate_kib = kib > UINT32_MAX ? UINT32_MAX : (uint32_t)kib;
	if (slowest_rate(pacer) && !l->pace_rate_kib)
		l->pace_rate_kib = 1;
	if (l->kind == IB_REQ_SEND) {
		struct ib_send_comm *c = (struct ib_send_comm *)l;

		size_pieces(l, (uint64_t)c->peer_rx_kib << 10);
	} else {
		size_pieces(l, 0);
	}
}

/* Called on the proxy thread with each matched CTS: one compare unless the rate changed. */
int ib_pace_peer_rate(struct ib_send_comm *c, uint32_t rate_kib, uint64_t now)
{
	if (rate_kib == c->peer_rx_kib)
		return FL_OK;
	if (rate_kib && !c->peer_rx) {
		c->peer_rx = fl_pace_create((uint64_t)rate_kib << 10, 0, now);
		if (!c->peer_rx)
			return fl_fail(FL_ERR_SYSTEM, "out of memory for a pacer");
	} else if (rate_kib) {
		fl_pace_init(c->peer_rx, (uint64_t)rate_kib << 10, 0, now);
	}
	c->peer_rx_kib = rate_kib;
	size_pieces(&c->link, (uint64_t)rate_kib << 10);
	return FL_OK;
}

/*
 * Two buckets decide, this side's and the receiver's mirrored one, and either
 * may be the one that refuses. Both are told that bytes wait: a bucket that
 * did not refuse would read the proxy thread's next absence as idle time and
 * keep only its burst (500 us) of it while the other made up the whole gap.
 */
void ib_pace_send_backlog(struct ib_send_comm *c, uint64_t now)
{
	if (c->peer_rx_kib)
		fl_pace_backlog(c->peer_rx, now);
	fl_pace_backlog(c->link.pacer, now);
}

int ib_pace_send_allows(struct ib_send_comm *c, uint64_t now, size_t bytes)
{
	struct fl_pacer *peer = c->peer_rx_kib ? c->peer_rx : NULL;

	if (fl_pace_wait_ns(peer, now) || fl_pace_wait_ns(c->link.pacer, now)) {
		ib_pace_send_backlog(c, now);
		return 0;
	}
	fl_pace_take(peer, now, bytes);
	fl_pace_take(c->link.pacer, now, bytes);
	return 1;
}

/* The slowest rate the sender obeys, its own buckets' and the receiver's; 0 none. */
static uint64_t send_rate(const struct ib_send_comm *c)
{
	uint64_t own = slowest_rate(c->link.pacer), peer = (uint64_t)c->peer_rx_kib << 10;

	return own && (!peer || own < peer) ? own : peer;
}

/* When the last pause window of any bucket the sender obeys ended (<= now), 0 none. */
static uint64_t resumed_at(const struct fl_pacer *p, uint64_t now)
{
	uint64_t at = 0;

	for (unsigned i = 0; p && i <= p->nshared; i++) {
		const struct fl_pacer *q = i ? p->shared[i - 1] : p;
		uint64_t r = q ? fl_pace_resumed_ns(q, now) : 0;

		at = r > at ? r : at;
	}
	return at;
}

void ib_pace_send_piece(struct ib_send_comm *c, struct ib_send_req *r, uint64_t now, size_t bytes)
{
	uint64_t rate = send_rate(c), free_at = r->cable_free_ns, resumed, start;

	if (!rate)
		return;
	if (free_at) {
		resumed = resumed_at(c->link.pacer, now);
		if (resumed > free_at)
			free_at = resumed; /* a pause held the piece: wire time, not the host's */
		if (now > free_at)
			r->host_idle_ns += now - free_at;
	}
	/* one cable per connection: a message's first piece queues behind the last one's */
	start = now > c->cable_free_ns ? now : c->cable_free_ns;
	if (!r->cable_free_ns)
		r->cable_start_ns = start; /* its first piece */
	c->cable_free_ns = start + (uint64_t)((unsigned __int128)bytes * 1000000000u / rate);
	r->cable_free_ns = c->cable_free_ns;
}
