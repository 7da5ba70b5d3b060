/* Responder: executes requests against this process's memory after the checks a ConnectX makes
 * (QP state and addressing, rkey, bounds, access rights, a receive WR where one is consumed). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "fv_internal.h"

struct fv_stash {
	struct fv_stash *next;
	uint64_t since_ns;
	struct fv_msg m;
};

enum outcome { DONE, WAIT_READY, WAIT_RECV };

static void notify_requester(struct fv_reg_entry *e)
{
	struct fv_ring *ring = fv_peer_ring(e);

	if (ring)
		fv_ring_kick(ring);
}

static void ack(const struct fv_msg *m)
{
	struct fv_reg_entry *e = &fv_registry()->e[m->src_slot % FV_REG_SLOTS];

	if (atomic_load(&e->qpn) != m->src_qpn)
		return;
	atomic_store(&e->acked, m->index + 1);
	notify_requester(e);
}

static void nak(struct fv_qp *qp, const struct fv_msg *m, enum ibv_wc_status status)
{
	struct fv_reg_entry *e = &fv_registry()->e[m->src_slot % FV_REG_SLOTS];

	if (qp)
		qp->nakked_src = m->src_qpn;	/* what follows from it is refused too */
	/* the first refusal is the one the requester must see: later ones do not overwrite it */
	if (atomic_load(&e->qpn) != m->src_qpn || atomic_load(&e->nak_status))
		return;
	atomic_store(&e->nak_index, m->index);
	atomic_store(&e->nak_status, status);
	notify_requester(e);
	fv_log("QP %u: request %llu from QP %u refused: %s", m->dst_qpn,
	       (unsigned long long)m->index, m->src_qpn, ibv_wc_status_str(status));
}

static bool gid_eq(const union ibv_gid *a, const union ibv_gid *b)
{
	return memcmp(a->raw, b->raw, sizeof(a->raw)) == 0;
}

/* An RC responder only takes packets from the QP and port its own path points at. */
static bool connected_to(struct fv_qp *qp, const struct fv_port *port, const struct fv_msg *m)
{
	if (qp->dest_qpn != m->src_qpn || m->src_link_layer != port->link_layer)
		return false;
	if (port->link_layer == IBV_LINK_LAYER_INFINIBAND)
		return qp->ah.dlid == m->src_lid;
	return qp->ah.is_global && gid_eq(&qp->ah.grh.dgid, &m->src_gid) &&
	       port->gid_type[qp->ah.grh.sgid_index] == m->src_gid_type;
}

/* rkey check for [raddr, raddr+len): fills the region and the local address. */
static bool remote_access_ok(struct fv_qp *qp, const struct fv_msg *m, unsigned int need,
			     struct fv_mr *mr, uint64_t *local)
{
	if ((qp->access & need) != need || !fv_mr_find_held(m->rkey, mr) ||
	    &mr->pd->pd != qp->qp.pd || (mr->access & need) != need || m->raddr < mr->iova ||
	    m->raddr + m->len > mr->iova + mr->mr.length || m->raddr + m->len < m->raddr)
		return false;
	*local = (uintptr_t)mr->mr.addr + (m->raddr - mr->iova);
	return true;
}

static int msg_src_iov(const struct fv_msg *m, struct iovec *iov)
{
	for (int i = 0; i < m->nsge; i++) {
		iov[i].iov_base = (void *)(uintptr_t)m->u.sge[i].addr;
		iov[i].iov_len = m->u.sge[i].len;
	}
	return m->nsge;
}

/* Copies the request's payload into local iovecs, from the message or the requester. */
static int pull_payload(const struct fv_msg *m, const struct iovec *dst, int ndst)
{
	struct iovec src[FV_MAX_SGE];

	if (m->flags & FV_MSG_INLINE) {
		struct iovec in = { (void *)m->u.data, m->len };

		/* written through the kernel like the remote case, so that sanitizers see a
		 * device's write, not this thread's */
		return fv_dma_write(getpid(), &in, 1, dst, ndst);
	}
	return fv_dma_read(m->src_pid, dst, ndst, src, msg_src_iov(m, src));
}

static void push_recv_cqe(struct fv_qp *qp, const struct ibv_wc *wc)
{
	if (!fv_cq_push(fv_cq_of(qp->qp.recv_cq), wc, NULL, 0))
		fv_qp_to_error(qp, IBV_EVENT_QP_FATAL);
}

static void responder_error(struct fv_qp *qp, const struct fv_msg *m, enum ibv_wc_status to_req,
			    int event)
{
	nak(qp, m, to_req);
	fv_qp_to_error(qp, event);
}

/* A copy that failed: the requester is gone (nobody to answer) or memory under a registered
 * region was unmapped (the transfer fails at both ends). */
static bool copy_failed(struct fv_qp *qp, const struct fv_msg *m, int err)
{
	if (!err)
		return false;
	if (err != ESRCH)
		responder_error(qp, m, IBV_WC_REM_OP_ERR, IBV_EVENT_QP_FATAL);
	return true;
}

