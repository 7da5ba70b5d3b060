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
struct fl_forward;

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
	 * size the transport cannot tell is FL_SIZE_UNWRITTEN (never the posted size: NCCL posts
	 * whole slots, larger than what arrives), and times->untimed says done does not date
	 * the data.
	 */
	int (*test)(void *request, int *done, int *sizes, struct fl_xfer_times *times);
	/* Optional (NULL: cannot be paced). Attaches a pacer to an established send or recv comm
	 * before its first request; NULL detaches. Called on the thread that will post. */
	void (*set_pacer)(void *comm, struct fl_pacer *pacer);
	int (*close_send)(void *send_comm);
	int (*close_recv)(void *recv_comm);
	int (*close_listen)(void *listen_comm);
	/*
	 * A transport that forwards to another NCCL net plugin (ext): what it has beyond the
	 * above (forward.h); NULL for the others. Where forward has a data path, isend, irecv,
	 * iflush and test above are NULL: a request goes through forward's, its state in the
	 * caller's request object.
	 */
	const struct fl_forward *forward;
};

#define FL_SIZE_UNWRITTEN (-1)

#define FL_PEER_LATER (-1) /* peer(): not known yet, ask again (never an fl_result) */

extern const struct fl_transport fl_socket_transport;
extern const struct fl_transport fl_ib_transport; /* verbs: InfiniBand and RoCE */
extern const struct fl_transport fl_ext_transport; /* FABRICLAB_TRANSPORT=ext:<plugin> */

#endif
