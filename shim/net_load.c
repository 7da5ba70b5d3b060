/*
 * The plugin the shim drives, loaded and called through the plugin host
 * (plugin/host/host_net.h: opened as NCCL opens NCCL_NET_PLUGIN, the highest
 * ncclNetPlugin_vN first, only name and init read before init, each call
 * adapted to its version, properties widened with NCCL's defaults). What is
 * the shim's own here: its logger, its bounds (1..FL_MAX_RECVS buffers, sizes
 * an int-sized ABI cannot carry refused with a WARN before the plugin sees
 * them), host devices only, and the profiler handles it passes as NCCL does.
 */
#include "shim_net.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "plugin/base/log.h"
#include "plugin/abi/nccl_abi.h"
#include "nccl_rules.h"

#define SHIM_MIN_VERSION 6 /* what NCCL 2.26+ binds: v5 went with 2.26 */

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

/* ---- the shim's own bounds, so every version refuses the same calls the same way ---- */

static int size_fits(const struct shim_net *net, int fits, size_t size)
{
	if (fits)
		return FL_OK;
	NET_WARN("size %zu does not fit the int sizes of net ABI v%d (max %d)", size,
		 net->version, INT_MAX);
	return FL_ERR_USAGE;
}

static int check_recvs(const struct shim_net *net, int n, const size_t *sizes)
{
	if (n < 1 || n > FL_MAX_RECVS) {
		NET_WARN("irecv of %d buffers: the shim posts 1..%d", n, FL_MAX_RECVS);
		return FL_ERR_USAGE;
	}
	for (int i = 0; i < n; i++)
		if (size_fits(net, fl_host_data_size_fits(&net->host, sizes[i]), sizes[i]))
			return FL_ERR_USAGE;
	return FL_OK;
}

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

/* version: exactly that one; else (0) the highest not above max, as an NCCL that knows up to max. */
static int load(const char *plugin, int version, int max, struct shim_net *net, char *err,
		size_t errlen)
{
	char why[1024];

	*net = (struct shim_net){ .traffic_class = FL_ABI_TRAFFIC_CLASS_UNDEF };
	if (version && (version < SHIM_MIN_VERSION || version > FL_HOST_MAX_VERSION))
		return set_error(err, errlen, "net ABI version %d is not one of %d..%d", version,
				 SHIM_MIN_VERSION, FL_HOST_MAX_VERSION);
	if (!plugin || !*plugin)
		plugin = "libnccl-net.so"; /* NCCL's choice when NCCL_NET_PLUGIN is unset */
	if (fl_host_load(plugin, version, SHIM_MIN_VERSION, max, &net->host, why, sizeof(why))) {
		int opened = net->host.opened, no_init = net->host.name != NULL;

		version = net->host.version;
		*net = (struct shim_net){ 0 };
		if (!opened)
			return set_error(err, errlen, "net plugin: %s", why);
		if (no_init)
			return set_error(err, errlen, "ncclNetPlugin_v%d has no init function",
					 version);
		return set_error(err, errlen, "net plugin %s", why);
	}
	net->lib = net->host.lib;
	net->table = net->host.table;
	net->version = net->host.version;
	net->name = net->host.name;
	return 0;
}

int shim_net_load(const char *plugin, int version, struct shim_net *net, char *err, size_t errlen)
{
	return load(plugin, version, FL_HOST_MAX_VERSION, net, err, errlen);
}

int shim_net_load_upto(const char *plugin, int max_version, struct shim_net *net, char *err,
		       size_t errlen)
{
	return load(plugin, 0, max_version, net, err, errlen);
}

int shim_net_init(struct shim_net *net, uint64_t comm_id)
{
	struct fl_abi_comm_config config = { .traffic_class = net->traffic_class };
	const char *missing;
	int rc;

	rc = fl_host_init(&net->host, comm_id, &config, shim_net_logger,
			  shim_nccl_profiler_callback, &net->ctx);
	if (rc)
		return rc;
	missing = fl_host_bind(&net->host);
	if (!missing)
		return FL_OK;
	NET_WARN("net plugin %s: ncclNetPlugin_v%d has no %s after its init returned (NCCL "
		 "would call it)", net->name, net->version, missing);
	if (net->ctx && strcmp(missing, "finalize"))
		fl_host_finalize(&net->host, net->ctx);
	net->ctx = NULL;
	return FL_ERR_USAGE;
}

/* Only an initialised v11+ plugin has a ctx to finalize. */
void shim_net_close(struct shim_net *net)
{
	if (!net->lib)
		return;
	if (net->ctx)
		fl_host_finalize(&net->host, net->ctx);
	fl_host_unload(&net->host);
	*net = (struct shim_net){ 0 };
}

/* ---- the uniform entry points ---- */

int shim_net_devices(struct shim_net *net, int *ndev)
{
	return net->host.devices(ndev);
}