/* The QP's receive queue or its shared one: only the NIC consumes (one thread at a time), so
 * what recv_empty saw is still there for recv_take. */
static bool recv_empty(struct fv_qp *qp)
{
	return qp->srq ? fv_srq_empty(qp->srq) : qp->rq_tail == qp->rq_head;
}

static void recv_take(struct fv_qp *qp, struct fv_rwr *out)
{
	if (qp->srq)
		fv_srq_take(qp->srq, out);
	else
		*out = qp->rq[qp->rq_tail++ % qp->rq_size];
}

static enum outcome do_write(struct fv_qp *qp, const struct fv_msg *m)
{
	bool imm = m->opcode == IBV_WR_RDMA_WRITE_WITH_IMM;
	struct iovec dst;
	struct fv_mr mr;
	uint64_t local = 0;

	if (imm && recv_empty(qp))
		return WAIT_RECV;
	/* a zero-length write carries no address: its rkey is not checked (as the IB spec says) */
	if (m->len && !remote_access_ok(qp, m, IBV_ACCESS_REMOTE_WRITE, &mr, &local)) {
		responder_error(qp, m, IBV_WC_REM_ACCESS_ERR, IBV_EVENT_QP_ACCESS_ERR);
		return DONE;
	}
	dst.iov_base = (void *)(uintptr_t)local;
	dst.iov_len = m->len;
	if (copy_failed(qp, m, pull_payload(m, &dst, 1)))
		return DONE;
	if (m->len)
		fv_gpu_wrote(&mr, local, m->len);
	if (imm) {
		struct fv_rwr r;
		struct ibv_wc wc = { .status = IBV_WC_SUCCESS,
				     .opcode = IBV_WC_RECV_RDMA_WITH_IMM, .byte_len = m->len,
				     .imm_data = m->imm, .qp_num = qp->qp.qp_num,
				     .src_qp = m->src_qpn, .wc_flags = IBV_WC_WITH_IMM,
				     .slid = m->src_lid };

		recv_take(qp, &r);
		wc.wr_id = r.wr_id;
		push_recv_cqe(qp, &wc);
	}
	ack(m);
	return DONE;
}

static enum outcome do_send(struct fv_qp *qp, const struct fv_msg *m)
{
	struct iovec dst[FV_MAX_SGE];
	struct fv_mr dst_mr[FV_MAX_SGE];
	struct fv_rwr rw, *r = &rw;
	uint64_t room = 0, left = m->len;
	int n = 0;
	struct ibv_wc wc = { .status = IBV_WC_SUCCESS, .opcode = IBV_WC_RECV,
			     .byte_len = m->len, .qp_num = qp->qp.qp_num, .src_qp = m->src_qpn,
			     .slid = m->src_lid };

	if (recv_empty(qp))
		return WAIT_RECV;
	recv_take(qp, r);
	wc.wr_id = r->wr_id;
	for (int i = 0; i < r->nsge; i++) {
		struct fv_mr mr;
		const struct ibv_sge *s = &r->sge[i];

		/* a shared queue's buffers belong to its own protection domain */
		if (!fv_mr_find_held(s->lkey, &mr) ||
		    &mr.pd->pd != (qp->srq ? qp->srq->srq.pd : qp->qp.pd) ||
		    !(mr.access & IBV_ACCESS_LOCAL_WRITE) || s->addr < mr.iova ||
		    s->addr + s->length > mr.iova + mr.mr.length) {
			wc.status = IBV_WC_LOC_PROT_ERR;
			push_recv_cqe(qp, &wc);
			responder_error(qp, m, IBV_WC_REM_OP_ERR, -1);
			return DONE;
		}
		room += s->length;
		if (left) {
			dst_mr[n] = mr;
			dst[n].iov_base = (char *)mr.mr.addr + (s->addr - mr.iova);
			dst[n].iov_len = left < s->length ? left : s->length;
			left -= dst[n++].iov_len;
		}
	}
	if (room < m->len) {
		wc.status = IBV_WC_LOC_LEN_ERR;
		push_recv_cqe(qp, &wc);
		responder_error(qp, m, IBV_WC_REM_INV_REQ_ERR, -1);
		return DONE;
	}
	if (copy_failed(qp, m, pull_payload(m, dst, n)))
		return DONE;
	for (int i = 0; i < n; i++)
		fv_gpu_wrote(&dst_mr[i], (uintptr_t)dst[i].iov_base, dst[i].iov_len);
	if (m->opcode == IBV_WR_SEND_WITH_IMM) {
		wc.imm_data = m->imm;
		wc.wc_flags = IBV_WC_WITH_IMM;
	}
	push_recv_cqe(qp, &wc);
	ack(m);
	return DONE;
}

static enum outcome do_read(struct fv_qp *qp, const struct fv_msg *m)
{
	struct iovec src, dst[FV_MAX_SGE];
	struct fv_mr mr;
	uint64_t local = 0;

