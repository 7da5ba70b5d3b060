/*
 * Each call adapted to the plugin's ABI version as NCCL's own adapters do
 * (2.30.7 src/plugin/net/net_v6.cc .. net_v11.cc; reference nccl-abi.md 1.6,
 * 1.7): sizes narrowed to int where the version takes int, the
 * optional-completion hint cleared before v9 (net_v6.cc:82, net_v7.cc:78,
 * net_v8.cc:73), no profiler handles before v10 (net_v6.cc:67-70), config and
 * ctx where the version takes them, and the properties widened with what
 * NCCL assumes for fields a version lacks (net_v6.cc:31-46, net_v8.cc:31-46,
 * net_v9.cc:30-47, net_v11.cc:33-40).
 */
#include "host_net.h"

#include <limits.h>
#include <string.h>

#include "base/error.h"

#define T(net, v) ((const struct fl_abi_net_v##v *)(net)->table)
#define PRE_V9_MAX_P2P_BYTES (1ULL << 30) /* MAX_NET_SIZE, what NCCL assumes before v9 */

int fl_host_reg_size_fits(const struct fl_host_net *net, size_t size)
{
	return net->version >= 8 || size <= INT_MAX;
}

int fl_host_data_size_fits(const struct fl_host_net *net, size_t size)
{
	return net->version >= 9 || size <= INT_MAX;
}

static int narrow(const struct fl_host_net *net, size_t size, int *out)
{
	if (size > INT_MAX)
		return fl_fail(FL_ERR_INTERNAL, "%zu bytes do not fit the int sizes of %s (net ABI "
			       "v%d)", size, net->name, net->version);
	*out = (int)size;
	return FL_OK;
}

/* ---- init: v6-v10 once per process, v11+ per communicator (2.30.7 net.cc:166-176) ---- */

int fl_host_init(const struct fl_host_net *net, uint64_t comm_id,
		 struct fl_abi_comm_config *config, fl_logger_fn logger, fl_prof_fn prof,
		 void **ctx)
{
	*ctx = NULL; /* 2.28.9 finalizes a ctx even when init failed: never a stale one */
	if (net->version < 10)
		return T(net, 6)->init(logger);
	if (net->version == 10)
		return T(net, 10)->init(logger, prof);
	/* a zeroed config with the traffic class or UNDEF, never NULL (net.cc:170-173) */
	return T(net, 11)->init(ctx, comm_id, config, logger, prof);
}

int fl_host_finalize(const struct fl_host_net *net, void *ctx)
{
	if (net->version < 11 || !ctx || !T(net, 11)->finalize)
		return FL_OK;
	return T(net, 11)->finalize(ctx);
}

int fl_host_set_net_attr(const struct fl_host_net *net, void *ctx, void *attr)
{
	if (!net->set_net_attr)
		return FL_OK; /* NCCL skips the call for a plugin without the slot */
	return net->set_net_attr(ctx, attr);
}

/* ---- properties: NCCL's defaults first, then what the version reports ---- */

static void preset(struct fl_props *p, int dev)
{
	memset(p, 0, sizeof(*p));
	p->vdev_count = 1;
	p->vdevs[0] = dev;
	p->max_p2p_bytes = PRE_V9_MAX_P2P_BYTES;
	p->max_coll_bytes = FL_MAX_COLL_BYTES;
	p->max_multi_request_size = 1;
	p->rail_id = FL_ABI_ID_UNDEF;
	p->plane_id = FL_ABI_ID_UNDEF;
}

#define WIDEN_V6(p, q)                               \
	do {                                         \
		(p)->name = (q)->name;               \
		(p)->pci_path = (q)->pci_path;       \
		(p)->guid = (q)->guid;               \
		(p)->ptr_support = (q)->ptr_support; \
		(p)->speed_mbps = (q)->speed;        \
		(p)->port = (q)->port;               \
		(p)->latency_us = (q)->latency;      \
		(p)->max_comms = (q)->max_comms;     \
		(p)->max_recvs = (q)->max_recvs;     \
	} while (0)

