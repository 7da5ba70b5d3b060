/*
 * The wrapped ("inner") NCCL net plugin, loaded and called through the plugin
 * host (host/host_net.h: found, versioned and adapted as NCCL does, v5..v12),
 * with what is ext's own: the messages naming FABRICLAB_TRANSPORT, the
 * process-wide init beside the per-communicator ones, and the config each
 * keeps alive for the inner.
 */
#ifndef FL_EXT_INNER_H
#define FL_EXT_INNER_H

#include <limits.h>
#include <stdint.h>

#include "abi/nccl_abi.h"
#include "base/call_config.h"
#include "base/fl_types.h"
#include "base/log.h"
#include "host/host_net.h"

#define EXT_PATH_LEN FL_HOST_PATH_LEN

/*
 * What one communicator (or the whole process) holds of the inner: its ctx
 * (v11+) and the config NCCL gives it (v10 connect, v11+ init), kept alive
 * for as long as the inner may read them.
 */
struct ext_ctx {
	void *inner_ctx;
	struct fl_abi_comm_config config;
};

/*
 * Opens one plugin and finds its highest table (v5..v12), reading only its name
 * and init as NCCL does before init. Errors name FABRICLAB_TRANSPORT and the
 * path; never crashes on a bad .so.
 */
int ext_inner_load(const char *spec, struct fl_host_net *in);
/*
 * LIST: one plugin, or several separated by commas as NCCL_NET_PLUGIN takes
 * them; the first that loads, inits and has a device is bound in *in, its
 * process-wide init done in *ctx. Else the error of the last, all named.
 */
int ext_inner_choose(const char *list, fl_logger_fn logger, fl_prof_fn prof,
		     struct fl_host_net *in, struct ext_ctx *ctx);
/* After a successful init: binds the slots, FL_ERR_USAGE naming one NCCL needs and lacks. */
int ext_inner_bind(struct fl_host_net *in);
/* init for the process: v6-v10 once; v11+ a process-wide ctx (comm id 0) in *ctx. */
int ext_inner_init(const struct fl_host_net *in, fl_logger_fn logger, fl_prof_fn prof,
		   struct ext_ctx *ctx);
/* v11+: one init per communicator; before v11 only the config is kept. */
int ext_inner_open_ctx(const struct fl_host_net *in, uint64_t comm_id, fl_logger_fn logger,
		       fl_prof_fn prof, struct ext_ctx *ctx);

static inline int ext_inner_close_ctx(const struct fl_host_net *in, struct ext_ctx *ctx)
{
	return fl_host_finalize(in, ctx->inner_ctx);
}

/* setNetAttr's ncclNetAttr_t, unchanged, with the inner's ctx (v11+ inners that have it). */
static inline int ext_inner_set_net_attr(const struct fl_host_net *in, struct ext_ctx *ctx,
					 void *attr)
{
	return fl_host_set_net_attr(in, ctx->inner_ctx, attr);
}

static inline int ext_inner_props(const struct fl_host_net *in, int dev, struct fl_props *props)
{
	return fl_host_props(in, dev, props);
}

static inline int ext_inner_listen(const struct fl_host_net *in, struct ext_ctx *ctx, int dev,
				   void *handle, void **listen_comm)
{
	return fl_host_listen(in, ctx->inner_ctx, dev, handle, listen_comm);
}

/*
 * dev_comm: where the inner puts its device handle (v7+); left NULL by host-driven inners.
 * A v10 inner gets NCCL v10's own config pointer when NCCL gave one with this connect.
 */
static inline int ext_inner_connect(const struct fl_host_net *in, struct ext_ctx *ctx, int dev,
				    void *handle, void **send_comm,
				    struct fl_abi_dev_handle **dev_comm)
{
	struct fl_abi_comm_config *config = fl_call_connect_config();

	return fl_host_connect(in, ctx->inner_ctx, config ? config : &ctx->config, dev, handle,
			       send_comm, dev_comm);
}

static inline int ext_inner_accept(const struct fl_host_net *in, void *listen_comm,
				   void **recv_comm, struct fl_abi_dev_handle **dev_comm)
{
	return fl_host_accept(in, listen_comm, recv_comm, dev_comm);
}

static inline int ext_inner_make_vdevice(const struct fl_host_net *in, int *dev, int ndevs,
					 const int *devs)
{
	return fl_host_make_vdevice(in, dev, ndevs, devs);
}

static inline int ext_inner_reg_mr(const struct fl_host_net *in, void *comm, void *data,
				   size_t size, int type, void **mhandle)
{
	return fl_host_reg_mr(in, comm, data, size, type, mhandle);
}

static inline int ext_inner_isend(const struct fl_host_net *in, void *send_comm, void *data,
				  size_t size, int tag, void *mhandle, void *phandle,
				  void **request)
{
	return fl_host_isend(in, send_comm, data, size, tag, mhandle, phandle, request);
}

static inline int ext_inner_irecv(const struct fl_host_net *in, void *recv_comm, int n,
				  void **data, size_t *sizes, int *tags, void **mhandles,
				  void **phandles, void **request)
{
	return fl_host_irecv(in, recv_comm, n, data, sizes, tags, mhandles, phandles, request);
}

#endif
