/* Extended QPs (ibv_create_qp_ex with send_ops_flags) and the ibv_wr_* posting API: each builder
 * fills one send WR, which then goes through the same checks and queue as ibv_post_send. The QP
 * stays locked from wr_start to wr_complete/wr_abort, so a batch reaches the wire whole or not
 * at all, as rdma-core's providers promise. */
#include <errno.h>
#include <string.h>

#include "fv_internal.h"

#define SUPPORTED_SEND_OPS (IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | \
			    IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM | \
			    IBV_QP_EX_WITH_RDMA_READ)

static struct fv_qp *qp_of_ex(struct ibv_qp_ex *qpx)
{
	return (struct fv_qp *)qpx;	/* the union sits at the start of struct fv_qp */
}

struct ibv_qp_ex *ibv_qp_to_qp_ex(struct ibv_qp *ibqp)
{
	struct fv_qp *qp = fv_qp_of(ibqp);

	return qp->extended ? &qp->qpx : NULL;
}

/* The WR being built is complete: check and queue it, or remember why not. */
static void close_wr(struct fv_qp *qp)
{
	uint32_t len;
	int err;

	if (!qp->wr_open)
		return;
	qp->wr_open = false;
	if (qp->batch_err)
		return;
	if (qp->state != IBV_QPS_RTS && qp->state != IBV_QPS_ERR)
		err = EINVAL;
	else
		err = fv_sq_check(qp, &qp->wr_cur, &len);
	if (err)
		qp->batch_err = err;
	else
		fv_sq_enqueue(qp, &qp->wr_cur, len);
}

static struct ibv_send_wr *open_wr(struct ibv_qp_ex *qpx, enum ibv_wr_opcode opcode)
{
	struct fv_qp *qp = qp_of_ex(qpx);

	close_wr(qp);
	memset(&qp->wr_cur, 0, sizeof(qp->wr_cur));
	qp->wr_cur.wr_id = qpx->wr_id;
	qp->wr_cur.send_flags = qpx->wr_flags;
	qp->wr_cur.opcode = opcode;
	qp->wr_cur.sg_list = qp->wr_sge;
	qp->wr_open = true;
	return &qp->wr_cur;
}

static void wr_rdma_write(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t remote_addr)
{
	struct ibv_send_wr *wr = open_wr(qpx, IBV_WR_RDMA_WRITE);

	wr->wr.rdma.rkey = rkey;
	wr->wr.rdma.remote_addr = remote_addr;
}

static void wr_rdma_write_imm(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t remote_addr,
			      __be32 imm)
{
	struct ibv_send_wr *wr = open_wr(qpx, IBV_WR_RDMA_WRITE_WITH_IMM);

	wr->wr.rdma.rkey = rkey;
	wr->wr.rdma.remote_addr = remote_addr;
	wr->imm_data = imm;
}

static void wr_rdma_read(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t remote_addr)
{
	struct ibv_send_wr *wr = open_wr(qpx, IBV_WR_RDMA_READ);

	wr->wr.rdma.rkey = rkey;
	wr->wr.rdma.remote_addr = remote_addr;
}

static void wr_send(struct ibv_qp_ex *qpx)
{
	open_wr(qpx, IBV_WR_SEND);
}

static void wr_send_imm(struct ibv_qp_ex *qpx, __be32 imm)
{
	open_wr(qpx, IBV_WR_SEND_WITH_IMM)->imm_data = imm;
}

/* A data setter ends its WR; one without an open WR is a caller's error. */
static bool data_target(struct fv_qp *qp, size_t n)
{
	if (!qp->wr_open) {
		if (!qp->batch_err)
			qp->batch_err = EINVAL;
		return false;
	}
	if (n > FV_MAX_SGE) {
		qp->wr_open = false;
		if (!qp->batch_err)
			qp->batch_err = ENOMEM;	/* does not fit the WQE, as mlx5 says */
		return false;
	}
	return true;
}

static void wr_set_sge(struct ibv_qp_ex *qpx, uint32_t lkey, uint64_t addr, uint32_t length)
{
	struct fv_qp *qp = qp_of_ex(qpx);

	if (!data_target(qp, 1))
		return;
	qp->wr_sge[0] = (struct ibv_sge){ .addr = addr, .length = length, .lkey = lkey };
	qp->wr_cur.num_sge = 1;
	close_wr(qp);
}

static void wr_set_sge_list(struct ibv_qp_ex *qpx, size_t n, const struct ibv_sge *list)
{
	struct fv_qp *qp = qp_of_ex(qpx);

	if (!data_target(qp, n))
		return;
	if (n)
		memcpy(qp->wr_sge, list, n * sizeof(*list));
	qp->wr_cur.num_sge = (int)n;
	close_wr(qp);
}

