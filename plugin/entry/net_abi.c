/*
 * The ncclNetPlugin_v6..v12 tables NCCL looks up, each a thin adapter from one
 * ABI version to the wrap layer's single (v12-shaped) interface. Slots whose
 * signature already matches the wrap layer point straight at it; the others
 * convert sizes, supply the context older versions lack, or narrow properties.
 * The optional device-offload slots are filled at the first init, and only
 * when the transport forwards to a plugin that has them (net_abi.h).
 */
#include "net_abi.h"

#include <pthread.h>

#include "base/call_config.h"
#include "base/error.h"
#include "base/log.h"
#include "wrap/wrap.h"

#define FL_ABI_EXPORT __attribute__((visibility("default")))
#define FL_ABI_NAME "fabriclab"

/* v6-v10 have no per-communicator context: NCCL calls init once per process. */
static void *process_ctx;

/* ---- init / finalize ---- */

/* What each NCCL version can call of the optional entries (reference nccl-abi.md 1.6). */
#define CALLABLE_V6 0u
#define CALLABLE_V7 (FL_OFFLOAD_DEVICE_MR | FL_OFFLOAD_RECV_CONSUMED)
#define CALLABLE_V9 (CALLABLE_V7 | FL_OFFLOAD_VDEVICE)

static pthread_mutex_t offload_lock = PTHREAD_MUTEX_INITIALIZER;
static int offload_bound;

static void bind_offload_slots(unsigned has);

/* Once, after the first successful init, before NCCL reads any optional slot. */
static int offload_once(int rc, unsigned callable)
{
	if (rc)
		return rc;
	pthread_mutex_lock(&offload_lock);
	if (!offload_bound) {
		bind_offload_slots(fl_wrap_offload(callable));
		offload_bound = 1;
	}
	pthread_mutex_unlock(&offload_lock);
	return FL_OK;
}

static int init_v6(fl_abi_logger_fn logger)
{
	return offload_once(fl_wrap_init_process(&process_ctx, logger), CALLABLE_V6);
}

static int init_v7(fl_abi_logger_fn logger)
{
	return offload_once(fl_wrap_init_process(&process_ctx, logger), CALLABLE_V7);
}

static int init_v9(fl_abi_logger_fn logger)
{
	return offload_once(fl_wrap_init_process(&process_ctx, logger), CALLABLE_V9);
}

/* The wrap layer emits no profiler events; the callback is kept for a wrapped plugin (ext). */
static int init_v10(fl_abi_logger_fn logger, fl_abi_prof_callback_fn prof)
{
	fl_log_set_profiler(prof);
	return offload_once(fl_wrap_init_process(&process_ctx, logger), CALLABLE_V9);
}

static int init_v11(void **ctx, uint64_t comm_id, struct fl_abi_comm_config *config,
		    fl_abi_logger_fn logger, fl_abi_prof_callback_fn prof)
{
	int traffic_class = config ? config->traffic_class : FL_ABI_TRAFFIC_CLASS_UNDEF;

	fl_log_set_profiler(prof);
	if (!ctx)
		return fl_fail(FL_ERR_INTERNAL, "init: NULL ctx pointer");
	/* Some NCCL releases call finalize(ctx) even after a failed init. */
	*ctx = NULL;
	return offload_once(fl_wrap_init(ctx, comm_id, traffic_class, logger), CALLABLE_V9);
}

static int finalize_v11(void *ctx)
{
	return ctx ? fl_wrap_finalize(ctx) : FL_OK;
}

/*
 * The hints (peers and flows per op) tune a transport that spreads traffic
 * over several sockets or QPs: a wrapped plugin (ext) gets them unchanged;
 * our own transports use a fixed layout and accept and ignore them.
 */
static int set_net_attr_v11(void *ctx, struct fl_abi_net_attr *attr)
{
	return fl_wrap_set_net_attr(ctx, attr);
}

/* ---- properties: narrow the v12-shaped fl_props into each version ---- */

/* NCCL rejects a v9+ device with no physical device behind it or a zero size cap. */
static int get_props(int dev, struct fl_props *p)
{
	int rc;

	*p = (struct fl_props){ 0 };
	rc = fl_wrap_get_properties(dev, p);
	if (rc != FL_OK)
		return rc;
	if (p->vdev_count <= 0) {
		p->vdev_count = 1;
		p->vdevs[0] = dev;
	}
	if (p->max_p2p_bytes == 0)
		p->max_p2p_bytes = FL_MAX_NET_BYTES;
	if (p->max_coll_bytes == 0)
		p->max_coll_bytes = FL_MAX_COLL_BYTES;
	if (p->max_multi_request_size <= 0)
		p->max_multi_request_size = 1;
	return FL_OK;
}

