/* Each call adapted to the inner plugin's ABI version (reference nccl-abi.md 1.6, 1.7). */
#include "ext_inner.h"

#include <string.h>

#include "base/call_config.h"
#include "base/error.h"

#define T(in, v) ((const struct fl_abi_net_v##v *)(in)->table)
#define PRE_V9_MAX_P2P_BYTES (1ULL << 30) /* what NCCL assumes for plugins before v9 */

static int narrow(const struct ext_inner *in, size_t size, int *out)
{
	if (size > INT_MAX)
		return fl_fail(FL_ERR_INTERNAL, "ext: %zu bytes do not fit the int sizes of %s "
			       "(net ABI v%d)", size, in->name, in->version);
	*out = (int)size;
	return FL_OK;
}

/* ---- init ---- */

int ext_inner_init(const struct ext_inner *in, fl_logger_fn logger, fl_prof_fn prof,
		   struct ext_ctx *ctx)
{
	memset(ctx, 0, sizeof(*ctx));
	ctx->config.traffic_class = FL_ABI_TRAFFIC_CLASS_UNDEF;
	if (in->version < 10)
		return T(in, 6)->init(logger);
	if (in->version == 10)
		return T(in, 10)->init(logger, prof);
	return T(in, 11)->init(&ctx->inner_ctx, 0, &ctx->config, logger, prof);
}

int ext_inner_open_ctx(const struct ext_inner *in, uint64_t comm_id, fl_logger_fn logger,
		       fl_prof_fn prof, struct ext_ctx *ctx)
{
	ctx->inner_ctx = NULL;
	if (in->version < 11)
		return FL_OK;
	return T(in, 11)->init(&ctx->inner_ctx, comm_id, &ctx->config, logger, prof);
}

int ext_inner_set_net_attr(const struct ext_inner *in, struct ext_ctx *ctx, void *attr)
{
	if (!in->set_net_attr)
		return FL_OK; /* NCCL skips the call for a plugin without the slot */
	return in->set_net_attr(ctx->inner_ctx, attr);
}