	if (qp->max_dest_rd_atomic == 0) {
		/* no responder resources for reads: an invalid request */
		responder_error(qp, m, IBV_WC_REM_INV_REQ_ERR, IBV_EVENT_QP_REQ_ERR);
		return DONE;
	}
	if (m->len && !remote_access_ok(qp, m, IBV_ACCESS_REMOTE_READ, &mr, &local)) {
		responder_error(qp, m, IBV_WC_REM_ACCESS_ERR, IBV_EVENT_QP_ACCESS_ERR);
		return DONE;
	}
	/* the read is answered only after the NIC's earlier writes reached GPU memory */
	if (m->len)
		fv_gpu_read(&mr, local, m->len);
	src.iov_base = (void *)(uintptr_t)local;
	src.iov_len = m->len;
	if (copy_failed(qp, m, fv_dma_write(m->src_pid, &src, 1, dst, msg_src_iov(m, dst))))
		return DONE;
	ack(m);
	return DONE;
}

static enum outcome execute_held(struct fv_qp *qp, const struct fv_msg *m)
{
	struct fv_port *port;

	if (qp->nakked_src == m->src_qpn) {
		/* after a NAK the rest of the stream is refused too: never left unanswered, or a
		 * requester reconnected to this QP would wait for ever */
		nak(qp, m, IBV_WC_RETRY_EXC_ERR);
		return DONE;
	}
	if (qp->state == IBV_QPS_RESET || qp->state == IBV_QPS_INIT)
		return WAIT_READY;	/* dropped on the wire: the requester retries */
	port = fv_port_of(qp->qp.context, qp->port_num);
	if (qp->state == IBV_QPS_ERR || atomic_load(&port->state) != IBV_PORT_ACTIVE ||
	    !connected_to(qp, port, m)) {
		nak(qp, m, IBV_WC_RETRY_EXC_ERR);
		return DONE;
	}
	switch (m->opcode) {
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		return do_write(qp, m);
	case IBV_WR_SEND:
	case IBV_WR_SEND_WITH_IMM:
		return do_send(qp, m);
	case IBV_WR_RDMA_READ:
		return do_read(qp, m);
	default:
		nak(qp, m, IBV_WC_REM_INV_REQ_ERR);
		return DONE;
	}
}

static enum outcome execute(struct fv_qp *qp, const struct fv_msg *m)
{
	enum outcome o;

	fv_mr_hold();
	o = execute_held(qp, m);
	fv_mr_release();
	return o;
}

static void stash(struct fv_qp *qp, const struct fv_msg *m, uint64_t now)
{
	struct fv_stash *s = malloc(sizeof(*s));

	if (!s) {
		nak(qp, m, IBV_WC_RETRY_EXC_ERR);
		return;
	}
	s->next = NULL;
	s->since_ns = now;
	s->m = *m;
	if (qp->stash_tail)
		qp->stash_tail->next = s;
	else
		qp->stash_head = s;
	qp->stash_tail = s;
}

void fv_respond(const struct fv_msg *m, uint64_t now)
{
	struct fv_qp *qp = fv_nic_find_qp(m->dst_qpn);

	if (!qp) {
		nak(NULL, m, IBV_WC_RETRY_EXC_ERR);
		return;
	}
	pthread_mutex_lock(&qp->lock);
	/* requests of one QP execute in order: behind a waiting one, the rest waits too */
	if (qp->stash_head || execute(qp, m) != DONE)
		stash(qp, m, now);
	pthread_mutex_unlock(&qp->lock);
	fv_qp_put(qp);
}

static bool expired(struct fv_qp *qp, const struct fv_stash *s, enum outcome why, uint64_t now)
{
	uint64_t window;

	if (why == WAIT_READY)
		return now - s->since_ns > fv_retry_window_ns(s->m.timeout, s->m.retry_cnt);
	if (s->m.rnr_retry == 7)
		return false;	/* 7 means retry for ever */
	window = (uint64_t)(s->m.rnr_retry + 1) * fv_rnr_timer_us(qp->min_rnr_timer) * 1000;
	return now - s->since_ns > window;
}

void fv_respond_stash_retry(struct fv_qp *qp, uint64_t now)
{
	while (qp->stash_head) {
		struct fv_stash *s = qp->stash_head;
		enum outcome o = execute(qp, &s->m);

		if (o != DONE && !expired(qp, s, o, now))
			break;
		if (o != DONE)
			nak(qp, &s->m, o == WAIT_READY ? IBV_WC_RETRY_EXC_ERR
						       : IBV_WC_RNR_RETRY_EXC_ERR);
		qp->stash_head = s->next;
		if (!qp->stash_head)
			qp->stash_tail = NULL;
		free(s);
	}
}

void fv_stash_free(struct fv_qp *qp)
{
	while (qp->stash_head) {
		struct fv_stash *s = qp->stash_head;

		qp->stash_head = s->next;
		free(s);
	}
	qp->stash_tail = NULL;
}
