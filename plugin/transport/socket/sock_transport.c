/*
 * The socket transport: TCP over the interfaces NCCL would pick, one control
 * stream plus K data streams per connection. This file is the function table
 * and the per-process state (configuration and devices).
 */
#include <pthread.h>
#include <string.h>

#include "base/clock.h"
#include "base/error.h"
#include "base/log.h"
#include "sock_comm.h"
#include "sock_iface.h"
#include "sock_listen.h"
#include "sock_sys.h"
#include "transport/transport.h"

static pthread_mutex_t init_lock = PTHREAD_MUTEX_INITIALIZER;
static int initialized;
static int ndevs;
static struct sock_iface devs[SOCK_MAX_DEVS];

/* Host memory needs no registration; a non-NULL token says "registered". */
static const char host_mhandle = 'H';

static void log_devices(void)
{
	for (int i = 0; i < ndevs; i++) {
		char addr[SOCK_ADDR_STRLEN];

		sock_addr_format((struct sockaddr *)&devs[i].addr, addr, sizeof(addr));
		FL_INFO("socket device %d: %s %s, %d Mbps, pci %s", i, devs[i].name, addr,
			devs[i].speed_mbps, devs[i].pci_path ? devs[i].pci_path : "none");
	}
	FL_INFO("socket transport: %d data streams per connection, inline <= %zu B, "
		"pieces >= %zu B",
		sock_cfg.nstreams, sock_cfg.inline_max, sock_cfg.min_chunk);
}

static int sock_init(void)
{
	int rc = FL_OK;

	pthread_mutex_lock(&init_lock);
	if (!initialized) {
		fl_clock_init();
		rc = sock_config_load(&sock_cfg);
		if (!rc)
			rc = sock_iface_discover(&sock_cfg, devs, SOCK_MAX_DEVS, &ndevs);
		if (!rc) {
			initialized = 1;
			log_devices();
		}
	}
	pthread_mutex_unlock(&init_lock);
	return rc;
}

static int sock_devices(int *ndev)
{
	pthread_mutex_lock(&init_lock);
	*ndev = initialized ? ndevs : 0;
	pthread_mutex_unlock(&init_lock);
	return FL_OK;
}

static int check_dev(int dev)
{
	if (dev < 0 || dev >= ndevs)
		return fl_fail(FL_ERR_INTERNAL, "socket device %d does not exist (%d devices)", dev,
			       ndevs);
	return FL_OK;
}

static int sock_get_properties(int dev, struct fl_props *props)
{
	int rc = check_dev(dev);

	if (rc)
		return rc;
	memset(props, 0, sizeof(*props));
	props->name = devs[dev].name;
	props->pci_path = devs[dev].pci_path;
	props->guid = (uint64_t)dev;
	props->ptr_support = FL_PTR_HOST;
	props->speed_mbps = devs[dev].speed_mbps;
	props->max_comms = 65536;
	props->max_recvs = FL_MAX_RECVS;
	props->vdev_count = 1;
	props->vdevs[0] = dev;
	props->max_p2p_bytes = FL_MAX_NET_BYTES;
	props->max_coll_bytes = FL_MAX_COLL_BYTES;
	props->max_multi_request_size = 1;
	props->rail_id = -1;
	props->plane_id = -1;
	return FL_OK;
}

static int sock_listen(int dev, const struct fl_endpoint *self, void *handle, void **listen_comm)
{
	int rc = check_dev(dev);

	*listen_comm = NULL;
	return rc ? rc : sock_listen_open(&devs[dev], self, handle, listen_comm);
}

static int sock_connect(int dev, const struct fl_endpoint *self, void *handle, void **send_comm)
{
	int rc = check_dev(dev);

	*send_comm = NULL;
	return rc ? rc : sock_connect_step(self, handle, send_comm);
}

static int sock_peer(void *comm, struct fl_endpoint *peer)
{
	if (!comm)
		return fl_fail(FL_ERR_INTERNAL, "peer of a NULL comm");
	*peer = ((struct sock_link *)comm)->peer;
	return FL_OK;
}

static int sock_reg_mr(void *comm, void *data, size_t size, int type, void **mhandle)
{
	(void)comm;
	(void)data;
	(void)size;
	*mhandle = NULL;
	if (type != FL_PTR_HOST)
		return fl_fail(FL_ERR_INTERNAL,
			       "socket transport registers host memory only (type %d)", type);
	*mhandle = (void *)&host_mhandle;
	return FL_OK;
}

static int sock_reg_mr_dmabuf(void *comm, void *data, size_t size, int type, uint64_t offset,
			      int fd, void **mhandle)
{
	(void)comm;
	(void)data;
	(void)size;
	(void)type;
	(void)offset;
	(void)fd;
	*mhandle = NULL;
	return fl_fail(FL_ERR_INTERNAL, "socket transport cannot register dma-buf memory");
}

static int sock_dereg_mr(void *comm, void *mhandle)
{
	(void)comm;
	(void)mhandle;
	return FL_OK;
}

static int sock_isend_checked(void *send_comm, void *data, size_t size, int tag, void *mhandle,
			      void **request)
{
	*request = NULL;
	if (!send_comm)
		return fl_fail(FL_ERR_INTERNAL, "isend on a NULL comm");
	return sock_isend(send_comm, data, size, tag, mhandle, request);
}

static int sock_irecv_checked(void *recv_comm, int n, void **data, size_t *sizes, int *tags,
			      void **mhandles, void **request)
{
	*request = NULL;
	if (!recv_comm)
		return fl_fail(FL_ERR_INTERNAL, "irecv on a NULL comm");
	return sock_irecv(recv_comm, n, data, sizes, tags, mhandles, request);
}

static int sock_iflush(void *recv_comm, int n, void **data, int *sizes, void **mhandles,
		       void **request)
{
	(void)recv_comm;
	(void)n;
	(void)data;
	(void)sizes;
	(void)mhandles;
	*request = NULL;
	return fl_fail(FL_ERR_INTERNAL, "socket transport: iflush is never needed for host memory");
}

void sock_link_set_pacer(struct sock_link *link, struct fl_pacer *pacer)
{
	link->pacer = pacer;
	for (unsigned i = 0; i < link->rules.nstreams; i++)
		sock_stream_set_pacer(&link->streams[i], pacer);
}

static void sock_set_pacer(void *comm, struct fl_pacer *pacer)
{
	if (comm)
		sock_link_set_pacer(comm, pacer);
}

static int sock_test(void *request, int *done, int *sizes, struct fl_xfer_times *times)
{
	struct sock_req *r = request;

	*done = 0;
	if (!r)
		return fl_fail(FL_ERR_INTERNAL, "test of a NULL request");
	if (r->kind == SOCK_SEND)
		return sock_test_send((struct sock_send_req *)r, done, sizes, times);
	return sock_test_recv((struct sock_recv_req *)r, done, sizes, times);
}

const struct fl_transport fl_socket_transport = {
	.name = "socket",
	.init = sock_init,
	.devices = sock_devices,
	.get_properties = sock_get_properties,
	.listen = sock_listen,
	.connect = sock_connect,
	.accept = sock_listen_accept,
	.peer = sock_peer,
	.reg_mr = sock_reg_mr,
	.reg_mr_dmabuf = sock_reg_mr_dmabuf,
	.dereg_mr = sock_dereg_mr,
	.isend = sock_isend_checked,
	.irecv = sock_irecv_checked,
	.iflush = sock_iflush,
	.test = sock_test,
	.set_pacer = sock_set_pacer,
	.close_send = sock_close_send,
	.close_recv = sock_close_recv,
	.close_listen = sock_listen_close,
};
