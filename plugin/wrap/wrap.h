/*
 * The wrap layer: the one native interface every ABI adapter calls, and the only
 * place that measures (and, later, traces and injects faults). It owns the
 * comm and request objects NCCL holds and forwards to the chosen transport.
 * Shapes follow the richest ABI (v12): size_t sizes, per-communicator ctx.
 */
#ifndef FL_WRAP_H
#define FL_WRAP_H

#include "base/fl_types.h"
#include "base/log.h"
#include "transport/forward.h" /* FL_OFFLOAD_* */
#include "transport/transport.h"

/* v11+: one ctx per communicator. */
int fl_wrap_init(void **ctx, uint64_t comm_id, int traffic_class, fl_logger_fn logger);
/* v6-v10: one ctx for the whole process, created on first call. */
int fl_wrap_init_process(void **ctx, fl_logger_fn logger);
int fl_wrap_finalize(void *ctx);

int fl_wrap_devices(int *ndev);
int fl_wrap_get_properties(int dev, struct fl_props *props);
int fl_wrap_listen(void *ctx, int dev, void *handle, void **listen_comm);
int fl_wrap_connect(void *ctx, int dev, void *handle, void **send_comm);
int fl_wrap_accept(void *listen_comm, void **recv_comm);
/* The same with NCCL's device-handle pointer (v7+), forwarded where the transport takes it. */
int fl_wrap_connect_dev(void *ctx, int dev, void *handle, void **send_comm, void **dev_comm);
int fl_wrap_accept_dev(void *listen_comm, void **recv_comm, void **dev_comm);
int fl_wrap_reg_mr(void *comm, void *data, size_t size, int type, void **mhandle);
int fl_wrap_reg_mr_dmabuf(void *comm, void *data, size_t size, int type, uint64_t offset, int fd,
			  void **mhandle);
int fl_wrap_dereg_mr(void *comm, void *mhandle);
int fl_wrap_isend(void *send_comm, void *data, size_t size, int tag, void *mhandle, void *phandle,
		  void **request);
int fl_wrap_irecv(void *recv_comm, int n, void **data, size_t *sizes, int *tags, void **mhandles,
		  void **phandles, void **request);
int fl_wrap_iflush(void *recv_comm, int n, void **data, int *sizes, void **mhandles,
		   void **request);
/* sizes may be NULL (NCCL passes NULL when testing a flush). */
int fl_wrap_test(void *request, int *done, int *sizes);
int fl_wrap_close_send(void *send_comm);
int fl_wrap_close_recv(void *recv_comm);
int fl_wrap_close_listen(void *listen_comm);

/*
 * Device offload (ext over a plugin that has it). After the first init, the ABI layer says
 * which optional entries its NCCL version can call (FL_OFFLOAD_*); the answer is those the
 * transport forwards, and only those may be called or advertised. With
 * FL_OFFLOAD_RECV_CONSUMED a receive request test said done stays valid until
 * fl_wrap_irecv_consumed.
 */
unsigned fl_wrap_offload(unsigned callable);
int fl_wrap_make_vdevice(int *dev, int ndevs, const int *devs);
int fl_wrap_get_device_mr(void *comm, void *mhandle, void **dptr_mhandle);
int fl_wrap_irecv_consumed(void *recv_comm, int n, void *request);
/* setNetAttr (v11+): handed to the transport when it forwards hints (ext), else accepted. */
int fl_wrap_set_net_attr(void *ctx, void *attr);

/* Tests and benchmarks: route the next init to this transport instead of the configured one. */
void fl_wrap_use_transport(const struct fl_transport *transport);

#endif
