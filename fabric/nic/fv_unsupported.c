/* Verbs the fake does not emulate: address handles and multicast (UD only), re-registration.
 * They fail as rdma-core does for a provider that lacks the operation: EOPNOTSUPP in errno
 * (constructors) or as the return value; the device attributes say the same (max_ah and
 * max_mcast_grp are 0). */
#include <errno.h>

#include "fv_internal.h"

struct ibv_ah *ibv_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr)
{
	(void)pd;
	(void)attr;
	errno = EOPNOTSUPP;
	return NULL;
}

struct ibv_ah *ibv_create_ah_from_wc(struct ibv_pd *pd, struct ibv_wc *wc, struct ibv_grh *grh,
				     uint8_t port_num)
{
	(void)pd;
	(void)wc;
	(void)grh;
	(void)port_num;
	errno = EOPNOTSUPP;
	return NULL;
}

int ibv_init_ah_from_wc(struct ibv_context *context, uint8_t port_num, struct ibv_wc *wc,
			struct ibv_grh *grh, struct ibv_ah_attr *ah_attr)
{
	(void)context;
	(void)port_num;
	(void)wc;
	(void)grh;
	(void)ah_attr;
	errno = EOPNOTSUPP;
	return -1;
}

int ibv_destroy_ah(struct ibv_ah *ah)
{
	(void)ah;
	return EOPNOTSUPP;
}

int ibv_attach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid)
{
	(void)qp;
	(void)gid;
	(void)lid;
	return EOPNOTSUPP;
}

int ibv_detach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid)
{
	(void)qp;
	(void)gid;
	(void)lid;
	return EOPNOTSUPP;
}

int ibv_rereg_mr(struct ibv_mr *mr, int flags, struct ibv_pd *pd, void *addr, size_t length,
		 int access)
{
	(void)mr;
	(void)flags;
	(void)pd;
	(void)addr;
	(void)length;
	(void)access;
	errno = EOPNOTSUPP;
	return IBV_REREG_MR_ERR_CMD;
}

/* RoCE address handles need the neighbour's MAC; there are no AHs to build. */
int ibv_resolve_eth_l2_from_gid(struct ibv_context *context, struct ibv_ah_attr *attr,
				uint8_t eth_mac[ETHERNET_LL_SIZE], uint16_t *vid)
{
	(void)context;
	(void)attr;
	(void)eth_mac;
	(void)vid;
	errno = EOPNOTSUPP;
	return -1;
}
