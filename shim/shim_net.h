/*
 * The shim's view of a loaded net plugin: opened and bound the way NCCL does it
 * (NCCL_NET_PLUGIN name -> libnccl-net-NAME.so or a path, highest
 * ncclNetPlugin_vN found), and adapted from that ABI version to one shape.
 */
#ifndef SHIM_NET_H
#define SHIM_NET_H

#include <stddef.h>
#include <stdint.h>

#include "plugin/base/fl_types.h"
#include "plugin/host/host_net.h"

/* The plugin as the plugin host loaded it (host/host_net.h), with the shim's views of it. */
struct shim_net {
	struct fl_host_net host;
	void *lib;            /* dlopen handle (host.lib) */
	const void *table;    /* the ncclNet_vN_t found (host.table) */
	int version;          /* N */
	const char *name;     /* table's name field */
	void *ctx;            /* v11+: per-communicator context */
	int traffic_class;    /* what its init (v11+) or connect (v10) config says: UNDEF (-1) */
};

/*
 * The logger shim_net_init hands to the plugin; the shim's own warnings (a size
 * an old ABI cannot carry, a device type it cannot drive) go through it too.
 * Defaults to one that prints WARN lines to stderr; set it before shim_net_init.
 */
extern void (*shim_net_logger)(int level, unsigned long flags, const char *file, int line,
			       const char *fmt, ...);

/*
 * Loads `plugin` (a name, a soname or a path, like NCCL_NET_PLUGIN). version 0
 * picks the highest one exported, else exactly that one. Returns 0 or -1 with a
 * message in err.
 */
int shim_net_load(const char *plugin, int version, struct shim_net *net, char *err, size_t errlen);
/*
 * The highest ncclNetPlugin_vN with N <= max_version, as an NCCL that knows up
 * to that version binds (2.27: v10, 2.28/2.29: v11, 2.30: v12; their
 * src/plugin/net.cc ncclNetVersion[]).
 */
int shim_net_load_upto(const char *plugin, int max_version, struct shim_net *net, char *err,
		       size_t errlen);
/*
 * Calls the plugin's init with the shim logger and (v10+) NCCL's profiler callback as the shim
 * models it (nccl_rules.h); comm_id feeds v11+ init. Then,
 * as NCCL reads them only now, checks the slots NCCL calls: one left NULL is a
 * WARN naming the plugin, the version and the slot, and FL_ERR_USAGE.
 */
int shim_net_init(struct shim_net *net, uint64_t comm_id);
/* v11+ finalize, then dlclose. */
void shim_net_close(struct shim_net *net);

int shim_net_devices(struct shim_net *net, int *ndev);
int shim_net_properties(struct shim_net *net, int dev, struct fl_props *props);
int shim_net_listen(struct shim_net *net, int dev, void *handle, void **listen_comm);
int shim_net_connect(struct shim_net *net, int dev, void *handle, void **send_comm);
int shim_net_accept(struct shim_net *net, void *listen_comm, void **recv_comm);
int shim_net_reg_mr(struct shim_net *net, void *comm, void *data, size_t size, int type,
		    void **mhandle);
int shim_net_dereg_mr(struct shim_net *net, void *comm, void *mhandle);
/* FL_ERR_INTERNAL when the plugin has no regMrDmaBuf. */
int shim_net_reg_mr_dmabuf(struct shim_net *net, void *comm, void *data, size_t size, int type,
			   uint64_t offset, int fd, void **mhandle);
int shim_net_isend(struct shim_net *net, void *send_comm, void *data, size_t size, int tag,
		   void *mhandle, void **request);
int shim_net_irecv(struct shim_net *net, void *recv_comm, int n, void **data, size_t *sizes,
		   int *tags, void **mhandles, void **request);
/*
 * The same with the step's profiler handle(s), as NCCL's proxy passes them (a v6-v9 plugin
 * takes none); the calls above pass handles of the shim's that belong to no step. *request
 * on entry is what NCCL leaves there: NULL, or the optional-completion hint (nccl_rules.h),
 * which a v6-v8 plugin never sees.
 */
int shim_net_isend_ph(struct shim_net *net, void *send_comm, void *data, size_t size, int tag,
		      void *mhandle, void *phandle, void **request);
int shim_net_irecv_ph(struct shim_net *net, void *recv_comm, int n, void **data, size_t *sizes,
		      int *tags, void **mhandles, void **phandles, void **request);
int shim_net_test(struct shim_net *net, void *request, int *done, int *sizes);
/* *request stays NULL when the plugin needs no flush. */
int shim_net_iflush(struct shim_net *net, void *recv_comm, int n, void **data, int *sizes,
		    void **mhandles, void **request);
/* As NCCL does once a received step is consumed: FL_OK when the plugin has no irecvConsumed. */
int shim_net_irecv_consumed(struct shim_net *net, void *recv_comm, int n, void *request);
int shim_net_close_send(struct shim_net *net, void *send_comm);
int shim_net_close_recv(struct shim_net *net, void *recv_comm);
int shim_net_close_listen(struct shim_net *net, void *listen_comm);

#endif
