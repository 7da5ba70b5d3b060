#include "ib_qp.h"

#include <string.h>

#include "base/error.h"
#include "ib_config.h"

#define IB_MIN_RNR_TIMER 12 /* 0.64 ms: receives are posted before the CTS, so rarely used */
#define IB_RNR_RETRY 7      /* 7 = retry forever on receiver-not-ready */

int ib_qp_create(const struct fl_verbs *v, struct ib_device *dev, struct ibv_cq *cq,
		 int max_send, int max_recv, struct ibv_qp **out)
{
	struct ibv_qp_init_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.send_cq = cq;
	attr.recv_cq = cq;
	attr.qp_type = IBV_QPT_RC;
	attr.sq_sig_all = 0;
	attr.cap.max_send_wr = (uint32_t)max_send;
	attr.cap.max_recv_wr = (uint32_t)max_recv;
	attr.cap.max_send_sge = 1;
	attr.cap.max_recv_sge = 1;
	*out = v->create_qp(dev->hca->pd, &attr);
	if (!*out)
		return fl_fail(FL_ERR_SYSTEM, "ibv_create_qp on %s (%d send, %d receive WRs): %m",
			       dev->dev_name, max_send, max_recv);
	/* Drivers report what they allocated: often more (rounded up), which is ignored: the
	 * send-queue accounting and the CQ depth count max_send WRs, never more. Fewer would
	 * break the full-queue checks. */
	if (attr.cap.max_send_wr < (uint32_t)max_send ||
	    attr.cap.max_recv_wr < (uint32_t)max_recv) {
		v->destroy_qp(*out);
		*out = NULL;
		return fl_fail(FL_ERR_SYSTEM, "ibv_create_qp on %s gave %u send and %u receive "
			       "WRs for %d and %d asked", dev->dev_name, attr.cap.max_send_wr,
			       attr.cap.max_recv_wr, max_send, max_recv);
	}
	return FL_OK;
}

static int modify(const struct fl_verbs *v, struct ibv_qp *qp, struct ibv_qp_attr *a, int mask,
		  const char *state)
{
	int err = v->modify_qp(qp, a, mask);

	if (err)
		return fl_fail(FL_ERR_SYSTEM, "ibv_modify_qp of QP %u to %s: %s", qp->qp_num, state,
			       strerror(err > 0 ? err : -err));
	return FL_OK;
}

int ib_qp_init(const struct fl_verbs *v, struct ibv_qp *qp, const struct ib_device *dev)
{
	struct ibv_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.pkey_index = 0;
	a.port_num = (uint8_t)dev->port;
	a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	return modify(v, qp, &a,
		      IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS, "INIT");
}

int ib_qp_rtr(const struct fl_verbs *v, struct ibv_qp *qp, const struct ib_device *dev,
	      const struct ib_qp_peer *peer)
{
	struct ibv_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = (enum ibv_mtu)(dev->mtu < peer->mtu ? dev->mtu : peer->mtu);
	a.dest_qp_num = peer->qpn;
	a.rq_psn = 0;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = IB_MIN_RNR_TIMER;
	a.ah_attr.port_num = (uint8_t)dev->port;
	a.ah_attr.sl = (uint8_t)ib_cfg.sl;
	if (dev->link_layer == IBV_LINK_LAYER_ETHERNET) {
		a.ah_attr.is_global = 1;
		memcpy(a.ah_attr.grh.dgid.raw, peer->gid, 16);
		a.ah_attr.grh.sgid_index = (uint8_t)dev->gid_index;
		a.ah_attr.grh.hop_limit = 255;
		a.ah_attr.grh.traffic_class = (uint8_t)ib_cfg.tc;
	} else {
		a.ah_attr.dlid = peer->lid;
	}
	return modify(v, qp, &a,
		      IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			      IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER,
		      "RTR");
}

int ib_qp_rts(const struct fl_verbs *v, struct ibv_qp *qp)
{
	struct ibv_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = (uint8_t)ib_cfg.timeout;
	a.retry_cnt = (uint8_t)ib_cfg.retry_cnt;
	a.rnr_retry = IB_RNR_RETRY;
	a.sq_psn = 0;
	a.max_rd_atomic = 1;
	return modify(v, qp, &a,
		      IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			      IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC,
		      "RTS");
}