/* Copies the fields every version has; the macro works on any props struct. */
#define FL_FILL_V6_FIELDS(out, p)                        \
	do {                                             \
		(out)->name = (char *)(p)->name;         \
		(out)->pci_path = (char *)(p)->pci_path; \
		(out)->guid = (p)->guid;                 \
		(out)->ptr_support = (p)->ptr_support;   \
		(out)->speed = (p)->speed_mbps;          \
		(out)->port = (p)->port;                 \
		(out)->latency = (p)->latency_us;        \
		(out)->max_comms = (p)->max_comms;       \
		(out)->max_recvs = (p)->max_recvs;       \
	} while (0)

/* v7+: host-driven, unless a wrapped plugin offloads to the GPU (ext passes its type on). */
#define FL_FILL_DEVICE_TYPE(out, p)                                     \
	do {                                                            \
		(out)->net_device_type = (p)->net_device_type;          \
		(out)->net_device_version = (p)->net_device_version;    \
	} while (0)

/* A virtual NIC fusing more devices than the version can list keeps the first ones. */
static int vdevs_that_fit(const struct fl_props *p, int max)
{
	return p->vdev_count < max ? p->vdev_count : max;
}

#define FL_FILL_V9_FIELDS(out, p, max_vdevs)                                \
	do {                                                                \
		FL_FILL_V6_FIELDS(out, p);                                  \
		FL_FILL_DEVICE_TYPE(out, p);                                \
		(out)->reg_is_global = (p)->reg_is_global;                  \
		(out)->force_flush = (p)->force_flush;                      \
		(out)->vprops.ndevs = vdevs_that_fit(p, max_vdevs);         \
		for (int i_ = 0; i_ < (out)->vprops.ndevs; i_++)            \
			(out)->vprops.devs[i_] = (p)->vdevs[i_];            \
		(out)->max_p2p_bytes = (p)->max_p2p_bytes;                  \
		(out)->max_coll_bytes = (p)->max_coll_bytes;                \
	} while (0)

/* v6 has no device handles: NCCL would treat GPU-side data as if it were in place. */
static int get_properties_v6(int dev, struct fl_abi_props_v6 *props)
{
	struct fl_props p;
	int rc = get_props(dev, &p);

	if (rc != FL_OK)
		return rc;
	if (p.net_device_type != FL_ABI_DEVICE_HOST)
		return fl_fail(FL_ERR_INTERNAL, "getProperties(%d): device type %d offloads to "
			       "the GPU, which NCCL's net ABI v6 cannot drive (v7+ can)", dev,
			       p.net_device_type);
	FL_FILL_V6_FIELDS(props, &p);
	return FL_OK;
}

static int get_properties_v7(int dev, struct fl_abi_props_v7 *props)
{
	struct fl_props p;
	int rc = get_props(dev, &p);

	if (rc != FL_OK)
		return rc;
	FL_FILL_V6_FIELDS(props, &p);
	FL_FILL_DEVICE_TYPE(props, &p);
	return FL_OK;
}

static int get_properties_v8(int dev, struct fl_abi_props_v8 *props)
{
	struct fl_props p;
	int rc = get_props(dev, &p);

	if (rc != FL_OK)
		return rc;
	FL_FILL_V6_FIELDS(props, &p);
	FL_FILL_DEVICE_TYPE(props, &p);
	props->reg_is_global = p.reg_is_global;
	return FL_OK;
}

static int get_properties_v9(int dev, struct fl_abi_props_v9 *props)
{
	struct fl_props p;
	int rc = get_props(dev, &p);

	if (rc == FL_OK)
		FL_FILL_V9_FIELDS(props, &p, FL_ABI_VDEVS_V9);
	return rc;
}

static int get_properties_v11(int dev, struct fl_abi_props_v11 *props)
{
	struct fl_props p;
	int rc = get_props(dev, &p);

	if (rc != FL_OK)
		return rc;
	FL_FILL_V9_FIELDS(props, &p, FL_ABI_VDEVS_V9);
	props->max_multi_request_size = p.max_multi_request_size;
	return FL_OK;
}

static int get_properties_v12(int dev, struct fl_abi_props_v12 *props)
{
	struct fl_props p;
	int rc = get_props(dev, &p);

	if (rc != FL_OK)
		return rc;
	FL_FILL_V9_FIELDS(props, &p, FL_ABI_VDEVS_V12);
	props->max_multi_request_size = p.max_multi_request_size;
	props->rail_id = p.rail_id;
	props->plane_id = p.plane_id;
	return FL_OK;
}

