/* The fake libibverbs' private state: devices, verbs objects, the shared-memory fabric. */
#ifndef FV_INTERNAL_H
#define FV_INTERNAL_H

#include <infiniband/verbs.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

#include "fakeverbs.h"
#include "fabric/topo/topo.h"

/* Exports rdma-core declares only in its private headers (driver.h, sa-kern-abi.h) or in none. */
struct ib_uverbs_ah_attr;
struct ib_uverbs_qp_attr;
struct ib_user_path_rec;
struct ibv_sa_path_rec;
void ibv_copy_ah_attr_from_kern(struct ibv_ah_attr *dst, struct ib_uverbs_ah_attr *src);
void ibv_copy_qp_attr_from_kern(struct ibv_qp_attr *dst, struct ib_uverbs_qp_attr *src);
void ibv_copy_path_rec_from_kern(struct ibv_sa_path_rec *dst, struct ib_user_path_rec *src);
void ibv_copy_path_rec_to_kern(struct ib_user_path_rec *dst, struct ibv_sa_path_rec *src);
const char *ibv_get_sysfs_path(void);
int ibv_read_sysfs_file(const char *dir, const char *file, char *buf, size_t size);
int ibv_query_gid_type(struct ibv_context *context, uint8_t port_num, unsigned int index,
		       unsigned int *type);
int ibv_dontfork_range(void *base, size_t size);
int ibv_dofork_range(void *base, size_t size);

/* Everything declared from here on stays inside the .so; only the ibv_* names and the
 * fakeverbs_* control functions (declared above) are exported. */
#pragma GCC visibility push(hidden)

#define FV_MAX_DEVS	8
#define FV_MAX_PORTS	2
#define FV_MAX_GIDS	4
#define FV_GID_TBL_LEN	16
#define FV_MAX_SGE	16
#define FV_MAX_INLINE	256
#define FV_MAX_QP_WR	32768
#define FV_MAX_CQE	4194303
#define FV_MAX_RD_ATOM	16
#define FV_MAX_MSG_SZ	0x40000000u
#define FV_PKEY_TBL_LEN	128

/* ---- configuration (fv_config.c) ---- */

struct fv_port {
	uint8_t link_layer;		/* IBV_LINK_LAYER_* */
	uint8_t width;			/* active_width code */
	uint8_t speed;			/* active_speed code */
	_Atomic int state;		/* enum ibv_port_state, changed by port-down injection */
	uint16_t lid;			/* IB only */
	int ngids;
	union ibv_gid gid[FV_MAX_GIDS];
	uint8_t gid_type[FV_MAX_GIDS];	/* enum ibv_gid_type */
};

struct fv_device {
	struct ibv_device ibdev;
	int index;
	int nic;			/* its NIC in the schedule (fv_elements.c): out 2 nic, in 2 nic + 1 */
	uint64_t guid;			/* host order */
	bool data_direct;		/* libmlx5 names a DataDirect device for it (fv_mlx5dv.c):
					 * the description's, or FABRICLAB_FAKEVERBS_DATA_DIRECT */
	int nports;
	struct fv_port port[FV_MAX_PORTS];
};

struct fv_config {
	int ndevs;
	struct fv_device dev[FV_MAX_DEVS];
	int node;			/* the description's, or FABRICLAB_FAKEVERBS_NODE: LIDs/GUIDs
					 * differ per "host" */
	bool described;			/* FABRICLAB_FABRIC: the fabric's description (fv_describe.c) */
	struct ft_topo topo;		/* ... read once; empty without one */
	char dir[200];			/* FABRICLAB_FAKEVERBS_DIR */
	char sysfs_root[160];		/* FABRICLAB_FAKEVERBS_SYSFS: the published tree */
	long retry_ms;			/* FABRICLAB_FAKEVERBS_RETRY_MS, 0: from the QP's timeout */
	bool verbose;
	bool dmabuf;			/* FABRICLAB_FAKEVERBS_DMABUF */
	uint32_t sq_alloc;		/* FABRICLAB_FAKEVERBS_MAX_SEND_WR: least SQ a QP gets */
};

