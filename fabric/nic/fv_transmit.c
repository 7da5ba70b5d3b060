/* Requester: puts posted WRs on the wire (the responder's ring) and turns the responder's
 * acknowledgements, failures and silence into completions. */
#include <errno.h>
#include <string.h>

#include "fv_internal.h"

#define LIVE_CHECK_NS 20000000ull

static bool gid_eq(const union ibv_gid *a, const union ibv_gid *b)
{
	return memcmp(a->raw, b->raw, sizeof(a->raw)) == 0;
}

/* Whether our address vector reaches the port that QP entry e lives on. */
static bool av_reaches(struct fv_qp *qp, const struct fv_port *port, const struct fv_reg_entry *e)
{
	if (e->link_layer != port->link_layer)
		return false;
	if (port->link_layer == IBV_LINK_LAYER_INFINIBAND)
		return qp->ah.dlid == e->lid && e->lid != 0;
	for (int i = 0; i < e->ngids && i < FV_MAX_GIDS; i++)
		if (gid_eq(&qp->ah.grh.dgid, &e->gid[i]) &&
		    e->gid_type[i] == port->gid_type[qp->ah.grh.sgid_index])
			return true;
	return false;
}

/* Local protection: each SGE inside an MR of this QP's PD; reads land in memory that needs
 * local write. Fills the message's SGE list with process addresses. */
static enum ibv_wc_status resolve_sges(struct fv_qp *qp, const struct fv_swr *w, struct fv_msg *m)
{
	unsigned int need = w->opcode == IBV_WR_RDMA_READ ? IBV_ACCESS_LOCAL_WRITE : 0;

	for (int i = 0; i < w->nsge; i++) {
		const struct ibv_sge *s = &w->sge[i];
		struct fv_mr mr;

		if (!fv_mr_lookup(s->lkey, &mr) || &mr.pd->pd != qp->qp.pd ||
		    (mr.access & need) != need || s->addr < mr.iova ||
		    s->addr + s->length > mr.iova + mr.mr.length)
			return IBV_WC_LOC_PROT_ERR;
		m->u.sge[i].addr = (uintptr_t)mr.mr.addr + (s->addr - mr.iova);
		m->u.sge[i].len = s->length;
	}
	m->nsge = (uint8_t)w->nsge;
	return IBV_WC_SUCCESS;
}

static enum ibv_wc_status build_msg(struct fv_qp *qp, const struct fv_port *port,
				    const struct fv_swr *w, uint64_t index, struct fv_msg *m)
{
	memset(m, 0, offsetof(struct fv_msg, u));
	m->src_qpn = qp->qp.qp_num;
	m->dst_qpn = qp->dest_qpn;
	m->src_pid = getpid();
	m->src_slot = qp->slot;
	m->index = index;
	m->opcode = w->opcode;
	m->timeout = qp->timeout;
	m->retry_cnt = qp->retry_cnt;
	m->rnr_retry = qp->rnr_retry;
	m->src_link_layer = port->link_layer;
	m->src_lid = port->lid;
	if (qp->ah.is_global) {
		m->src_gid = port->gid[qp->ah.grh.sgid_index];
		m->src_gid_type = port->gid_type[qp->ah.grh.sgid_index];
	}
	m->len = w->len;
	m->imm = w->imm;
	m->rkey = w->rkey;
	m->raddr = w->raddr;
	if (w->len > FV_MAX_MSG_SZ)
		return IBV_WC_LOC_LEN_ERR;
	if (w->opcode == IBV_WR_RDMA_READ && qp->max_rd_atomic == 0)
		return IBV_WC_LOC_QP_OP_ERR;	/* no initiator depth: this QP may not read */
	if (w->inl) {
		m->flags = FV_MSG_INLINE;
		memcpy(m->u.data, w->data, w->len);
		return IBV_WC_SUCCESS;
	}
	return resolve_sges(qp, w, m);
}

