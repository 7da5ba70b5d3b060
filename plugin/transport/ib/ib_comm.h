/*
 * The objects of one ib connection. A connection goes one way: the send comm
 * owns the CTS FIFO the receiver writes into and the QPs that carry payload;
 * the recv comm owns the buffers' keys, the receive WRs that catch each
 * write-with-immediate, and a shadow of the FIFO it writes from. Each comm
 * has its own CQ, so completions are polled with no lock any other
 * connection takes; requests come from preallocated pools.
 */
#ifndef FL_IB_COMM_H
#define FL_IB_COMM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "base/fl_types.h"
#include "ib_device.h"
#include "ib_fifo.h"
#include "ib_stripe.h"

struct fl_pacer;

/* Comms are allocated on cache lines; aligned_alloc wants a multiple of the alignment. */
#define IB_ROUND64(n) (((n) + 63) & ~(size_t)63)
#define IB_SEND_REQS (IB_FIFO_DEPTH * FL_MAX_RECVS)
#define IB_SQ_DEPTH 256                               /* send WRs per QP */
#define IB_RQ_DEPTH (IB_FIFO_DEPTH * FL_MAX_RECVS)    /* receive WRs per QP */
#define IB_SIGNAL_EVERY (IB_SQ_DEPTH / 4)              /* unsignalled WRs before one is */
#define IB_MAX_MSG ((1u << 29) - 1)                   /* the immediate carries 29 bits of size */
#define IB_IMM_ELEM_SHIFT 29
#define IB_STALL_CHECK_NS 100000000ULL                 /* idle this long: is the peer alive? */
#define IB_PACE_PIECE_MIN 4096

enum ib_req_kind { IB_REQ_SEND = 1, IB_REQ_RECV = 2, IB_REQ_FLUSH = 3 };

/* wr_id: what a completion belongs to. */
enum ib_wr_kind {
	IB_WR_DATA = 1,    /* a message's last write on a QP */
	IB_WR_RECLAIM = 2, /* signalled only to free send-queue slots */
	IB_WR_CTS = 3,
	IB_WR_RECV = 4,
	IB_WR_FLUSH = 5,
};

static inline uint64_t ib_wr_id(enum ib_wr_kind kind, int qp, unsigned req, uint32_t sq_count)
{
	return (uint64_t)kind << 52 | (uint64_t)qp << 48 | (uint64_t)req << 32 | sq_count;
}
#define IB_WR_KIND(id) ((int)((id) >> 52) & 0xf)
#define IB_WR_QP(id) ((int)((id) >> 48) & 0xf)
#define IB_WR_REQ(id) ((unsigned)((id) >> 32) & 0xffff)
#define IB_WR_COUNT(id) ((uint32_t)(id))

/* A send queue's occupancy: unsignalled WRs are freed by the next signalled one. */
struct ib_sq {
	uint32_t posted;
	uint32_t done;      /* posted count as of the latest signalled completion */
	uint32_t unsignalled;
};

/* What the side channel carries about one end before the QPs connect. */
struct ib_meta {
	uint8_t nqps;
	uint8_t link_layer;
	uint8_t port;
	uint8_t mtu;
	uint16_t lid;
	uint8_t gid[16];
	uint32_t qpn[IB_MAX_QPS];
	uint64_t fifo_addr; /* sender only */
	uint32_t fifo_rkey;
};

/* The part both comm kinds share; first member of each. */
struct ib_link {
	enum ib_req_kind kind; /* IB_REQ_SEND on send comms, IB_REQ_RECV on recv comms */
	struct ib_device *dev;
	int nqps;
	int fd; /* the side channel, kept to notice a peer that went away */
	struct ibv_cq *cq;
	int cq_depth;
	struct ibv_qp *qps[IB_MAX_QPS];
	struct ib_sq sq[IB_MAX_QPS];
	struct fl_pacer *pacer;
	uint32_t pace_rate_kib; /* the pacer's slowest rate, KiB/s (0 = none) */
	bool pace_is_cable;     /* the pacer is the cable: date the wire on it alone */
	size_t piece_max;       /* bytes per RDMA write: smaller when paced (ib_pace.c) */
	struct fl_endpoint peer;
	int failed; /* fl_result of the first failure; the text stays in failure */
	char failure[FL_ERROR_LEN];
	uint64_t idle_since_ns;
	uint64_t last_check_ns;
};

struct ib_send_req {
	enum ib_req_kind kind;
	uint16_t index;
	uint8_t in_use;
	uint8_t matched;
	struct ib_send_comm *comm;
	uint8_t *data;
	size_t size;  /* as posted */
	size_t sent;  /* clipped to the receiver's buffer */
	int tag;
	int elem;
	uint32_t lkey;
	uint32_t rkey;
	uint64_t raddr;
	struct ib_share shares[IB_MAX_QPS];
	size_t cursor[IB_MAX_QPS]; /* bytes of each share posted */
	uint8_t final_posted;      /* QPs whose final write is out (bit mask) */
	uint8_t rotor;             /* the QP whose final write is always signalled */
	int expected, completed;   /* signalled data completions */
	uint64_t ready_ns, wire_start_ns, wire_end_ns;
	/*
	 * Paced: the emulated cable's clock (ib_pace.c). cable_free_ns is when the
	 * pieces posted so far have left it at the paced rate; host_idle_ns sums
	 * the time it stood idle because the proxy thread was away with pieces
	 * still to post; cable_start_ns is when its first piece got the cable.
	 * 0 unpaced.
	 */
	uint64_t cable_start_ns, cable_free_ns, host_idle_ns;
};