/* Reads the description and the environment once; NULL (errno set, reason on stderr) when
 * either is malformed. */
struct fv_config *fv_config_get(void);
/*
 * The description named by FABRICLAB_FABRIC into cfg (fv_describe.c): its topology, this
 * process's node in it (FABRICLAB_FABRIC_NODE, else FABRICLAB_NODE_NAME, else the first), the
 * node's NICs as a device spec into spec, the emulation's settings. 0 without a description;
 * EINVAL, said on stderr, when it is malformed or has no such node.
 */
int fv_describe(struct fv_config *cfg, char *spec, size_t len);
/* Each device's NIC in the schedule: the description's, else one of its node's own. 0 or EINVAL. */
int fv_describe_nics(struct fv_config *cfg);
int fv_config_parse_devices(struct fv_config *cfg, const char *spec);
struct fv_port *fv_port_of(struct ibv_context *ctx, uint8_t port_num);
/* Writes the devices' sysfs tree under cfg->sysfs_root (fv_sysfs_tree.c): 0 or an errno. */
int fv_sysfs_publish(struct fv_config *cfg);

/* ---- verbs objects ---- */

struct fv_event {
	struct ibv_async_event ev;
	struct fv_event *next;
};

struct fv_context {
	struct fv_device *dev;
	int async_rd, async_wr;		/* pipe: one byte per queued event */
	pthread_mutex_t ev_lock;
	struct fv_event *ev_head, *ev_tail;
	struct fv_context *next_open;	/* list of open contexts (port events fan out) */
	struct verbs_context vctx;	/* must stay last: vctx.context is what users hold */
};

struct fv_pd {
	struct ibv_pd pd;
	_Atomic int users;		/* MRs and QPs: dealloc is refused while any remain */
};

struct fv_mr {
	struct ibv_mr mr;
	struct fv_pd *pd;
	uint64_t iova;			/* what remote/local addresses are expressed in */
	unsigned int access;
	bool dmabuf_map;		/* our mapping of a dma-buf fd, unmapped at dereg */
	unsigned long long dmabuf_ino;	/* ... of the file with this inode, from this offset */
	uint64_t dmabuf_offset;
};

struct fv_cqe_meta {
	struct fv_qp *qp;		/* send completions free SQ slots when polled */
	uint64_t sq_index;
};

struct fv_cq {
	union {
		struct ibv_cq cq;
		struct ibv_cq_ex cqx;	/* its first fields are those of struct ibv_cq */
	};
	pthread_mutex_t lock;
	struct ibv_wc *wc;
	struct fv_cqe_meta *meta;
	uint32_t cap, head, count;
	bool overrun;
	bool armed;			/* req_notify_cq: the next completion raises an event */
	bool extended;			/* made by create_cq_ex */
	struct ibv_wc cur;		/* extended polling: the entry the read_* calls see */
	_Atomic int users;		/* QPs: destroy is refused while any remain */
};

/* One posted send work request, resolved at post time. */
struct fv_swr {
	uint64_t wr_id;
	uint8_t opcode;			/* enum ibv_wr_opcode */
	uint8_t local_err;		/* enum ibv_wc_status found before transmission */
	bool signaled;
	bool inl;
	uint32_t imm;			/* network order, as given */
	uint64_t raddr;
	uint32_t rkey;
	uint32_t len;
	int nsge;
	uint64_t due_ns;		/* physics: not completed before (0: at once) */
	uint64_t push_ns;		/* physics: handed to the responder then (0: not scheduled) */
	struct ibv_sge sge[FV_MAX_SGE];
	uint8_t data[FV_MAX_INLINE];
};

struct fv_rwr {
	uint64_t wr_id;
	int nsge;
	struct ibv_sge sge[FV_MAX_SGE];
};