/* Inline data is copied when the WR is queued, which is now: the caller may reuse it. */
static void wr_set_inline_data_list(struct ibv_qp_ex *qpx, size_t n,
				    const struct ibv_data_buf *bufs)
{
	struct fv_qp *qp = qp_of_ex(qpx);

	if (!data_target(qp, n))
		return;
	for (size_t i = 0; i < n; i++)
		qp->wr_sge[i] = (struct ibv_sge){ .addr = (uintptr_t)bufs[i].addr,
						  .length = (uint32_t)bufs[i].length };
	qp->wr_cur.num_sge = (int)n;
	qp->wr_cur.send_flags |= IBV_SEND_INLINE;
	close_wr(qp);
}

static void wr_set_inline_data(struct ibv_qp_ex *qpx, void *addr, size_t length)
{
	struct ibv_data_buf buf = { .addr = addr, .length = length };

	wr_set_inline_data_list(qpx, 1, &buf);
}

static void wr_start(struct ibv_qp_ex *qpx)
{
	struct fv_qp *qp = qp_of_ex(qpx);

	pthread_mutex_lock(&qp->lock);
	qp->batch_head = qp->sq_head;
	qp->batch_err = 0;
	qp->wr_open = false;
}

static void drop_batch(struct fv_qp *qp)
{
	qp->sq_head = qp->batch_head;
	qp->wr_open = false;
}

static int wr_complete(struct ibv_qp_ex *qpx)
{
	struct fv_qp *qp = qp_of_ex(qpx);
	int err;

	close_wr(qp);
	err = qp->batch_err;
	if (err) {
		drop_batch(qp);
		pthread_mutex_unlock(&qp->lock);
		fv_log("QP %u: wr_complete refused the batch: %s", qp->qp.qp_num, strerror(err));
		return err;
	}
	fv_sq_post_done(qp);	/* unlocks */
	return 0;
}

static void wr_abort(struct ibv_qp_ex *qpx)
{
	struct fv_qp *qp = qp_of_ex(qpx);

	drop_batch(qp);
	pthread_mutex_unlock(&qp->lock);
}

static void install_builders(struct ibv_qp_ex *qpx, uint64_t ops)
{
	if (ops & IBV_QP_EX_WITH_RDMA_WRITE)
		qpx->wr_rdma_write = wr_rdma_write;
	if (ops & IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM)
		qpx->wr_rdma_write_imm = wr_rdma_write_imm;
	if (ops & IBV_QP_EX_WITH_SEND)
		qpx->wr_send = wr_send;
	if (ops & IBV_QP_EX_WITH_SEND_WITH_IMM)
		qpx->wr_send_imm = wr_send_imm;
	if (ops & IBV_QP_EX_WITH_RDMA_READ)
		qpx->wr_rdma_read = wr_rdma_read;
	qpx->wr_set_sge = wr_set_sge;
	qpx->wr_set_sge_list = wr_set_sge_list;
	qpx->wr_set_inline_data = wr_set_inline_data;
	qpx->wr_set_inline_data_list = wr_set_inline_data_list;
	qpx->wr_start = wr_start;
	qpx->wr_complete = wr_complete;
	qpx->wr_abort = wr_abort;
}

/* verbs_context->create_qp_ex. RC only; the builders asked for in send_ops_flags are installed
 * (atomics and the rest are refused with EOPNOTSUPP, as the device attributes say). */
struct ibv_qp *fv_op_create_qp_ex(struct ibv_context *context, struct ibv_qp_init_attr_ex *attr)
{
	uint32_t known = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	uint64_t ops = 0;
	struct ibv_qp *ibqp;

	if (attr->comp_mask & ~known) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (!(attr->comp_mask & IBV_QP_INIT_ATTR_PD) || !attr->pd || attr->pd->context != context) {
		errno = EINVAL;
		return NULL;
	}
	if (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) {
		ops = attr->send_ops_flags;
		if (ops & ~(uint64_t)SUPPORTED_SEND_OPS) {
			errno = EOPNOTSUPP;
			return NULL;
		}
	}
	/* the leading fields of ibv_qp_init_attr_ex are an ibv_qp_init_attr (verbs.h relies on it
	 * too) */
	ibqp = ibv_create_qp(attr->pd, (struct ibv_qp_init_attr *)attr);
	if (!ibqp || !(attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS))
		return ibqp;
	fv_qp_of(ibqp)->extended = true;
	fv_qp_of(ibqp)->qpx.comp_mask = 0;
	install_builders(&fv_qp_of(ibqp)->qpx, ops);
	return ibqp;
}
