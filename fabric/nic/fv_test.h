/* Test helpers for the fake verbs library: load it with dlopen (the way the ib transport does),
 * set up endpoints and connect RC QPs with the attribute masks the specification requires.
 * Only the tests include this; the data path goes through verbs.h's inlines (context->ops). */
#ifndef FV_TEST_H
#define FV_TEST_H

#include <arpa/inet.h>
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <infiniband/verbs.h>
#include <libgen.h>
#include <limits.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fabric/topo/topo_test.h"

struct fvt_lib {
	void *so;
	struct ibv_device **(*get_device_list)(int *n);
	void (*free_device_list)(struct ibv_device **list);
	const char *(*get_device_name)(struct ibv_device *dev);
	__be64 (*get_device_guid)(struct ibv_device *dev);
	struct ibv_context *(*open_device)(struct ibv_device *dev);
	int (*close_device)(struct ibv_context *ctx);
	int (*query_device)(struct ibv_context *ctx, struct ibv_device_attr *a);
	int (*query_port)(struct ibv_context *ctx, uint8_t port, struct ibv_port_attr *a);
	int (*query_gid)(struct ibv_context *ctx, uint8_t port, int index, union ibv_gid *gid);
	int (*query_gid_ex)(struct ibv_context *ctx, uint32_t port, uint32_t index,
			    struct ibv_gid_entry *e, uint32_t flags, size_t size);
	int (*query_pkey)(struct ibv_context *ctx, uint8_t port, int index, __be16 *pkey);
	struct ibv_pd *(*alloc_pd)(struct ibv_context *ctx);
	int (*dealloc_pd)(struct ibv_pd *pd);
	struct ibv_mr *(*reg_mr)(struct ibv_pd *pd, void *addr, size_t len, int access);
	struct ibv_mr *(*reg_mr_iova2)(struct ibv_pd *pd, void *addr, size_t len, uint64_t iova,
				       unsigned int access);
	struct ibv_mr *(*reg_dmabuf_mr)(struct ibv_pd *pd, uint64_t off, size_t len, uint64_t iova,
					int fd, int access);
	int (*dereg_mr)(struct ibv_mr *mr);
	struct ibv_cq *(*create_cq)(struct ibv_context *ctx, int cqe, void *cq_ctx,
				    struct ibv_comp_channel *ch, int vector);
	int (*destroy_cq)(struct ibv_cq *cq);
	struct ibv_qp *(*create_qp)(struct ibv_pd *pd, struct ibv_qp_init_attr *a);
	int (*modify_qp)(struct ibv_qp *qp, struct ibv_qp_attr *a, int mask);
	int (*query_qp)(struct ibv_qp *qp, struct ibv_qp_attr *a, int mask,
			struct ibv_qp_init_attr *init);
	int (*destroy_qp)(struct ibv_qp *qp);
	struct ibv_srq *(*create_srq)(struct ibv_pd *pd, struct ibv_srq_init_attr *attr);
	int (*destroy_srq)(struct ibv_srq *srq);
	int (*get_async_event)(struct ibv_context *ctx, struct ibv_async_event *ev);
	void (*ack_async_event)(struct ibv_async_event *ev);
	const char *(*wc_status_str)(enum ibv_wc_status s);
	const char *(*event_type_str)(enum ibv_event_type t);
	int (*inject)(const char *rules);
	int (*set_port_state)(const char *dev, int port, int state);
	uint64_t (*op_count)(void);
};

static inline void *fvt_sym(void *so, const char *name)
{
	void *p = dlsym(so, name);

	if (!p) {
		fprintf(stderr, "fakeverbs test: symbol %s missing\n", name);
		abort();
	}
	return p;
}

/* The library sits next to the tests folder:
 * <build>/tests/X -> <build>/libfabriclab-fakeverbs.so */