/* The shim moves host memory only; it cannot run a device-side (unpack) network. */
int shim_net_properties(struct shim_net *net, int dev, struct fl_props *props)
{
	int rc = fl_host_props(&net->host, dev, props);

	if (rc != FL_OK || props->net_device_type == FL_ABI_DEVICE_HOST)
		return rc;
	NET_WARN("net ABI v%d device %d has device type %d; the shim drives host devices only",
		 net->version, dev, props->net_device_type);
	return FL_ERR_USAGE;
}

int shim_net_listen(struct shim_net *net, int dev, void *handle, void **listen_comm)
{
	return fl_host_listen(&net->host, net->ctx, dev, handle, listen_comm);
}

/* v7+ may hand back a device handle; a host-memory shim has no use for one. */
int shim_net_connect(struct shim_net *net, int dev, void *handle, void **send_comm)
{
	struct fl_abi_comm_config config = { .traffic_class = net->traffic_class };

	return fl_host_connect(&net->host, net->ctx, &config, dev, handle, send_comm, NULL);
}

int shim_net_accept(struct shim_net *net, void *listen_comm, void **recv_comm)
{
	return fl_host_accept(&net->host, listen_comm, recv_comm, NULL);
}

int shim_net_reg_mr(struct shim_net *net, void *comm, void *data, size_t size, int type,
		    void **mhandle)
{
	if (size_fits(net, fl_host_reg_size_fits(&net->host, size), size))
		return FL_ERR_USAGE;
	return fl_host_reg_mr(&net->host, comm, data, size, type, mhandle);
}

int shim_net_dereg_mr(struct shim_net *net, void *comm, void *mhandle)
{
	return net->host.dereg_mr(comm, mhandle);
}

/* Handles for callers outside the proxy's model: the shim's, never written, one per buffer. */
static struct shim_phandle unowned[FL_MAX_RECVS] = {
	[0 ... FL_MAX_RECVS - 1] = { .mark = &shim_phandle_mark },
};

int shim_net_isend(struct shim_net *net, void *send_comm, void *data, size_t size, int tag,
		   void *mhandle, void **request)
{
	return shim_net_isend_ph(net, send_comm, data, size, tag, mhandle, &unowned[0], request);
}

int shim_net_irecv(struct shim_net *net, void *recv_comm, int n, void **data, size_t *sizes,
		   int *tags, void **mhandles, void **request)
{
	void *phandles[FL_MAX_RECVS];

	for (int i = 0; i < n && i < FL_MAX_RECVS; i++)
		phandles[i] = &unowned[i];
	return shim_net_irecv_ph(net, recv_comm, n, data, sizes, tags, mhandles, phandles,
				 request);
}

/* v6-v9 take no profiler handles: the host drops them as NCCL's adapters do. */
int shim_net_isend_ph(struct shim_net *net, void *send_comm, void *data, size_t size, int tag,
		      void *mhandle, void *phandle, void **request)
{
	if (size_fits(net, fl_host_data_size_fits(&net->host, size), size))
		return FL_ERR_USAGE;
	return fl_host_isend(&net->host, send_comm, data, size, tag, mhandle, phandle, request);
}

int shim_net_irecv_ph(struct shim_net *net, void *recv_comm, int n, void **data, size_t *sizes,
		      int *tags, void **mhandles, void **phandles, void **request)
{
	void *none[FL_MAX_RECVS] = { 0 };

	if (check_recvs(net, n, sizes) != FL_OK)
		return FL_ERR_USAGE;
	return fl_host_irecv(&net->host, recv_comm, n, data, sizes, tags, mhandles,
			     phandles ? phandles : none, request);
}

int shim_net_test(struct shim_net *net, void *request, int *done, int *sizes)
{
	return net->host.test(request, done, sizes);
}

int shim_net_close_send(struct shim_net *net, void *send_comm)
{
	return net->host.close_send(send_comm);
}

int shim_net_close_recv(struct shim_net *net, void *recv_comm)
{
	return net->host.close_recv(recv_comm);
}

int shim_net_close_listen(struct shim_net *net, void *listen_comm)
{
	return net->host.close_listen(listen_comm);
}

int shim_net_iflush(struct shim_net *net, void *recv_comm, int n, void **data, int *sizes,
		    void **mhandles, void **request)
{
	*request = NULL; /* a plugin without iflush needs no flush */
	if (!net->host.iflush)
		return FL_OK;
	return net->host.iflush(recv_comm, n, data, sizes, mhandles, request);
}

int shim_net_reg_mr_dmabuf(struct shim_net *net, void *comm, void *data, size_t size, int type,
			   uint64_t offset, int fd, void **mhandle)
{
	if (!net->host.reg_mr_dmabuf)
		return FL_ERR_INTERNAL;
	return net->host.reg_mr_dmabuf(comm, data, size, type, offset, fd, mhandle);
}

/* NULL (or v6) means there is nothing to call, as NCCL skips it. */
int shim_net_irecv_consumed(struct shim_net *net, void *recv_comm, int n, void *request)
{
	if (!net->host.irecv_consumed)
		return FL_OK;
	return net->host.irecv_consumed(recv_comm, n, request);
}
