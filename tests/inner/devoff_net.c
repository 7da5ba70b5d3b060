/*
 * A test artifact, never installed: an NCCL net plugin with every optional
 * device-offload entry (makeVDevice, getDeviceMr, irecvConsumed, device
 * handles from connect/accept), exporting one ncclNetPlugin_vN (DEVOFF_VERSION
 * 9 or 12). It moves bytes between comms of one process (listen and connect in
 * the same address space) and records what it was called with, so a test can
 * check that fabriclab's ext transport passed every argument through and gave
 * back every result unchanged. Device 0 says it unpacks on the GPU
 * (netDeviceType UNPACK, version 7); device 1 is host-driven.
 * Its accept behaves as an unpacking plugin toward NCCL: NCCL allocates the
 * receive device handle of an UNPACK v7 device itself and passes it to every
 * accept call ("if *recvDevComm points to a valid object, NCCL is requesting
 * offload": NCCL 2.30.7 src/include/plugin/net/net_v12.h:94-100;
 * src/transport/net.cc:817-836 allocates, 1062-1071 passes, 1083-1085 reads it
 * after accept). When asked so, it fills NCCL's object in place and records the
 * pointer it was given; when not asked (a NULL *recvDevComm), it hands back its own.
 * devoff_record (exported) is what it saw; devoff_fail_* make a call fail.
 */
#include <stdint.h>
#include <string.h>

#include "devoff_record.h"
#include "plugin/abi/nccl_abi.h"

#ifndef DEVOFF_VERSION
#error "DEVOFF_VERSION (9 or 12) must be defined"
#endif
#define V DEVOFF_VERSION
#define EXPORT __attribute__((visibility("default")))
#define NDEV 2
#define HANDLE_MAGIC 0x4445564f46460a01ull
#define POOL 64
#define QUEUE 64

EXPORT struct devoff_record devoff_record;

struct dv_comm;

struct dv_req {
	struct dv_comm *comm;
	int used, send, done, bytes;
	void *data;
	size_t cap;
};

struct dv_comm {
	struct dv_comm *peer; /* the other end: the recv comm of a send comm and back */
	int dev;
	struct fl_abi_dev_handle devh;
	struct dv_req reqs[POOL];
	struct dv_req *queue[QUEUE]; /* sends not yet matched (on the recv comm) */
	unsigned head, tail;
	int mr_token;
};

struct dv_listen {
	int dev;
	struct dv_comm *pending; /* connected, not yet accepted */
};

static struct dv_listen listens[16];
static struct dv_comm comms[32];
static int nlistens, ncomms;
static fl_abi_logger_fn logger; /* kept as a plugin keeps it; devoff logs nothing */

static int dv_init_common(fl_abi_logger_fn log)
{
	logger = log;
	devoff_record.inits++;
	return 0;
}

static int dv_devices(int *ndev)
{
	*ndev = NDEV;
	return 0;
}

#define FILL_PROPS(p, dev)                                                          \
	do {                                                                        \
		memset((p), 0, sizeof(*(p)));                                       \
		(p)->name = (dev) == 0 ? "dv0" : (dev) == 1 ? "dv1" : "dvv";        \
		(p)->pci_path = "/sys/devices/pci0000:00/0000:00:07.0";             \
		(p)->guid = 0xd0ff00 + (uint64_t)(dev);                             \
		(p)->ptr_support = 0x3;                                             \
		(p)->speed = 200000;                                                \
		(p)->max_comms = 1024;                                              \
		(p)->max_recvs = 1;                                                 \
		(p)->net_device_type = (dev) == 1 ? FL_ABI_DEVICE_HOST : FL_ABI_DEVICE_UNPACK; \
		(p)->net_device_version = (dev) == 1 ? 0 : 7;                       \
		(p)->vprops.ndevs = (dev) < NDEV ? 1 : devoff_record.vdev_ndevs;    \
		for (int i_ = 0; i_ < (p)->vprops.ndevs; i_++)                      \
			(p)->vprops.devs[i_] = (dev) < NDEV ? (dev) :               \
						devoff_record.vdev_devs[i_];        \
		(p)->max_p2p_bytes = 1ull << 30;                                    \
		(p)->max_coll_bytes = 1ull << 29;                                   \
	} while (0)