struct fv_srq {
	struct ibv_srq srq;
	pthread_mutex_t lock;		/* posting against the NIC's consumption */
	struct fv_rwr *rq;
	uint32_t size, max_wr, max_sge, limit;
	uint64_t head, tail;
	_Atomic int users;		/* QPs: destroy is refused while any remain */
};
#define fv_srq_of(s) ((struct fv_srq *)(s))

bool fv_srq_empty(struct fv_srq *s);
void fv_srq_take(struct fv_srq *s, struct fv_rwr *out);
int fv_op_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad);

struct fv_stash;

struct fv_qp {
	union {
		struct ibv_qp qp;
		struct ibv_qp_ex qpx;	/* starts with the ibv_qp */
	};
	pthread_mutex_t lock;
	_Atomic int refs;
	struct fv_qp *next_local;
	int slot;			/* registry slot */
	enum ibv_qp_state state;	/* the hardware's view; qp.state is what modify/query saw */
	int sq_sig_all;
	struct ibv_qp_cap cap;
	/* attributes (valid once the state that sets them was reached) */
	uint8_t port_num;
	uint16_t pkey_index;
	unsigned int access;
	enum ibv_mtu path_mtu;
	uint32_t dest_qpn, rq_psn, sq_psn;
	struct ibv_ah_attr ah;
	uint8_t timeout, retry_cnt, rnr_retry, min_rnr_timer, max_rd_atomic, max_dest_rd_atomic;
	/* send queue: [freed, acked) done and awaiting poll, [acked, sent) on the wire,
	 * [sent, head) posted but not transmitted */
	struct fv_swr *sq;
	uint32_t sq_size;
	uint64_t sq_head, sq_sent, sq_acked;
	_Atomic uint64_t sq_freed;
	uint64_t sent_ns;		/* when the oldest unacked WR went out */
	uint64_t next_live_check_ns;
	pid_t peer_pid;
	uint64_t peer_pulse;
	/* receive queue, or the shared one the QP was created with */
	struct fv_srq *srq;
	struct fv_rwr *rq;
	uint32_t rq_size;
	uint64_t rq_head, rq_tail;
	/* responder: messages waiting for a receive WR or for this QP to reach RTR */
	struct fv_stash *stash_head, *stash_tail;
	uint32_t nakked_src;		/* requester refused once: its later requests are dropped */
	/* extended posting (ibv_wr_*): between wr_start and wr_complete the QP stays locked */
	bool extended;
	bool wr_open;			/* wr_cur has its opcode, not yet its data */
	int batch_err;			/* first error of this batch: none of it is posted */
	uint64_t batch_head;		/* sq_head at wr_start */
	struct ibv_send_wr wr_cur;
	struct ibv_sge wr_sge[FV_MAX_SGE];
};

static inline struct fv_context *fv_ctx(struct ibv_context *c)
{
	return (struct fv_context *)((char *)c - offsetof(struct fv_context, vctx.context));
}
#define fv_qp_of(q)  ((struct fv_qp *)(q))
#define fv_cq_of(c)  ((struct fv_cq *)(c))
#define fv_mr_of(m)  ((struct fv_mr *)(m))
#define fv_pd_of(p)  ((struct fv_pd *)(p))

/* ---- fabric: registry of QPs and per-process message rings (fv_shm.c) ---- */

#define FV_REG_SLOTS	16384
#define FV_RING_SLOTS	1024

struct fv_reg_entry {
	_Atomic uint32_t qpn;		/* 0 = free */
	_Atomic int32_t pid;
	uint64_t incarnation;		/* of the owner's ring */
	uint8_t link_layer;
	uint8_t ngids;
	uint16_t lid;
	int32_t nic;			/* its device's NIC in the schedule */
	uint8_t gid_type[FV_MAX_GIDS];
	union ibv_gid gid[FV_MAX_GIDS];
	/* written by responders, read by the owner's NIC thread */
	_Atomic uint64_t acked;		/* number of this QP's messages fully executed */
	_Atomic uint32_t nak_status;	/* nonzero: message nak_index failed with it */
	_Atomic uint64_t nak_index;
};

