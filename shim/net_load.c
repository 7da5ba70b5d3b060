/*
 * Opens a net plugin the way NCCL does and binds the ncclNetPlugin_vN table it
 * exports, then adapts that ABI version to the one shim_net_* shape: sizes are
 * narrowed to int where the version wants int (refused when they do not fit),
 * properties are widened into struct fl_props with the values NCCL itself
 * assumes for fields a version lacks, and device-handle out-params get a dummy.
 */
#include "shim_net.h"

#include <dlfcn.h>
#include <limits.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "plugin/base/log.h"
#include "plugin/base/plugin_open.h"
#include "plugin/abi/nccl_abi.h"
#include "plugin/abi/net_slots.h"
#include "nccl_rules.h"

#define PRE_V9_MAX_P2P_BYTES (1ULL << 30) /* what NCCL assumes for plugins before v9 */

static void warn_to_stderr(int level, unsigned long flags, const char *file, int line,
			   const char *fmt, ...)
{
	va_list ap;

	(void)flags;
	if (level != FL_LOG_WARN)
		return;
	fprintf(stderr, "WARN %s:%d ", file, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void (*shim_net_logger)(int level, unsigned long flags, const char *file, int line,
			const char *fmt, ...) = warn_to_stderr;

#define NET_WARN(...) \
	shim_net_logger(FL_LOG_WARN, FL_LOG_SUBSYS_NET, __FILE__, __LINE__, __VA_ARGS__)

struct shim_net_ops {
	int (*init)(struct shim_net *net, uint64_t comm_id);
	int (*finalize)(struct shim_net *net); /* NULL before v11 */
	int (*devices)(struct shim_net *net, int *ndev);
	int (*properties)(struct shim_net *net, int dev, struct fl_props *props);
	int (*listen)(struct shim_net *net, int dev, void *handle, void **listen_comm);
	int (*connect)(struct shim_net *net, int dev, void *handle, void **send_comm);
	int (*accept)(struct shim_net *net, void *listen_comm, void **recv_comm);
	int (*reg_mr)(struct shim_net *net, void *comm, void *data, size_t size, int type,
		      void **mhandle);
	int (*dereg_mr)(struct shim_net *net, void *comm, void *mhandle);
	int (*reg_mr_dmabuf)(struct shim_net *net, void *comm, void *data, size_t size, int type,
			     uint64_t offset, int fd, void **mhandle);
	int (*isend)(struct shim_net *net, void *send_comm, void *data, size_t size, int tag,
		     void *mhandle, void *phandle, void **request);
	int (*irecv)(struct shim_net *net, void *recv_comm, int n, void **data, size_t *sizes,
		     int *tags, void **mhandles, void **phandles, void **request);
	int (*test)(struct shim_net *net, void *request, int *done, int *sizes);
	int (*iflush)(struct shim_net *net, void *recv_comm, int n, void **data, int *sizes,
		      void **mhandles, void **request);
	int (*close_send)(struct shim_net *net, void *send_comm);
	int (*close_recv)(struct shim_net *net, void *recv_comm);
	int (*close_listen)(struct shim_net *net, void *listen_comm);
};

#define TABLE(net, v) ((const struct fl_abi_net_v##v *)(net)->table)

/* ---- narrowing for the int-sized ABIs (v6-v8) ---- */

static int narrow_size(int version, size_t size, int *out)
{
	if (size > INT_MAX) {
		NET_WARN("size %zu does not fit the int sizes of net ABI v%d (max %d)", size,
			  version, INT_MAX);
		return FL_ERR_USAGE;
	}
	*out = (int)size;
	return FL_OK;
}

/* The shim's own bound, so every version refuses the same counts the same way. */
static int check_recv_count(int n)
{
	if (n >= 1 && n <= FL_MAX_RECVS)
		return FL_OK;
	NET_WARN("irecv of %d buffers: the shim posts 1..%d", n, FL_MAX_RECVS);
	return FL_ERR_USAGE;
}

static int narrow_sizes(int version, int n, const size_t *sizes, int *out)
{
	if (check_recv_count(n) != FL_OK)
		return FL_ERR_USAGE;
	for (int i = 0; i < n; i++) {
		int rc = narrow_size(version, sizes[i], &out[i]);

		if (rc != FL_OK)
			return rc;
	}
	return FL_OK;
}

/* ---- properties: widen each version into fl_props ---- */

/* Fields present in every version; the macro accepts any version's props. */
#define WIDEN_V6_FIELDS(p, in)                            \
	do {                                              \
		(p)->name = (in)->name;                   \
		(p)->pci_path = (in)->pci_path;           \
		(p)->guid = (in)->guid;                   \
		(p)->ptr_support = (in)->ptr_support;     \
		(p)->speed_mbps = (in)->speed;            \
		(p)->port = (in)->port;                   \
		(p)->latency_us = (in)->latency;          \
		(p)->max_comms = (in)->max_comms;         \
		(p)->max_recvs = (in)->max_recvs;         \
	} while (0)

#define WIDEN_V9_FIELDS(p, in)                                                        \
	do {                                                                          \
		WIDEN_V6_FIELDS(p, in);                                               \
		(p)->reg_is_global = (in)->reg_is_global;                             \
		(p)->force_flush = (in)->force_flush;                                 \
		(p)->max_p2p_bytes = (in)->max_p2p_bytes;                             \
		copy_vdevs(p, (in)->vprops.ndevs, (in)->vprops.devs,                  \
			   (int)(sizeof((in)->vprops.devs) / sizeof((in)->vprops.devs[0]))); \
		(p)->max_coll_bytes = (in)->max_coll_bytes;                           \
	} while (0)

/* What NCCL assumes for a version that does not report a field. */
static void preset_props(struct fl_props *p, int dev)
{
	*p = (struct fl_props){ 0 };
	p->vdev_count = 1;
	p->vdevs[0] = dev;
	p->max_p2p_bytes = PRE_V9_MAX_P2P_BYTES;
	p->max_coll_bytes = FL_MAX_COLL_BYTES;
	p->max_multi_request_size = 1;
	p->rail_id = FL_ABI_ID_UNDEF;
	p->plane_id = FL_ABI_ID_UNDEF;
}

static void copy_vdevs(struct fl_props *p, int ndevs, const int *devs, int max)
{
	p->vdev_count = ndevs < 0 ? 0 : ndevs > max ? max : ndevs;
	for (int i = 0; i < p->vdev_count; i++)
		p->vdevs[i] = devs[i];
}

/* The shim moves host memory only; it cannot run a device-side (unpack) network. */
static int check_host_device(int version, int dev, int type)
{
	if (type == FL_ABI_DEVICE_HOST)
		return FL_OK;
	NET_WARN("net ABI v%d device %d has device type %d; the shim drives host devices only",
		  version, dev, type);
	return FL_ERR_USAGE;
}

static int properties_v6(struct shim_net *net, int dev, struct fl_props *p)
{
	struct fl_abi_props_v6 in = { 0 };
	int rc = TABLE(net, 6)->get_properties(dev, &in);

	if (rc != FL_OK)
		return rc;
	preset_props(p, dev);
	WIDEN_V6_FIELDS(p, &in);
	return FL_OK;
}

static int properties_v7(struct shim_net *net, int dev, struct fl_props *p)
{
	struct fl_abi_props_v7 in = { 0 };
	int rc = TABLE(net, 7)->get_properties(dev, &in);

	if (rc != FL_OK)
		return rc;
	preset_props(p, dev);
	WIDEN_V6_FIELDS(p, &in);
	return check_host_device(7, dev, in.net_device_type);
}

static int properties_v8(struct shim_net *net, int dev, struct fl_props *p)
{
	struct fl_abi_props_v8 in = { 0 };
	int rc = TABLE(net, 8)->get_properties(dev, &in);

	if (rc != FL_OK)
		return rc;
	preset_props(p, dev);
	WIDEN_V6_FIELDS(p, &in);
	p->reg_is_global = in.reg_is_global;
	return check_host_device(8, dev, in.net_device_type);
}

/* v9 and v10 share one properties layout; only the table type differs. */
static int widen_props_v9(int version, int dev, const struct fl_abi_props_v9 *in,
			  struct fl_props *p)
{
	preset_props(p, dev);
	WIDEN_V9_FIELDS(p, in);
	return check_host_device(version, dev, in->net_device_type);
}

static int properties_v9(struct shim_net *net, int dev, struct fl_props *p)
{
	struct fl_abi_props_v9 in = { 0 };
	int rc = TABLE(net, 9)->get_properties(dev, &in);

	return rc != FL_OK ? rc : widen_props_v9(9, dev, &in, p);
}

static int properties_v10(struct shim_net *net, int dev, struct fl_props *p)
{
	struct fl_abi_props_v9 in = { 0 };
	int rc = TABLE(net, 10)->get_properties(dev, &in);

	return rc != FL_OK ? rc : widen_props_v9(10, dev, &in, p);
}

static int properties_v11(struct shim_net *net, int dev, struct fl_props *p)
{
	struct fl_abi_props_v11 in = { 0 };
	int rc = TABLE(net, 11)->get_properties(dev, &in);

	if (rc != FL_OK)
		return rc;
	preset_props(p, dev);
	WIDEN_V9_FIELDS(p, &in);
	p->max_multi_request_size = in.max_multi_request_size;
	return check_host_device(11, dev, in.net_device_type);
}

static int properties_v12(struct shim_net *net, int dev, struct fl_props *p)
{
	struct fl_abi_props_v12 in = { 0 };
	int rc = TABLE(net, 12)->get_properties(dev, &in);

	if (rc != FL_OK)
		return rc;
	preset_props(p, dev);
	WIDEN_V9_FIELDS(p, &in);
	p->max_multi_request_size = in.max_multi_request_size;
	p->rail_id = in.rail_id;
	p->plane_id = in.plane_id;
	return check_host_device(12, dev, in.net_device_type);
}

/* ---- init / finalize ---- */

/* Before v11 init is per process and knows no communicator. */
#define INIT_LOGGER_ONLY(v)                                           \
	static int init_v##v(struct shim_net *net, uint64_t comm_id)  \
	{                                                             \
		(void)comm_id;                                        \
		return TABLE(net, v)->init(shim_net_logger);          \
	}
INIT_LOGGER_ONLY(6)
INIT_LOGGER_ONLY(7)
INIT_LOGGER_ONLY(8)
INIT_LOGGER_ONLY(9)

static int init_v10(struct shim_net *net, uint64_t comm_id)
{
	(void)comm_id;
	return TABLE(net, 10)->init(shim_net_logger, shim_nccl_profiler_callback);
}

/*
 * What NCCL passes (2.28.9 src/plugin/net.cc:176-178, 2.30.7 :170-173): a
 * zeroed config with the communicator's traffic class or UNDEF, never NULL;
 * plugins read it inside init (aws-ofi-nccl), and it lives on NCCL's stack.
 */
#define INIT_WITH_CONFIG(v)                                                               \
	static int init_v##v(struct shim_net *net, uint64_t comm_id)                      \
	{                                                                                 \
		struct fl_abi_comm_config config = { .traffic_class = net->traffic_class }; \
		return TABLE(net, v)->init(&net->ctx, comm_id, &config, shim_net_logger,    \
					   shim_nccl_profiler_callback);                     \
	}
INIT_WITH_CONFIG(11)
INIT_WITH_CONFIG(12)

static int finalize_v11(struct shim_net *net)
{
	return TABLE(net, 11)->finalize(net->ctx);
}

static int finalize_v12(struct shim_net *net)
{
	return TABLE(net, 12)->finalize(net->ctx);
}

/* ---- connection setup ---- */

#define LISTEN_WITHOUT_CTX(v)                                                                   \
	static int listen_v##v(struct shim_net *net, int dev, void *handle, void **listen_comm) \
	{                                                                                       \
		return TABLE(net, v)->listen(dev, handle, listen_comm);                         \
	}
#define LISTEN_WITH_CTX(v)                                                                      \
	static int listen_v##v(struct shim_net *net, int dev, void *handle, void **listen_comm) \
	{                                                                                       \
		return TABLE(net, v)->listen(net->ctx, dev, handle, listen_comm);               \
	}
LISTEN_WITHOUT_CTX(6)
LISTEN_WITHOUT_CTX(7)
LISTEN_WITHOUT_CTX(8)
LISTEN_WITHOUT_CTX(9)
LISTEN_WITHOUT_CTX(10)
LISTEN_WITH_CTX(11)
LISTEN_WITH_CTX(12)

static int connect_v6(struct shim_net *net, int dev, void *handle, void **send_comm)
{
	return TABLE(net, 6)->connect(dev, handle, send_comm);
}

/* v7+ may hand back a device handle; a host-memory shim has no use for one. */
#define CONNECT_WITH_DEV_HANDLE(v)                                                            \
	static int connect_v##v(struct shim_net *net, int dev, void *handle, void **send_comm) \
	{                                                                                     \
		struct fl_abi_dev_handle *dev_comm = NULL;                                    \
		return TABLE(net, v)->connect(dev, handle, send_comm, &dev_comm);             \
	}
CONNECT_WITH_DEV_HANDLE(7)
CONNECT_WITH_DEV_HANDLE(8)
CONNECT_WITH_DEV_HANDLE(9)

/* NCCL passes the communicator's config with each connect (2.28.9 src/plugin/net/net_v10.cc:53-54). */
static int connect_v10(struct shim_net *net, int dev, void *handle, void **send_comm)
{
	struct fl_abi_comm_config config = { .traffic_class = net->traffic_class };
	struct fl_abi_dev_handle *dev_comm = NULL;

	return TABLE(net, 10)->connect(dev, &config, handle, send_comm, &dev_comm);
}

#define CONNECT_WITH_CTX(v)                                                                   \
	static int connect_v##v(struct shim_net *net, int dev, void *handle, void **send_comm) \
	{                                                                                     \
		struct fl_abi_dev_handle *dev_comm = NULL;                                    \
		return TABLE(net, v)->connect(net->ctx, dev, handle, send_comm, &dev_comm);   \
	}
CONNECT_WITH_CTX(11)
CONNECT_WITH_CTX(12)

static int accept_v6(struct shim_net *net, void *listen_comm, void **recv_comm)
{
	return TABLE(net, 6)->accept(listen_comm, recv_comm);
}

#define ACCEPT_WITH_DEV_HANDLE(v)                                                      \
	static int accept_v##v(struct shim_net *net, void *listen_comm, void **recv_comm) \
	{                                                                              \
		struct fl_abi_dev_handle *dev_comm = NULL;                             \
		return TABLE(net, v)->accept(listen_comm, recv_comm, &dev_comm);       \
	}
ACCEPT_WITH_DEV_HANDLE(7)
ACCEPT_WITH_DEV_HANDLE(8)
ACCEPT_WITH_DEV_HANDLE(9)
ACCEPT_WITH_DEV_HANDLE(10)
ACCEPT_WITH_DEV_HANDLE(11)
ACCEPT_WITH_DEV_HANDLE(12)

/* ---- memory registration ---- */

#define REG_MR_INT(v)                                                                    \
	static int reg_mr_v##v(struct shim_net *net, void *comm, void *data, size_t size, \
			       int type, void **mhandle)                                 \
	{                                                                                \
		int narrow;                                                              \
		int rc = narrow_size(v, size, &narrow);                                  \
		if (rc != FL_OK)                                                         \
			return rc;                                                       \
		return TABLE(net, v)->reg_mr(comm, data, narrow, type, mhandle);         \
	}
#define REG_MR_SIZE_T(v)                                                                 \
	static int reg_mr_v##v(struct shim_net *net, void *comm, void *data, size_t size, \
			       int type, void **mhandle)                                 \
	{                                                                                \
		return TABLE(net, v)->reg_mr(comm, data, size, type, mhandle);           \
	}
