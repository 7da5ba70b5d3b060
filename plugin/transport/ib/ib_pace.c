/*
 * Pacing on the ib transport. The sender consults its pacer before each
 * RDMA write; pieces shrink to about IB_PACE_PIECE_NS of wire time at the
 * paced rate, so the delay shows inside each message's wire interval, as on
 * a slower cable. The receiver consults its pacer before each clear-to-send
 * and also puts its rate in the CTS: a receiving link that cannot take bytes
 * faster holds back the sender's writes (link-level flow control), so the
 * sender mirrors that rate in a bucket of its own and its wire time
 * stretches too, the view the report takes of verbs hops.
 */
#include <stdlib.h>

#include "base/clock.h"
#include "ib_comm.h"
#include "transport/pace.h"

static size_t piece_at(uint64_t rate_bytes_per_s)
{
	size_t bytes = (size_t)(rate_bytes_per_s * IB_PACE_PIECE_NS / 1000000000ULL);

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

int ib_pace_send_allows(struct ib_send_comm *c, uint64_t now, size_t bytes)
{
	struct fl_pacer *peer = c->peer_rx_kib ? c->peer_rx : NULL;

	if (peer && !fl_pace_try(peer, now))
		return 0;
	if (!fl_pace_allows(c->link.pacer, now, bytes))
		return 0;
	fl_pace_take(peer, now, bytes);
	return 1;
}
