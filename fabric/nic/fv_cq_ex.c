/* Extended CQs (ibv_create_cq_ex): the same queue as ibv_create_cq, read one entry at a time
 * through start_poll/next_poll/end_poll and the read_* accessors. Each poll takes its entry out
 * under the CQ's lock and releases it, so a caller may post between start_poll and end_poll. */
#include <errno.h>

#include "fv_internal.h"

#define fv_cq_of_ex(c) ((struct fv_cq *)(c))

static int take(struct ibv_cq_ex *cqx)
{
	struct fv_cq *cq = fv_cq_of_ex(cqx);

	if (!fv_cq_pop(cq, &cq->cur))
		return cq->overrun ? EIO : ENOENT;
	cqx->wr_id = cq->cur.wr_id;
	cqx->status = cq->cur.status;
	return 0;
}

static int start_poll(struct ibv_cq_ex *cqx, struct ibv_poll_cq_attr *attr)
{
	if (attr->comp_mask)
		return EINVAL;
	fv_nic_poll_hook();
	return take(cqx);
}

static int next_poll(struct ibv_cq_ex *cqx)
{
	return take(cqx);
}

static void end_poll(struct ibv_cq_ex *cqx)
{
	(void)cqx;
}

static enum ibv_wc_opcode read_opcode(struct ibv_cq_ex *cqx)
{
	return fv_cq_of_ex(cqx)->cur.opcode;
}

static uint32_t read_vendor_err(struct ibv_cq_ex *cqx)
{
	return fv_cq_of_ex(cqx)->cur.vendor_err;
}

static uint32_t read_byte_len(struct ibv_cq_ex *cqx)
{
	return fv_cq_of_ex(cqx)->cur.byte_len;
}

static __be32 read_imm_data(struct ibv_cq_ex *cqx)
{
	return fv_cq_of_ex(cqx)->cur.imm_data;
}

static uint32_t read_qp_num(struct ibv_cq_ex *cqx)
{
	return fv_cq_of_ex(cqx)->cur.qp_num;
}

static uint32_t read_src_qp(struct ibv_cq_ex *cqx)
{
	return fv_cq_of_ex(cqx)->cur.src_qp;
}

static unsigned int read_wc_flags(struct ibv_cq_ex *cqx)
{
	return fv_cq_of_ex(cqx)->cur.wc_flags;
}

static uint32_t read_slid(struct ibv_cq_ex *cqx)
{
	return fv_cq_of_ex(cqx)->cur.slid;
}

static uint8_t read_sl(struct ibv_cq_ex *cqx)
{
	return fv_cq_of_ex(cqx)->cur.sl;
}

static uint8_t read_dlid_path_bits(struct ibv_cq_ex *cqx)
{
	return fv_cq_of_ex(cqx)->cur.dlid_path_bits;
}

/* verbs_context->create_cq_ex: the standard work-completion fields only (no timestamps, VLANs,
 * flow tags or tag matching: EOPNOTSUPP, as a device without them answers). */
struct ibv_cq_ex *fv_op_create_cq_ex(struct ibv_context *context,
				     struct ibv_cq_init_attr_ex *attr)
{
	struct ibv_cq_ex *cqx;
	struct ibv_cq *ibcq;

	if (attr->comp_mask & ~(uint32_t)IBV_CQ_INIT_ATTR_MASK_FLAGS ||
	    attr->wc_flags & ~(uint64_t)IBV_WC_STANDARD_FLAGS) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (attr->cqe > FV_MAX_CQE) {
		errno = EINVAL;
		return NULL;
	}
	/* IBV_CREATE_CQ_ATTR_SINGLE_THREADED only allows dropping the lock: it is kept */
	ibcq = ibv_create_cq(context, (int)attr->cqe, attr->cq_context, attr->channel,
			     (int)attr->comp_vector);
	if (!ibcq)
		return NULL;
	cqx = &fv_cq_of(ibcq)->cqx;
	fv_cq_of(ibcq)->extended = true;
	cqx->start_poll = start_poll;
	cqx->next_poll = next_poll;
	cqx->end_poll = end_poll;
	cqx->read_opcode = read_opcode;
	cqx->read_vendor_err = read_vendor_err;
	cqx->read_byte_len = read_byte_len;
	cqx->read_imm_data = read_imm_data;
	cqx->read_qp_num = read_qp_num;
	cqx->read_src_qp = read_src_qp;
	cqx->read_wc_flags = read_wc_flags;
	cqx->read_slid = read_slid;
	cqx->read_sl = read_sl;
	cqx->read_dlid_path_bits = read_dlid_path_bits;
	return cqx;
}
