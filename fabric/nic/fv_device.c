/* Devices, contexts and the queries: what `ibv_devinfo` would show for the configured devices. */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fv_internal.h"

#undef ibv_query_port

static pthread_once_t sysfs_once = PTHREAD_ONCE_INIT;

static void publish_sysfs(void)
{
	/* a failure is said on stderr; verbs work without the tree */
	fv_sysfs_publish(fv_config_get());
}

struct ibv_device **ibv_get_device_list(int *num_devices)
{
	struct fv_config *cfg = fv_config_get();
	struct ibv_device **list;

	if (cfg)
		pthread_once(&sysfs_once, publish_sysfs);
	if (!cfg) {
		if (num_devices)
			*num_devices = 0;
		return NULL;
	}
	list = calloc((size_t)cfg->ndevs + 1, sizeof(*list));
	if (!list) {
		errno = ENOMEM;
		return NULL;
	}
	for (int i = 0; i < cfg->ndevs; i++)
		list[i] = &cfg->dev[i].ibdev;
	if (num_devices)
		*num_devices = cfg->ndevs;
	return list;
}

void ibv_free_device_list(struct ibv_device **list)
{
	free(list);
}

const char *ibv_get_device_name(struct ibv_device *device)
{
	return device->name;
}

__be64 ibv_get_device_guid(struct ibv_device *device)
{
	return htobe64(((struct fv_device *)device)->guid);
}

int ibv_fork_init(void)
{
	return 0;
}

static int query_port_full(struct ibv_context *context, uint8_t port_num,
			   struct ibv_port_attr *a, size_t len)
{
	struct fv_port *p = fv_port_of(context, port_num);
	struct ibv_port_attr full;
	bool ib;
	int state;

	if (!p)
		return EINVAL;
	ib = p->link_layer == IBV_LINK_LAYER_INFINIBAND;
	state = atomic_load(&p->state);
	memset(&full, 0, sizeof(full));
	full.state = (enum ibv_port_state)state;
	full.max_mtu = IBV_MTU_4096;
	full.active_mtu = ib ? IBV_MTU_4096 : IBV_MTU_1024;
	full.gid_tbl_len = FV_GID_TBL_LEN;
	full.port_cap_flags = IBV_PORT_CM_SUP | IBV_PORT_CAP_MASK2_SUP |
			      (ib ? IBV_PORT_EXTENDED_SPEEDS_SUP : IBV_PORT_IP_BASED_GIDS);
	full.max_msg_sz = FV_MAX_MSG_SZ;
	full.pkey_tbl_len = ib ? FV_PKEY_TBL_LEN : 1;
	full.lid = p->lid;
	full.sm_lid = ib ? 1 : 0;
	full.max_vl_num = ib ? 4 : 0;
	full.subnet_timeout = ib ? 18 : 0;
	full.active_width = p->width;
	full.active_speed = p->speed;
	/* 5 = LinkUp, 3 = Disabled */
	full.phys_state = state == IBV_PORT_DOWN ? 3 : 5;
	full.link_layer = p->link_layer;
	full.port_cap_flags2 = IBV_PORT_LINK_WIDTH_2X_SUP | IBV_PORT_LINK_SPEED_HDR_SUP |
			       IBV_PORT_LINK_SPEED_NDR_SUP;
	memcpy(a, &full, len < sizeof(full) ? len : sizeof(full));
	return 0;
}

/* The exported symbol (verbs.h's macro reaches it only without an extended context). */
int ibv_query_port(struct ibv_context *context, uint8_t port_num,
		   struct _compat_ibv_port_attr *port_attr)
{
	return query_port_full(context, port_num, (struct ibv_port_attr *)port_attr,
			       sizeof(struct ibv_port_attr));
}

int ibv_query_device(struct ibv_context *context, struct ibv_device_attr *a)
{
	struct fv_device *d = fv_ctx(context)->dev;

	memset(a, 0, sizeof(*a));
	strcpy(a->fw_ver, "28.39.1002 (fabriclab fake)");
	a->node_guid = htobe64(d->guid);
	a->sys_image_guid = htobe64(d->guid);
	a->max_mr_size = ~0ull;
	a->page_size_cap = 0xfffffffffffff000ull;
	a->vendor_id = 0x02c9;
	a->vendor_part_id = 4123;
	a->hw_ver = 0;
	a->max_qp = 131072;
	a->max_qp_wr = FV_MAX_QP_WR;
	a->device_cap_flags = IBV_DEVICE_RC_RNR_NAK_GEN | IBV_DEVICE_PORT_ACTIVE_EVENT |
			      IBV_DEVICE_CHANGE_PHY_PORT | IBV_DEVICE_SYS_IMAGE_GUID;
	a->max_sge = FV_MAX_SGE;
	a->max_sge_rd = FV_MAX_SGE;
	a->max_cq = 16777216;
	a->max_cqe = FV_MAX_CQE;
	a->max_mr = 65535;
	a->max_pd = 8388608;
	a->max_qp_rd_atom = FV_MAX_RD_ATOM;
	a->max_res_rd_atom = FV_MAX_RD_ATOM * 131072;
	a->max_qp_init_rd_atom = FV_MAX_RD_ATOM;
	a->atomic_cap = IBV_ATOMIC_NONE;	/* atomic opcodes are refused (EINVAL) */
	a->max_pkeys = FV_PKEY_TBL_LEN;
	a->max_srq = 65536;
	a->max_srq_wr = FV_MAX_QP_WR;
	a->max_srq_sge = FV_MAX_SGE;
	a->local_ca_ack_delay = 16;
	a->phys_port_cnt = (uint8_t)d->nports;
	return 0;
}