/* ---- connection setup ---- */

static int listen_v6(int dev, void *handle, void **listen_comm)
{
	return fl_wrap_listen(process_ctx, dev, handle, listen_comm);
}

static int connect_v6(int dev, void *handle, void **send_comm)
{
	return fl_wrap_connect(process_ctx, dev, handle, send_comm);
}

/*
 * The device handle: NCCL's own pointer reaches the transport on every call.
 * For a receive on a GPU-unpack device NCCL allocates the handle and passes it
 * to each accept, asking for offload (a valid *recvDevComm); the plugin fills
 * it or sets the pointer, and NCCL reads it after the comm is there (2.30.7
 * src/transport/net.cc:817-836, 1062-1071, 1083-1085; net_v12.h:94-100). Our
 * own transports, host-driven, leave it as NCCL set it (as NCCL's own socket
 * and IB transports do); ext hands it to the plugin it wraps.
 */
static int connect_v7(int dev, void *handle, void **send_comm,
		      struct fl_abi_dev_handle **send_dev_comm)
{
	return fl_wrap_connect_dev(process_ctx, dev, handle, send_comm, (void **)send_dev_comm);
}

/*
 * Our own transports set no traffic class per connection; a plugin wrapped by
 * ext gets NCCL's config pointer itself with its connect (base/call_config.h).
 */
static int connect_v10(int dev, struct fl_abi_comm_config *config, void *handle, void **send_comm,
		       struct fl_abi_dev_handle **send_dev_comm)
{
	int rc;

	fl_call_set_connect_config(config);
	rc = connect_v7(dev, handle, send_comm, send_dev_comm);
	fl_call_set_connect_config(NULL);
	return rc;
}

static int connect_v11(void *ctx, int dev, void *handle, void **send_comm,
		       struct fl_abi_dev_handle **send_dev_comm)
{
	return fl_wrap_connect_dev(ctx, dev, handle, send_comm, (void **)send_dev_comm);
}

static int accept_v7(void *listen_comm, void **recv_comm, struct fl_abi_dev_handle **recv_dev_comm)
{
	return fl_wrap_accept_dev(listen_comm, recv_comm, (void **)recv_dev_comm);
}

/* ---- virtual devices: each version's vProps shape, passed on as a list ---- */

static int make_vdevice_v9(int *dev, struct fl_abi_vprops_v9 *props)
{
	if (!props || props->ndevs < 1 || props->ndevs > FL_ABI_VDEVS_V9)
		return fl_fail(FL_ERR_INTERNAL, "makeVDevice: ndevs %d outside 1..%d",
			       props ? props->ndevs : -1, FL_ABI_VDEVS_V9);
	return fl_wrap_make_vdevice(dev, props->ndevs, props->devs);
}

static int make_vdevice_v12(int *dev, struct fl_abi_vprops_v12 *props)
{
	if (!props || props->ndevs < 1 || props->ndevs > FL_ABI_VDEVS_V12)
		return fl_fail(FL_ERR_INTERNAL, "makeVDevice: ndevs %d outside 1..%d",
			       props ? props->ndevs : -1, FL_ABI_VDEVS_V12);
	return fl_wrap_make_vdevice(dev, props->ndevs, props->devs);
}

/* ---- memory registration ---- */

static int reg_mr_v6(void *comm, void *data, int size, int type, void **mhandle)
{
	if (size < 0)
		return fl_fail(FL_ERR_INTERNAL, "regMr: negative size %d", size);
	return fl_wrap_reg_mr(comm, data, (size_t)size, type, mhandle);
}

/* ---- data path ---- */

static int isend_v6(void *send_comm, void *data, int size, int tag, void *mhandle, void **request)
{
	if (size < 0)
		return fl_fail(FL_ERR_INTERNAL, "isend: negative size %d", size);
	return fl_wrap_isend(send_comm, data, (size_t)size, tag, mhandle, NULL, request);
}

static int irecv_v6(void *recv_comm, int n, void **data, int *sizes, int *tags, void **mhandles,
		    void **request)
{
	size_t wide[FL_MAX_RECVS];

	if (n < 1 || n > FL_MAX_RECVS)
		return fl_fail(FL_ERR_INTERNAL, "irecv: n=%d outside 1..%d", n, FL_MAX_RECVS);
	for (int i = 0; i < n; i++) {
		if (sizes[i] < 0)
			return fl_fail(FL_ERR_INTERNAL, "irecv: negative size %d", sizes[i]);
		wide[i] = (size_t)sizes[i];
	}
	return fl_wrap_irecv(recv_comm, n, data, wide, tags, mhandles, NULL, request);
}