REG_MR_INT(6)
REG_MR_INT(7)
REG_MR_SIZE_T(8)
REG_MR_SIZE_T(9)
REG_MR_SIZE_T(10)
REG_MR_SIZE_T(11)
REG_MR_SIZE_T(12)

/* ---- data path ---- */

/* v6-v9 take no profiler handles: NCCL's adapters drop them (src/plugin/net/net_v6.cc:67-70). */
#define ISEND_INT(v)                                                                       \
	static int isend_v##v(struct shim_net *net, void *send_comm, void *data, size_t size, \
			      int tag, void *mhandle, void *phandle, void **request)        \
	{                                                                                   \
		int narrow;                                                                 \
		int rc = narrow_size(v, size, &narrow);                                     \
		(void)phandle;                                                              \
		if (rc != FL_OK)                                                            \
			return rc;                                                          \
		return TABLE(net, v)->isend(send_comm, data, narrow, tag, mhandle, request); \
	}
/* ... and clear the optional-completion hint (net_v6.cc:82, net_v7.cc:78, net_v8.cc:73). */
#define IRECV_INT(v)                                                                          \
	static int irecv_v##v(struct shim_net *net, void *recv_comm, int n, void **data,       \
			      size_t *sizes, int *tags, void **mhandles, void **phandles,      \
			      void **request)                                                  \
	{                                                                                      \
		int narrow[FL_MAX_RECVS];                                                      \
		int rc = narrow_sizes(v, n, sizes, narrow);                                    \
		(void)phandles;                                                                \
		if (*request == FL_OPTIONAL_RECV_COMPLETION)                                   \
			*request = NULL;                                                       \
		if (rc != FL_OK)                                                               \
			return rc;                                                             \
		return TABLE(net, v)->irecv(recv_comm, n, data, narrow, tags, mhandles, request); \
	}