struct fv_registry {
	_Atomic uint32_t magic;
	_Atomic uint32_t next_qpn;
	struct fv_reg_entry e[FV_REG_SLOTS];
};

enum fv_msg_flags { FV_MSG_INLINE = 1 };

/* A request from a requester QP to a responder QP. */
struct fv_msg {
	uint32_t src_qpn, dst_qpn;
	int32_t src_pid;
	int32_t src_slot;
	uint64_t index;			/* position in the requester's SQ */
	uint8_t opcode, flags, nsge, src_gid_type;
	uint8_t timeout, retry_cnt, rnr_retry, src_link_layer;
	uint16_t src_lid;
	uint32_t len, imm, rkey;
	uint64_t raddr;
	union ibv_gid src_gid;
	uint64_t ready_ns, wire_ns;	/* physics: its bytes are all in then, after so long on
					 * the wire (0: off) */
	union {
		struct { uint64_t addr; uint64_t len; } sge[FV_MAX_SGE];
		uint8_t data[FV_MAX_INLINE];
	} u;
};

struct fv_ring {
	_Atomic uint32_t magic;
	int32_t pid;
	uint64_t incarnation;
	pthread_mutex_t lock;		/* producers; robust and process-shared */
	_Atomic uint32_t doorbell;	/* futex word */
	_Atomic uint32_t sleeping;
	_Atomic uint64_t head, tail;
	/* signs of life for requesters' retry timers: pulse moves with every pass of the NIC,
	 * executing is set while one request is being carried out (a long copy) */
	_Atomic uint64_t pulse;
	_Atomic uint32_t executing;
	struct fv_msg slot[FV_RING_SLOTS];
};

int fv_fabric_attach(void);		/* maps the registry and this process's ring */
void fv_fabric_detach(void);
struct fv_registry *fv_registry(void);
struct fv_ring *fv_own_ring(void);
/* The ring of the process owning registry entry e; NULL when it is gone. */
struct fv_ring *fv_peer_ring(const struct fv_reg_entry *e);
int fv_reg_alloc_qpn(uint32_t *qpn, int *slot);
void fv_reg_free(int slot);
void fv_reg_reset(int slot);		/* forgets acknowledgements (QP back to RESET) */
/* 0, or EAGAIN when the ring is full */
int fv_ring_push(struct fv_ring *r, const struct fv_msg *m);
bool fv_ring_has_room(struct fv_ring *r);
void fv_ring_kick(struct fv_ring *r);
/* Sleeps until the doorbell moves past seen or timeout_ns pass. */
void fv_ring_wait(struct fv_ring *r, uint32_t seen, long timeout_ns);
void fv_fabric_forget(void);
bool fv_pid_alive(pid_t pid);

/* ---- NIC thread (fv_nic.c) ---- */

int fv_nic_start(void);			/* refcounted: one per open context */
void fv_nic_stop(void);
void fv_nic_register_qp(struct fv_qp *qp);
void fv_nic_unregister_qp(struct fv_qp *qp);
struct fv_qp *fv_nic_find_qp(uint32_t qpn);	/* with a reference */
void fv_qp_put(struct fv_qp *qp);
void fv_nic_wake(void);
/* Called by poll_cq: does the NIC's pending work in the polling thread when it can. */
void fv_nic_poll_hook(void);

/* ---- QP internals (fv_qp.c, fv_post.c, fv_respond.c) ---- */

