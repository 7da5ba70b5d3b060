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