ISEND_INT(6)
ISEND_INT(7)
ISEND_INT(8)
IRECV_INT(6)
IRECV_INT(7)
IRECV_INT(8)

static int isend_v9(struct shim_net *net, void *send_comm, void *data, size_t size, int tag,
		    void *mhandle, void *phandle, void **request)
{
	(void)phandle;
	return TABLE(net, 9)->isend(send_comm, data, size, tag, mhandle, request);
}

static int irecv_v9(struct shim_net *net, void *recv_comm, int n, void **data, size_t *sizes,
		    int *tags, void **mhandles, void **phandles, void **request)
{
	(void)phandles;
	if (check_recv_count(n) != FL_OK)
		return FL_ERR_USAGE;
	return TABLE(net, 9)->irecv(recv_comm, n, data, sizes, tags, mhandles, request);
}

/* v10+ take the step's profiler handles, as NCCL passes them (nccl_rules.h: shim_phandle). */
#define ISEND_PHANDLE(v)                                                                   \
	static int isend_v##v(struct shim_net *net, void *send_comm, void *data, size_t size, \
			      int tag, void *mhandle, void *phandle, void **request)        \
	{                                                                                   \
		return TABLE(net, v)->isend(send_comm, data, size, tag, mhandle, phandle,   \
					    request);                                       \
	}