int ibv_query_gid(struct ibv_context *context, uint8_t port_num, int index, union ibv_gid *gid)
{
	struct fv_port *p = fv_port_of(context, port_num);

	if (!p || index < 0 || index >= FV_GID_TBL_LEN) {
		errno = EINVAL;
		return -1;
	}
	memset(gid, 0, sizeof(*gid));
	if (index < p->ngids)
		*gid = p->gid[index];
	return 0;
}

int _ibv_query_gid_ex(struct ibv_context *context, uint32_t port_num, uint32_t gid_index,
		      struct ibv_gid_entry *entry, uint32_t flags, size_t entry_size)
{
	struct fv_port *p = port_num > 255 ? NULL : fv_port_of(context, (uint8_t)port_num);
	struct ibv_gid_entry e;

	if (!p || flags || gid_index >= FV_GID_TBL_LEN || entry_size < sizeof(e))
		return EINVAL;
	if ((int)gid_index >= p->ngids)
		return ENODATA;
	memset(&e, 0, sizeof(e));
	e.gid = p->gid[gid_index];
	e.gid_index = gid_index;
	e.port_num = port_num;
	e.gid_type = p->gid_type[gid_index];
	e.ndev_ifindex = p->link_layer == IBV_LINK_LAYER_ETHERNET ? 1 : 0;
	memcpy(entry, &e, sizeof(e));
	return 0;
}

int ibv_query_pkey(struct ibv_context *context, uint8_t port_num, int index, __be16 *pkey)
{
	struct fv_port *p = fv_port_of(context, port_num);
	int len = p && p->link_layer == IBV_LINK_LAYER_INFINIBAND ? FV_PKEY_TBL_LEN : 1;

	if (!p || index < 0 || index >= len) {
		errno = EINVAL;
		return -1;
	}
	*pkey = index == 0 ? htobe16(0xffff) : 0;
	return 0;
}

/* verbs_context->query_device_ex: the classic attributes; every extended capability (ODP,
 * timestamps, TSO, RSS, tag matching, packet pacing, device memory) is absent and reads 0. */
static int query_device_ex(struct ibv_context *context,
			   const struct ibv_query_device_ex_input *input,
			   struct ibv_device_attr_ex *attr, size_t attr_size)
{
	struct ibv_device_attr_ex full;

	if ((input && input->comp_mask) ||
	    attr_size < offsetof(struct ibv_device_attr_ex, comp_mask) + sizeof(attr->comp_mask))
		return EINVAL;
	memset(&full, 0, sizeof(full));
	ibv_query_device(context, &full.orig_attr);
	full.phys_port_cnt_ex = full.orig_attr.phys_port_cnt;
	memcpy(attr, &full, attr_size < sizeof(full) ? attr_size : sizeof(full));
	return 0;
}

struct ibv_context *ibv_open_device(struct ibv_device *device)
{
	struct fv_context *c = calloc(1, sizeof(*c));
	int fds[2];
	int err;

	if (!c) {
		errno = ENOMEM;
		return NULL;
	}
	if (pipe2(fds, O_CLOEXEC)) {
		err = errno;
		free(c);
		errno = err;
		return NULL;
	}
	/* the write side never blocks: the byte count is only a readiness signal */
	fcntl(fds[1], F_SETFL, O_NONBLOCK);
	err = fv_nic_start();
	if (err) {
		close(fds[0]);
		close(fds[1]);
		free(c);
		errno = err;
		return NULL;
	}
	c->dev = (struct fv_device *)device;
	c->async_rd = fds[0];
	c->async_wr = fds[1];
	pthread_mutex_init(&c->ev_lock, NULL);
	c->vctx.sz = sizeof(c->vctx);
	c->vctx.query_port = query_port_full;
	c->vctx.query_device_ex = query_device_ex;
	c->vctx.create_qp_ex = fv_op_create_qp_ex;
	c->vctx.create_cq_ex = fv_op_create_cq_ex;
	c->vctx.context.device = device;
	c->vctx.context.cmd_fd = -1;
	c->vctx.context.async_fd = fds[0];
	c->vctx.context.num_comp_vectors = 1;
	c->vctx.context.abi_compat = __VERBS_ABI_IS_EXTENDED;
	pthread_mutex_init(&c->vctx.context.mutex, NULL);
	c->vctx.context.ops.post_send = fv_op_post_send;
	c->vctx.context.ops.post_recv = fv_op_post_recv;
	c->vctx.context.ops.poll_cq = fv_op_poll_cq;
	c->vctx.context.ops.req_notify_cq = fv_op_req_notify_cq;
	c->vctx.context.ops.post_srq_recv = fv_op_post_srq_recv;
	fv_contexts_add(c);
	return &c->vctx.context;
}

int ibv_close_device(struct ibv_context *context)
{
	struct fv_context *c = fv_ctx(context);
	struct fv_event *e;

	fv_contexts_remove(c);
	fv_nic_stop();
	while ((e = c->ev_head)) {
		c->ev_head = e->next;
		free(e);
	}
	close(c->async_rd);
	close(c->async_wr);
	pthread_mutex_destroy(&c->ev_lock);
	pthread_mutex_destroy(&context->mutex);
	free(c);
	return 0;
}
