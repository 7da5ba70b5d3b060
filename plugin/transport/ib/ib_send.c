/*
 * The send path. isend queues the request; it goes out once the receiver's
 * clear-to-send for it is in the FIFO: its payload is RDMA-written straight
 * into the receiver's buffer, spread over the QPs, each QP's share ending in
 * a write-with-immediate (buffer index and size) that completes the receive.
 * The pacer is asked before each piece; a piece it holds back, or that finds
 * its send queue full, waits in the queue for a later isend or test.
 */
#include <arpa/inet.h>
#include <string.h>

#include "base/clock.h"
#include "ib_comm.h"
#include "verbs_ops.h"

enum { POSTED = 0, BLOCKED = -1 }; /* besides fl_result errors */

static struct ib_send_req *take(struct ib_send_comm *c)
{
	struct ib_send_req *r;

	if (!c->nfree)
		return NULL;
	r = &c->reqs[c->free[--c->nfree]];
	r->in_use = 1;
	return r;
}

static void give_back(struct ib_send_comm *c, struct ib_send_req *r)
{
	r->in_use = 0;
	c->free[c->nfree++] = r->index;
}

/* Where r's bytes go and how they spread over the QPs, once its CTS entry is known. */
static void plan(struct ib_send_comm *c, struct ib_send_req *r, const struct ib_cts *e, int elem,
		 uint64_t now)
{
	int nqps = c->link.nqps, used = 0;

	r->elem = elem;
	r->raddr = e->addr;
	r->rkey = e->rkey;
	r->sent = r->size < e->size ? r->size : (size_t)e->size;
	r->ready_ns = now;
	r->matched = 1;
	r->rotor = (uint8_t)(c->rotor++ % (unsigned)nqps);
	ib_stripe_split(r->sent, nqps, r->shares);
	for (int s = 0; s < nqps; s++)
		used += r->shares[s].len > 0;
	r->expected = used ? used : 1;
}

enum { ENTRY_USED = -1, ENTRY_ABSENT = -2 };

/* The slot's entry for tag not yet matched, else whether the tag is there at all. */
static int free_entry(const struct ib_send_comm *c, const struct ib_fifo_slot *slot, int tag)
{
	int found = ENTRY_ABSENT;

	for (int i = 0; i < c->slot_n; i++) {
		if (slot->e[i].tag != tag)
			continue;
		if (!(c->consumed & 1u << i))
			return i;
		found = ENTRY_USED;
	}
	return found;
}

/*
 * Claims the FIFO entry with r's tag; r->matched stays 0 while the receiver's
 * CTS is not in, or while the entry for its tag in this CTS is taken: with a
 * grouped receive each sub-stream (tag) sends on its own schedule, so one may
 * be a receive ahead of another.
 */
static int match(struct ib_send_comm *c, struct ib_send_req *r, uint64_t now, bool head)
{
	const struct ib_fifo_slot *slot = &c->fifo[ib_fifo_index(c->cts_count)];
	int i;

	if (!c->slot_n) {
		c->slot_n = ib_fifo_arrived(slot, c->cts_count);
		if (c->slot_n < 0)
			return fl_fail(FL_ERR_REMOTE, "CTS %llu from %s holds %u buffers",
				       (unsigned long long)c->cts_count + 1, c->link.peer.node,
				       slot->e[0].nreqs);
		if (!c->slot_n)
			return FL_OK;
		c->consumed = 0;
	}
	i = free_entry(c, slot, r->tag);
	if (i == ENTRY_USED)
		return FL_OK; /* its sub-stream is a receive ahead: it waits for the next CTS */
	if (i == ENTRY_ABSENT && !head)
		return FL_OK; /* a tag this CTS lacks may be for a later one */
	if (i == ENTRY_ABSENT)
		return fl_fail(FL_ERR_INTERNAL, "isend with tag %d, but the receive posted by "
			       "%s/%s has no buffer with that tag", r->tag,
			       c->link.peer.node, c->link.peer.dev_name);
	if (ib_pace_peer_rate(c, slot->e[i].rx_rate_kib, now))
		return FL_ERR_SYSTEM;
	plan(c, r, &slot->e[i], i, now);
	c->consumed |= (uint8_t)(1u << i);
	if (c->consumed == (1u << c->slot_n) - 1) {
		c->cts_count++; /* the receiver may now reuse the slot, a lap later */
		c->slot_n = 0;
	}
	return FL_OK;
}

