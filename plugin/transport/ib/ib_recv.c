/*
 * The receive path. irecv posts one receive WR per buffer on every QP (each
 * QP carries one write-with-immediate per message), then writes the
 * clear-to-send into the sender's FIFO once the pacer allows more bytes; the
 * bytes that arrive are charged to it (not the buffers' size: NCCL's buffers
 * are often much larger than what fills them). A buffer is complete when its immediate arrived on every QP;
 * immediates on one QP arrive in the sender's order, so each QP keeps a
 * cursor on the receive its next immediate belongs to.
 */
#include <arpa/inet.h>
#include <string.h>

#include "base/clock.h"
#include "ib_comm.h"
#include "transport/pace.h"
#include "verbs_ops.h"

static int post_receives(struct ib_recv_comm *c, unsigned slot, int n)
{
	for (int q = 0; q < c->link.nqps; q++) {
		struct ibv_recv_wr wrs[FL_MAX_RECVS], *bad;
		int err;

		memset(wrs, 0, sizeof(wrs[0]) * (size_t)n);
		for (int i = 0; i < n; i++) {
			wrs[i].wr_id = ib_wr_id(IB_WR_RECV, q, slot, 0);
			wrs[i].next = i + 1 < n ? &wrs[i + 1] : NULL;
		}
		err = fl_post_recv(c->link.qps[q], wrs, &bad);
		if (err)
			return fl_fail(FL_ERR_SYSTEM, "ibv_post_recv on %s QP %d: %s",
				       c->link.dev->dev_name, q, strerror(err > 0 ? err : -err));
	}
	return FL_OK;
}

/* Writes held-back CTS entries, oldest first, while pacer and send queue allow. */
static int post_cts(struct ib_recv_comm *c, uint64_t now)
{
	struct ib_sq *sq = &c->link.sq[0];

	while (c->cts_count < c->recv_count) {
		unsigned slot = ib_fifo_index(c->cts_count);
		struct ib_recv_req *r = &c->reqs[slot];
		struct ibv_sge sge = { (uintptr_t)&c->shadow[slot],
				       (uint32_t)((size_t)r->n * sizeof(struct ib_cts)),
				       c->shadow_mr->lkey };
		struct ibv_send_wr wr, *bad;
		int signalled = sq->unsignalled + 1 >= IB_SIGNAL_EVERY;
		int err;

		if (sq->posted - sq->done >= IB_SQ_DEPTH - 1 ||
		    (c->link.pacer && !fl_pace_try(c->link.pacer, now)))
			return FL_OK;
		memset(&wr, 0, sizeof(wr));
		wr.wr_id = ib_wr_id(IB_WR_CTS, 0, slot, sq->posted + 1);
		wr.sg_list = &sge;
		wr.num_sge = 1;
		wr.opcode = IBV_WR_RDMA_WRITE;
		wr.send_flags = signalled ? IBV_SEND_SIGNALED : 0;
		wr.wr.rdma.remote_addr = c->fifo_addr + slot * (uint64_t)sizeof(c->shadow[0]);
		wr.wr.rdma.rkey = c->fifo_rkey;
		err = fl_post_send(c->link.qps[0], &wr, &bad);
		if (err)
			return fl_fail(FL_ERR_SYSTEM, "ibv_post_send (CTS) on %s: %s",
				       c->link.dev->dev_name, strerror(err > 0 ? err : -err));
		sq->posted++;
		sq->unsignalled = signalled ? 0 : sq->unsignalled + 1;
		r->ready_ns = now;
		r->cts_posted = 1;
		c->cts_count++;
	}
	return FL_OK;
}

static int arrived(struct ib_recv_comm *c, const struct ibv_wc *wc, uint64_t now)
{
	int q = IB_WR_QP(wc->wr_id) % IB_MAX_QPS;
	uint32_t imm = ntohl(wc->imm_data);
	unsigned elem = imm >> IB_IMM_ELEM_SHIFT;
	size_t size = imm & ((1u << IB_IMM_ELEM_SHIFT) - 1);
	struct ib_recv_req *r = &c->reqs[ib_fifo_index(c->cursor[q])];

	if (wc->opcode != IBV_WC_RECV_RDMA_WITH_IMM || !r->in_use || r->count != c->cursor[q] ||
	    elem >= (unsigned)r->n || size > r->cap[elem] || !r->cts_posted)
		return fl_fail(FL_ERR_REMOTE, "unexpected completion from %s/%s on QP %d "
			       "(opcode %d, buffer %u, %zu bytes)", c->link.peer.node,
			       c->link.peer.dev_name, q, wc->opcode, elem, size);
	r->got[elem] = size;
	if (++r->arrivals[elem] == c->link.nqps) {
		if (c->link.pacer)
			fl_pace_take(c->link.pacer, now, size);
		if (++r->elems_done == r->n)
			r->done_ns = now;
	}
	if (++c->seen[q] == r->n) {
		c->seen[q] = 0;
		c->cursor[q]++;
	}
	return FL_OK;
}