#define IRECV_PHANDLE(v)                                                                    \
	static int irecv_v##v(struct shim_net *net, void *recv_comm, int n, void **data,     \
			      size_t *sizes, int *tags, void **mhandles, void **phandles,    \
			      void **request)                                                \
	{                                                                                    \
		if (check_recv_count(n) != FL_OK)                                            \
			return FL_ERR_USAGE;                                                 \
		return TABLE(net, v)->irecv(recv_comm, n, data, sizes, tags, mhandles, phandles, \
					    request);                                        \
	}
ISEND_PHANDLE(10)
ISEND_PHANDLE(11)
ISEND_PHANDLE(12)
IRECV_PHANDLE(10)
IRECV_PHANDLE(11)
IRECV_PHANDLE(12)

/* ---- slots whose shape is the same in every version ---- */

#define SAME_IN_EVERY_VERSION(v)                                                               \
	static int devices_v##v(struct shim_net *net, int *ndev)                               \
	{                                                                                      \
		return TABLE(net, v)->devices(ndev);                                           \
	}                                                                                      \
	static int dereg_mr_v##v(struct shim_net *net, void *comm, void *mhandle)              \
	{                                                                                      \
		return TABLE(net, v)->dereg_mr(comm, mhandle);                                 \
	}                                                                                      \
	static int reg_mr_dmabuf_v##v(struct shim_net *net, void *comm, void *data, size_t size, \
				      int type, uint64_t offset, int fd, void **mhandle)       \
	{                                                                                      \
		if (!TABLE(net, v)->reg_mr_dmabuf)                                             \
			return FL_ERR_INTERNAL;                                                \
		return TABLE(net, v)->reg_mr_dmabuf(comm, data, size, type, offset, fd,        \
						    mhandle);                                  \
	}                                                                                      \
	static int test_v##v(struct shim_net *net, void *request, int *done, int *sizes)       \
	{                                                                                      \
		return TABLE(net, v)->test(request, done, sizes);                              \
	}                                                                                      \
	static int iflush_v##v(struct shim_net *net, void *recv_comm, int n, void **data,      \
			       int *sizes, void **mhandles, void **request)                    \
	{                                                                                      \
		*request = NULL; /* a plugin without iflush needs no flush */                 \
		if (!TABLE(net, v)->iflush)                                                    \
			return FL_OK;                                                          \
		return TABLE(net, v)->iflush(recv_comm, n, data, sizes, mhandles, request);    \
	}                                                                                      \
	static int close_send_v##v(struct shim_net *net, void *send_comm)                      \
	{                                                                                      \
		return TABLE(net, v)->close_send(send_comm);                                   \
	}                                                                                      \
	static int close_recv_v##v(struct shim_net *net, void *recv_comm)                      \
	{                                                                                      \
		return TABLE(net, v)->close_recv(recv_comm);                                   \
	}                                                                                      \
	static int close_listen_v##v(struct shim_net *net, void *listen_comm)                  \
	{                                                                                      \
		return TABLE(net, v)->close_listen(listen_comm);                               \
	}