static int post_piece(struct ib_send_comm *c, struct ib_send_req *r, int s, uint64_t now)
{
	int q = (s + r->rotor) % c->link.nqps;
	struct ib_sq *sq = &c->link.sq[q];
	const struct ib_share *sh = &r->shares[s];
	size_t left = sh->len - r->cursor[s];
	size_t piece = left < c->link.piece_max ? left : c->link.piece_max;
	int last = piece == left;
	int signalled = last && (sh->len > 0 || s == 0);
	struct ibv_sge sge = { (uintptr_t)r->data + sh->off + r->cursor[s], (uint32_t)piece,
			       r->lkey };
	struct ibv_send_wr wr, *bad;
	enum ib_wr_kind kind = IB_WR_DATA;
	int err;

	if (sq->posted - sq->done >= IB_SQ_DEPTH - 1) {
		ib_pace_send_backlog(c, now);
		return BLOCKED;
	}
	if (piece && !ib_pace_send_allows(c, now, piece))
		return BLOCKED;
	if (!signalled && sq->unsignalled + 1 >= IB_SIGNAL_EVERY) {
		signalled = 1;
		kind = IB_WR_RECLAIM;
	}
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = ib_wr_id(kind, q, r->index, sq->posted + 1);
	wr.sg_list = piece ? &sge : NULL;
	wr.num_sge = piece ? 1 : 0;
	wr.opcode = last ? IBV_WR_RDMA_WRITE_WITH_IMM : IBV_WR_RDMA_WRITE;
	wr.send_flags = signalled ? IBV_SEND_SIGNALED : 0;
	wr.wr.rdma.remote_addr = r->raddr + sh->off + r->cursor[s];
	wr.wr.rdma.rkey = r->rkey;
	if (last)
		wr.imm_data = htonl((uint32_t)r->elem << IB_IMM_ELEM_SHIFT | (uint32_t)r->sent);
	err = fl_post_send(c->link.qps[q], &wr, &bad);
	if (err)
		return fl_fail(FL_ERR_SYSTEM, "ibv_post_send on %s QP %d: %s",
			       c->link.dev->dev_name, q, strerror(err > 0 ? err : -err));
	sq->posted++;
	sq->unsignalled = signalled ? 0 : sq->unsignalled + 1;
	r->cursor[s] += piece;
	if (last)
		r->final_posted |= (uint8_t)(1u << s);
	else if (piece)
		/*
		 * The rest waits on the paced wire from now: a charge clears the
		 * buckets' backlog mark, and without it a thread descheduled before
		 * its next piece loses all but the burst of the time it was away
		 * (ib senders read 60-90% of the paced rate at 8-16 lab ranks).
		 */
		ib_pace_send_backlog(c, now);
	if (!r->wire_start_ns)
		r->wire_start_ns = now;
	ib_pace_send_piece(c, r, now, piece);
	return POSTED;
}

/* The final_posted mask of a request whose last piece went out on every QP. */
static uint8_t all_qps(const struct ib_send_comm *c)
{
	return (uint8_t)((1u << c->link.nqps) - 1);
}

/* Posts r's pieces a round at a time, so the QPs fill side by side. */
static int post_request(struct ib_send_comm *c, struct ib_send_req *r, uint64_t now)
{
	uint8_t all = all_qps(c);

	while (r->final_posted != all) {
		for (int s = 0; s < c->link.nqps; s++) {
			int rc;

			if (r->final_posted & 1u << s)
				continue;
			rc = post_piece(c, r, s, now);
			if (rc != POSTED)
				return rc;
		}
	}
	return POSTED;
}