static enum ibv_wc_status apply_injection(struct fv_qp *qp)
{
	switch (fv_inject_next_op()) {
	case FV_INJ_QP_ERROR:
		fv_log("QP %u: injected qp_error", qp->qp.qp_num);
		fv_qp_to_error(qp, IBV_EVENT_QP_FATAL);
		return IBV_WC_WR_FLUSH_ERR;
	case FV_INJ_RETRY:
		return IBV_WC_RETRY_EXC_ERR;
	case FV_INJ_REM_ACCESS:
		return IBV_WC_REM_ACCESS_ERR;
	case FV_INJ_PORT_DOWN:
		fakeverbs_set_port_state(fv_ctx(qp->qp.context)->dev->ibdev.name, qp->port_num,
					 IBV_PORT_DOWN);
		return IBV_WC_RETRY_EXC_ERR;
	default:
		return IBV_WC_SUCCESS;
	}
}

/* One WR onto the wire: SUCCESS (sent), a status (failed before leaving) or, as a special
 * value, IBV_WC_GENERAL_ERR with *full set when the responder's ring has no room. */
static enum ibv_wc_status transmit_one(struct fv_qp *qp, struct fv_swr *w, uint64_t index,
				       bool *full)
{
	struct fv_port *port = fv_port_of(qp->qp.context, qp->port_num);
	struct fv_reg_entry *e = &fv_registry()->e[qp->dest_qpn % FV_REG_SLOTS];
	enum ibv_wc_status st;
	struct fv_ring *ring;
	struct fv_msg m;

	if (atomic_load(&port->state) != IBV_PORT_ACTIVE)
		return IBV_WC_RETRY_EXC_ERR;
	if (atomic_load(&e->qpn) != qp->dest_qpn || !av_reaches(qp, port, e))
		return IBV_WC_RETRY_EXC_ERR;	/* nobody answers at that address */
	ring = fv_peer_ring(e);
	if (!ring)
		return IBV_WC_RETRY_EXC_ERR;
	if (!fv_ring_has_room(ring)) {
		*full = true;
		return IBV_WC_GENERAL_ERR;
	}
	/* counted once per WR that goes out, as the injection rules promise */
	st = apply_injection(qp);
	if (st != IBV_WC_SUCCESS)
		return st;
	st = build_msg(qp, port, w, index, &m);
	if (st != IBV_WC_SUCCESS)
		return st;
	m.ready_ns = w->push_ns;
	m.wire_ns = w->push_ns ? w->due_ns - w->push_ns : 0;
	if (fv_ring_push(ring, &m) == EAGAIN) {
		*full = true;
		return IBV_WC_GENERAL_ERR;
	}
	qp->peer_pid = atomic_load(&e->pid);
	fv_ring_kick(ring);
	return IBV_WC_SUCCESS;
}

/*
 * Physics: a WR goes to the responder when its bytes have come in there
 * (scheduled once, on both ports); until then it and the WRs behind it wait.
 * True when it may go now.
 */
static bool held_by_physics(struct fv_qp *qp, struct fv_swr *w, uint64_t now)
{
	struct fv_reg_entry *e;

	if (!fv_physics()->on)
		return true;
	if (!w->push_ns) {
		int src = fv_ctx(qp->qp.context)->dev->nic, dst = -1;

		e = &fv_registry()->e[qp->dest_qpn % FV_REG_SLOTS];
		/* a responder not yet published (its QP short of INIT) has no NIC to schedule on:
		 * the bytes leave on ours, and transmit_one decides when they are due */
		/* its link layer is stored after its NIC (release): set, the NIC is there */
		if (atomic_load(&e->qpn) == qp->dest_qpn &&
		    __atomic_load_n(&e->link_layer, __ATOMIC_ACQUIRE))
			dst = e->nic;
		/* one connection, one path: its hash is both ends' QP numbers, as a switch hashes
		 * a flow by its header */
		fv_physics_schedule(fv_port_of(qp->qp.context, qp->port_num), src, dst,
				    ft_flow_hash(qp->qp.qp_num, qp->dest_qpn, src, dst),
				    atomic_load(&e->pid) == getpid(), w, now);
	}
	if (w->push_ns <= now)
		return true;
	fv_physics_due_at(w->push_ns);
	return false;
}