static inline void fvt_lib_path(char *out, size_t n)
{
	char exe[PATH_MAX];
	ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	exe[len > 0 ? len : 0] = 0;
	snprintf(out, n, "%s/../libfabriclab-fakeverbs.so", dirname(exe));
}

#define FVT_LOAD(lib, field, name) \
	(*(void **)&(lib)->field = fvt_sym((lib)->so, name))

static inline int fvt_load(struct fvt_lib *l)
{
	char path[PATH_MAX + 64];

	fvt_lib_path(path, sizeof(path));
	memset(l, 0, sizeof(*l));
	l->so = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!l->so) {
		fprintf(stderr, "fakeverbs test: %s\n", dlerror());
		return -1;
	}
	FVT_LOAD(l, get_device_list, "ibv_get_device_list");
	FVT_LOAD(l, free_device_list, "ibv_free_device_list");
	FVT_LOAD(l, get_device_name, "ibv_get_device_name");
	FVT_LOAD(l, get_device_guid, "ibv_get_device_guid");
	FVT_LOAD(l, open_device, "ibv_open_device");
	FVT_LOAD(l, close_device, "ibv_close_device");
	FVT_LOAD(l, query_device, "ibv_query_device");
	FVT_LOAD(l, query_port, "ibv_query_port");
	FVT_LOAD(l, query_gid, "ibv_query_gid");
	FVT_LOAD(l, query_gid_ex, "_ibv_query_gid_ex");
	FVT_LOAD(l, query_pkey, "ibv_query_pkey");
	FVT_LOAD(l, alloc_pd, "ibv_alloc_pd");
	FVT_LOAD(l, dealloc_pd, "ibv_dealloc_pd");
	FVT_LOAD(l, reg_mr, "ibv_reg_mr");
	FVT_LOAD(l, reg_mr_iova2, "ibv_reg_mr_iova2");
	FVT_LOAD(l, reg_dmabuf_mr, "ibv_reg_dmabuf_mr");
	FVT_LOAD(l, dereg_mr, "ibv_dereg_mr");
	FVT_LOAD(l, create_cq, "ibv_create_cq");
	FVT_LOAD(l, destroy_cq, "ibv_destroy_cq");
	FVT_LOAD(l, create_qp, "ibv_create_qp");
	FVT_LOAD(l, modify_qp, "ibv_modify_qp");
	FVT_LOAD(l, query_qp, "ibv_query_qp");
	FVT_LOAD(l, destroy_qp, "ibv_destroy_qp");
	FVT_LOAD(l, create_srq, "ibv_create_srq");
	FVT_LOAD(l, destroy_srq, "ibv_destroy_srq");
	FVT_LOAD(l, get_async_event, "ibv_get_async_event");
	FVT_LOAD(l, ack_async_event, "ibv_ack_async_event");
	FVT_LOAD(l, wc_status_str, "ibv_wc_status_str");
	FVT_LOAD(l, event_type_str, "ibv_event_type_str");
	FVT_LOAD(l, inject, "fakeverbs_inject");
	FVT_LOAD(l, set_port_state, "fakeverbs_set_port_state");
	FVT_LOAD(l, op_count, "fakeverbs_op_count");
	return 0;
}

/*
 * A private fabric per test program, so parallel runs never meet: a state folder of its own
 * and the fabric's description in it (fabric/topo/topo_test.h: `emulation` and `members` as
 * there). 0, or -1 when the folder or the file cannot be made.
 */
static inline int fvt_describe(char *dir, size_t n, const char *emulation, const char *members)
{
	snprintf(dir, n, "/dev/shm/fvt-%d-XXXXXX", (int)getpid());
	if (!mkdtemp(dir)) {
		snprintf(dir, n, "/tmp/fvt-%d", (int)getpid());
		mkdir(dir, 0700);
	}
	return ft_test_describe(dir, emulation, members);
}

static inline void fvt_private_fabric(char *dir, size_t n)
{
	fvt_describe(dir, n, NULL, NULL);
}

