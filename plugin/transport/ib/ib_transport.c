/*
 * The ib transport: InfiniBand and RoCE through libibverbs, loaded at run
 * time. This file is the function table and the per-process state; a machine
 * without the library or an active port gets zero devices (said once at
 * INFO), and FABRICLAB_TRANSPORT=auto then uses sockets.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "ib_comm.h"
#include "ib_config.h"
#include "ib_side.h"
#include "base/log.h"
#include "transport/transport.h"

#define IB_MAX_P2P_BYTES (256u << 20) /* a power of two below what an immediate can say */

_Static_assert(IB_MAX_P2P_BYTES <= IB_MAX_MSG, "messages fit the immediate");

static pthread_mutex_t init_lock = PTHREAD_MUTEX_INITIALIZER;
static int initialized;
static int init_status;
static int ndevs;
static struct ib_device devs[IB_MAX_DEVS];

static int discover(void)
{
	const struct fl_verbs *v;
	int rc = ib_config_load(&ib_cfg);

	if (rc)
		return rc;
	if (ib_cfg.disabled) {
		FL_INFO("ib transport: disabled by NCCL_IB_DISABLE=1");
		return FL_OK;
	}
	v = fl_verbs_get();
	if (!v) {
		FL_INFO("ib transport: no verbs library (%s)", fl_error_text());
		return FL_OK;
	}
	rc = ib_devices_discover(v, devs, IB_MAX_DEVS, &ndevs);
	if (!rc && !ndevs)
		FL_INFO("ib transport: %s loaded, no active port%s", v->path,
			getenv("NCCL_IB_HCA") || getenv("FABRICLAB_IB_HCA") ?
				" that NCCL_IB_HCA/FABRICLAB_IB_HCA selects" : "");
	if (!rc && ndevs)
		rc = ib_side_init();
	if (!rc && ndevs)
		FL_INFO("ib transport: %d device(s) from %s, %d QP(s) per connection", ndevs,
			v->path, ib_cfg.nqps);
	if (rc)
		ndevs = 0;
	return rc;
}

static int ib_init(void)
{
	pthread_mutex_lock(&init_lock);
	if (!initialized) {
		fl_clock_init();
		init_status = discover();
		initialized = 1;
	}
	pthread_mutex_unlock(&init_lock);
	return init_status;
}

/*
 * NCCL unloads the plugin when its last communicator is gone: the HCAs and
 * what they hold go with it, or every load would leak a device context.
 */
__attribute__((destructor)) static void ib_unload(void)
{
	pthread_mutex_lock(&init_lock);
	if (initialized && ndevs)
		ib_devices_release(devs, ndevs);
	ndevs = 0;
	pthread_mutex_unlock(&init_lock);
}

static int ib_devices(int *ndev)
{
	pthread_mutex_lock(&init_lock);
	*ndev = initialized && !init_status ? ndevs : 0;
	pthread_mutex_unlock(&init_lock);
	return FL_OK;
}

static int check_dev(int dev)
{
	if (dev < 0 || dev >= ndevs)
		return fl_fail(FL_ERR_INTERNAL, "ib device %d does not exist (%d devices)", dev,
			       ndevs);
	return FL_OK;
}

static int ib_get_properties(int dev, struct fl_props *props)
{
	const struct ib_device *d;
	int rc = check_dev(dev);

	if (rc)
		return rc;
	d = &devs[dev];
	memset(props, 0, sizeof(*props));
	props->name = d->name;
	props->pci_path = d->pci_path;
	props->guid = d->hca->attr.node_guid;
	props->ptr_support = d->ptr_support;
	props->reg_is_global = 1;
	props->speed_mbps = d->speed_mbps;
	props->port = d->port;
	props->max_comms = d->hca->attr.max_qp > 0 ? d->hca->attr.max_qp : 65536;
	props->max_recvs = FL_MAX_RECVS;
	props->vdev_count = 1;
	props->vdevs[0] = dev;
	props->max_p2p_bytes = IB_MAX_P2P_BYTES;
	props->max_coll_bytes = IB_MAX_P2P_BYTES;
	props->max_multi_request_size = 1;
	props->rail_id = -1;
	props->plane_id = -1;
	/* as NCCL's IB on mlx5 DataDirect (2.30.7 src/transport/net_ib/init.cc:554-557) */
	props->force_flush = d->data_direct;
	props->link_layer = d->link_layer == IBV_LINK_LAYER_ETHERNET ? FL_LINK_ETHERNET
								      : FL_LINK_INFINIBAND;
	return FL_OK;
}

static int ib_listen(int dev, const struct fl_endpoint *self, void *handle, void **listen_comm)
{
	int rc = check_dev(dev);

	*listen_comm = NULL;
	return rc ? rc : ib_listen_open(&devs[dev], self, handle, listen_comm);
}

static int ib_connect(int dev, const struct fl_endpoint *self, void *handle, void **send_comm)
{
	int rc = check_dev(dev);

	*send_comm = NULL;
	return rc ? rc : ib_connect_step(&devs[dev], self, handle, send_comm);
}

static int ib_peer(void *comm, struct fl_endpoint *peer)
{
	if (!comm)
		return fl_fail(FL_ERR_INTERNAL, "peer of a NULL comm");
	*peer = ((struct ib_link *)comm)->peer;
	return FL_OK;
}

static int ib_reg_mr(void *comm, void *data, size_t size, int type, void **mhandle)
{
	struct ib_link *l = comm;
	struct ib_mr *m;
	int rc;

	*mhandle = NULL;
	if (!l)
		return fl_fail(FL_ERR_INTERNAL, "regMr on a NULL comm");
	if (type != FL_PTR_HOST && !(type == FL_PTR_CUDA && (l->dev->ptr_support & FL_PTR_CUDA)))
		return fl_fail(FL_ERR_INTERNAL, "%s cannot register memory of type %d (GPUDirect "
			       "needs nvidia-peermem)", l->dev->dev_name, type);
	rc = ib_mr_get(&l->dev->hca->mrs, data, size, &m);
	if (rc)
		return rc;
	if (!m->type)
		m->type = type;
	*mhandle = m;
	return FL_OK;
}