/*
 * The head waits for a later CTS while the current one still has entries for
 * other tags: the first queued request that takes one moves to the head, the
 * ones it passes keep their order (so each tag's sends stay in order). Writes
 * still go out in match order, which the receiver's per-QP cursor relies on.
 */
static int match_behind_head(struct ib_send_comm *c, uint64_t now)
{
	const struct ib_fifo_slot *slot = &c->fifo[ib_fifo_index(c->cts_count)];

	for (uint32_t k = c->queue_head + 1; c->slot_n && k != c->queue_tail; k++) {
		uint16_t idx = c->queue[k % IB_SEND_REQS];
		int rc;

		/* a tag this CTS lacks may be for a later one: only the head's is an error */
		if (free_entry(c, slot, c->reqs[idx].tag) < 0)
			continue;
		rc = match(c, &c->reqs[idx], now, false);
		if (rc)
			return rc;
		for (uint32_t j = k; j != c->queue_head; j--)
			c->queue[j % IB_SEND_REQS] = c->queue[(j - 1) % IB_SEND_REQS];
		c->queue[c->queue_head % IB_SEND_REQS] = idx;
		return FL_OK;
	}
	return FL_OK;
}

/*
 * Matches, in isend order, the queued sends behind a head the wire holds back
 * whose CTS is in. They take the entries they would take once the head is out
 * (matching order is posting order), but a send's wait on its receiver ends
 * when the receiver's buffer is there: time queued behind this link's own
 * earlier sends is the sender's, and counting it made a slow link out of a
 * node read as the receiver posting late (a straggler there).
 */
static int match_ahead(struct ib_send_comm *c, uint64_t now)
{
	for (uint32_t k = c->queue_head + 1; k != c->queue_tail; k++) {
		struct ib_send_req *r = &c->reqs[c->queue[k % IB_SEND_REQS]];
		int rc;

		if (r->matched)
			continue;
		rc = match(c, r, now, false);
		if (rc || !r->matched)
			return rc;
	}
	return FL_OK;
}

static int post_queued(struct ib_send_comm *c, int *progressed)
{
	uint64_t now = fl_clock_ns();

	while (c->queue_head != c->queue_tail) {
		struct ib_send_req *r = &c->reqs[c->queue[c->queue_head % IB_SEND_REQS]];
		int rc;

		if (!r->matched) {
			rc = match(c, r, now, true);
			if (!rc && !r->matched)
				rc = match_behind_head(c, now);
			if (rc)
				return rc;
			r = &c->reqs[c->queue[c->queue_head % IB_SEND_REQS]];
			if (!r->matched)
				return FL_OK;
		}
		rc = post_request(c, r, now);
		if (rc)
			return rc == BLOCKED ? match_ahead(c, now) : rc;
		c->queue_head++;
		*progressed = 1;
	}
	return FL_OK;
}

static int poll_completions(struct ib_send_comm *c, int *progressed)
{
	struct ibv_wc wc[16];
	int n = fl_poll_cq(c->link.cq, 16, wc);

	if (n < 0)
		return fl_fail(FL_ERR_SYSTEM, "ibv_poll_cq on %s: error %d", c->link.dev->dev_name,
			       n);
	for (int i = 0; i < n; i++) {
		struct ib_send_req *r;

		if (wc[i].status != IBV_WC_SUCCESS)
			return ib_link_wc_failed(&c->link, &wc[i], "RDMA write");
		c->link.sq[IB_WR_QP(wc[i].wr_id) % IB_MAX_QPS].done = IB_WR_COUNT(wc[i].wr_id);
		if (IB_WR_KIND(wc[i].wr_id) != IB_WR_DATA)
			continue;
		r = &c->reqs[IB_WR_REQ(wc[i].wr_id) % IB_SEND_REQS];
		if (++r->completed == r->expected)
			r->wire_end_ns = fl_clock_ns();
	}
	*progressed |= n > 0;
	return FL_OK;
}