#define WIDEN_V9(p, q)                                                                    \
	do {                                                                              \
		int max_ = (int)(sizeof((q)->vprops.devs) / sizeof((q)->vprops.devs[0])); \
		WIDEN_V6(p, q);                                                           \
		(p)->reg_is_global = (q)->reg_is_global;                                  \
		(p)->force_flush = (q)->force_flush;                                      \
		(p)->vdev_count = (q)->vprops.ndevs < 0 ? 0 :                             \
				  (q)->vprops.ndevs > max_ ? max_ : (q)->vprops.ndevs;    \
		for (int i_ = 0; i_ < (p)->vdev_count; i_++)                              \
			(p)->vdevs[i_] = (q)->vprops.devs[i_];                            \
		(p)->max_p2p_bytes = (q)->max_p2p_bytes;                                  \
		(p)->max_coll_bytes = (q)->max_coll_bytes;                                \
	} while (0)

/* v7+: the device type passes through, so an offloading plugin keeps its GPU-side unpack. */
#define DEVICE_TYPE(p, q)                                          \
	do {                                                       \
		(p)->net_device_type = (q)->net_device_type;       \
		(p)->net_device_version = (q)->net_device_version; \
	} while (0)

static int props_v5_to_v8(const struct fl_host_net *net, int dev, struct fl_props *p)
{
	struct fl_abi_props_v8 v8 = { 0 };
	struct fl_abi_props_v7 v7 = { 0 };
	struct fl_abi_props_v6 v6 = { 0 };
	int rc;

	if (net->version <= 6) { /* v5 reports v6's properties at the same slot */
		rc = T(net, 6)->get_properties(dev, &v6);
		WIDEN_V6(p, &v6);
		return rc;
	}
	if (net->version == 7) {
		rc = T(net, 7)->get_properties(dev, &v7);
		WIDEN_V6(p, &v7);
		DEVICE_TYPE(p, &v7);
		return rc;
	}
	rc = T(net, 8)->get_properties(dev, &v8);
	WIDEN_V6(p, &v8);
	p->reg_is_global = v8.reg_is_global;
	DEVICE_TYPE(p, &v8);
	return rc;
}

static int props_v9_up(const struct fl_host_net *net, int dev, struct fl_props *p)
{
	struct fl_abi_props_v12 v12 = { 0 };
	struct fl_abi_props_v11 v11 = { 0 };
	struct fl_abi_props_v9 v9 = { 0 };
	int rc;

	if (net->version <= 10) { /* v9 and v10 share one layout */
		rc = net->version == 9 ? T(net, 9)->get_properties(dev, &v9) :
					 T(net, 10)->get_properties(dev, &v9);
		WIDEN_V9(p, &v9);
		DEVICE_TYPE(p, &v9);
		return rc;
	}
	if (net->version == 11) {
		rc = T(net, 11)->get_properties(dev, &v11);
		WIDEN_V9(p, &v11);
		p->max_multi_request_size = v11.max_multi_request_size;
		DEVICE_TYPE(p, &v11);
		return rc;
	}
	rc = T(net, 12)->get_properties(dev, &v12);
	WIDEN_V9(p, &v12);
	p->max_multi_request_size = v12.max_multi_request_size;
	p->rail_id = v12.rail_id;
	p->plane_id = v12.plane_id;
	DEVICE_TYPE(p, &v12);
	return rc;
}

int fl_host_props(const struct fl_host_net *net, int dev, struct fl_props *p)
{
	preset(p, dev);
	return net->version < 9 ? props_v5_to_v8(net, dev, p) : props_v9_up(net, dev, p);
}

/* ---- connection setup ---- */

int fl_host_listen(const struct fl_host_net *net, void *ctx, int dev, void *handle,
		   void **listen_comm)
{
	if (net->version < 11)
		return T(net, 6)->listen(dev, handle, listen_comm);
	return T(net, 11)->listen(ctx, dev, handle, listen_comm);
}

int fl_host_connect(const struct fl_host_net *net, void *ctx, struct fl_abi_comm_config *config,
		    int dev, void *handle, void **send_comm, struct fl_abi_dev_handle **dev_comm)
{
	struct fl_abi_dev_handle *unused = NULL;

	if (!dev_comm)
		dev_comm = &unused;
	switch (net->version) {
	case 5: case 6:
		return T(net, 6)->connect(dev, handle, send_comm);
	case 7: case 8: case 9:
		return T(net, 7)->connect(dev, handle, send_comm, dev_comm);
	case 10: /* the communicator's config with each connect (2.28.9 net_v10.cc:53-54) */
		return T(net, 10)->connect(dev, config, handle, send_comm, dev_comm);
	default:
		return T(net, 11)->connect(ctx, dev, handle, send_comm, dev_comm);
	}
}

