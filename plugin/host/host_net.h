/*
 * The plugin host: one way to find, load, version and call an NCCL net plugin,
 * shared by the ext transport (the plugin fabriclab wraps) and the shim (the
 * plugin it drives as NCCL would), so both accept, refuse and adapt the same
 * tables the same way. Every rule of NCCL's loader is cited once, in the file
 * that follows it: host_find.c (the list, `none`, the names), host_load.c
 * (versions highest first, only name and init before init, the rest after),
 * host_call.c (each call adapted to its version, properties widened).
 * Messages are the callers': the host says why in a buffer or an error code.
 */
#ifndef FL_HOST_NET_H
#define FL_HOST_NET_H

#include <stddef.h>
#include <stdint.h>

#include "abi/nccl_abi.h"
#include "base/fl_types.h"
#include "base/log.h"

#define FL_HOST_PATH_LEN 512
#define FL_HOST_MIN_VERSION 5  /* the oldest the host binds (fastsocket); NCCL 2.26+ stops at 6 */
#define FL_HOST_MAX_VERSION 12

/* One loaded plugin: its library and table, and the slots bound once its init returned. */
struct fl_host_net {
	void *lib;
	const void *table; /* the ncclNetPlugin_vN it exports */
	int version;
	const char *name;  /* the name in its table */
	char spec[FL_HOST_PATH_LEN]; /* the name it was asked by */
	char path[FL_HOST_PATH_LEN]; /* the file dlopen() opened */
	int opened;        /* its library opened: a failed load went further (for messages) */
	/* Slots at the same place with the same shape in every version (nccl_abi.h asserts it). */
	int (*devices)(int *ndev);
	int (*reg_mr_dmabuf)(void *comm, void *data, size_t size, int type, uint64_t offset, int fd,
			     void **mhandle);
	int (*dereg_mr)(void *comm, void *mhandle);
	int (*iflush)(void *recv_comm, int n, void **data, int *sizes, void **mhandles,
		      void **request);
	int (*test)(void *request, int *done, int *sizes);
	int (*close_send)(void *send_comm);
	int (*close_recv)(void *recv_comm);
	int (*close_listen)(void *listen_comm);
	/* Optional device-offload slots (v7+; makeVDevice v9+), NULL when the plugin has none. */
	int (*get_device_mr)(void *comm, void *mhandle, void **dptr_mhandle);
	int (*irecv_consumed)(void *recv_comm, int n, void *request);
	void (*make_vdevice)(void); /* its props type depends on the version: fl_host_make_vdevice */
	/* v11+ tuning hints; NULL when the plugin has none (NCCL then sends none either). */
	int (*set_net_attr)(void *ctx, struct fl_abi_net_attr *attr);
	/* v10+: isend and irecv take NCCL's own arguments, called without an adapter. */
	int (*isend10)(void *send_comm, void *data, size_t size, int tag, void *mhandle,
		       void *phandle, void **request);
	int (*irecv10)(void *recv_comm, int n, void **data, size_t *sizes, int *tags,
		       void **mhandles, void **phandles, void **request);
};

/* ---- finding (host_find.c) ---- */

/* NCCL_NET_PLUGIN=none (any case): no external plugin at all. */
int fl_host_is_none(const char *list);
/*
 * Calls try_one(name, arg) for each name of a comma-separated list, in order, as
 * NCCL splits NCCL_NET_PLUGIN, until one returns FL_OK (then FL_OK). Else the last
 * one's code, or FL_ERR_USAGE when the list names none; *tried counts the calls.
 */
int fl_host_each(const char *list, int (*try_one)(const char *name, void *arg), void *arg,
		 int *tried);

/* ---- loading (host_load.c) ---- */

/*
 * Opens spec as NCCL opens a plugin name and binds a table: exactly
 * ncclNetPlugin_v<version>, or (version 0) the highest of min..max it exports.
 * Reads only its name and init. FL_OK, or FL_ERR_USAGE with why (none of it
 * left open): "cannot load ...", "exports no ncclNetPlugin_vMIN..vMAX",
 * "has no ncclNetPlugin_vN", "ncclNetPlugin_vN has no init".
 */