struct ib_send_comm {
	struct ib_link link;
	/* the receiver's pacing, which holds back this side's writes as a slow link would */
	struct fl_pacer *peer_rx;
	uint32_t peer_rx_kib;
	uint64_t cable_free_ns; /* paced: when the pieces posted so far leave the cable */
	struct ib_fifo_slot *fifo; /* IB_FIFO_DEPTH slots, written by the receiver */
	struct ibv_mr *fifo_mr;
	uint64_t cts_count;        /* the receive whose slot is being consumed */
	int slot_n;                /* its entries, 0 until it arrived */
	uint8_t consumed;          /* entries matched to sends (bit mask) */
	unsigned rotor;
	uint32_t queue_head, queue_tail; /* sends not yet fully posted, in isend order */
	uint16_t queue[IB_SEND_REQS];
	int nfree;
	uint16_t free[IB_SEND_REQS];
	struct ib_send_req reqs[IB_SEND_REQS];
};

struct ib_recv_req {
	enum ib_req_kind kind;
	uint16_t index;
	uint8_t in_use;
	uint8_t cts_posted;
	struct ib_recv_comm *comm;
	int n;
	int elems_done;
	uint64_t count;
	uint8_t arrivals[FL_MAX_RECVS];
	size_t cap[FL_MAX_RECVS];
	size_t got[FL_MAX_RECVS];
	uint64_t ready_ns, done_ns;
};

struct ib_flush_req {
	enum ib_req_kind kind;
	uint8_t in_use;
	uint8_t done;
	struct ib_recv_comm *comm;
};

struct ib_recv_comm {
	struct ib_link link;
	struct ib_fifo_slot *shadow; /* what each CTS write sends */
	struct ibv_mr *shadow_mr;
	uint64_t fifo_addr;          /* the sender's FIFO */
	uint32_t fifo_rkey;
	uint64_t recv_count;         /* receives posted so far */
	uint64_t cts_count;          /* CTS written so far (<= recv_count; pacing may hold some) */
	uint64_t cursor[IB_MAX_QPS]; /* per QP: the receive its next immediate belongs to */
	uint8_t seen[IB_MAX_QPS];    /* immediates of that receive seen on the QP */
	struct ib_recv_req reqs[IB_FIFO_DEPTH];
	/* iflush: a QP connected to itself reads one byte back */
	struct ibv_qp *flush_qp;
	struct ib_sq flush_sq;
	uint64_t *flush_word;
	struct ibv_mr *flush_mr;
	struct ib_flush_req flushes[IB_FIFO_DEPTH];
};

/* Pacing (ib_pace.c). */
void ib_pace_attach(struct ib_link *l, struct fl_pacer *pacer);
/* The sender learns the receiver's rate from a CTS. */
int ib_pace_peer_rate(struct ib_send_comm *c, uint32_t rate_kib, uint64_t now);
/* true: bytes may go now (both this side's pacer and the receiver's allow; both charged). */
int ib_pace_send_allows(struct ib_send_comm *c, uint64_t now, size_t bytes);
/* Pieces wait (refused, the send queue full, or more to post): both buckets keep the time owed. */
void ib_pace_send_backlog(struct ib_send_comm *c, uint64_t now);
/* A piece of r went out at now: advances r's cable clock (nothing when the link is not paced). */
void ib_pace_send_piece(struct ib_send_comm *c, struct ib_send_req *r, uint64_t now, size_t bytes);

/* Records the first failure on the link (later ones are consequences) and returns it. */
int ib_link_fail(struct ib_link *l, int err);
/* FL_OK, or the recorded failure again (its text back in fl_fail). */
static inline int ib_link_check(struct ib_link *l)
{
	if (__builtin_expect(!l->failed, 1))
		return FL_OK;
	return fl_fail(l->failed, "%s", l->failure);
}
/* The link's health between completions: device events, a silent peer. */
int ib_link_watch(struct ib_link *l, int progressed, int waiting, uint64_t now);
/* "retry exceeded on QP 1 of the connection to node/dev" text for a failed completion. */
int ib_link_wc_failed(struct ib_link *l, const struct ibv_wc *wc, const char *what);
int ib_link_qp_index(const struct ib_link *l, uint32_t qp_num);

/* Connection resources: CQ, QPs (in INIT), teardown. */
int ib_link_open(struct ib_link *l, struct ib_device *dev, int nqps, int send_side);
void ib_link_close(struct ib_link *l);
void ib_link_describe(const struct ib_link *l, struct ib_meta *m);
/* Moves every QP to RTR then RTS against the peer's metadata. */
int ib_link_connect(struct ib_link *l, const struct ib_meta *remote);

int ib_send_comm_init(struct ib_send_comm *c);
void ib_send_comm_fini(struct ib_send_comm *c);
int ib_recv_comm_init(struct ib_recv_comm *c);
void ib_recv_comm_fini(struct ib_recv_comm *c);

int ib_isend(struct ib_send_comm *c, void *data, size_t size, int tag, struct ib_mr *mr,
	     void **request);
int ib_test_send(struct ib_send_req *r, int *done, int *sizes, struct fl_xfer_times *times);
int ib_irecv(struct ib_recv_comm *c, int n, void **data, size_t *sizes, int *tags,
	     struct ib_mr **mrs, void **request);
int ib_test_recv(struct ib_recv_req *r, int *done, int *sizes, struct fl_xfer_times *times);
int ib_iflush(struct ib_recv_comm *c, int n, void **data, int *sizes, struct ib_mr **mrs,
	      void **request);
int ib_test_flush(struct ib_flush_req *r, int *done, int *sizes, struct fl_xfer_times *times);
void ib_flush_close(struct ib_recv_comm *c);
/* Receiver: handles what its CQ says; posts the CTS pacing held back. */
int ib_recv_progress(struct ib_recv_comm *c);

#endif