/* Moves qp (locked) to ERROR: flushes both queues; event < 0 for none. */
void fv_qp_to_error(struct fv_qp *qp, int event);
void fv_qp_flush_rq(struct fv_qp *qp);
/* Transmits posted WRs (qp locked). */
void fv_sq_transmit(struct fv_qp *qp);
/* Completes acknowledged WRs and notices failures (qp locked). */
void fv_sq_progress(struct fv_qp *qp, uint64_t now_ns);
/* Fails the oldest outstanding WR with status, then the QP goes to ERROR (qp locked). */
void fv_sq_fail(struct fv_qp *qp, enum ibv_wc_status status);
/* Completes every WR not yet completed with WR_FLUSH_ERR (qp locked). */
void fv_sq_flush(struct fv_qp *qp);
enum ibv_wc_opcode wc_opcode_of(uint8_t wr_opcode);
/* Whether the NIC thread must keep watching qp (unacknowledged or untransmitted WRs). */
bool fv_sq_busy(struct fv_qp *qp);
/* Executes one request at the responder, or keeps it until the QP can take it. */
void fv_respond(const struct fv_msg *m, uint64_t now_ns);
void fv_respond_stash_retry(struct fv_qp *qp, uint64_t now_ns);
void fv_stash_free(struct fv_qp *qp);

/* Posting (fv_post.c): checks one WR (0 or the errno post_send returns) and queues it; after a
 * batch, sends what was queued and unlocks qp. */
int fv_sq_check(struct fv_qp *qp, const struct ibv_send_wr *wr, uint32_t *len);
void fv_sq_enqueue(struct fv_qp *qp, const struct ibv_send_wr *wr, uint32_t len);
void fv_sq_post_done(struct fv_qp *qp);
/* Extended verbs behind the verbs_context (fv_qp_ex.c, fv_cq_ex.c, fv_device.c) */
struct ibv_qp *fv_op_create_qp_ex(struct ibv_context *context, struct ibv_qp_init_attr_ex *attr);
struct ibv_cq_ex *fv_op_create_cq_ex(struct ibv_context *context,
				     struct ibv_cq_init_attr_ex *attr);
bool fv_cq_pop(struct fv_cq *cq, struct ibv_wc *wc);

/* The deepest any send queue of this process has been (posted, not yet freed by a poll). */
void fv_sq_note_depth(uint64_t used);

/* The data path behind context->ops. */
int fv_op_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad);
int fv_op_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad);
int fv_op_poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc);

/* Completion channels (fv_channel.c) */
int fv_op_req_notify_cq(struct ibv_cq *cq, int solicited_only);
void fv_channel_attach(struct ibv_comp_channel *channel);
void fv_channel_detach(struct ibv_comp_channel *channel);
void fv_channel_signal(struct ibv_comp_channel *channel, struct ibv_cq *cq);

/* CQ: false when the CQ overran (it is then in error) */
bool fv_cq_push(struct fv_cq *cq, const struct ibv_wc *wc, struct fv_qp *qp, uint64_t sq_index);
void fv_cq_forget_qp(struct fv_cq *cq, struct fv_qp *qp);

/* MR lookup for a key; copies the MR under the table lock. */
bool fv_mr_lookup(uint32_t key, struct fv_mr *out);
/* The responder holds the table while it copies, so that deregistration waits for in-flight
 * transfers, as it waits for a NIC's DMA. */
void fv_mr_hold(void);
void fv_mr_release(void);
bool fv_mr_find_held(uint32_t key, struct fv_mr *out);

/* Async events (fv_async.c) */
void fv_event_post(struct fv_context *ctx, const struct ibv_async_event *ev);
void fv_event_port(struct fv_device *dev, int port_num, enum ibv_event_type type);
void fv_contexts_add(struct fv_context *ctx);
void fv_contexts_remove(struct fv_context *ctx);

/* Error injection (fv_inject.c): what the next transmitted WR suffers, if anything. */
enum fv_inject_kind { FV_INJ_NONE, FV_INJ_QP_ERROR, FV_INJ_RETRY, FV_INJ_REM_ACCESS,
		      FV_INJ_PORT_DOWN };
enum fv_inject_kind fv_inject_next_op(void);
/* FABRICLAB_FAKEVERBS_INJECT, else the description's rules ("" for none). */
void fv_inject_env_once(const char *described);

/* DMA: copies between a local iovec and another process's memory, invisible to sanitizers
 * like a NIC's DMA. 0 or an errno. */