static int dv_listen(int dev, void *handle, void **listen_comm)
{
	struct dv_listen *l;
	uint64_t magic = HANDLE_MAGIC;

	if (nlistens == (int)(sizeof(listens) / sizeof(listens[0])))
		return 2;
	l = &listens[nlistens++];
	l->dev = dev;
	memcpy(handle, &magic, sizeof(magic));
	memcpy((char *)handle + 8, &l, sizeof(l)); /* 16 bytes: fabriclab may use the tail */
	*listen_comm = l;
	return 0;
}

static struct dv_comm *new_comm(int dev, int send)
{
	struct dv_comm *c;

	if (ncomms == (int)(sizeof(comms) / sizeof(comms[0])))
		return NULL;
	c = &comms[ncomms++];
	c->dev = dev;
	c->devh = (struct fl_abi_dev_handle){
		.net_device_type = dev == 1 ? FL_ABI_DEVICE_HOST : FL_ABI_DEVICE_UNPACK,
		.net_device_version = dev == 1 ? 0 : 7,
		.handle = c, .size = send ? 64 : 128, .needs_proxy_progress = 1,
	};
	return c;
}

/* Needs two calls, as non-blocking plugins may. Device 1 hands back no device handle. */
static int dv_connect(int dev, void *handle, void **send_comm, struct fl_abi_dev_handle **dc)
{
	static const void *half_done;
	struct dv_listen *l;
	struct dv_comm *s, *r;
	uint64_t magic;

	*send_comm = NULL;
	memcpy(&magic, handle, sizeof(magic));
	memcpy(&l, (char *)handle + 8, sizeof(l));
	if (magic != HANDLE_MAGIC || l->dev != dev)
		return 3;
	if (half_done != handle) {
		half_done = handle;
		return 0;
	}
	half_done = NULL;
	s = new_comm(dev, 1);
	r = new_comm(dev, 0);
	if (!s || !r)
		return 2;
	s->peer = r;
	r->peer = s;
	l->pending = r;
	*send_comm = s;
	if (dc)
		*dc = dev == 1 ? NULL : &s->devh;
	devoff_record.send_comm = s;
	devoff_record.send_devh = dev == 1 ? NULL : &s->devh;
	return 0;
}

/* What NCCL passed in *recvDevComm, call after call: the same pointer every time. */
static void note_asked(const struct fl_abi_dev_handle *asked)
{
	if (devoff_record.accept_calls++ && asked != devoff_record.recv_devh_asked)
		devoff_record.accept_asked_changed++;
	devoff_record.recv_devh_asked = asked;
}

static int dv_accept(void *listen_comm, void **recv_comm, struct fl_abi_dev_handle **dc)
{
	struct dv_listen *l = listen_comm;
	struct dv_comm *r = l->pending;
	struct fl_abi_dev_handle *asked = dc ? *dc : NULL;

	note_asked(asked);
	*recv_comm = NULL;
	if (!r)
		return 0;
	l->pending = NULL;
	*recv_comm = r;
	if (asked && r->dev != 1) { /* NCCL's own object: filled, the pointer kept */
		asked->handle = r->devh.handle;
		asked->size = r->devh.size;
		asked->needs_proxy_progress = r->devh.needs_proxy_progress;
		devoff_record.recv_devh = asked;
	} else {
		if (dc)
			*dc = r->dev == 1 ? NULL : &r->devh;
		devoff_record.recv_devh = r->dev == 1 ? NULL : &r->devh;
	}
	devoff_record.recv_comm = r;
	return 0;
}

static int dv_reg_mr(void *comm, void *data, size_t size, int type, void **mhandle)
{
	struct dv_comm *c = comm;

	(void)data, (void)size;
	devoff_record.reg_types |= type;
	*mhandle = &c->mr_token;
	return 0;
}

static int dv_dereg_mr(void *comm, void *mhandle)
{
	(void)comm, (void)mhandle;
	return 0;
}

