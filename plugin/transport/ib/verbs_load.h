/*
 * libibverbs, loaded at run time: the plugin links nothing but libc, and a
 * machine without RDMA loads it fine. Everything the ib transport asks of verbs
 * goes through this one table; the data-path calls that verbs.h makes inline
 * (post_send, post_recv, poll_cq) go through each context's ops, as the header
 * does (verbs_ops.h). <infiniband/verbs.h> is included for its types only.
 */
#ifndef FL_VERBS_LOAD_H
#define FL_VERBS_LOAD_H

#include <infiniband/verbs.h>

#define FL_VERBS_DEFAULT_LIB "libibverbs.so.1"

struct fl_verbs {
	const char *path; /* what was loaded */
	struct ibv_device **(*get_device_list)(int *num);
	void (*free_device_list)(struct ibv_device **list);
	const char *(*get_device_name)(struct ibv_device *dev);
	struct ibv_context *(*open_device)(struct ibv_device *dev);
	int (*close_device)(struct ibv_context *ctx);
	int (*query_device)(struct ibv_context *ctx, struct ibv_device_attr *attr);
	/* The exported, compat-sized query; verbs_query_port() prefers the context's own. */
	int (*query_port_compat)(struct ibv_context *ctx, uint8_t port, struct ibv_port_attr *attr);
	int (*query_gid)(struct ibv_context *ctx, uint8_t port, int index, union ibv_gid *gid);
	/* Optional (rdma-core >= 32): NULL when absent; GID types then come from sysfs. */
	int (*query_gid_ex)(struct ibv_context *ctx, uint32_t port, uint32_t index,
			    struct ibv_gid_entry *entry, uint32_t flags, size_t entry_size);
	struct ibv_pd *(*alloc_pd)(struct ibv_context *ctx);
	int (*dealloc_pd)(struct ibv_pd *pd);
	struct ibv_mr *(*reg_mr)(struct ibv_pd *pd, void *addr, size_t len, int access);
	/* Optional (rdma-core >= 28, IBVERBS_1.8): the call that takes optional access flags
	 * such as IBV_ACCESS_RELAXED_ORDERING; NULL when absent. */
	struct ibv_mr *(*reg_mr_iova2)(struct ibv_pd *pd, void *addr, size_t len, uint64_t iova,
				       unsigned int access);
	/* Optional: NULL when absent (no dma-buf registration). */
	struct ibv_mr *(*reg_dmabuf_mr)(struct ibv_pd *pd, uint64_t offset, size_t len,
					uint64_t iova, int fd, int access);
	int (*dereg_mr)(struct ibv_mr *mr);
	struct ibv_cq *(*create_cq)(struct ibv_context *ctx, int cqe, void *cq_ctx,
				    struct ibv_comp_channel *channel, int comp_vector);
	int (*destroy_cq)(struct ibv_cq *cq);
	struct ibv_qp *(*create_qp)(struct ibv_pd *pd, struct ibv_qp_init_attr *attr);
	int (*modify_qp)(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask);
	int (*destroy_qp)(struct ibv_qp *qp);
	int (*get_async_event)(struct ibv_context *ctx, struct ibv_async_event *event);
	void (*ack_async_event)(struct ibv_async_event *event);
	const char *(*wc_status_str)(enum ibv_wc_status status);
	const char *(*event_type_str)(enum ibv_event_type type);
};

/*
 * Loads libibverbs.so.1 (or FABRICLAB_IBVERBS_LIB) once per process and
 * returns its table; NULL, with fl_fail() text saying why, when it is absent
 * or lacks a function the transport needs. Thread-safe.
 */
const struct fl_verbs *fl_verbs_get(void);

/* Port attributes the way verbs.h's inline ibv_query_port gets them. */
int fl_verbs_query_port(const struct fl_verbs *v, struct ibv_context *ctx, uint8_t port,
			struct ibv_port_attr *attr);

#endif
