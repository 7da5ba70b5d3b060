/*
 * The objects of one socket connection: a control stream the proxy thread
 * drives without blocking, K data streams with their helper threads, and a
 * preallocated request pool (no allocation per message).
 */
#ifndef FL_SOCK_COMM_H
#define FL_SOCK_COMM_H

#include <stddef.h>
#include <stdint.h>

#include "base/fl_types.h"
#include "sock_config.h"
#include "sock_fault.h"
#include "sock_plan.h"
#include "sock_stream.h"

/* A send comm holds 32 x 8 requests: NCCL may post 32 multi-receives of 8 each. */
#define SOCK_SEND_REQS (FL_MAX_REQUESTS * FL_MAX_RECVS)
#define SOCK_RECV_REQS FL_MAX_REQUESTS
#define SOCK_RECV_STAGE 8192
/* a payload rest up to this is read through the stage: copying it costs less than a syscall */
#define SOCK_RECV_STAGE_VIA 4096

enum sock_kind { SOCK_SEND = 1, SOCK_RECV = 2 };

/* The part every send and recv comm shares; first member of both. */
struct sock_link {
	int ctrl_fd;
	struct sock_rules rules; /* the sender's, on both ends */
	unsigned rotor;          /* data stream of the next piece */
	uint32_t seq;            /* next message number on control */
	struct fl_endpoint peer;
	struct sock_fault fault;
	struct sock_stream *streams;
	int quiesced; /* helpers stopped after a failure */
	struct fl_pacer *pacer; /* control-stream bytes (inline payloads) obey it; NULL: unpaced */
	uint64_t paced_since;   /* when the pacer first held the control stream back, 0 = not */
};

/* The part every request shares; first member of both request kinds. */
struct sock_req {
	enum sock_kind kind;
	uint16_t index;         /* in its comm's pool */
	void *comm;
	struct sock_sink sink;  /* pieces on data streams; inline payload also widens it */
	uint64_t ready_ns;
};

/*
 * A payload up to this is copied behind its header at isend, so the control
 * bytes are one buffer: one send() instead of a two-entry sendmsg (the kernel
 * imports no iovec), as NCCL Socket does with its 128 inline bytes.
 */
#define SOCK_SEND_COPY_MAX (256 - SOCK_MSG_HEADER_SIZE)

struct sock_send_req {
	struct sock_req base;
	uint8_t *data;
	size_t size;
	size_t ctrl_len;  /* header, plus the payload when inline */
	size_t ctrl_done; /* bytes of ctrl_len the kernel took */
	size_t wire_len;  /* bytes of ctrl_len in wire[]: the header, and a copied payload */
	uint8_t wire[SOCK_MSG_HEADER_SIZE + SOCK_SEND_COPY_MAX];
};

struct sock_send_comm {
	struct sock_link link;
	int nfree;
	uint16_t free[SOCK_SEND_REQS];
	/* requests with control bytes still to write, in isend order */
	uint32_t queue_head, queue_tail;
	struct sock_send_req *queue[SOCK_SEND_REQS];
	struct sock_send_req reqs[SOCK_SEND_REQS];
};

struct sock_recv_req {
	struct sock_req base;
	int n;
	int matched;      /* slots a message has claimed */
	int inline_open;  /* slots whose inline payload is still arriving */
	uint8_t *data[FL_MAX_RECVS];
	size_t cap[FL_MAX_RECVS];
	size_t got[FL_MAX_RECVS];
	int tags[FL_MAX_RECVS];
	uint8_t taken[FL_MAX_RECVS];
};

struct sock_recv_comm {
	struct sock_link link;
	int nfree;
	uint16_t free[SOCK_RECV_REQS];
	/* receives with unclaimed slots, oldest first: incoming messages go there */
	uint32_t wait_head, wait_tail;
	struct sock_recv_req *waiting[SOCK_RECV_REQS];
	/*
	 * Bytes read from control but not yet used: a header read takes what the
	 * kernel has up to this size, so small messages need one recv each, or
	 * less. Payloads are read straight into their buffers once it is empty.
	 */
	size_t stage_pos, stage_len;
	uint8_t stage[SOCK_RECV_STAGE];
	/* progress on the control stream */
	size_t header_got;
	uint8_t header[SOCK_MSG_HEADER_SIZE];
	struct sock_recv_req *payload_req; /* inline payload being read, or NULL */
	uint8_t *payload_buf;
	size_t payload_len, payload_got;
	struct sock_recv_req reqs[SOCK_RECV_REQS];
};

/*
 * Takes ownership of the fds (closed on failure too), starts one helper per
 * data stream. addr names the peer in error messages.
 */
int sock_link_open(struct sock_link *link, enum sock_kind kind, int ctrl_fd, const int *data_fds,
		   const struct sock_rules *rules, const struct fl_endpoint *peer,
		   const char *addr);
void sock_link_close(struct sock_link *link);
void sock_fds_close(int ctrl_fd, const int *data_fds, unsigned n);
/*
 * Proxy thread, after a failure: stops the helpers (so no byte lands in a
 * caller's buffer once the error is returned), shuts the streams down (so
 * the peer learns at once) and returns the recorded error.
 */
int sock_link_failed(struct sock_link *link);

static inline int sock_link_check(struct sock_link *link)
{
	if (__builtin_expect(!atomic_load_explicit(&link->fault.failed, memory_order_acquire), 1))
		return FL_OK;
	return sock_link_failed(link);
}

/* Allocate and wire up a comm around connected, hello'd streams (fds owned as above). */
int sock_send_comm_create(int ctrl_fd, const int *data_fds, const struct sock_rules *rules,
			  const struct fl_endpoint *peer, const char *addr,
			  struct sock_send_comm **out);
int sock_recv_comm_create(int ctrl_fd, const int *data_fds, const struct sock_rules *rules,
			  const struct fl_endpoint *peer, const char *addr,
			  struct sock_recv_comm **out);

int sock_isend(void *send_comm, void *data, size_t size, int tag, void *mhandle, void **request);
int sock_test_send(struct sock_send_req *r, int *done, int *sizes, struct fl_xfer_times *times);
int sock_irecv(void *recv_comm, int n, void **data, size_t *sizes, int *tags, void **mhandles,
	       void **request);
int sock_test_recv(struct sock_recv_req *r, int *done, int *sizes, struct fl_xfer_times *times);

/* Attaches a pacer to the control stream and every data stream of a comm (set_pacer). */
void sock_link_set_pacer(struct sock_link *link, struct fl_pacer *pacer);

int sock_close_send(void *send_comm);
int sock_close_recv(void *recv_comm);

#endif
