/* Small exported helpers callers reach for besides the core verbs. */
#include <errno.h>

#include "fv_internal.h"

const char *ibv_port_state_str(enum ibv_port_state state)
{
	static const char *const names[] = {
		[IBV_PORT_NOP] = "PORT_NOP", [IBV_PORT_DOWN] = "PORT_DOWN",
		[IBV_PORT_INIT] = "PORT_INIT", [IBV_PORT_ARMED] = "PORT_ARMED",
		[IBV_PORT_ACTIVE] = "PORT_ACTIVE", [IBV_PORT_ACTIVE_DEFER] = "PORT_ACTIVE_DEFER",
	};

	if ((unsigned)state < sizeof(names) / sizeof(names[0]))
		return names[state];
	return "invalid state";
}

const char *ibv_node_type_str(enum ibv_node_type type)
{
	switch (type) {
	case IBV_NODE_CA:
		return "InfiniBand channel adapter";
	case IBV_NODE_SWITCH:
		return "InfiniBand switch";
	case IBV_NODE_ROUTER:
		return "InfiniBand router";
	case IBV_NODE_RNIC:
		return "iWARP NIC";
	default:
		return "unknown";
	}
}

int ibv_get_device_index(struct ibv_device *device)
{
	return ((struct fv_device *)device)->index;
}

/* Enhanced connection establishment is not negotiated by the fake: callers fall back. */
int ibv_query_ece(struct ibv_qp *qp, struct ibv_ece *ece)
{
	(void)qp;
	(void)ece;
	return EOPNOTSUPP;
}

int ibv_set_ece(struct ibv_qp *qp, struct ibv_ece *ece)
{
	(void)qp;
	(void)ece;
	return EOPNOTSUPP;
}

int ibv_get_pkey_index(struct ibv_context *context, uint8_t port_num, __be16 pkey)
{
	struct fv_port *p = fv_port_of(context, port_num);
	int len = p && p->link_layer == IBV_LINK_LAYER_INFINIBAND ? FV_PKEY_TBL_LEN : 1;

	for (int i = 0; p && i < len; i++) {
		__be16 v;

		if (ibv_query_pkey(context, port_num, i, &v) == 0 && v == pkey)
			return i;
	}
	return -1;
}

/* The providers' GID type query: 0 = IB or RoCE v1, 1 = RoCE v2 (rdma-core's
 * enum ibv_gid_type_sysfs); an empty entry reads as type 0, as in rdma-core. */
int ibv_query_gid_type(struct ibv_context *context, uint8_t port_num, unsigned int index,
		       unsigned int *type)
{
	struct fv_port *p = fv_port_of(context, port_num);

	if (!p || index >= FV_GID_TBL_LEN) {
		errno = EINVAL;
		return -1;
	}
	*type = (int)index < p->ngids && p->gid_type[index] == IBV_GID_TYPE_ROCE_V2 ? 1 : 0;
	return 0;
}

ssize_t _ibv_query_gid_table(struct ibv_context *context, struct ibv_gid_entry *entries,
			     size_t max_entries, uint32_t flags, size_t entry_size)
{
	struct fv_device *d = fv_ctx(context)->dev;
	size_t n = 0;

	if (flags || entry_size < sizeof(*entries))
		return -EINVAL;
	for (int port = 1; port <= d->nports; port++) {
		for (int i = 0; i < d->port[port - 1].ngids; i++) {
			struct ibv_gid_entry *e = (void *)((char *)entries + n * entry_size);

			if (n == max_entries)
				return -EINVAL;	/* rdma-core: the table does not fit */
			_ibv_query_gid_ex(context, (uint32_t)port, (uint32_t)i, e, 0, entry_size);
			n++;
		}
	}
	return (ssize_t)n;
}

/* The fake pins nothing, so fork() never breaks a registration: fork safety is moot. */
enum ibv_fork_status ibv_is_fork_initialized(void)
{
	return IBV_FORK_UNNEEDED;
}

int ibv_dontfork_range(void *base, size_t size)
{
	(void)base;
	(void)size;
	return 0;
}

int ibv_dofork_range(void *base, size_t size)
{
	(void)base;
	(void)size;
	return 0;
}

/* Requests of one QP execute in order, and each payload is copied before it is acknowledged. */
int ibv_query_qp_data_in_order(struct ibv_qp *qp, enum ibv_wr_opcode op, uint32_t flags)
{
	(void)qp;
	(void)op;
	(void)flags;
	return 1;
}