SAME_IN_EVERY_VERSION(6)
SAME_IN_EVERY_VERSION(7)
SAME_IN_EVERY_VERSION(8)
SAME_IN_EVERY_VERSION(9)
SAME_IN_EVERY_VERSION(10)
SAME_IN_EVERY_VERSION(11)
SAME_IN_EVERY_VERSION(12)

/* ---- one ops table per version ---- */

#define OPS(v, fin)                                                                        \
	static const struct shim_net_ops ops_v##v = {                                      \
		.init = init_v##v, .finalize = fin,                                        \
		.devices = devices_v##v, .properties = properties_v##v,                    \
		.listen = listen_v##v, .connect = connect_v##v, .accept = accept_v##v,     \
		.reg_mr = reg_mr_v##v, .dereg_mr = dereg_mr_v##v,                          \
		.reg_mr_dmabuf = reg_mr_dmabuf_v##v, .isend = isend_v##v,                  \
		.irecv = irecv_v##v, .test = test_v##v, .iflush = iflush_v##v,             \
		.close_send = close_send_v##v,                                             \
		.close_recv = close_recv_v##v, .close_listen = close_listen_v##v,          \
	}
OPS(6, NULL);
OPS(7, NULL);
OPS(8, NULL);
OPS(9, NULL);
OPS(10, NULL);
OPS(11, finalize_v11);
OPS(12, finalize_v12);