/* The fabric's folder and everything in it, the devices' sysfs trees (folders) included. */
static inline void fvt_remove_fabric(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char path[PATH_MAX];

	if (!d)
		return;
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		int n = snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);

		if (n < 0 || (size_t)n >= sizeof(path))
			continue;
		if (e->d_type == DT_DIR)
			fvt_remove_fabric(path);
		else
			unlink(path);
	}
	closedir(d);
	rmdir(dir);
}

/* One side of a connection: its own context, PD, CQ, QP and a registered buffer. */
struct fvt_ep {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_srq *srq;
	struct ibv_mr *mr;
	char *buf;
	size_t len;
	uint8_t port;
	int gid_index;		/* -1 on InfiniBand */
};

/* What the other side needs to reach an endpoint (exchanged out of band). */
struct fvt_addr {
	uint32_t qpn;
	uint16_t lid;
	union ibv_gid gid;
	uint64_t addr;
	uint32_t rkey;
};

struct fvt_opts {
	const char *dev;
	int cqe;
	uint32_t max_send_wr, max_recv_wr, max_sge, max_inline;
	int mr_access;
	unsigned int qp_access;
	uint8_t rnr_retry, min_rnr_timer, timeout, retry_cnt;
	uint8_t max_rd_atomic, max_dest_rd_atomic;
	struct ibv_comp_channel *channel;	/* for the CQ, or NULL */
	uint64_t send_ops;	/* nonzero: an extended QP (ibv_wr_*) with these send_ops_flags */
	bool cq_ex;		/* an extended CQ (ibv_create_cq_ex) */
	uint32_t srq_wr;	/* nonzero: the QP receives through a shared queue this deep */
};

static inline struct fvt_opts fvt_defaults(void)
{
	return (struct fvt_opts){
		.dev = "mlx5_0", .cqe = 256, .max_send_wr = 64, .max_recv_wr = 64, .max_sge = 2,
		.max_inline = 64,
		.mr_access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			     IBV_ACCESS_REMOTE_READ,
		.qp_access = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ,
		.rnr_retry = 7, .min_rnr_timer = 12, .timeout = 14, .retry_cnt = 7,
		.max_rd_atomic = 1, .max_dest_rd_atomic = 1,
	};
}

static inline struct ibv_context *fvt_open(struct fvt_lib *l, const char *name)
{
	int n = 0;
	struct ibv_device **list = l->get_device_list(&n);
	struct ibv_context *ctx = NULL;

	for (int i = 0; list && i < n; i++)
		if (strcmp(l->get_device_name(list[i]), name) == 0)
			ctx = l->open_device(list[i]);
	l->free_device_list(list);
	return ctx;
}