static int isend_v9(void *send_comm, void *data, size_t size, int tag, void *mhandle,
		    void **request)
{
	return fl_wrap_isend(send_comm, data, size, tag, mhandle, NULL, request);
}

static int irecv_v9(void *recv_comm, int n, void **data, size_t *sizes, int *tags, void **mhandles,
		    void **request)
{
	return fl_wrap_irecv(recv_comm, n, data, sizes, tags, mhandles, NULL, request);
}

/* ---- the exported tables; the optional slots stay NULL unless bind_offload_slots fills them ---- */

FL_ABI_EXPORT struct fl_abi_net_v6 ncclNetPlugin_v6 = {
	.name = FL_ABI_NAME,
	.init = init_v6,
	.devices = fl_wrap_devices,
	.get_properties = get_properties_v6,
	.listen = listen_v6,
	.connect = connect_v6,
	.accept = fl_wrap_accept,
	.reg_mr = reg_mr_v6,
	.reg_mr_dmabuf = fl_wrap_reg_mr_dmabuf,
	.dereg_mr = fl_wrap_dereg_mr,
	.isend = isend_v6,
	.irecv = irecv_v6,
	.iflush = fl_wrap_iflush,
	.test = fl_wrap_test,
	.close_send = fl_wrap_close_send,
	.close_recv = fl_wrap_close_recv,
	.close_listen = fl_wrap_close_listen,
};

FL_ABI_EXPORT struct fl_abi_net_v7 ncclNetPlugin_v7 = {
	.name = FL_ABI_NAME,
	.init = init_v7,
	.devices = fl_wrap_devices,
	.get_properties = get_properties_v7,
	.listen = listen_v6,
	.connect = connect_v7,
	.accept = accept_v7,
	.reg_mr = reg_mr_v6,
	.reg_mr_dmabuf = fl_wrap_reg_mr_dmabuf,
	.dereg_mr = fl_wrap_dereg_mr,
	.isend = isend_v6,
	.irecv = irecv_v6,
	.iflush = fl_wrap_iflush,
	.test = fl_wrap_test,
	.close_send = fl_wrap_close_send,
	.close_recv = fl_wrap_close_recv,
	.close_listen = fl_wrap_close_listen,
	.get_device_mr = NULL,
	.irecv_consumed = NULL,
};

FL_ABI_EXPORT struct fl_abi_net_v8 ncclNetPlugin_v8 = {
	.name = FL_ABI_NAME,
	.init = init_v7,
	.devices = fl_wrap_devices,
	.get_properties = get_properties_v8,
	.listen = listen_v6,
	.connect = connect_v7,
	.accept = accept_v7,
	.reg_mr = fl_wrap_reg_mr,
	.reg_mr_dmabuf = fl_wrap_reg_mr_dmabuf,
	.dereg_mr = fl_wrap_dereg_mr,
	.isend = isend_v6,
	.irecv = irecv_v6,
	.iflush = fl_wrap_iflush,
	.test = fl_wrap_test,
	.close_send = fl_wrap_close_send,
	.close_recv = fl_wrap_close_recv,
	.close_listen = fl_wrap_close_listen,
	.get_device_mr = NULL,
	.irecv_consumed = NULL,
};

FL_ABI_EXPORT struct fl_abi_net_v9 ncclNetPlugin_v9 = {
	.name = FL_ABI_NAME,
	.init = init_v9,
	.devices = fl_wrap_devices,
	.get_properties = get_properties_v9,
	.listen = listen_v6,
	.connect = connect_v7,
	.accept = accept_v7,
	.reg_mr = fl_wrap_reg_mr,
	.reg_mr_dmabuf = fl_wrap_reg_mr_dmabuf,
	.dereg_mr = fl_wrap_dereg_mr,
	.isend = isend_v9,
	.irecv = irecv_v9,
	.iflush = fl_wrap_iflush,
	.test = fl_wrap_test,
	.close_send = fl_wrap_close_send,
	.close_recv = fl_wrap_close_recv,
	.close_listen = fl_wrap_close_listen,
	.get_device_mr = NULL,
	.irecv_consumed = NULL,
	.make_vdevice = NULL,
};

