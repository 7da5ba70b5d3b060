/*
 * The interface every transport implements (sockets, verbs, and ext: another NCCL plugin).
 * A transport moves bytes and nothing else: it never counts or traces. Fault
 * injection reaches it only as a pacer (pace.h) it consults before putting
 * bytes on the wire, so a throttled hop is slow on the wire itself. Errors are
 * returned as fl_result with a message left in fl_error_set().
 * isend/irecv/test run on NCCL's proxy thread; setup calls on other threads.
 */
#ifndef FL_TRANSPORT_H
#define FL_TRANSPORT_H

#include <stdbool.h>

#include "base/fl_types.h"

struct fl_pacer;
struct fl_direct;

struct fl_transport {
	const char *name;
	/* Once per process; returns FL_OK with *ndev == 0 when unusable here. */
	int (*init)(void);
	int (*devices)(int *ndev);
	int (*get_properties)(int dev, struct fl_props *props);
	/* Fills handle (FL_HANDLE_SIZE bytes) with an address and self. */
	int (*listen)(int dev, const struct fl_endpoint *self, void *handle, void **listen_comm);
	/* Non-blocking: *send_comm stays NULL until established; NCCL calls again, same handle. */
	int (*connect)(int dev, const struct fl_endpoint *self, void *handle, void **send_comm);
	int (*accept)(void *listen_comm, void **recv_comm);
	/*
	 * Who is at the other end of an established send or recv comm: FL_OK, an error when
	 * it cannot be known, or FL_PEER_LATER while the name is still on its way (a
	 * forwarded plugin's hidden first message): asked again at each isend/irecv/test
	 * until it answers otherwise.
	 */
	int (*peer)(void *comm, struct fl_endpoint *peer);
	int (*reg_mr)(void *comm, void *data, size_t size, int type, void **mhandle);
	int (*reg_mr_dmabuf)(void *comm, void *data, size_t size, int type, uint64_t offset, int fd,
			     void **mhandle);
	int (*dereg_mr)(void *comm, void *mhandle);
	/* *request == NULL with FL_OK means "not now, call again". */
	int (*isend)(void *send_comm, void *data, size_t size, int tag, void *mhandle,
		     void **request);
	int (*irecv)(void *recv_comm, int n, void **data, size_t *sizes, int *tags, void **mhandles,
		     void **request);
	int (*iflush)(void *recv_comm, int n, void **data, int *sizes, void **mhandles,
		      void **request);
	/*
	 * On *done, sizes[] hold the bytes moved and times the phases; the request is then
	 * gone. sizes and times may be NULL (a flush; a caller that does not time). A receive's
	 * size the plugin behind did not tell is FL_SIZE_UNWRITTEN (never the posted size: NCCL
	 * posts whole slots, larger than what arrives), and times->untimed says done does not
	 * date the data (a receive completed early under NCCL's optional-completion hint).
	 */
	int (*test)(void *request, int *done, int *sizes, struct fl_xfer_times *times);
	/* Optional (NULL: cannot be paced). Attaches a pacer to an established send or recv comm
	 * before its first request; NULL detaches. Called on the thread that will post. */
	void (*set_pacer)(void *comm, struct fl_pacer *pacer);
	/*
	 * A receiver's throttle is paced at its senders too: the transport cannot make a
	 * receiver that posts late show in the sender's request times (ext: an inner like
	 * NCCL IB gives the sender no request until the receiver posted).
	 */
	bool sender_paces_peer_rx;
	/*
	 * Its test dates no wire of its own, every request's wire interval is posted -> done
	 * (ext: fl_xfer_times.whole_request): the wire and the posted -> done unions of its
	 * connections are the same, and are kept once (fl_conn_stats.active_is_wire).
	 */
	bool whole_requests;
	int (*close_send)(void *send_comm);
	int (*close_recv)(void *recv_comm);
	int (*close_listen)(void *listen_comm);
	/*
	 * Optional, for a transport that forwards to another NCCL net plugin (ext): what NCCL
	 * hands a call beyond the transport's own arguments, passed on unchanged. The wrap
	 * calls these instead of listen/connect/isend/irecv when they are set. tctx is the
	 * per-communicator state open_ctx made (v11+ NCCL), or NULL for the process-wide one.
	 */
	int (*open_ctx)(uint64_t comm_id, int traffic_class, void **tctx);
	int (*close_ctx)(void *tctx);
	int (*listen_ctx)(void *tctx, int dev, const struct fl_endpoint *self, void *handle,
			  void **listen_comm);
	int (*connect_ctx)(void *tctx, int dev, const struct fl_endpoint *self, void *handle,
			   void **send_comm, void **dev_comm);
	/* NCCL's device-handle pointer (v7+; NULL before) goes to the forwarded plugin unchanged. */
	int (*accept_dev)(void *listen_comm, void **recv_comm, void **dev_comm);
	int (*isend_ph)(void *send_comm, void *data, size_t size, int tag, void *mhandle,
			void *phandle, void **request);
	int (*irecv_ph)(void *recv_comm, int n, void **data, size_t *sizes, int *tags,
			void **mhandles, void **phandles, void **request);
	/*
	 * Optional device-offload entries of a forwarded plugin (ext). After init, once and
	 * before any connection, offload(callable) is told which of them the caller (NCCL's
	 * ABI version) can call (FL_OFFLOAD_*) and returns those the plugin behind has too;
	 * the others must not be called. When FL_OFFLOAD_RECV_CONSUMED is returned, a
	 * completed receive request stays alive after test says done, until
	 * irecv_consumed(request) ends it (NCCL calls it once for each). The device handles
	 * of connect/accept are NCCL's own pointer, passed through (connect_ctx, accept_dev).
	 */
	unsigned (*offload)(unsigned callable);
	int (*make_vdevice)(int *dev, int ndevs, const int *devs);
	int (*get_device_mr)(void *comm, void *mhandle, void **dptr_mhandle);
	int (*irecv_consumed)(void *recv_comm, int n, void *request);
	/* Optional: NCCL's setNetAttr hints (an ncclNetAttr_t) for tctx, passed on unchanged. */
	int (*set_net_attr)(void *tctx, void *attr);
	/*
	 * Optional, for a transport that forwards to another NCCL net plugin (ext): once a
	 * connection's requests need nothing of the transport (no hidden first message ahead
	 * of them, no pacer, a plugin behind that takes NCCL's arguments unchanged), the wrap
	 * calls that plugin's isend/irecv/test itself and skips a layer on every request. Asked
	 * at the posts of a joined comm without faults: FL_DIRECT_NOT_YET (ask again at the
	 * next), FL_DIRECT_NEVER, or FL_DIRECT_ON with *d filled. Requests posted through the
	 * transport before stay its own; see struct fl_direct for what the wrap then does.
	 */
	int (*direct)(void *comm, struct fl_direct *d);
};

