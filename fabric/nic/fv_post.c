/* The requester side of the data path: posting, transmitting and completing send work requests,
 * and posting receives. */
#include <errno.h>
#include <string.h>

#include "fv_internal.h"

static _Atomic uint64_t sq_high_water;

void fv_sq_note_depth(uint64_t used)
{
	uint64_t high = atomic_load_explicit(&sq_high_water, memory_order_relaxed);

	while (used > high &&
	       !atomic_compare_exchange_weak_explicit(&sq_high_water, &high, used,
						      memory_order_relaxed, memory_order_relaxed))
		;
}

uint64_t fakeverbs_sq_high_water(void)
{
	return atomic_exchange(&sq_high_water, 0);
}

enum ibv_wc_opcode wc_opcode_of(uint8_t wr_opcode)
{
	switch (wr_opcode) {
	case IBV_WR_SEND:
	case IBV_WR_SEND_WITH_IMM:
		return IBV_WC_SEND;
	case IBV_WR_RDMA_READ:
		return IBV_WC_RDMA_READ;
	default:
		return IBV_WC_RDMA_WRITE;
	}
}

static void complete(struct fv_qp *qp, uint64_t index, enum ibv_wc_status status)
{
	struct fv_swr *w = &qp->sq[index % qp->sq_size];
	struct ibv_wc wc = { .wr_id = w->wr_id, .status = status, .opcode = wc_opcode_of(w->opcode),
			     .byte_len = w->len, .qp_num = qp->qp.qp_num };

	if (status == IBV_WC_SUCCESS && !w->signaled)
		return;
	if (!fv_cq_push(fv_cq_of(qp->qp.send_cq), &wc, qp, index))
		fv_qp_to_error(qp, IBV_EVENT_QP_FATAL);
}

void fv_sq_flush(struct fv_qp *qp)
{
	while (qp->sq_acked < qp->sq_head)
		complete(qp, qp->sq_acked++, IBV_WC_WR_FLUSH_ERR);
	qp->sq_sent = qp->sq_head;
}

void fv_sq_fail(struct fv_qp *qp, enum ibv_wc_status status)
{
	if (qp->sq_acked < qp->sq_head) {
		if (qp->sq_sent == qp->sq_acked)
			qp->sq_sent++;
		complete(qp, qp->sq_acked++, status);
		fv_log("QP %u: send WR failed: %s", qp->qp.qp_num, ibv_wc_status_str(status));
	}
	fv_qp_to_error(qp, -1);
}

bool fv_sq_busy(struct fv_qp *qp)
{
	return qp->state == IBV_QPS_RTS && qp->sq_acked < qp->sq_head;
}

int fv_sq_check(struct fv_qp *qp, const struct ibv_send_wr *wr, uint32_t *len)
{
	uint64_t total = 0;

	/* the errno values mlx5 returns: too many SGEs or too much inline data do not fit the
	 * WQE (ENOMEM), an opcode the QP cannot do is invalid (EINVAL) */
	if (wr->num_sge < 0)
		return EINVAL;
	if ((uint32_t)wr->num_sge > qp->cap.max_send_sge)
		return ENOMEM;
	switch (wr->opcode) {
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
	case IBV_WR_SEND:
	case IBV_WR_SEND_WITH_IMM:
	case IBV_WR_RDMA_READ:
		break;
	default:
		return EINVAL;	/* atomics, memory windows, TSO: not emulated */
	}
	for (int i = 0; i < wr->num_sge; i++)
		total += wr->sg_list[i].length;
	if (wr->send_flags & IBV_SEND_INLINE) {
		if (wr->opcode == IBV_WR_RDMA_READ)
			return EINVAL;
		if (total > qp->cap.max_inline_data)
			return ENOMEM;
	}
	if (qp->sq_head - atomic_load(&qp->sq_freed) >= qp->cap.max_send_wr)
		return ENOMEM;
	fv_sq_note_depth(qp->sq_head + 1 - atomic_load(&qp->sq_freed));
	*len = total > UINT32_MAX ? UINT32_MAX : (uint32_t)total;
	return 0;
}