FL_ABI_EXPORT struct fl_abi_net_v10 ncclNetPlugin_v10 = {
	.name = FL_ABI_NAME,
	.init = init_v10,
	.devices = fl_wrap_devices,
	.get_properties = get_properties_v9,
	.listen = listen_v6,
	.connect = connect_v10,
	.accept = accept_v7,
	.reg_mr = fl_wrap_reg_mr,
	.reg_mr_dmabuf = fl_wrap_reg_mr_dmabuf,
	.dereg_mr = fl_wrap_dereg_mr,
	.isend = fl_wrap_isend,
	.irecv = fl_wrap_irecv,
	.iflush = fl_wrap_iflush,
	.test = fl_wrap_test,
	.close_send = fl_wrap_close_send,
	.close_recv = fl_wrap_close_recv,
	.close_listen = fl_wrap_close_listen,
	.get_device_mr = NULL,
	.irecv_consumed = NULL,
	.make_vdevice = NULL,
};

FL_ABI_EXPORT struct fl_abi_net_v11 ncclNetPlugin_v11 = {
	.name = FL_ABI_NAME,
	.init = init_v11,
	.devices = fl_wrap_devices,
	.get_properties = get_properties_v11,
	.listen = fl_wrap_listen,
	.connect = connect_v11,
	.accept = accept_v7,
	.reg_mr = fl_wrap_reg_mr,
	.reg_mr_dmabuf = fl_wrap_reg_mr_dmabuf,
	.dereg_mr = fl_wrap_dereg_mr,
	.isend = fl_wrap_isend,
	.irecv = fl_wrap_irecv,
	.iflush = fl_wrap_iflush,
	.test = fl_wrap_test,
	.close_send = fl_wrap_close_send,
	.close_recv = fl_wrap_close_recv,
	.close_listen = fl_wrap_close_listen,
	.get_device_mr = NULL,
	.irecv_consumed = NULL,
	.make_vdevice = NULL,
	.finalize = finalize_v11,
	.set_net_attr = set_net_attr_v11,
};

FL_ABI_EXPORT struct fl_abi_net_v12 ncclNetPlugin_v12 = {
	.name = FL_ABI_NAME,
	.init = init_v11,
	.devices = fl_wrap_devices,
	.get_properties = get_properties_v12,
	.listen = fl_wrap_listen,
	.connect = connect_v11,
	.accept = accept_v7,
	.reg_mr = fl_wrap_reg_mr,
	.reg_mr_dmabuf = fl_wrap_reg_mr_dmabuf,
	.dereg_mr = fl_wrap_dereg_mr,
	.isend = fl_wrap_isend,
	.irecv = fl_wrap_irecv,
	.iflush = fl_wrap_iflush,
	.test = fl_wrap_test,
	.close_send = fl_wrap_close_send,
	.close_recv = fl_wrap_close_recv,
	.close_listen = fl_wrap_close_listen,
	.get_device_mr = NULL,
	.irecv_consumed = NULL,
	.make_vdevice = NULL,
	.finalize = finalize_v11,
	.set_net_attr = set_net_attr_v11,
};

static void bind_offload_slots(unsigned has)
{
	int (*get_device_mr)(void *, void *, void **) =
		has & FL_OFFLOAD_DEVICE_MR ? fl_wrap_get_device_mr : NULL;
	int (*irecv_consumed)(void *, int, void *) =
		has & FL_OFFLOAD_RECV_CONSUMED ? fl_wrap_irecv_consumed : NULL;
	int vdev = !!(has & FL_OFFLOAD_VDEVICE);

	ncclNetPlugin_v7.get_device_mr = ncclNetPlugin_v8.get_device_mr = get_device_mr;
	ncclNetPlugin_v9.get_device_mr = ncclNetPlugin_v10.get_device_mr = get_device_mr;
	ncclNetPlugin_v11.get_device_mr = ncclNetPlugin_v12.get_device_mr = get_device_mr;
	ncclNetPlugin_v7.irecv_consumed = ncclNetPlugin_v8.irecv_consumed = irecv_consumed;
	ncclNetPlugin_v9.irecv_consumed = ncclNetPlugin_v10.irecv_consumed = irecv_consumed;
	ncclNetPlugin_v11.irecv_consumed = ncclNetPlugin_v12.irecv_consumed = irecv_consumed;
	ncclNetPlugin_v9.make_vdevice = ncclNetPlugin_v10.make_vdevice =
		vdev ? make_vdevice_v9 : NULL;
	ncclNetPlugin_v11.make_vdevice = vdev ? make_vdevice_v9 : NULL;
	ncclNetPlugin_v12.make_vdevice = vdev ? make_vdevice_v12 : NULL;
}