int fl_host_accept(const struct fl_host_net *net, void *listen_comm, void **recv_comm,
		   struct fl_abi_dev_handle **dev_comm)
{
	struct fl_abi_dev_handle *unused = NULL;

	if (net->version <= 6)
		return T(net, 6)->accept(listen_comm, recv_comm);
	return T(net, 7)->accept(listen_comm, recv_comm, dev_comm ? dev_comm : &unused);
}

/* The plugin's own vProps shape: 4 devices before v12, 8 from v12. */
int fl_host_make_vdevice(const struct fl_host_net *net, int *dev, int ndevs, const int *devs)
{
	struct fl_abi_vprops_v12 v12 = { .ndevs = ndevs };
	struct fl_abi_vprops_v9 v9 = { .ndevs = ndevs };
	int max = net->version >= 12 ? FL_ABI_VDEVS_V12 : FL_ABI_VDEVS_V9;

	if (!net->make_vdevice)
		return fl_fail(FL_ERR_INTERNAL, "%s has no makeVDevice", net->name);
	if (ndevs < 1 || ndevs > max)
		return fl_fail(FL_ERR_INTERNAL, "makeVDevice of %d devices; %s (net ABI v%d) "
			       "takes 1..%d", ndevs, net->name, net->version, max);
	for (int i = 0; i < ndevs; i++) {
		v12.devs[i] = devs[i];
		if (i < FL_ABI_VDEVS_V9)
			v9.devs[i] = devs[i];
	}
	if (net->version >= 12)
		return ((int (*)(int *, struct fl_abi_vprops_v12 *))net->make_vdevice)(dev, &v12);
	return ((int (*)(int *, struct fl_abi_vprops_v9 *))net->make_vdevice)(dev, &v9);
}

int fl_host_reg_mr(const struct fl_host_net *net, void *comm, void *data, size_t size, int type,
		   void **mhandle)
{
	int small = 0, rc;

	if (net->version >= 8)
		return T(net, 8)->reg_mr(comm, data, size, type, mhandle);
	rc = narrow(net, size, &small);
	return rc ? rc : T(net, 6)->reg_mr(comm, data, small, type, mhandle);
}

/* ---- data path ---- */

int fl_host_isend_adapted(const struct fl_host_net *net, void *send_comm, void *data,
			  size_t size, int tag, void *mhandle, void *phandle, void **request)
{
	int small = 0, rc;

	if (net->version >= 10)
		return T(net, 10)->isend(send_comm, data, size, tag, mhandle, phandle, request);
	if (net->version == 9)
		return T(net, 9)->isend(send_comm, data, size, tag, mhandle, request);
	rc = narrow(net, size, &small);
	if (rc)
		return rc;
	if (net->version == 5)
		return T(net, 5)->isend(send_comm, data, small, tag, mhandle, request);
	return T(net, 6)->isend(send_comm, data, small, tag, mhandle, request);
}

int fl_host_irecv_adapted(const struct fl_host_net *net, void *recv_comm, int n, void **data,
			  size_t *sizes, int *tags, void **mhandles, void **phandles,
			  void **request)
{
	int small[FL_MAX_RECVS];
	void *none[FL_MAX_RECVS] = { 0 };

	if (net->version >= 10) /* NCCL v10+ always passes handles; an older NCCL above has none */
		return T(net, 10)->irecv(recv_comm, n, data, sizes, tags, mhandles,
					 phandles ? phandles : none, request);
	if (net->version == 9)
		return T(net, 9)->irecv(recv_comm, n, data, sizes, tags, mhandles, request);
	if (n < 0 || n > FL_MAX_RECVS)
		return fl_fail(FL_ERR_INTERNAL, "irecv of %d buffers: 1..%d", n, FL_MAX_RECVS);
	for (int i = 0; i < n; i++) {
		int rc = narrow(net, sizes[i], &small[i]);

		if (rc)
			return rc;
	}
	if (*request == FL_OPTIONAL_RECV_COMPLETION)
		*request = NULL;
	if (net->version == 5)
		return T(net, 5)->irecv(recv_comm, n, data, small, tags, mhandles, request);
	return T(net, 6)->irecv(recv_comm, n, data, small, tags, mhandles, request);
}