static int handle(struct ib_recv_comm *c, const struct ibv_wc *wc, uint64_t now)
{
	static const char *const what[] = { [IB_WR_RECV] = "receive", [IB_WR_CTS] = "CTS write",
					    [IB_WR_FLUSH] = "flush read" };
	int kind = IB_WR_KIND(wc->wr_id);

	if (wc->status != IBV_WC_SUCCESS)
		return ib_link_wc_failed(&c->link, wc,
					 kind <= IB_WR_FLUSH && what[kind] ? what[kind] : "WR");
	switch (kind) {
	case IB_WR_RECV:
		return arrived(c, wc, now);
	case IB_WR_CTS:
		c->link.sq[0].done = IB_WR_COUNT(wc->wr_id);
		return FL_OK;
	case IB_WR_FLUSH:
		c->flush_sq.done = IB_WR_COUNT(wc->wr_id);
		c->flushes[IB_WR_REQ(wc->wr_id) % IB_FIFO_DEPTH].done = 1;
		return FL_OK;
	default:
		return fl_fail(FL_ERR_INTERNAL, "completion of unknown kind %d", kind);
	}
}

int ib_recv_progress(struct ib_recv_comm *c)
{
	struct ibv_wc wc[16];
	uint64_t now = fl_clock_ns();
	int rc = ib_link_check(&c->link);
	int n = 0;

	if (!rc) {
		n = fl_poll_cq(c->link.cq, 16, wc);
		if (n < 0)
			rc = fl_fail(FL_ERR_SYSTEM, "ibv_poll_cq on %s: error %d",
				     c->link.dev->dev_name, n);
	}
	for (int i = 0; !rc && i < n; i++)
		rc = handle(c, &wc[i], now);
	if (!rc)
		rc = post_cts(c, now);
	if (!rc)
		rc = ib_link_watch(&c->link, n > 0, c->cts_count != c->recv_count ||
						      c->cursor[0] != c->recv_count, now);
	return rc ? ib_link_fail(&c->link, rc) : FL_OK;
}

int ib_irecv(struct ib_recv_comm *c, int n, void **data, size_t *sizes, int *tags,
	     struct ib_mr **mrs, void **request)
{
	unsigned slot = ib_fifo_index(c->recv_count);
	struct ib_recv_req *r = &c->reqs[slot];
	int rc = ib_link_check(&c->link);

	*request = NULL;
	if (rc || r->in_use)
		return rc; /* every slot busy: NCCL calls again later */
	for (int i = 0; i < n; i++) {
		/* no message is larger than an immediate can say */
		size_t cap = sizes[i] < IB_MAX_MSG ? sizes[i] : IB_MAX_MSG;

		if (cap && (!mrs[i] || !ib_mr_covers(mrs[i], data[i], cap)))
			return fl_fail(FL_ERR_INTERNAL, "irecv buffer %d (%zu bytes at %p) outside "
				       "its registration (%#lx + %zu)", i, cap, data[i],
				       mrs[i] ? (unsigned long)mrs[i]->addr : 0UL,
				       mrs[i] ? mrs[i]->len : 0);
		ib_cts_fill(&c->shadow[slot].e[i], c->recv_count, n, (uintptr_t)data[i], cap,
			    mrs[i] ? mrs[i]->rkey : 0, tags ? tags[i] : 0, c->link.pace_rate_kib);
		r->cap[i] = cap;
		r->got[i] = 0;
		r->arrivals[i] = 0;
	}
	rc = post_receives(c, slot, n);
	if (rc)
		return ib_link_fail(&c->link, rc);
	r->in_use = 1;
	r->cts_posted = 0;
	r->n = n;
	r->elems_done = 0;
	r->count = c->recv_count++;
	r->ready_ns = r->done_ns = 0;
	*request = r;
	return ib_recv_progress(c);
}

int ib_test_recv(struct ib_recv_req *r, int *done, int *sizes, struct fl_xfer_times *times)
{
	int rc = ib_recv_progress(r->comm);

	*done = 0;
	/* A receive that landed is done even if the link failed since: the failure is sticky. */
	if (r->elems_done < r->n)
		return rc;
	*done = 1;
	for (int i = 0; sizes && i < r->n; i++)
		sizes[i] = (int)r->got[i];
	/* One-sided writes leave no trace here until the immediate: no wire interval. */
	times->ready_ns = r->ready_ns;
	times->wire_start_ns = 0;
	times->wire_end_ns = 0;
	times->wire_bytes = 0;
	r->in_use = 0;
	return FL_OK;
}
