/*
 * iflush: after the NIC wrote into GPU memory, a one-byte RDMA read of the
 * buffer through a QP connected to itself returns only once the earlier
 * writes are visible to the GPU. Host memory needs nothing: the request is
 * done at once. The loopback QP is made at the first flush that needs it.
 */
#include <stdlib.h>
#include <string.h>

#include "ib_comm.h"
#include "ib_qp.h"
#include "verbs_ops.h"

static int open_flush_qp(struct ib_recv_comm *c)
{
	struct ib_device *d = c->link.dev;
	struct ib_qp_peer self;
	int rc;

	c->flush_word = aligned_alloc(64, 64);
	if (!c->flush_word)
		return fl_fail(FL_ERR_SYSTEM, "out of memory for the flush word");
	c->flush_mr = ib_verbs->reg_mr(d->hca->pd, c->flush_word, 64, IB_MR_ACCESS);
	if (!c->flush_mr)
		return fl_fail(FL_ERR_SYSTEM, "ibv_reg_mr of the flush word on %s: %m",
			       d->dev_name);
	rc = ib_qp_create(ib_verbs, d, c->link.cq, IB_FIFO_DEPTH, 1, &c->flush_qp);
	if (!rc)
		rc = ib_qp_init(ib_verbs, c->flush_qp, d);
	self = (struct ib_qp_peer){ c->flush_qp ? c->flush_qp->qp_num : 0, d->link_layer, d->lid,
				    d->mtu, d->gid.raw };
	if (!rc)
		rc = ib_qp_rtr(ib_verbs, c->flush_qp, d, &self);
	if (!rc)
		rc = ib_qp_rts(ib_verbs, c->flush_qp);
	return rc;
}

void ib_flush_close(struct ib_recv_comm *c)
{
	if (c->flush_qp)
		ib_verbs->destroy_qp(c->flush_qp);
	if (c->flush_mr)
		ib_verbs->dereg_mr(c->flush_mr);
	free(c->flush_word);
	c->flush_qp = NULL;
	c->flush_mr = NULL;
	c->flush_word = NULL;
}

static struct ib_flush_req *take(struct ib_recv_comm *c)
{
	for (int i = 0; i < IB_FIFO_DEPTH; i++)
		if (!c->flushes[i].in_use) {
			c->flushes[i].in_use = 1;
			c->flushes[i].done = 0;
			return &c->flushes[i];
		}
	return NULL;
}

/* The last GPU buffer that received bytes, or -1. */
static int gpu_buffer(int n, int *sizes, struct ib_mr **mrs)
{
	for (int i = n - 1; i >= 0; i--)
		if (sizes[i] > 0 && mrs[i] && mrs[i]->type != FL_PTR_HOST)
			return i;
	return -1;
}

static int post_read(struct ib_recv_comm *c, struct ib_flush_req *r, void *data,
		     const struct ib_mr *mr)
{
	struct ibv_sge sge = { (uintptr_t)c->flush_word, 1, c->flush_mr->lkey };
	struct ibv_send_wr wr, *bad;
	int err;

	if (c->flush_sq.posted - c->flush_sq.done >= IB_FIFO_DEPTH - 1)
		return fl_fail(FL_ERR_INTERNAL, "more than %d flushes outstanding", IB_FIFO_DEPTH);
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = ib_wr_id(IB_WR_FLUSH, 0, (unsigned)(r - c->flushes), c->flush_sq.posted + 1);
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_RDMA_READ;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = (uintptr_t)data;
	wr.wr.rdma.rkey = mr->rkey;
	err = fl_post_send(c->flush_qp, &wr, &bad);
	if (err)
		return fl_fail(FL_ERR_SYSTEM, "ibv_post_send (flush) on %s: %s",
			       c->link.dev->dev_name, strerror(err > 0 ? err : -err));
	c->flush_sq.posted++;
	return FL_OK;
}

int ib_iflush(struct ib_recv_comm *c, int n, void **data, int *sizes, struct ib_mr **mrs,
	      void **request)
{
	int i = gpu_buffer(n, sizes, mrs);
	struct ib_flush_req *r;
	int rc = ib_link_check(&c->link);

	*request = NULL;
	if (rc)
		return rc;
	r = take(c);
	if (!r)
		return FL_OK;
	r->comm = c;
	if (i < 0) {
		r->done = 1;
		*request = r;
		return FL_OK;
	}
	if (!c->flush_qp)
		rc = open_flush_qp(c);
	if (!rc)
		rc = post_read(c, r, data[i], mrs[i]);
	if (rc) {
		r->in_use = 0;
		return ib_link_fail(&c->link, rc);
	}
	*request = r;
	return FL_OK;
}

int ib_test_flush(struct ib_flush_req *r, int *done, int *sizes, struct fl_xfer_times *times)
{
	int rc = r->done ? FL_OK : ib_recv_progress(r->comm);

	(void)sizes;
	(void)times;
	*done = 0;
	if (rc || !r->done)
		return rc;
	*done = 1;
	r->in_use = 0;
	return FL_OK;
}