/* 0 or -1; leaves the QP in RESET. */
static inline int fvt_ep_init(struct fvt_lib *l, struct fvt_ep *ep, const struct fvt_opts *o,
			      size_t len)
{
	struct ibv_qp_init_attr qa;
	struct ibv_port_attr pa;

	memset(ep, 0, sizeof(*ep));
	ep->port = 1;
	ep->len = len;
	ep->ctx = fvt_open(l, o->dev);
	if (!ep->ctx)
		return -1;
	ep->pd = l->alloc_pd(ep->ctx);
	if (o->cq_ex) {
		struct ibv_cq_init_attr_ex ca = { .cqe = (uint32_t)o->cqe, .channel = o->channel,
						  .wc_flags = IBV_WC_STANDARD_FLAGS };
		struct ibv_cq_ex *cqx = ibv_create_cq_ex(ep->ctx, &ca);

		ep->cq = cqx ? ibv_cq_ex_to_cq(cqx) : NULL;
	} else {
		ep->cq = l->create_cq(ep->ctx, o->cqe, NULL, o->channel, 0);
	}
	ep->buf = calloc(1, len);
	if (!ep->pd || !ep->cq || !ep->buf)
		return -1;
	ep->mr = l->reg_mr(ep->pd, ep->buf, len, o->mr_access);
	memset(&qa, 0, sizeof(qa));
	qa.send_cq = ep->cq;
	qa.recv_cq = ep->cq;
	qa.qp_type = IBV_QPT_RC;
	qa.cap.max_send_wr = o->max_send_wr;
	qa.cap.max_recv_wr = o->max_recv_wr;
	qa.cap.max_send_sge = o->max_sge;
	qa.cap.max_recv_sge = o->max_sge;
	qa.cap.max_inline_data = o->max_inline;
	if (o->srq_wr) {
		struct ibv_srq_init_attr sa = { .attr = { .max_wr = o->srq_wr, .max_sge = 1 } };

		ep->srq = l->create_srq(ep->pd, &sa);
		if (!ep->srq)
			return -1;
		qa.srq = ep->srq;
	}
	if (o->send_ops) {
		struct ibv_qp_init_attr_ex qx;

		memset(&qx, 0, sizeof(qx));
		memcpy(&qx, &qa, sizeof(qa));
		qx.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
		qx.pd = ep->pd;
		qx.send_ops_flags = o->send_ops;
		ep->qp = ibv_create_qp_ex(ep->ctx, &qx);
	} else {
		ep->qp = l->create_qp(ep->pd, &qa);
	}
	if (!ep->mr || !ep->qp || l->query_port(ep->ctx, ep->port, &pa))
		return -1;
	ep->gid_index = pa.link_layer == IBV_LINK_LAYER_ETHERNET ? 3 : -1;
	return 0;
}

static inline struct fvt_addr fvt_addr_of(struct fvt_lib *l, struct fvt_ep *ep)
{
	struct fvt_addr a;
	struct ibv_port_attr pa;

	memset(&a, 0, sizeof(a));
	l->query_port(ep->ctx, ep->port, &pa);
	a.qpn = ep->qp->qp_num;
	a.lid = pa.lid;
	if (ep->gid_index >= 0)
		l->query_gid(ep->ctx, ep->port, ep->gid_index, &a.gid);
	a.addr = (uintptr_t)ep->buf;
	a.rkey = ep->mr->rkey;
	return a;
}

