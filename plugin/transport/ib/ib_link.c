/* A connection's verbs resources: its CQ and QPs, from creation to RTS and back. */
#include <string.h>
#include <unistd.h>

#include "ib_comm.h"
#include "ib_qp.h"

static int min_int(int a, int b)
{
	return a < b ? a : b;
}

int ib_link_open(struct ib_link *l, struct ib_device *dev, int nqps, int send_side)
{
	const struct ibv_device_attr *a = &dev->hca->attr;
	int max_wr = a->max_qp_wr > 0 ? a->max_qp_wr : IB_RQ_DEPTH;
	int sq = IB_SQ_DEPTH; /* the full-queue checks count on every slot of it */
	int rq = send_side ? 1 : min_int(IB_RQ_DEPTH, max_wr);
	int rc;

	if (max_wr < sq)
		return fl_fail(FL_ERR_SYSTEM, "%s allows %d WRs per queue, a send queue needs %d",
			       dev->dev_name, max_wr, sq);
	if (!send_side && rq < IB_RQ_DEPTH)
		return fl_fail(FL_ERR_SYSTEM, "%s allows %d WRs per queue, the receiver needs %d",
			       dev->dev_name, max_wr, IB_RQ_DEPTH);
	l->dev = dev;
	l->nqps = nqps;
	l->piece_max = IB_PIECE_MAX;
	l->fd = -1;
	/* Room for every WR that may complete at once, plus the flush QP's. */
	l->cq_depth = nqps * (sq + (send_side ? 0 : rq)) + (send_side ? 0 : IB_FIFO_DEPTH);
	if (a->max_cqe > 0 && l->cq_depth > a->max_cqe)
		return fl_fail(FL_ERR_SYSTEM, "%s: a CQ of %d entries is needed, the HCA allows %d",
			       dev->dev_name, l->cq_depth, a->max_cqe);
	l->cq = ib_verbs->create_cq(dev->hca->ctx, l->cq_depth, NULL, NULL, 0);
	if (!l->cq)
		return fl_fail(FL_ERR_SYSTEM, "ibv_create_cq of %d entries on %s: %m", l->cq_depth,
			       dev->dev_name);
	for (int i = 0; i < nqps; i++) {
		rc = ib_qp_create(ib_verbs, dev, l->cq, sq, rq, &l->qps[i]);
		if (!rc)
			rc = ib_qp_init(ib_verbs, l->qps[i], dev);
		if (rc)
			return rc; /* ib_link_close undoes what was made */
	}
	return FL_OK;
}

void ib_link_close(struct ib_link *l)
{
	for (int i = 0; i < IB_MAX_QPS; i++)
		if (l->qps[i]) {
			ib_verbs->destroy_qp(l->qps[i]);
			l->qps[i] = NULL;
		}
	if (l->cq) {
		ib_verbs->destroy_cq(l->cq);
		l->cq = NULL;
	}
	if (l->fd >= 0) {
		close(l->fd);
		l->fd = -1;
	}
}

void ib_link_describe(const struct ib_link *l, struct ib_meta *m)
{
	const struct ib_device *d = l->dev;

	memset(m, 0, sizeof(*m));
	m->nqps = (uint8_t)l->nqps;
	m->link_layer = (uint8_t)d->link_layer;
	m->port = (uint8_t)d->port;
	m->mtu = (uint8_t)d->mtu;
	m->lid = d->lid;
	memcpy(m->gid, d->gid.raw, 16);
	for (int i = 0; i < l->nqps; i++)
		m->qpn[i] = l->qps[i]->qp_num;
}

int ib_link_connect(struct ib_link *l, const struct ib_meta *remote)
{
	int rc = FL_OK;

	if (remote->nqps != l->nqps)
		return fl_fail(FL_ERR_REMOTE, "peer has %u QPs for this connection, this side %d",
			       remote->nqps, l->nqps);
	if (remote->link_layer != l->dev->link_layer)
		return fl_fail(FL_ERR_USAGE, "%s is %s, the peer's port is not", l->dev->dev_name,
			       l->dev->link_layer == IBV_LINK_LAYER_ETHERNET ? "RoCE" :
									       "InfiniBand");
	for (int i = 0; i < l->nqps && !rc; i++) {
		struct ib_qp_peer peer = { remote->qpn[i], remote->link_layer, remote->lid,
					   remote->mtu, remote->gid };

		rc = ib_qp_rtr(ib_verbs, l->qps[i], l->dev, &peer);
		if (!rc)
			rc = ib_qp_rts(ib_verbs, l->qps[i]);
	}
	return rc;
}
