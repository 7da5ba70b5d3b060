/*
 * What a transport that forwards to another NCCL net plugin (ext) has beyond struct
 * fl_transport, reached through fl_transport.forward (NULL for the others): what NCCL hands a
 * call beyond the transport's own arguments (contexts, device handles, profiler handles, the
 * optional-completion hint), passed on unchanged; a data path whose per-request state lives in
 * the caller's request object, so that a request is one object however many layers it crosses;
 * the plugin's optional device-offload entries and tuning hints; and the hand-over of a
 * connection's data path to the caller (direct). Every member is optional.
 *
 * A request of the plugin behind (forwarded, or direct) is sized and timed by the caller by one
 * set of rules (wrap_data.c, plugin_rules): a size its test leaves at FL_SIZE_UNWRITTEN is a
 * send's posted size and a receive's unknown (NCCL zero-fills, 2.30.7 src/transport/net.cc:
 * 1617-1619; fastsocket's test never writes sizes, net_fastsocket.cc:1432-1475 at b3ff1c6); a
 * receive posted with NCCL's optional-completion hint (fl_fwd_req.hinted) that comes back with
 * 0 bytes may be done before its data (aws-ofi-nccl v1.21.1 src/nccl_ofi_rdma.cpp:3562-3564,
 * 3427, 494, 2234-2299: done on its control message, the 0 that message added written as its
 * size; NCCL hints only LL and LL128 steps, never of 0 bytes): unsized and not timed; every
 * other request is timed posted -> done, the only interval the plugin's calls show (the best
 * estimate they allow, with no ready time: peer wait is not separated from it).
 */
#ifndef FL_FORWARD_H
#define FL_FORWARD_H

#include <stdbool.h>
#include <stdint.h>

#include "base/fl_types.h"

/*
 * A forwarded request's state, held in the caller's request object from the post to the test
 * that says done (and, for a receive ended by irecvConsumed, to that call). The transport
 * writes it at the post and reads it at each test; the caller reads only hinted.
 */
struct fl_fwd_req {
	uint64_t release_ns; /* paced: not done before its bytes drained at the pacer's rate */
	int inner_done;      /* the plugin said done; the pacer may still hold the completion */
	int hinted;          /* a receive the plugin got NCCL's optional-completion hint with */
	int sizes[FL_MAX_RECVS]; /* what the plugin's test said moved, kept while the pacer holds */
};

/*
 * A connection's data path handed to the plugin behind the transport. The caller calls these as
 * NCCL would call that plugin (v10+ shapes), one buffer per receive (a multi-receive still goes
 * through the transport, as do receives from an NCCL that passes no profiler handles), applies
 * the rules above, passes no_phandle for an isend NCCL gave no profiler handle, and takes an
 * error's message from fail(), which names the plugin as the transport's own calls would.
 */
struct fl_direct {
	void *comm; /* the plugin's own send or recv comm */
	int (*isend)(void *send_comm, void *data, size_t size, int tag, void *mhandle,
		     void *phandle, void **request);
	int (*irecv)(void *recv_comm, int n, void **data, size_t *sizes, int *tags,
		     void **mhandles, void **phandles, void **request);
	int (*test)(void *request, int *done, int *sizes);
	int (*fail)(void *transport_comm, const char *op, int rc);
	void *no_phandle; /* a profiler handle the plugin may emit events on, for NCCL's none */
};

enum { FL_DIRECT_NEVER = -1, FL_DIRECT_NOT_YET = 0, FL_DIRECT_ON = 1 };

#define FL_OFFLOAD_VDEVICE 0x1       /* makeVDevice */
#define FL_OFFLOAD_DEVICE_MR 0x2     /* getDeviceMr */
#define FL_OFFLOAD_RECV_CONSUMED 0x4 /* irecvConsumed */

struct fl_forward {
	/*
	 * A receiver's throttle is paced at its senders too: the transport cannot make a
	 * receiver that posts late show in the sender's request times (ext: an inner like
	 * NCCL IB gives the sender no request until the receiver posted).
	 */
	bool sender_paces_peer_rx;
	/*
	 * Setup with NCCL's own arguments, used instead of fl_transport's listen/connect/accept
	 * when set. tctx is the per-communicator state open_ctx made (v11+ NCCL), or NULL for the
	 * process-wide one; dev_comm is NCCL's device-handle pointer (v7+; NULL before).
	 */
	int (*open_ctx)(uint64_t comm_id, int traffic_class, void **tctx);
	int (*close_ctx)(void *tctx);
	int (*listen_ctx)(void *tctx, int dev, const struct fl_endpoint *self, void *handle,
			  void **listen_comm);
	int (*connect_ctx)(void *tctx, int dev, const struct fl_endpoint *self, void *handle,
			   void **send_comm, void **dev_comm);
	int (*accept_dev)(void *listen_comm, void **recv_comm, void **dev_comm);
	/*
	 * The data path, all four or none (none: fl_transport's). *request is the plugin's own
	 * request (NULL with FL_OK: "not now"); r, the caller's, is filled here. irecv's
	 * *request comes in as NCCL left it (its optional-completion hint). test: on *done,
	 * sizes[0..n) hold what the plugin's test wrote, FL_SIZE_UNWRITTEN where it wrote
	 * nothing, for the caller's rules; the request is then the caller's to recycle (a
	 * receive held for irecvConsumed stays the plugin's until that call).
	 */
	int (*isend)(void *send_comm, void *data, size_t size, int tag, void *mhandle,
		     void *phandle, struct fl_fwd_req *r, void **request);
	int (*irecv)(void *recv_comm, int n, void **data, size_t *sizes, int *tags,
		     void **mhandles, void **phandles, struct fl_fwd_req *r, void **request);
	int (*iflush)(void *recv_comm, int n, void **data, int *sizes, void **mhandles,
		      struct fl_fwd_req *r, void **request);
	int (*test)(void *comm, void *request, int n, struct fl_fwd_req *r, int *done,
		    int *sizes);
	/*
	 * Device offload. After init, once and before any connection, offload(callable) is told
	 * which entries the caller (NCCL's ABI version) can call (FL_OFFLOAD_*) and returns those
	 * the plugin behind has too; the others must not be called. When
	 * FL_OFFLOAD_RECV_CONSUMED is returned, a completed receive stays alive after test says
	 * done, until irecv_consumed(request) ends it (NCCL calls it once for each).
	 */
	unsigned (*offload)(unsigned callable);
	int (*make_vdevice)(int *dev, int ndevs, const int *devs);
	int (*get_device_mr)(void *comm, void *mhandle, void **dptr_mhandle);
	int (*irecv_consumed)(void *recv_comm, int n, void *request);
	/* NCCL's setNetAttr hints (an ncclNetAttr_t) for tctx, passed on unchanged. */
	int (*set_net_attr)(void *tctx, void *attr);
	/*
	 * Once a connection's requests need nothing of the transport (no hidden first message
	 * ahead of them, no pacer, a plugin behind that takes NCCL's arguments unchanged), the
	 * caller calls that plugin's isend/irecv/test itself and skips a layer on every request.
	 * Asked at the posts of a joined comm without faults: FL_DIRECT_NOT_YET (ask again at the
	 * next), FL_DIRECT_NEVER, or FL_DIRECT_ON with *d filled. Requests posted through the
	 * transport before stay its own.
	 */
	int (*direct)(void *comm, struct fl_direct *d);
};

#endif