static inline int fvt_to_init(struct fvt_lib *l, struct fvt_ep *ep, const struct fvt_opts *o)
{
	struct ibv_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.pkey_index = 0;
	a.port_num = ep->port;
	a.qp_access_flags = o->qp_access;
	return l->modify_qp(ep->qp, &a,
			    IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
}

static inline int fvt_to_rtr(struct fvt_lib *l, struct fvt_ep *ep, const struct fvt_opts *o,
			     const struct fvt_addr *peer)
{
	struct ibv_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = peer->qpn;
	a.rq_psn = 0;
	a.max_dest_rd_atomic = o->max_dest_rd_atomic;
	a.min_rnr_timer = o->min_rnr_timer;
	a.ah_attr.port_num = ep->port;
	a.ah_attr.dlid = peer->lid;
	if (ep->gid_index >= 0) {
		a.ah_attr.is_global = 1;
		a.ah_attr.grh.dgid = peer->gid;
		a.ah_attr.grh.sgid_index = (uint8_t)ep->gid_index;
		a.ah_attr.grh.hop_limit = 255;
	}
	return l->modify_qp(ep->qp, &a,
			    IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
				    IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
				    IBV_QP_MIN_RNR_TIMER);
}

static inline int fvt_to_rts(struct fvt_lib *l, struct fvt_ep *ep, const struct fvt_opts *o)
{
	struct ibv_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = o->timeout;
	a.retry_cnt = o->retry_cnt;
	a.rnr_retry = o->rnr_retry;
	a.sq_psn = 0;
	a.max_rd_atomic = o->max_rd_atomic;
	return l->modify_qp(ep->qp, &a,
			    IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
				    IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
}

static inline int fvt_connect(struct fvt_lib *l, struct fvt_ep *ep, const struct fvt_opts *o,
			      const struct fvt_addr *peer)
{
	if (ep->qp->state == IBV_QPS_RESET && fvt_to_init(l, ep, o))
		return -1;
	if (fvt_to_rtr(l, ep, o, peer) || fvt_to_rts(l, ep, o))
		return -1;
	return 0;
}

static inline void fvt_ep_fini(struct fvt_lib *l, struct fvt_ep *ep)
{
	if (ep->qp)
		l->destroy_qp(ep->qp);
	if (ep->srq)
		l->destroy_srq(ep->srq);
	if (ep->mr)
		l->dereg_mr(ep->mr);
	if (ep->cq)
		l->destroy_cq(ep->cq);
	if (ep->pd)
		l->dealloc_pd(ep->pd);
	if (ep->ctx)
		l->close_device(ep->ctx);
	free(ep->buf);
	memset(ep, 0, sizeof(*ep));
}

/* Between a test and its forked peer over a pipe: 0, or -1 when the other side is gone. */
static inline int fvt_put(int fd, const void *p, size_t n)
{
	return write(fd, p, n) == (ssize_t)n ? 0 : -1;
}

static inline int fvt_get(int fd, void *p, size_t n)
{
	size_t got = 0;

	while (got < n) {
		ssize_t r = read(fd, (char *)p + got, n - got);

		if (r <= 0)
			return -1;
		got += (size_t)r;
	}
	return 0;
}

static inline uint64_t fvt_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Polls until want completions arrived or timeout_ms passed; returns how many (or -1 when the
 * CQ reports an error). */
static inline int fvt_poll(struct ibv_cq *cq, struct ibv_wc *wc, int want, int timeout_ms)
{
	uint64_t end = fvt_ms() + (uint64_t)timeout_ms;
	int got = 0;

	while (got < want) {
		int n = ibv_poll_cq(cq, want - got, wc + got);

		if (n < 0)
			return -1;
		got += n;
		if (got < want) {
			if (fvt_ms() > end)
				break;
			usleep(200);
		}
	}
	return got;
}

static inline int fvt_post_rdma(struct fvt_ep *ep, enum ibv_wr_opcode op, uint64_t wr_id,
				void *local, uint32_t len, uint32_t lkey, uint64_t raddr,
				uint32_t rkey, unsigned int flags, uint32_t imm)
{
	struct ibv_sge sge = { .addr = (uintptr_t)local, .length = len, .lkey = lkey };
	struct ibv_send_wr wr, *bad = NULL;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = wr_id;
	wr.sg_list = &sge;
	wr.num_sge = len ? 1 : 0;
	wr.opcode = op;
	wr.send_flags = flags;
	wr.imm_data = htonl(imm);
	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	return ibv_post_send(ep->qp, &wr, &bad);
}

static inline int fvt_post_recv(struct fvt_ep *ep, uint64_t wr_id, void *addr, uint32_t len,
				uint32_t lkey)
{
	struct ibv_sge sge = { .addr = (uintptr_t)addr, .length = len, .lkey = lkey };
	struct ibv_recv_wr wr, *bad = NULL;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = wr_id;
	wr.sg_list = &sge;
	wr.num_sge = len ? 1 : 0;
	return ibv_post_recv(ep->qp, &wr, &bad);
}

/* Waits for one async event (up to timeout_ms); the event's type or -1. */
static inline int fvt_async_event(struct fvt_lib *l, struct ibv_context *ctx, int timeout_ms,
				  struct ibv_async_event *out)
{
	struct pollfd p = { .fd = ctx->async_fd, .events = POLLIN };
	struct ibv_async_event ev;

	if (poll(&p, 1, timeout_ms) != 1 || l->get_async_event(ctx, &ev))
		return -1;
	if (out)
		*out = ev;
	l->ack_async_event(&ev);
	return (int)ev.event_type;
}

#endif