static const struct {
	int version;
	const char *symbol;
	const struct shim_net_ops *ops;
} known_versions[] = { /* highest first: NCCL takes the first one found */
	{ 12, "ncclNetPlugin_v12", &ops_v12 }, { 11, "ncclNetPlugin_v11", &ops_v11 },
	{ 10, "ncclNetPlugin_v10", &ops_v10 }, { 9, "ncclNetPlugin_v9", &ops_v9 },
	{ 8, "ncclNetPlugin_v8", &ops_v8 },    { 7, "ncclNetPlugin_v7", &ops_v7 },
	{ 6, "ncclNetPlugin_v6", &ops_v6 },
};

#define N_KNOWN_VERSIONS (sizeof(known_versions) / sizeof(known_versions[0]))

/* ---- loading ---- */

static int set_error(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int set_error(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -1;
}

/* "libfoo.so" is taken as a complete soname, never wrapped into libnccl-net-... */
static void *open_plugin(const char *plugin, char *err, size_t errlen)
{
	char why[1024];
	void *lib = fl_plugin_open(plugin, "net", why, sizeof(why));

	if (!lib)
		set_error(err, errlen, "net plugin: %s", why);
	return lib;
}

/* Like NCCL, only the name and init are read before init (plugin/abi/net_slots.h). */
static int bind_version(struct shim_net *net, int index, char *err, size_t errlen)
{
	const char *symbol = known_versions[index].symbol;
	const struct fl_abi_net_v6 *table = dlsym(net->lib, symbol);

	if (!table)
		return set_error(err, errlen, "net plugin has no %s", symbol);
	if (!table->init) /* name and init sit at the same place in every version */
		return set_error(err, errlen, "%s has no init function", symbol);
	net->table = table;
	net->version = known_versions[index].version;
	net->name = table->name ? table->name : "(unnamed)";
	net->ops = known_versions[index].ops;
	return 0;
}

/* version: exactly that one; else (0) the highest not above max, as an NCCL that knows up to max. */
static int bind_table(struct shim_net *net, int version, int max, char *err, size_t errlen)
{
	for (size_t i = 0; i < N_KNOWN_VERSIONS; i++) {
		if (version == known_versions[i].version)
			return bind_version(net, (int)i, err, errlen);
		if (version == 0 && known_versions[i].version <= max &&
		    dlsym(net->lib, known_versions[i].symbol))
			return bind_version(net, (int)i, err, errlen);
	}
	if (version == 0)
		return set_error(err, errlen, "net plugin exports no ncclNetPlugin_v6..v%d", max);
	return set_error(err, errlen, "net ABI version %d is not one of 6..12", version);
}

static int load(const char *plugin, int version, int max, struct shim_net *net, char *err,
		size_t errlen)
{
	*net = (struct shim_net){ .traffic_class = FL_ABI_TRAFFIC_CLASS_UNDEF };
	if (!plugin || !*plugin)
		plugin = "libnccl-net.so"; /* NCCL's choice when NCCL_NET_PLUGIN is unset */
	net->lib = open_plugin(plugin, err, errlen);
	if (!net->lib)
		return -1;
	if (bind_table(net, version, max, err, errlen) != 0) {
		dlclose(net->lib);
		*net = (struct shim_net){ 0 };
		return -1;
	}
	return 0;
}

int shim_net_load(const char *plugin, int version, struct shim_net *net, char *err, size_t errlen)
{
	return load(plugin, version, 12, net, err, errlen);
}

int shim_net_load_upto(const char *plugin, int max_version, struct shim_net *net, char *err,
		       size_t errlen)
{
	return load(plugin, 0, max_version, net, err, errlen);
}

int shim_net_init(struct shim_net *net, uint64_t comm_id)
{
	const char *missing;
	int rc;

	net->ctx = NULL;
	rc = net->ops->init(net, comm_id);
	if (rc)
		return rc;
	missing = fl_abi_missing_slot(net->table, net->version);
	if (!missing)
		return FL_OK;
	NET_WARN("net plugin %s: ncclNetPlugin_v%d has no %s after its init returned (NCCL "
		 "would call it)", net->name, net->version, missing);
	if (net->ops->finalize && net->ctx && net->version >= 11 && strcmp(missing, "finalize"))
		net->ops->finalize(net);
	net->ctx = NULL;
	return FL_ERR_USAGE;
}

/* Only an initialised v11+ plugin has a ctx to finalize. */
void shim_net_close(struct shim_net *net)
{
	if (!net->lib)
		return;
	if (net->ops->finalize && net->ctx)
		net->ops->finalize(net);
	dlclose(net->lib);
	*net = (struct shim_net){ 0 };
}

/* ---- the uniform entry points ---- */

int shim_net_devices(struct shim_net *net, int *ndev)
{
	return net->ops->devices(net, ndev);
}

int shim_net_properties(struct shim_net *net, int dev, struct fl_props *props)
{
	return net->ops->properties(net, dev, props);
}

int shim_net_listen(struct shim_net *net, int dev, void *handle, void **listen_comm)
{
	return net->ops->listen(net, dev, handle, listen_comm);
}

int shim_net_connect(struct shim_net *net, int dev, void *handle, void **send_comm)
{
	return net->ops->connect(net, dev, handle, send_comm);
}

int shim_net_accept(struct shim_net *net, void *listen_comm, void **recv_comm)
{
	return net->ops->accept(net, listen_comm, recv_comm);
}

int shim_net_reg_mr(struct shim_net *net, void *comm, void *data, size_t size, int type,
		    void **mhandle)
{
	return net->ops->reg_mr(net, comm, data, size, type, mhandle);
}

int shim_net_dereg_mr(struct shim_net *net, void *comm, void *mhandle)
{
	return net->ops->dereg_mr(net, comm, mhandle);
}

/* Handles for callers outside the proxy's model: the shim's, never written, one per buffer. */
static struct shim_phandle unowned[FL_MAX_RECVS] = {
	[0 ... FL_MAX_RECVS - 1] = { .mark = &shim_phandle_mark },
};

int shim_net_isend(struct shim_net *net, void *send_comm, void *data, size_t size, int tag,
		   void *mhandle, void **request)
{
	return net->ops->isend(net, send_comm, data, size, tag, mhandle, &unowned[0], request);
}

int shim_net_irecv(struct shim_net *net, void *recv_comm, int n, void **data, size_t *sizes,
		   int *tags, void **mhandles, void **request)
{
	void *phandles[FL_MAX_RECVS];

	for (int i = 0; i < n && i < FL_MAX_RECVS; i++)
		phandles[i] = &unowned[i];
	return net->ops->irecv(net, recv_comm, n, data, sizes, tags, mhandles, phandles, request);
}

int shim_net_isend_ph(struct shim_net *net, void *send_comm, void *data, size_t size, int tag,
		      void *mhandle, void *phandle, void **request)
{
	return net->ops->isend(net, send_comm, data, size, tag, mhandle, phandle, request);
}

int shim_net_irecv_ph(struct shim_net *net, void *recv_comm, int n, void **data, size_t *sizes,
		      int *tags, void **mhandles, void **phandles, void **request)
{
	return net->ops->irecv(net, recv_comm, n, data, sizes, tags, mhandles, phandles, request);
}

int shim_net_test(struct shim_net *net, void *request, int *done, int *sizes)
{
	return net->ops->test(net, request, done, sizes);
}

int shim_net_close_send(struct shim_net *net, void *send_comm)
{
	return net->ops->close_send(net, send_comm);
}

int shim_net_close_recv(struct shim_net *net, void *recv_comm)
{
	return net->ops->close_recv(net, recv_comm);
}

int shim_net_close_listen(struct shim_net *net, void *listen_comm)
{
	return net->ops->close_listen(net, listen_comm);
}

int shim_net_iflush(struct shim_net *net, void *recv_comm, int n, void **data, int *sizes,
		    void **mhandles, void **request)
{
	return net->ops->iflush(net, recv_comm, n, data, sizes, mhandles, request);
}

int shim_net_reg_mr_dmabuf(struct shim_net *net, void *comm, void *data, size_t size, int type,
			   uint64_t offset, int fd, void **mhandle)
{
	return net->ops->reg_mr_dmabuf(net, comm, data, size, type, offset, fd, mhandle);
}

/* v7..v12 keep irecvConsumed at the same place; NULL (or v6) means there is nothing to call. */
int shim_net_irecv_consumed(struct shim_net *net, void *recv_comm, int n, void *request)
{
	const struct fl_abi_net_v7 *t = net->table;

	if (net->version < 7 || !t->irecv_consumed)
		return FL_OK;
	return t->irecv_consumed(recv_comm, n, request);
}