/* The NIC wrote or read [local, local+len) of mr: GPU memory learns of it (fv_gpu.c). */
void fv_gpu_wrote(const struct fv_mr *mr, uint64_t local, size_t len);
void fv_gpu_read(const struct fv_mr *mr, uint64_t local, size_t len);
int fv_dma_read(pid_t pid, const struct iovec *dst, int ndst, const struct iovec *src, int nsrc);
int fv_dma_write(pid_t pid, const struct iovec *src, int nsrc, const struct iovec *dst, int ndst);

/* ---- physics (fv_physics.c) ---- */

struct fv_physics {
	bool on;			/* the description's physics, or FABRICLAB_FAKEVERBS_PHYSICS=1 */
	uint64_t latency_ns, cost_ns;	/* one way; per message */
	double rate_div;		/* the emulation's slowdown below the reported rate */
	struct ft_fault hw;		/* this process's NICs' faults given in its environment */
};

const struct fv_physics *fv_physics(void);
/* The port's line rate in bytes per ns from its width and speed codes; 0 unknown. */
double fv_port_bytes_per_ns(const struct fv_port *p);
/* Owner: the hardware faults its environment gives its NICs, for requesters to honour. */
void fv_physics_publish(void);
/* Requester: schedules w from NIC src (its port) to NIC dst over the elements between them,
 * the connection's hash picking its path: w->push_ns (when the responder may execute it: its
 * bytes are in) and w->due_ns. */
void fv_physics_schedule(const struct fv_port *port, int src, int dst, uint64_t hash,
			 bool loopback, struct fv_swr *w, uint64_t now);
/* Responder: m executed at now, scheduled for ready_ns (counts late executions); loopback: a
 * request of this process to itself. */
void fv_physics_executed(uint64_t ready_ns, uint64_t wire_ns, bool loopback, uint64_t now);
/* The earliest time work held for the physics is due (UINT64_MAX: none); the NIC's wake-up. */
void fv_physics_due_at(uint64_t t);
uint64_t fv_physics_next_due(void);
void fv_physics_due_reset(void);

/* ---- the schedule's shared elements (fv_elements.c) ---- */

#define FV_MAX_ELEMENTS 32768

/* One direction of one link, shared by every process of the fabric. */
struct fv_element {
	_Atomic uint64_t free_ns;	/* busy with bytes already scheduled until then */
	_Atomic uint64_t bytes, messages, busy_ns, queued_ns; /* counters (fv_counters.c) */
	_Atomic uint32_t hw_rate_pct;	/* a NIC's faults from its process's environment */
	uint32_t pad;
	_Atomic uint64_t hw_pause_every_ns, hw_pause_for_ns, hw_add_ns;
};

/* Maps the fabric's elements (a file beside the registry); 0 or an errno. */
int fv_elements_attach(const char *dir);
struct fv_element *fv_element(int i);	/* NULL outside the table or before attach */
/* The elements from NIC a to NIC b for a connection of this hash; their number (1, NIC a's
 * out only, when b is -1: not known yet). */
int fv_elements_path(int a, int b, uint64_t hash, int *path);
/* An element's rate in bytes per ns when healthy (port: the sender's, where none is known)
 * and the fault it suffers now. */
double fv_element_rate(int e, const struct fv_port *port);
void fv_element_fault(int e, struct ft_fault *out);
/* Writes the elements' counters and this process's schedule as JSON into the fabric's folder
 * (fv_counters.c): counters.json, schedule-<pid>.json. */
void fv_counters_write(uint64_t executed, uint64_t late, uint64_t late_startup,
		       uint64_t late_loopback, uint64_t worst_ns);

uint64_t fv_now_ns(void);
void fv_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
uint32_t fv_rnr_timer_us(uint8_t code);
uint64_t fv_retry_window_ns(uint8_t timeout, uint8_t retry_cnt);

#pragma GCC visibility pop

#endif