int fl_host_load(const char *spec, int version, int min, int max, struct fl_host_net *net,
		 char *why, size_t why_len);
/* After the plugin's init returned FL_OK: NULL with every slot bound, else the missing slot. */
const char *fl_host_bind(struct fl_host_net *net);
/* dlclose, and the struct zeroed. */
void fl_host_unload(struct fl_host_net *net);

/* ---- calls adapted to the version (host_call.c) ---- */

/*
 * init as NCCL calls it for this version: v5-v9 with the logger, v10 with the
 * profiler callback too, v11+ per communicator with comm_id, config (never NULL,
 * kept alive by the caller as long as the plugin may read it) and *ctx.
 */
int fl_host_init(const struct fl_host_net *net, uint64_t comm_id,
		 struct fl_abi_comm_config *config, fl_logger_fn logger, fl_prof_fn prof,
		 void **ctx);
/* v11+ finalize(ctx); nothing to do before v11 or without a ctx. */
int fl_host_finalize(const struct fl_host_net *net, void *ctx);
/* The version's properties widened into fl_props, NCCL's defaults where it has no field. */
int fl_host_props(const struct fl_host_net *net, int dev, struct fl_props *props);
int fl_host_listen(const struct fl_host_net *net, void *ctx, int dev, void *handle,
		   void **listen_comm);
/* config: what a v10 plugin gets with each connect; dev_comm may be NULL (host-driven). */
int fl_host_connect(const struct fl_host_net *net, void *ctx, struct fl_abi_comm_config *config,
		    int dev, void *handle, void **send_comm, struct fl_abi_dev_handle **dev_comm);
int fl_host_accept(const struct fl_host_net *net, void *listen_comm, void **recv_comm,
		   struct fl_abi_dev_handle **dev_comm);
/* Whether size fits the version's regMr (int before v8) and isend/irecv (int before v9). */
int fl_host_reg_size_fits(const struct fl_host_net *net, size_t size);
int fl_host_data_size_fits(const struct fl_host_net *net, size_t size);
/* FL_ERR_INTERNAL (NCCL's own code for it) when size does not fit the version's regMr. */
int fl_host_reg_mr(const struct fl_host_net *net, void *comm, void *data, size_t size, int type,
		   void **mhandle);
/* FL_ERR_INTERNAL when the plugin has no makeVDevice or its version cannot list ndevs. */
int fl_host_make_vdevice(const struct fl_host_net *net, int *dev, int ndevs, const int *devs);
/* FL_OK without a call when the plugin has no setNetAttr (NCCL skips it then). */
int fl_host_set_net_attr(const struct fl_host_net *net, void *ctx, void *attr);
/* isend and irecv of the versions that need their arguments adapted (before v10). */
int fl_host_isend_adapted(const struct fl_host_net *net, void *send_comm, void *data,
			  size_t size, int tag, void *mhandle, void *phandle, void **request);
int fl_host_irecv_adapted(const struct fl_host_net *net, void *recv_comm, int n, void **data,
			  size_t *sizes, int *tags, void **mhandles, void **phandles,
			  void **request);

static inline int fl_host_isend(const struct fl_host_net *net, void *send_comm, void *data,
				size_t size, int tag, void *mhandle, void *phandle, void **request)
{
	if (net->isend10)
		return net->isend10(send_comm, data, size, tag, mhandle, phandle, request);
	return fl_host_isend_adapted(net, send_comm, data, size, tag, mhandle, phandle, request);
}

/* An NCCL before v10 passes no profiler handles: adapted (a v10+ plugin expects some). */
static inline int fl_host_irecv(const struct fl_host_net *net, void *recv_comm, int n,
				void **data, size_t *sizes, int *tags, void **mhandles,
				void **phandles, void **request)
{
	if (net->irecv10 && phandles)
		return net->irecv10(recv_comm, n, data, sizes, tags, mhandles, phandles, request);
	return fl_host_irecv_adapted(net, recv_comm, n, data, sizes, tags, mhandles, phandles,
				     request);
}

#endif
