/* One RC queue pair through its states: RESET -> INIT -> RTR -> RTS. */
#ifndef FL_IB_QP_H
#define FL_IB_QP_H

#include "ib_device.h"

struct ib_qp_peer {
	uint32_t qpn;
	int link_layer;
	uint16_t lid;
	int mtu;
	const uint8_t *gid;
};

int ib_qp_create(const struct fl_verbs *v, struct ib_device *dev, struct ibv_cq *cq,
		 int max_send, int max_recv, struct ibv_qp **out);
int ib_qp_init(const struct fl_verbs *v, struct ibv_qp *qp, const struct ib_device *dev);
int ib_qp_rtr(const struct fl_verbs *v, struct ibv_qp *qp, const struct ib_device *dev,
	      const struct ib_qp_peer *peer);
int ib_qp_rts(const struct fl_verbs *v, struct ibv_qp *qp);

#endif