int ext_inner_close_ctx(const struct ext_inner *in, struct ext_ctx *ctx)
{
	if (in->version < 11 || !ctx->inner_ctx || !T(in, 11)->finalize)
		return FL_OK;
	return T(in, 11)->finalize(ctx->inner_ctx);
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

#define WIDEN_V6(p, q)                              \
	do {                                        \
		(p)->name = (q)->name;              \
		(p)->pci_path = (q)->pci_path;      \
		(p)->guid = (q)->guid;              \
		(p)->ptr_support = (q)->ptr_support; \
		(p)->speed_mbps = (q)->speed;       \
		(p)->port = (q)->port;              \
		(p)->latency_us = (q)->latency;     \
		(p)->max_comms = (q)->max_comms;    \
		(p)->max_recvs = (q)->max_recvs;    \
	} while (0)

#define WIDEN_V9(p, q)                                                              \
	do {                                                                        \
		int max_ = (int)(sizeof((q)->vprops.devs) / sizeof((q)->vprops.devs[0])); \
		WIDEN_V6(p, q);                                                     \
		(p)->reg_is_global = (q)->reg_is_global;                            \
		(p)->force_flush = (q)->force_flush;                                \
		(p)->vdev_count = (q)->vprops.ndevs < 0 ? 0 :                       \
				  (q)->vprops.ndevs > max_ ? max_ : (q)->vprops.ndevs; \
		for (int i_ = 0; i_ < (p)->vdev_count; i_++)                        \
			(p)->vdevs[i_] = (q)->vprops.devs[i_];                      \
		(p)->max_p2p_bytes = (q)->max_p2p_bytes;                            \
		(p)->max_coll_bytes = (q)->max_coll_bytes;                          \
	} while (0)

/* v7+: the device type passes through, so an offloading inner keeps its GPU-side unpack. */
#define DEVICE_TYPE(p, q)                                          \
	do {                                                       \
		(p)->net_device_type = (q)->net_device_type;       \
		(p)->net_device_version = (q)->net_device_version; \
	} while (0)

static int props_v6_to_v8(const struct ext_inner *in, int dev, struct fl_props *p)
{
	struct fl_abi_props_v8 v8 = { 0 };
	struct fl_abi_props_v7 v7 = { 0 };
	struct fl_abi_props_v6 v6 = { 0 };
	int rc;

	if (in->version <= 6) { /* v5 reports v6's properties at the same slot */
		rc = T(in, 6)->get_properties(dev, &v6);
		WIDEN_V6(p, &v6);
		return rc;
	}
	if (in->version == 7) {
		rc = T(in, 7)->get_properties(dev, &v7);
		WIDEN_V6(p, &v7);
		DEVICE_TYPE(p, &v7);
		return rc;
	}
	rc = T(in, 8)->get_properties(dev, &v8);
	WIDEN_V6(p, &v8);
	p->reg_is_global = v8.reg_is_global;
	DEVICE_TYPE(p, &v8);
	return rc;
}

static int props_v9_up(const struct ext_inner *in, int dev, struct fl_props *p)
{
	struct fl_abi_props_v12 v12 = { 0 };
	struct fl_abi_props_v11 v11 = { 0 };
	struct fl_abi_props_v9 v9 = { 0 };
	int rc;

	if (in->version <= 10) { /* v9 and v10 share one layout */
		rc = in->version == 9 ? T(in, 9)->get_properties(dev, &v9) :
					T(in, 10)->get_properties(dev, &v9);
		WIDEN_V9(p, &v9);
		DEVICE_TYPE(p, &v9);
		return rc;
	}
	if (in->version == 11) {
		rc = T(in, 11)->get_properties(dev, &v11);
		WIDEN_V9(p, &v11);
		p->max_multi_request_size = v11.max_multi_request_size;
		DEVICE_TYPE(p, &v11);
		return rc;
	}
	rc = T(in, 12)->get_properties(dev, &v12);
	WIDEN_V9(p, &v12);
	p->max_multi_request_size = v12.max_multi_request_size;
	p->rail_id = v12.rail_id;
	p->plane_id = v12.plane_id;
	DEVICE_TYPE(p, &v12);
	return rc;
}

int ext_inner_props(const struct ext_inner *in, int dev, struct fl_props *p)
{
	preset(p, dev);
	return in->version < 9 ? props_v6_to_v8(in, dev, p) : props_v9_up(in, dev, p);
}

/* ---- connection setup ---- */

int ext_inner_listen(const struct ext_inner *in, struct ext_ctx *ctx, int dev, void *handle,
		     void **listen_comm)
{
	if (in->version < 11)
		return T(in, 6)->listen(dev, handle, listen_comm);
	return T(in, 11)->listen(ctx->inner_ctx, dev, handle, listen_comm);
}

int ext_inner_connect(const struct ext_inner *in, struct ext_ctx *ctx, int dev, void *handle,
		      void **send_comm, struct fl_abi_dev_handle **dev_comm)
{
	switch (in->version) {
	case 5: case 6:
		return T(in, 6)->connect(dev, handle, send_comm);
	case 7: case 8: case 9:
		return T(in, 7)->connect(dev, handle, send_comm, dev_comm);
	case 10: /* NCCL v10's own config pointer when it gave one with this connect */
		return T(in, 10)->connect(dev, fl_call_connect_config() ? fl_call_connect_config() :
					  &ctx->config, handle, send_comm, dev_comm);
	default:
		return T(in, 11)->connect(ctx->inner_ctx, dev, handle, send_comm, dev_comm);
	}
}

int ext_inner_accept(const struct ext_inner *in, void *listen_comm, void **recv_comm,
		     struct fl_abi_dev_handle **dev_comm)
{
	if (in->version <= 6)
		return T(in, 6)->accept(listen_comm, recv_comm);
	return T(in, 7)->accept(listen_comm, recv_comm, dev_comm);
}

/* The inner's own vProps shape: 4 devices before v12, 8 from v12. */
int ext_inner_make_vdevice(const struct ext_inner *in, int *dev, int ndevs, const int *devs)
{
	struct fl_abi_vprops_v12 v12 = { .ndevs = ndevs };
	struct fl_abi_vprops_v9 v9 = { .ndevs = ndevs };
	int max = in->version >= 12 ? FL_ABI_VDEVS_V12 : FL_ABI_VDEVS_V9;

	if (!in->make_vdevice)
		return fl_fail(FL_ERR_INTERNAL, "ext: %s has no makeVDevice", in->name);
	if (ndevs < 1 || ndevs > max)
		return fl_fail(FL_ERR_INTERNAL, "ext: makeVDevice of %d devices; %s (net ABI v%d) "
			       "takes 1..%d", ndevs, in->name, in->version, max);
	for (int i = 0; i < ndevs; i++) {
		v12.devs[i] = devs[i];
		if (i < FL_ABI_VDEVS_V9)
			v9.devs[i] = devs[i];
	}
	if (in->version >= 12)
		return ((int (*)(int *, struct fl_abi_vprops_v12 *))in->make_vdevice)(dev, &v12);
	return ((int (*)(int *, struct fl_abi_vprops_v9 *))in->make_vdevice)(dev, &v9);
}

int ext_inner_reg_mr(const struct ext_inner *in, void *comm, void *data, size_t size, int type,
		     void **mhandle)
{
	int small = 0, rc;

	if (in->version >= 8)
		return T(in, 8)->reg_mr(comm, data, size, type, mhandle);
	rc = narrow(in, size, &small);
	return rc ? rc : T(in, 6)->reg_mr(comm, data, small, type, mhandle);
}

/* ---- data path ---- */

int ext_inner_isend_adapted(const struct ext_inner *in, void *send_comm, void *data, size_t size,
			    int tag, void *mhandle, void *phandle, void **request)
{
	int small = 0, rc;

	if (in->version >= 10)
		return T(in, 10)->isend(send_comm, data, size, tag, mhandle, phandle, request);
	if (in->version == 9)
		return T(in, 9)->isend(send_comm, data, size, tag, mhandle, request);
	rc = narrow(in, size, &small);
	if (rc)
		return rc;
	if (in->version == 5)
		return T(in, 5)->isend(send_comm, data, small, tag, mhandle, request);
	return T(in, 6)->isend(send_comm, data, small, tag, mhandle, request);
}

int ext_inner_irecv_adapted(const struct ext_inner *in, void *recv_comm, int n, void **data,
			    size_t *sizes, int *tags, void **mhandles, void **phandles,
			    void **request)
{
	int small[FL_MAX_RECVS];
	void *none[FL_MAX_RECVS] = { 0 };

	/* NCCL v10+ always passes profiler handles; an older NCCL above us has none */
	if (in->version >= 10)
		return T(in, 10)->irecv(recv_comm, n, data, sizes, tags, mhandles,
					phandles ? phandles : none, request);
	if (in->version == 9)
		return T(in, 9)->irecv(recv_comm, n, data, sizes, tags, mhandles, request);
	for (int i = 0; i < n; i++) {
		int rc = narrow(in, sizes[i], &small[i]);

		if (rc)
			return rc;
	}
	if (in->version == 5)
		return T(in, 5)->irecv(recv_comm, n, data, small, tags, mhandles, request);
	return T(in, 6)->irecv(recv_comm, n, data, small, tags, mhandles, request);
}
