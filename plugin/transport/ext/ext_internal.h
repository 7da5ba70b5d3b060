/*
 * The ext transport's own objects: comms, listeners and connections being set up. A request
 * has none of its own: its state is the caller's (struct fl_fwd_req, transport/forward.h).
 */
#ifndef FL_EXT_INTERNAL_H
#define FL_EXT_INTERNAL_H

#include <stdint.h>

#include "base/fl_types.h"
#include "ext_inner.h"
#include "transport/forward.h"
#include "transport/transport.h"

#define EXT_HELLO_SIZE 128

struct ext_comm;

/* The hidden first message of a connection (ext_hello.c). */
struct ext_hello_xfer {
	uint8_t *buf; /* EXT_HELLO_SIZE bytes of host memory; NULL once it moved (or none) */
	void *mhandle;
	void *request;
};

struct ext_comm {
	void *inner;
	int send;
	uint32_t id; /* this process's ext connection id, carried in the hello */
	struct fl_pacer *pacer;
	struct fl_endpoint peer;
	/* Until the hello moved: posted by the first isend/irecv, tested by the comm's calls. */
	struct ext_hello_xfer hello;
	int peer_later; /* receive side: the peer's name comes with the hello */
};

/* A connect NCCL has not seen finish yet; NCCL calls again with the same handle. */
struct ext_pending_send {
	const void *handle;
	void *inner;
	uint32_t id;
	struct fl_endpoint self;
	struct fl_endpoint peer; /* from the handle's trailer; rank -1 and no names if none */
	struct ext_pending_send *next;
};

struct ext_listen {
	void *inner;
	struct fl_endpoint self;
	int with_hello;
};

extern struct fl_host_net ext_plugin;
extern struct ext_ctx ext_process_ctx;
extern int ext_hello_on; /* FABRICLAB_EXT_HELLO (default 1) */
extern int ext_direct_on; /* FABRICLAB_EXT_DIRECT (default 1): ext_direct() may hand over */

/*
 * ---- the process-wide init's life (ext_life.c) ----
 * open: a communicator's ctx is about to open (inits the process again after
 * a last finalize ended it); close: one closed (the last ends the process-wide
 * init of a v11+ inner). devices and props answer from the inner while it is
 * inited, else from what it said just before its finalize.
 */
int ext_life_open(void);
int ext_life_close(void);
int ext_life_devices(int *ndev);
int ext_life_props(int dev, struct fl_props *props);

/*
 * getProperties (ext_props.c): the inner's, with its device names escaped,
 * maxRecvs capped to FL_MAX_RECVS and a failure naming the inner.
 */
int ext_get_properties(int dev, struct fl_props *props);

/*
 * ---- the inner's profiler events (ext_prof.c) ----
 * ext_prof_event: the callback the inner gets at init (NCCL's, but for events on
 * ext_no_phandle); ext_no_phandle(s): the handle(s) passed where NCCL gave none.
 */
extern void *ext_no_phandle;
extern void *ext_no_phandles[FL_MAX_RECVS];
int ext_prof_event(void **event, int type, void *phandle, int64_t plugin_id, void *data);

/* ---- identity (ext_hello.c) ---- */

/* After the inner's listen: our identity in the handle's unused tail, if it is all zero. */
void ext_trailer_put(void *handle, const struct fl_endpoint *self);
/* Before the inner's first connect: takes the trailer out (the inner sees its own handle). */
int ext_trailer_take(void *handle, struct fl_endpoint *peer);
void ext_hello_encode(uint8_t *buf, const struct fl_endpoint *self, uint32_t conn_id);
/* FL_ERR_USAGE when the first message is not a fabriclab hello. */
int ext_hello_decode(const uint8_t *buf, struct fl_endpoint *peer, uint32_t *pid,
		     uint32_t *conn_id);
/* Moves the hello on comm; *done = 1 once it moved. Waits for nothing but the inner's calls. */
int ext_hello_step(void *inner_comm, int send, struct ext_hello_xfer *x, int *done);
/*
 * At an isend/irecv/test of a comm whose hello has not moved yet (c->hello.buf):
 * posts it if it is not yet, else tests it; *posted = 1 once it is posted (or
 * done), and the data may follow it on the inner's connection (in order, as
 * NCCL's own messages); until then isend/irecv answer "not now". When a received
 * hello names the peer, ext_peer stops answering FL_PEER_LATER.
 */
int ext_hello_drive(struct ext_comm *c, int *posted);
void ext_hello_release(void *inner_comm, struct ext_hello_xfer *x);

/* ---- comms (ext_conn.c) ---- */

struct ext_comm *ext_comm_new(void *inner, int send, uint32_t id, const struct fl_endpoint *peer);
/*
 * The hidden hello moves on host memory: a device that offloads to the GPU
 * (netDeviceType not host, e.g. GPU-side unpack) never sees it, on both ends,
 * since both run the same inner on the same kind of device.
 */
int ext_hello_on_device(int dev);
uint32_t ext_next_conn_id(void);

/* ---- the fl_transport slots (ext_conn.c, ext_data.c) ---- */

int ext_listen_ctx(void *tctx, int dev, const struct fl_endpoint *self, void *handle,
		   void **listen_comm);
int ext_connect_ctx(void *tctx, int dev, const struct fl_endpoint *self, void *handle,
		    void **send_comm, void **dev_comm);
int ext_accept(void *listen_comm, void **recv_comm);
int ext_accept_dev(void *listen_comm, void **recv_comm, void **dev_comm);
int ext_peer(void *comm, struct fl_endpoint *peer);
int ext_close_send(void *send_comm);
int ext_close_recv(void *recv_comm);
int ext_close_listen(void *listen_comm);
int ext_reg_mr(void *comm, void *data, size_t size, int type, void **mhandle);
int ext_reg_mr_dmabuf(void *comm, void *data, size_t size, int type, uint64_t offset, int fd,
		      void **mhandle);
int ext_dereg_mr(void *comm, void *mhandle);
/* The data path (fl_forward's): each request's state is the caller's struct fl_fwd_req. */
int ext_isend(void *send_comm, void *data, size_t size, int tag, void *mhandle, void *phandle,
	      struct fl_fwd_req *r, void **request);
int ext_irecv(void *recv_comm, int n, void **data, size_t *sizes, int *tags, void **mhandles,
	      void **phandles, struct fl_fwd_req *r, void **request);
int ext_iflush(void *recv_comm, int n, void **data, int *sizes, void **mhandles,
	       struct fl_fwd_req *r, void **request);
int ext_test(void *comm, void *request, int n, struct fl_fwd_req *r, int *done, int *sizes);
void ext_set_pacer(void *comm, struct fl_pacer *pacer);
/* The inner's data path for the wrap to call itself, once nothing of ext is needed (ext_data.c). */
int ext_direct(void *comm, struct fl_direct *d);

/* ---- device offload, forwarded only when the inner has it (ext_offload.c) ---- */

/* set by ext_offload: receives wait for irecvConsumed (the inner has it and NCCL calls it) */
extern int ext_hold_for_consumed;
unsigned ext_offload(unsigned callable);
int ext_make_vdevice(int *dev, int ndevs, const int *devs);
int ext_get_device_mr(void *comm, void *mhandle, void **dptr_mhandle);
int ext_irecv_consumed(void *recv_comm, int n, void *request);

#endif