static int progress(struct ib_send_comm *c)
{
	int progressed = 0;
	int rc = ib_link_check(&c->link);

	if (!rc)
		rc = poll_completions(c, &progressed);
	if (!rc)
		rc = post_queued(c, &progressed);
	if (!rc)
		rc = ib_link_watch(&c->link, progressed, c->nfree < IB_SEND_REQS, fl_clock_ns());
	return rc ? ib_link_fail(&c->link, rc) : FL_OK;
}

int ib_isend(struct ib_send_comm *c, void *data, size_t size, int tag, struct ib_mr *mr,
	     void **request)
{
	struct ib_send_req *r;
	int rc = ib_link_check(&c->link);

	*request = NULL;
	if (rc)
		return rc;
	if (size > IB_MAX_MSG)
		return fl_fail(FL_ERR_INTERNAL, "isend of %zu bytes (at most %u per message)", size,
			       IB_MAX_MSG);
	if (size && (!mr || !ib_mr_covers(mr, data, size)))
		return fl_fail(FL_ERR_INTERNAL, "isend of %zu bytes at %p outside its registration",
			       size, data);
	r = take(c);
	if (!r)
		return FL_OK;
	r->data = data;
	r->size = size;
	r->tag = tag;
	r->lkey = mr ? mr->lkey : 0;
	r->matched = 0;
	r->final_posted = 0;
	r->completed = 0;
	r->ready_ns = r->wire_start_ns = r->wire_end_ns = 0;
	r->cable_start_ns = r->cable_free_ns = r->host_idle_ns = 0;
	memset(r->cursor, 0, sizeof(r->cursor));
	c->queue[c->queue_tail++ % IB_SEND_REQS] = r->index;
	*request = r;
	return progress(c);
}

/*
 * r's wire interval. Unpaced: first post -> completion, the NIC's clock.
 * Paced by the cable itself (the lab's link rate over a fake NIC that moves a
 * write at once): the emulated cable's interval, without the host's absences
 * (ib_pace.c). Paced by a throttle in front of a NIC that keeps its own time
 * (a real port, or the fake's physics): a slower NIC, whose queue holds the
 * message from when it was ready to go until the later of its last piece
 * leaving the bucket and the NIC completing it. A throttle above what the
 * port achieves (small messages, a slower port) then limits nothing and reads
 * as the unthrottled hops beside it, never faster.
 */
static void wire_interval(const struct ib_send_comm *c, const struct ib_send_req *r,
			  struct fl_xfer_times *times)
{
	times->wire_start_ns = r->wire_start_ns;
	times->wire_end_ns = r->wire_end_ns;
	/* dated at its completion, which the peer's acknowledgement brings; not where the pacer
	 * is the cable and the message ends when its last piece left it */
	times->acked = !(r->cable_free_ns && c->link.pace_is_cable);
	if (!r->cable_free_ns)
		return;
	if (c->link.pace_is_cable) {
		times->wire_start_ns = r->cable_start_ns + r->host_idle_ns;
		times->wire_end_ns = r->cable_free_ns;
		return;
	}
	if (r->ready_ns && r->ready_ns < times->wire_start_ns)
		times->wire_start_ns = r->ready_ns;
	if (r->cable_free_ns > times->wire_end_ns)
		times->wire_end_ns = r->cable_free_ns;
}

int ib_test_send(struct ib_send_req *r, int *done, int *sizes, struct fl_xfer_times *times)
{
	struct ib_send_comm *c = r->comm;
	int rc = progress(c);

	*done = 0;
	/* A send whose writes completed is done even if the link failed since: it is sticky. */
	if (!r->matched || r->completed < r->expected || r->final_posted != all_qps(c))
		return rc;
	*done = 1;
	if (sizes)
		sizes[0] = (int)r->sent;
	if (times) {
		times->ready_ns = r->ready_ns;
		wire_interval(c, r, times);
		times->wire_bytes = 0;
	}
	give_back(c, r);
	return FL_OK;
}