/*
 * A connection's data path handed to the plugin behind the transport. The wrap calls these
 * as NCCL would call that plugin (v10+ shapes), one buffer per receive (a multi-receive
 * still goes through the transport, as do receives from an NCCL that passes no profiler
 * handles), and does what the transport would: a size the plugin's test leaves at
 * FL_SIZE_UNWRITTEN is a send's posted size and a receive's unknown (NCCL zero-fills,
 * 2.30.7 src/transport/net.cc:1617-1619; fastsocket's test never writes sizes,
 * net_fastsocket.cc:1432-1475 at b3ff1c6), a receive posted with NCCL's optional-completion
 * hint that comes back with 0 bytes is not timed (it may be done before its data), every
 * other request is timed posted -> done (whole_requests), an isend NCCL gave no profiler
 * handle passes no_phandle, and an error's message comes from fail(), which names the
 * plugin as the transport's own calls would.
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
#define FL_SIZE_UNWRITTEN (-1)

#define FL_PEER_LATER (-1) /* peer(): not known yet, ask again (never an fl_result) */

#define FL_OFFLOAD_VDEVICE 0x1       /* makeVDevice */
#define FL_OFFLOAD_DEVICE_MR 0x2     /* getDeviceMr */
#define FL_OFFLOAD_RECV_CONSUMED 0x4 /* irecvConsumed */

extern const struct fl_transport fl_socket_transport;
extern const struct fl_transport fl_ib_transport; /* verbs: InfiniBand and RoCE */
extern const struct fl_transport fl_ext_transport; /* FABRICLAB_TRANSPORT=ext:<plugin> */

#endif