void fv_sq_enqueue(struct fv_qp *qp, const struct ibv_send_wr *wr, uint32_t len)
{
	struct fv_swr *w = &qp->sq[qp->sq_head % qp->sq_size];

	w->wr_id = wr->wr_id;
	w->opcode = (uint8_t)wr->opcode;
	w->local_err = IBV_WC_SUCCESS;
	w->signaled = qp->sq_sig_all || (wr->send_flags & IBV_SEND_SIGNALED);
	w->inl = (wr->send_flags & IBV_SEND_INLINE) != 0;
	w->imm = wr->imm_data;
	w->raddr = wr->wr.rdma.remote_addr;
	w->rkey = wr->wr.rdma.rkey;
	w->len = len;
	w->due_ns = w->push_ns = 0;
	w->nsge = wr->num_sge;
	if (wr->num_sge) /* a zero-length write-with-immediate may have no list */
		memcpy(w->sge, wr->sg_list, sizeof(w->sge[0]) * (size_t)wr->num_sge);
	if (w->inl) {
		/* inline data is copied now: the caller may reuse its buffer on return */
		uint32_t off = 0;

		for (int i = 0; i < wr->num_sge; i++) {
			memcpy(w->data + off, (void *)(uintptr_t)wr->sg_list[i].addr,
			       wr->sg_list[i].length);
			off += wr->sg_list[i].length;
		}
	}
	qp->sq_head++;
}

int fv_op_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
	struct fv_qp *qp = fv_qp_of(ibqp);
	int err = 0;

	pthread_mutex_lock(&qp->lock);
	for (; wr; wr = wr->next) {
		uint32_t len;

		if (qp->state != IBV_QPS_RTS && qp->state != IBV_QPS_ERR) {
			err = EINVAL;
			fv_log("post_send on QP %u in state %d", ibqp->qp_num, qp->state);
		} else {
			err = fv_sq_check(qp, wr, &len);
		}
		if (err) {
			*bad = wr;
			break;
		}
		fv_sq_enqueue(qp, wr, len);
	}
	fv_sq_post_done(qp);
	return err;
}

void fv_sq_post_done(struct fv_qp *qp)
{
	bool stuck;

	if (qp->state == IBV_QPS_ERR)
		fv_sq_flush(qp);
	else
		fv_sq_transmit(qp);
	stuck = qp->sq_sent < qp->sq_head;
	pthread_mutex_unlock(&qp->lock);
	if (stuck)
		fv_nic_wake();	/* the responder's ring was full: the NIC thread retries */
}

int fv_op_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	struct fv_qp *qp = fv_qp_of(ibqp);
	bool waiting;
	int err = 0;

	pthread_mutex_lock(&qp->lock);
	for (; wr; wr = wr->next) {
		struct fv_rwr *r;

		if (qp->state == IBV_QPS_RESET || wr->num_sge < 0 || qp->srq) {
			err = EINVAL;
		} else if ((uint32_t)wr->num_sge > qp->cap.max_recv_sge ||
			   qp->rq_head - qp->rq_tail >= qp->cap.max_recv_wr) {
			err = ENOMEM;
		}
		if (err) {
			*bad = wr;
			break;
		}
		r = &qp->rq[qp->rq_head % qp->rq_size];
		r->wr_id = wr->wr_id;
		r->nsge = wr->num_sge;
		if (wr->num_sge) /* a receive for write-with-immediate may have no list */
			memcpy(r->sge, wr->sg_list, sizeof(r->sge[0]) * (size_t)wr->num_sge);
		qp->rq_head++;
	}
	if (qp->state == IBV_QPS_ERR)
		fv_qp_flush_rq(qp);
	waiting = qp->stash_head != NULL;
	pthread_mutex_unlock(&qp->lock);
	if (waiting)
		fv_nic_wake();	/* a request may be waiting for this receive */
	return err;
}
