/*
 * The wrapped ("inner") NCCL net plugin: loaded as NCCL loads NCCL_NET_PLUGIN,
 * bound at the highest ncclNetPlugin_vN it exports (v5..v12), and called
 * through one v12-shaped set of functions that adapt each call to its version:
 * sizes narrowed to int where it wants int, properties widened with NCCL's
 * defaults for the fields it lacks, ctx, config and profiler handles given
 * where it takes them.
 */
#ifndef FL_EXT_INNER_H
#define FL_EXT_INNER_H

#include <limits.h>
#include <stdint.h>

#include "abi/nccl_abi.h"
#include "base/fl_types.h"
#include "base/log.h"

#define EXT_PATH_LEN 512

struct ext_inner {
	void *lib;
	const void *table; /* the ncclNetPlugin_vN it exports */
	int version;
	const char *name;  /* the name in its table */
	char spec[EXT_PATH_LEN]; /* what FABRICLAB_TRANSPORT named */
	char path[EXT_PATH_LEN]; /* the file dlopen() opened */
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
	/* Optional device-offload slots (v7+; makeVDevice v9+), NULL when the inner has none. */
	int (*get_device_mr)(void *comm, void *mhandle, void **dptr_mhandle);
	int (*irecv_consumed)(void *recv_comm, int n, void *request);
	void (*make_vdevice)(void); /* its props type depends on the version: ext_inner_make_vdevice */
	/* v11+ tuning hints; NULL when the inner has none (NCCL then sends none either). */
	int (*set_net_attr)(void *ctx, struct fl_abi_net_attr *attr);
	/*
	 * v10+: isend and irecv take what NCCL passes us, unchanged, so the data path calls them
	 * without an adapter in between; NULL before v10 (ext_inner_*_adapted).
	 */
	int (*isend10)(void *send_comm, void *data, size_t size, int tag, void *mhandle,
		       void *phandle, void **request);
	int (*irecv10)(void *recv_comm, int n, void **data, size_t *sizes, int *tags,
		       void **mhandles, void **phandles, void **request);
};

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
 * Opens one plugin and finds its highest table, reading only its name and init
 * as NCCL does before init. Errors name FABRICLAB_TRANSPORT and the path; never
 * crashes on a bad .so.
 */
int ext_inner_load(const char *spec, struct ext_inner *in);
/*
 * LIST: one plugin, or several separated by commas as NCCL_NET_PLUGIN takes
 * them; the first that loads, inits and has a device is bound in *in, its
 * process-wide init done in *ctx. Else the error of the last, all named.
 */
int ext_inner_choose(const char *list, fl_logger_fn logger, fl_prof_fn prof,
		     struct ext_inner *in, struct ext_ctx *ctx);
/* After a successful init: binds the slots, FL_ERR_USAGE naming one NCCL needs and lacks. */
int ext_inner_bind(struct ext_inner *in);
/* init for the process: v6-v10 once; v11+ a process-wide ctx (comm id 0) in *ctx. */
int ext_inner_init(const struct ext_inner *in, fl_logger_fn logger, fl_prof_fn prof,
		   struct ext_ctx *ctx);
/* v11+: one init per communicator; before v11 only the config is kept. */
int ext_inner_open_ctx(const struct ext_inner *in, uint64_t comm_id, fl_logger_fn logger,
		       fl_prof_fn prof, struct ext_ctx *ctx);
int ext_inner_close_ctx(const struct ext_inner *in, struct ext_ctx *ctx);
/* setNetAttr's ncclNetAttr_t, unchanged, with the inner's ctx (v11+ inners that have it). */
int ext_inner_set_net_attr(const struct ext_inner *in, struct ext_ctx *ctx, void *attr);

int ext_inner_props(const struct ext_inner *in, int dev, struct fl_props *props);
int ext_inner_listen(const struct ext_inner *in, struct ext_ctx *ctx, int dev, void *handle,
		     void **listen_comm);
/* dev_comm: where the inner puts its device handle (v7+); left NULL by host-driven inners. */
int ext_inner_connect(const struct ext_inner *in, struct ext_ctx *ctx, int dev, void *handle,
		      void **send_comm, struct fl_abi_dev_handle **dev_comm);
int ext_inner_accept(const struct ext_inner *in, void *listen_comm, void **recv_comm,
		     struct fl_abi_dev_handle **dev_comm);
/* FL_ERR_INTERNAL when the inner has no makeVDevice or its version cannot list ndevs. */
int ext_inner_make_vdevice(const struct ext_inner *in, int *dev, int ndevs, const int *devs);
int ext_inner_reg_mr(const struct ext_inner *in, void *comm, void *data, size_t size, int type,
		     void **mhandle);
/* isend and irecv of the versions (or NCCLs) that need their arguments adapted. */
int ext_inner_isend_adapted(const struct ext_inner *in, void *send_comm, void *data, size_t size,
			    int tag, void *mhandle, void *phandle, void **request);
int ext_inner_irecv_adapted(const struct ext_inner *in, void *recv_comm, int n, void **data,
			    size_t *sizes, int *tags, void **mhandles, void **phandles,
			    void **request);

static inline int ext_inner_isend(const struct ext_inner *in, void *send_comm, void *data,
				  size_t size, int tag, void *mhandle, void *phandle,
				  void **request)
{
	if (in->isend10)
		return in->isend10(send_comm, data, size, tag, mhandle, phandle, request);
	return ext_inner_isend_adapted(in, send_comm, data, size, tag, mhandle, phandle, request);
}

/* An NCCL before v10 above us passes no profiler handles: adapted (the inner expects some). */
static inline int ext_inner_irecv(const struct ext_inner *in, void *recv_comm, int n, void **data,
				  size_t *sizes, int *tags, void **mhandles, void **phandles,
				  void **request)
{
	if (in->irecv10 && phandles)
		return in->irecv10(recv_comm, n, data, sizes, tags, mhandles, phandles, request);
	return ext_inner_irecv_adapted(in, recv_comm, n, data, sizes, tags, mhandles, phandles,
				       request);
}

#endif