static struct dv_req *new_req(struct dv_comm *c)
{
	for (int i = 0; i < POOL; i++)
		if (!c->reqs[i].used) {
			memset(&c->reqs[i], 0, sizeof(c->reqs[i]));
			c->reqs[i].used = 1;
			c->reqs[i].comm = c;
			return &c->reqs[i];
		}
	return NULL;
}

static int dv_isend_common(void *send_comm, void *data, size_t size, int tag, void *phandle,
			   void **request)
{
	struct dv_comm *s = send_comm, *r = s->peer;
	struct dv_req *q;

	*request = NULL;
	if (r->tail - r->head == QUEUE || !(q = new_req(s)))
		return 0; /* not now */
	q->send = 1;
	q->data = data;
	q->bytes = (int)size;
	r->queue[r->tail++ % QUEUE] = q;
	devoff_record.isends++;
	devoff_record.last_send_tag = tag;
	devoff_record.last_send_phandle = phandle;
	*request = q;
	return 0;
}

static int dv_irecv_common(void *recv_comm, int n, void **data, size_t *sizes, int *tags,
			   void **phandles, void **request)
{
	struct dv_comm *r = recv_comm;
	struct dv_req *q;

	*request = NULL;
	if (n != 1)
		return 4;
	if (!(q = new_req(r)))
		return 0;
	q->data = data[0];
	q->cap = sizes[0];
	devoff_record.irecvs++;
	devoff_record.last_recv_tag = tags[0];
	devoff_record.last_recv_phandle = phandles ? phandles[0] : NULL;
	devoff_record.last_irecv_req = q;
	*request = q;
	return 0;
}

/*
 * A receive takes the oldest unmatched send; the send is done once taken. A
 * done receive stays allocated until irecvConsumed, as GPU-unpack plugins keep
 * their bounce buffer until the GPU has read it.
 */
static int dv_test(void *request, int *done, int *sizes)
{
	struct dv_req *q = request, *s;
	struct dv_comm *r = q->comm;

	devoff_record.tests++;
	*done = 0;
	if (!q->used)
		return 3;
	if (q->send) {
		if ((*done = q->done)) {
			if (sizes)
				sizes[0] = q->bytes;
			q->used = 0;
		}
		return 0;
	}
	if (!q->done) {
		if (r->head == r->tail)
			return 0;
		s = r->queue[r->head++ % QUEUE];
		if ((size_t)s->bytes > q->cap)
			return 5;
		memcpy(q->data, s->data, (size_t)s->bytes);
		q->bytes = s->bytes;
		s->done = 1;
		q->done = 1;
	}
	*done = 1;
	if (sizes)
		sizes[0] = q->bytes;
	return 0;
}

static int dv_irecv_consumed(void *recv_comm, int n, void *request)
{
	struct dv_req *q = request;

	devoff_record.consumed_calls++;
	devoff_record.consumed_comm = recv_comm;
	devoff_record.consumed_n = n;
	devoff_record.consumed_req = request;
	if (!q->used || !q->done || q->comm != recv_comm) {
		devoff_record.consumed_early++;
		return 3;
	}
	q->used = 0;
	return 0;
}

static int dv_get_device_mr(void *comm, void *mhandle, void **dptr_mhandle)
{
	devoff_record.dmr_calls++;
	devoff_record.dmr_comm = comm;
	devoff_record.dmr_mhandle = mhandle;
	*dptr_mhandle = DEVOFF_DPTR;
	return 0;
}

#define MAKE_VDEVICE(props_t)                                                   \
	static int dv_make_vdevice(int *d, props_t *props)                      \
	{                                                                       \
		devoff_record.vdev_calls++;                                     \
		devoff_record.vdev_ndevs = props->ndevs;                        \
		for (int i = 0; i < props->ndevs && i < 8; i++) {               \
			devoff_record.vdev_devs[i] = props->devs[i];            \
			if (props->devs[i] == DEVOFF_BAD_DEV)                   \
				return DEVOFF_VDEV_ERROR;                       \
		}                                                               \
		*d = DEVOFF_VDEV_RESULT;                                        \
		return 0;                                                       \
	}

static int dv_close(void *comm)
{
	(void)comm;
	return 0;
}