static int ib_reg_mr_dmabuf(void *comm, void *data, size_t size, int type, uint64_t offset,
			    int fd, void **mhandle)
{
	struct ib_link *l = comm;
	struct ib_mr *m;
	struct ibv_mr *mr;

	*mhandle = NULL;
	if (!l)
		return fl_fail(FL_ERR_INTERNAL, "regMrDmaBuf on a NULL comm");
	if (!(l->dev->ptr_support & FL_PTR_DMABUF))
		return fl_fail(FL_ERR_INTERNAL, "%s cannot register dma-bufs", l->dev->dev_name);
	m = calloc(1, sizeof(*m));
	if (!m)
		return fl_fail(FL_ERR_SYSTEM, "out of memory for a registration");
	mr = ib_verbs->reg_dmabuf_mr(l->dev->hca->pd, offset, size, (uintptr_t)data, fd,
				     ib_data_access());
	if (!mr) {
		free(m);
		return fl_fail(FL_ERR_SYSTEM, "ibv_reg_dmabuf_mr of %zu bytes (fd %d) on %s: %m",
			       size, fd, l->dev->dev_name);
	}
	*m = (struct ib_mr){ .addr = (uintptr_t)data, .len = size, .refs = 1, .type = type,
			     .lkey = mr->lkey, .rkey = mr->rkey, .mr = mr };
	*mhandle = m;
	return FL_OK;
}

static int ib_dereg_mr(void *comm, void *mhandle)
{
	struct ib_link *l = comm;

	if (!l)
		return fl_fail(FL_ERR_INTERNAL, "deregMr on a NULL comm");
	return ib_mr_put(&l->dev->hca->mrs, mhandle);
}

static int ib_isend_checked(void *send_comm, void *data, size_t size, int tag, void *mhandle,
			    void **request)
{
	*request = NULL;
	if (!send_comm || ((struct ib_link *)send_comm)->kind != IB_REQ_SEND)
		return fl_fail(FL_ERR_INTERNAL, "isend on something not an ib send comm");
	return ib_isend(send_comm, data, size, tag, mhandle, request);
}

static int ib_irecv_checked(void *recv_comm, int n, void **data, size_t *sizes, int *tags,
			    void **mhandles, void **request)
{
	*request = NULL;
	if (!recv_comm || ((struct ib_link *)recv_comm)->kind != IB_REQ_RECV)
		return fl_fail(FL_ERR_INTERNAL, "irecv on something not an ib recv comm");
	if (n < 1 || n > FL_MAX_RECVS)
		return fl_fail(FL_ERR_INTERNAL, "irecv of %d buffers (1..%d)", n, FL_MAX_RECVS);
	return ib_irecv(recv_comm, n, data, sizes, tags, (struct ib_mr **)mhandles, request);
}

static int ib_iflush_checked(void *recv_comm, int n, void **data, int *sizes, void **mhandles,
			     void **request)
{
	*request = NULL;
	if (!recv_comm || ((struct ib_link *)recv_comm)->kind != IB_REQ_RECV)
		return fl_fail(FL_ERR_INTERNAL, "iflush on something not an ib recv comm");
	if (n < 1 || n > FL_MAX_RECVS)
		return fl_fail(FL_ERR_INTERNAL, "iflush of %d buffers (1..%d)", n, FL_MAX_RECVS);
	return ib_iflush(recv_comm, n, data, sizes, (struct ib_mr **)mhandles, request);
}

static int ib_test(void *request, int *done, int *sizes, struct fl_xfer_times *times)
{
	enum ib_req_kind *kind = request;

	*done = 0;
	if (!kind)
		return fl_fail(FL_ERR_INTERNAL, "test of a NULL request");
	switch (*kind) {
	case IB_REQ_SEND:
		return ib_test_send(request, done, sizes, times);
	case IB_REQ_RECV:
		return ib_test_recv(request, done, sizes, times);
	case IB_REQ_FLUSH:
		return ib_test_flush(request, done, sizes, times);
	}
	return fl_fail(FL_ERR_INTERNAL, "test of something not an ib request");
}

static void ib_set_pacer(void *comm, struct fl_pacer *pacer)
{
	if (comm)
		ib_pace_attach(comm, pacer);
}

static int ib_close_send(void *send_comm)
{
	if (!send_comm)
		return FL_OK;
	ib_send_comm_fini(send_comm);
	free(send_comm);
	return FL_OK;
}

static int ib_close_recv(void *recv_comm)
{
	if (!recv_comm)
		return FL_OK;
	ib_recv_comm_fini(recv_comm);
	free(recv_comm);
	return FL_OK;
}

const struct fl_transport fl_ib_transport = {
	.name = "ib",
	.init = ib_init,
	.devices = ib_devices,
	.get_properties = ib_get_properties,
	.listen = ib_listen,
	.connect = ib_connect,
	.accept = ib_listen_accept,
	.peer = ib_peer,
	.reg_mr = ib_reg_mr,
	.reg_mr_dmabuf = ib_reg_mr_dmabuf,
	.dereg_mr = ib_dereg_mr,
	.isend = ib_isend_checked,
	.irecv = ib_irecv_checked,
	.iflush = ib_iflush_checked,
	.test = ib_test,
	.set_pacer = ib_set_pacer,
	.close_send = ib_close_send,
	.close_recv = ib_close_recv,
	.close_listen = ib_listen_close,
};
