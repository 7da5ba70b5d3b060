/*
 * The data-path verbs. verbs.h makes these inline calls through the context's
 * ops table (no library symbol), so they cost no more here than in the header.
 */
#ifndef FL_VERBS_OPS_H
#define FL_VERBS_OPS_H

#include <infiniband/verbs.h>

static inline int fl_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr,
			       struct ibv_send_wr **bad)
{
	return qp->context->ops.post_send(qp, wr, bad);
}

static inline int fl_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr,
			       struct ibv_recv_wr **bad)
{
	return qp->context->ops.post_recv(qp, wr, bad);
}

static inline int fl_poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc)
{
	return cq->context->ops.poll_cq(cq, n, wc);
}

#endif