static int dv_iflush(void *comm, int n, void **data, int *sizes, void **mhs, void **request)
{
	(void)comm, (void)n, (void)data, (void)sizes, (void)mhs;
	*request = NULL;
	return 0;
}

#if V == 12
static char ctx_token;

MAKE_VDEVICE(struct fl_abi_vprops_v12)

static int dv_init(void **ctx, uint64_t comm_id, struct fl_abi_comm_config *config,
		   fl_abi_logger_fn log, fl_abi_prof_callback_fn prof)
{
	(void)comm_id, (void)config, (void)prof;
	*ctx = &ctx_token;
	return dv_init_common(log);
}

static int dv_props(int dev, struct fl_abi_props_v12 *p)
{
	FILL_PROPS(p, dev);
	p->max_multi_request_size = 1;
	p->rail_id = -1;
	p->plane_id = -1;
	return 0;
}

static int dv_listen_ctx(void *ctx, int dev, void *handle, void **listen_comm)
{
	return ctx == &ctx_token ? dv_listen(dev, handle, listen_comm) : 3;
}

static int dv_connect_ctx(void *ctx, int dev, void *handle, void **send_comm,
			  struct fl_abi_dev_handle **dc)
{
	return ctx == &ctx_token ? dv_connect(dev, handle, send_comm, dc) : 3;
}

static int dv_isend(void *c, void *data, size_t size, int tag, void *mh, void *ph, void **req)
{
	(void)mh;
	return dv_isend_common(c, data, size, tag, ph, req);
}

static int dv_irecv(void *c, int n, void **data, size_t *sizes, int *tags, void **mhs,
		    void **phs, void **req)
{
	(void)mhs;
	return dv_irecv_common(c, n, data, sizes, tags, phs, req);
}

static int dv_finalize(void *ctx)
{
	return ctx == &ctx_token ? 0 : 3;
}

EXPORT const struct fl_abi_net_v12 ncclNetPlugin_v12 = {
	.name = "devoff", .init = dv_init, .devices = dv_devices, .get_properties = dv_props,
	.listen = dv_listen_ctx, .connect = dv_connect_ctx, .accept = dv_accept,
	.reg_mr = dv_reg_mr, .dereg_mr = dv_dereg_mr, .isend = dv_isend, .irecv = dv_irecv,
	.iflush = dv_iflush, .test = dv_test, .close_send = dv_close, .close_recv = dv_close,
	.close_listen = dv_close, .get_device_mr = dv_get_device_mr,
	.irecv_consumed = dv_irecv_consumed, .make_vdevice = dv_make_vdevice,
	.finalize = dv_finalize,
};
#elif V == 9
MAKE_VDEVICE(struct fl_abi_vprops_v9)

static int dv_init(fl_abi_logger_fn log)
{
	return dv_init_common(log);
}

static int dv_props(int dev, struct fl_abi_props_v9 *p)
{
	FILL_PROPS(p, dev);
	return 0;
}

static int dv_isend(void *c, void *data, size_t size, int tag, void *mh, void **req)
{
	(void)mh;
	return dv_isend_common(c, data, size, tag, NULL, req);
}

static int dv_irecv(void *c, int n, void **data, size_t *sizes, int *tags, void **mhs,
		    void **req)
{
	(void)mhs;
	return dv_irecv_common(c, n, data, sizes, tags, NULL, req);
}

EXPORT const struct fl_abi_net_v9 ncclNetPlugin_v9 = {
	.name = "devoff", .init = dv_init, .devices = dv_devices, .get_properties = dv_props,
	.listen = dv_listen, .connect = dv_connect, .accept = dv_accept,
	.reg_mr = dv_reg_mr, .dereg_mr = dv_dereg_mr, .isend = dv_isend, .irecv = dv_irecv,
	.iflush = dv_iflush, .test = dv_test, .close_send = dv_close, .close_recv = dv_close,
	.close_listen = dv_close, .get_device_mr = dv_get_device_mr,
	.irecv_consumed = dv_irecv_consumed, .make_vdevice = dv_make_vdevice,
};
#else
#error "devoff is built for v9 or v12"
#endif