void fv_sq_transmit(struct fv_qp *qp)
{
	uint64_t now = fv_now_ns();

	while (qp->state == IBV_QPS_RTS && qp->sq_sent < qp->sq_head) {
		struct fv_swr *w = &qp->sq[qp->sq_sent % qp->sq_size];
		bool full = false;
		enum ibv_wc_status st;

		if (w->local_err != IBV_WC_SUCCESS)
			break;
		if (!held_by_physics(qp, w, now))
			break;
		st = transmit_one(qp, w, qp->sq_sent, &full);
		if (full)
			break;
		if (st != IBV_WC_SUCCESS) {
			w->local_err = (uint8_t)st;
			break;
		}
		if (qp->sq_sent == qp->sq_acked)
			qp->sent_ns = now;
		qp->sq_sent++;
	}
	fv_sq_progress(qp, now);
}

static void complete_acked(struct fv_qp *qp, uint64_t acked, uint64_t now)
{
	if (acked > qp->sq_sent)
		acked = qp->sq_sent;
	if (acked > qp->sq_acked)
		qp->sent_ns = now;
	while (qp->sq_acked < acked && qp->state == IBV_QPS_RTS) {
		struct fv_swr *w = &qp->sq[qp->sq_acked % qp->sq_size];
		struct ibv_wc wc = { .wr_id = w->wr_id, .status = IBV_WC_SUCCESS,
				     .opcode = wc_opcode_of(w->opcode), .byte_len = w->len,
				     .qp_num = qp->qp.qp_num };
		uint64_t index;

		/* physics: acknowledged, but its round trip is not over yet */
		if (w->due_ns > now) {
			fv_physics_due_at(w->due_ns);
			break;
		}
		index = qp->sq_acked++;

		if (w->signaled && !fv_cq_push(fv_cq_of(qp->qp.send_cq), &wc, qp, index))
			fv_qp_to_error(qp, IBV_EVENT_QP_FATAL);
	}
}

/* The responder's NIC is alive and working: restart the retry timer. */
static void watch_peer(struct fv_qp *qp, uint64_t now)
{
	struct fv_ring *ring = fv_peer_ring(&fv_registry()->e[qp->dest_qpn % FV_REG_SLOTS]);
	uint64_t pulse;

	if (!ring)
		return;
	pulse = atomic_load(&ring->pulse);
	if (pulse != qp->peer_pulse || atomic_load(&ring->executing)) {
		qp->peer_pulse = pulse;
		qp->sent_ns = now;
	}
}

void fv_sq_progress(struct fv_qp *qp, uint64_t now)
{
	struct fv_reg_entry *e = &fv_registry()->e[qp->slot];
	struct fv_port *port;
	uint32_t nak;

	if (qp->state != IBV_QPS_RTS)
		return;
	nak = atomic_load(&e->nak_status);
	complete_acked(qp, atomic_load(&e->acked), now);
	if (qp->state != IBV_QPS_RTS)
		return;
	if (nak && atomic_load(&e->nak_index) == qp->sq_acked && qp->sq_acked < qp->sq_sent) {
		fv_sq_fail(qp, (enum ibv_wc_status)nak);
		return;
	}
	if (qp->sq_acked == qp->sq_sent && qp->sq_sent < qp->sq_head &&
	    qp->sq[qp->sq_sent % qp->sq_size].local_err != IBV_WC_SUCCESS) {
		fv_sq_fail(qp, qp->sq[qp->sq_sent % qp->sq_size].local_err);
		return;
	}
	if (qp->sq_acked == qp->sq_sent)
		return;
	port = fv_port_of(qp->qp.context, qp->port_num);
	if (atomic_load(&port->state) != IBV_PORT_ACTIVE) {
		fv_sq_fail(qp, IBV_WC_RETRY_EXC_ERR);
		return;
	}
	if (now >= qp->next_live_check_ns) {
		qp->next_live_check_ns = now + LIVE_CHECK_NS;
		if (!fv_pid_alive(qp->peer_pid)) {
			fv_log("QP %u: peer process %d is gone", qp->qp.qp_num, (int)qp->peer_pid);
			fv_sq_fail(qp, IBV_WC_RETRY_EXC_ERR);
			return;
		}
		watch_peer(qp, now);
	}
	/* a NIC acknowledges while its host is busy: only a responder that has stopped working
	 * altogether (a stopped process) runs out the retries */
	if (now - qp->sent_ns > fv_retry_window_ns(qp->timeout, qp->retry_cnt)) {
		fv_log("QP %u: no answer within the retry window", qp->qp.qp_num);
		fv_sq_fail(qp, IBV_WC_RETRY_EXC_ERR);
	}
}
