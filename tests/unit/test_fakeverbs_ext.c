/* What programs built against rdma-core need beyond the core verbs: rdma-core's symbol versions
 * (dlvsym as NCCL's loader uses it), completion channels whose fd becomes readable, the ibv_wr_*
 * posting API with whole-or-nothing batches, extended CQs and query_device_ex, shared receive
 * queues, and capabilities that say what the fake does (no atomics, no address handles). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "fabric/nic/fv_test.h"

static struct fvt_lib lib;
static char fabric_dir[128];

struct pair {
	struct fvt_ep a, b;
	struct fvt_opts oa, ob;
};

static void pair_up(struct pair *p, size_t len)
{
	struct fvt_addr aa, ab;

	assert_int_equal(fvt_ep_init(&lib, &p->a, &p->oa, len), 0);
	assert_int_equal(fvt_ep_init(&lib, &p->b, &p->ob, len), 0);
	aa = fvt_addr_of(&lib, &p->a);
	ab = fvt_addr_of(&lib, &p->b);
	assert_int_equal(fvt_connect(&lib, &p->a, &p->oa, &ab), 0);
	assert_int_equal(fvt_connect(&lib, &p->b, &p->ob, &aa), 0);
}

static void pair_down(struct pair *p)
{
	fvt_ep_fini(&lib, &p->a);
	fvt_ep_fini(&lib, &p->b);
}

/* The default version of each name as rdma-core 44 assigns it (objdump -T libibverbs.so.1). */
static const struct { const char *name, *version; } versions[] = {
	{ "ibv_get_device_list", "IBVERBS_1.1" }, { "ibv_open_device", "IBVERBS_1.1" },
	{ "ibv_create_qp", "IBVERBS_1.1" }, { "ibv_modify_qp", "IBVERBS_1.1" },
	{ "ibv_reg_mr", "IBVERBS_1.1" }, { "ibv_get_cq_event", "IBVERBS_1.1" },
	{ "ibv_create_comp_channel", "IBVERBS_1.0" }, { "ibv_read_sysfs_file", "IBVERBS_1.0" },
	{ "ibv_get_pkey_index", "IBVERBS_1.5" }, { "ibv_qp_to_qp_ex", "IBVERBS_1.6" },
	{ "ibv_reg_mr_iova", "IBVERBS_1.7" }, { "ibv_reg_mr_iova2", "IBVERBS_1.8" },
	{ "ibv_get_device_index", "IBVERBS_1.9" }, { "ibv_query_ece", "IBVERBS_1.10" },
	{ "_ibv_query_gid_ex", "IBVERBS_1.11" }, { "ibv_reg_dmabuf_mr", "IBVERBS_1.12" },
	{ "ibv_is_fork_initialized", "IBVERBS_1.13" },
	{ "ibv_query_qp_data_in_order", "IBVERBS_1.14" },
	{ "ibv_query_gid_type", "IBVERBS_PRIVATE_34" },
	{ "verbs_register_driver_34", "IBVERBS_PRIVATE_34" },
};

static void check_versions(const char *path)
{
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);

	assert_non_null(h);
	for (size_t i = 0; i < sizeof(versions) / sizeof(versions[0]); i++) {
		void *v = dlvsym(h, versions[i].name, versions[i].version);

		if (!v)
			fail_msg("%s: no %s@%s", path, versions[i].name, versions[i].version);
		assert_ptr_equal(v, dlsym(h, versions[i].name));
	}
	/* a name is found under its own version only */
	assert_null(dlvsym(h, "ibv_qp_to_qp_ex", "IBVERBS_1.1"));
	/* internals stay hidden */
	assert_null(dlsym(h, "fv_config_get"));
	dlclose(h);
}

static void test_symbol_versions(void **state)
{
	char path[PATH_MAX + 64], dir[PATH_MAX + 64];

	(void)state;
	fvt_lib_path(path, sizeof(path));
	check_versions(path);
	memcpy(dir, path, sizeof(dir));
	snprintf(path, sizeof(path), "%.4000s/fakeverbs-lib/libibverbs.so.1", dirname(dir));
	check_versions(path);
}

static bool readable(int fd, int timeout_ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, timeout_ms) == 1 && (p.revents & POLLIN);
}

static void test_completion_channel(void **state)
{
	struct ibv_comp_channel *(*create)(struct ibv_context *) =
		dlsym(lib.so, "ibv_create_comp_channel");
	int (*destroy)(struct ibv_comp_channel *) = dlsym(lib.so, "ibv_destroy_comp_channel");
	int (*get_event)(struct ibv_comp_channel *, struct ibv_cq **, void **) =
		dlsym(lib.so, "ibv_get_cq_event");
	void (*ack)(struct ibv_cq *, unsigned int) = dlsym(lib.so, "ibv_ack_cq_events");
	struct ibv_context *ctx = fvt_open(&lib, "mlx5_0");
	struct ibv_cq *cq = NULL;
	struct ibv_wc wc;
	struct fvt_addr ab;
	struct pair p;
	void *cq_ctx = NULL;

	(void)state;
	assert_non_null(ctx);
	p.oa = fvt_defaults();
	p.ob = fvt_defaults();
	p.ob.channel = create(ctx);
	assert_non_null(p.ob.channel);
	pair_up(&p, 4096);
	ab = fvt_addr_of(&lib, &p.b);
	assert_int_equal(ibv_req_notify_cq(p.b.cq, 0), 0);
	assert_false(readable(p.ob.channel->fd, 50));	/* nothing happened yet */
	assert_int_equal(fvt_post_recv(&p.b, 5, NULL, 0, 0), 0);
	assert_int_equal(fvt_post_rdma(&p.a, IBV_WR_RDMA_WRITE_WITH_IMM, 1, p.a.buf, 64,
				       p.a.mr->lkey, ab.addr, ab.rkey, IBV_SEND_SIGNALED, 9), 0);
	assert_true(readable(p.ob.channel->fd, 5000));
	assert_int_equal(get_event(p.ob.channel, &cq, &cq_ctx), 0);
	assert_ptr_equal(cq, p.b.cq);
	assert_int_equal(fvt_poll(p.b.cq, &wc, 1, 1000), 1);
	assert_int_equal(wc.wr_id, 5);
	ack(cq, 1);
	assert_int_equal(cq->comp_events_completed, 1);
	/* one event per arming: the next completion without re-arming leaves the fd quiet */
	assert_int_equal(fvt_post_recv(&p.b, 6, NULL, 0, 0), 0);
	assert_int_equal(fvt_post_rdma(&p.a, IBV_WR_RDMA_WRITE_WITH_IMM, 2, p.a.buf, 64,
				       p.a.mr->lkey, ab.addr, ab.rkey, IBV_SEND_SIGNALED, 9), 0);
	assert_int_equal(fvt_poll(p.b.cq, &wc, 1, 5000), 1);
	assert_false(readable(p.ob.channel->fd, 50));
	/* a CQ that reports to the channel keeps it alive */
	assert_int_equal(destroy(p.ob.channel), EBUSY);
	pair_down(&p);
	assert_int_equal(destroy(p.ob.channel), 0);
	lib.close_device(ctx);
}

/* A batch whose third WR does not fit is refused whole: nothing of it reaches the wire. */
static void test_wr_api_batches(void **state)
{
	struct ibv_qp_ex *(*to_qp_ex)(struct ibv_qp *) = dlsym(lib.so, "ibv_qp_to_qp_ex");
	struct ibv_sge many[17];	/* the fake takes at most 16 */
	struct ibv_qp_ex *qx;
	struct ibv_wc wc[4];
	struct fvt_addr ab;
	struct pair p;

	(void)state;
	p.oa = fvt_defaults();
	p.ob = fvt_defaults();
	p.oa.send_ops = IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |
			IBV_QP_EX_WITH_RDMA_READ;
	p.oa.cq_ex = true;
	pair_up(&p, 8192);
	assert_null(to_qp_ex(p.b.qp));	/* a plain QP has no builders */
	qx = to_qp_ex(p.a.qp);
	assert_non_null(qx);
	ab = fvt_addr_of(&lib, &p.b);
	memset(many, 0, sizeof(many));
	for (int i = 0; i < 4096; i++)
		p.a.buf[i] = (char)(i * 5 + 1);
	assert_int_equal(fvt_post_recv(&p.b, 50, NULL, 0, 0), 0);

	ibv_wr_start(qx);
	qx->wr_id = 1;
	qx->wr_flags = 0;
	ibv_wr_rdma_write(qx, ab.rkey, ab.addr);
	ibv_wr_set_sge(qx, p.a.mr->lkey, (uintptr_t)p.a.buf, 4096);
	qx->wr_id = 2;
	ibv_wr_rdma_write(qx, ab.rkey, ab.addr + 4096);
	ibv_wr_set_sge_list(qx, 17, many);
	assert_int_equal(ibv_wr_complete(qx), ENOMEM);
	/* the first write of the refused batch must not land either */
	assert_int_equal(fvt_poll(p.b.cq, wc, 1, 200), 0);
	for (int i = 0; i < 4096; i++)
		if (p.b.buf[i])
			fail_msg("byte %d of a refused batch arrived", i);

	ibv_wr_start(qx);
	qx->wr_id = 3;
	qx->wr_flags = 0;
	ibv_wr_rdma_write(qx, ab.rkey, ab.addr);
	ibv_wr_set_sge(qx, p.a.mr->lkey, (uintptr_t)p.a.buf, 4000);
	qx->wr_id = 4;
	qx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write_imm(qx, ab.rkey, ab.addr + 4000, htonl(77));
	ibv_wr_set_sge(qx, p.a.mr->lkey, (uintptr_t)p.a.buf + 4000, 96);
	assert_int_equal(ibv_wr_complete(qx), 0);
	assert_int_equal(fvt_poll(p.b.cq, wc, 1, 5000), 1);
	assert_int_equal(wc[0].wr_id, 50);
	assert_int_equal(wc[0].byte_len, 96);
	assert_int_equal(ntohl(wc[0].imm_data), 77);
	assert_memory_equal(p.a.buf, p.b.buf, 4096);

	/* the sender's extended CQ: only the signalled WR, read through the accessors */
	{
		struct ibv_cq_ex *cqx = (struct ibv_cq_ex *)p.a.cq;
		struct ibv_poll_cq_attr pa = { 0 };
		uint64_t end = fvt_ms() + 5000;
		int rc;

		while ((rc = ibv_start_poll(cqx, &pa)) == ENOENT && fvt_ms() < end)
			usleep(200);
		assert_int_equal(rc, 0);
		assert_int_equal(cqx->wr_id, 4);
		assert_int_equal(cqx->status, IBV_WC_SUCCESS);
		assert_int_equal(ibv_wc_read_opcode(cqx), IBV_WC_RDMA_WRITE);
		assert_int_equal(ibv_wc_read_qp_num(cqx), p.a.qp->qp_num);
		assert_int_equal(ibv_next_poll(cqx), ENOENT);
		ibv_end_poll(cqx);
	}
	pair_down(&p);
}

static void test_truthful_capabilities(void **state)
{
	struct ibv_context *ctx = fvt_open(&lib, "mlx5_1");
	struct ibv_device_attr_ex ax;
	struct ibv_cq_init_attr_ex ca = { .cqe = 16,
					  .wc_flags = IBV_WC_EX_WITH_COMPLETION_TIMESTAMP };
	struct ibv_ah *(*create_ah)(struct ibv_pd *, struct ibv_ah_attr *) =
		dlsym(lib.so, "ibv_create_ah");
	struct ibv_ah_attr ah = { .port_num = 1 };
	struct ibv_pd *pd;

	(void)state;
	assert_non_null(ctx);
	/* what ibv_query_device_ex() calls (its legacy fallback would need libibverbs linked) */
	assert_non_null(verbs_get_ctx_op(ctx, query_device_ex));
	assert_int_equal(verbs_get_ctx_op(ctx, query_device_ex)->query_device_ex(ctx, NULL, &ax,
										 sizeof(ax)), 0);
	assert_int_equal(ax.orig_attr.atomic_cap, IBV_ATOMIC_NONE);
	assert_int_equal(ax.orig_attr.max_ah, 0);
	assert_true(ax.orig_attr.max_srq > 0);
	assert_int_equal(ax.phys_port_cnt_ex, 1);
	assert_int_equal(ax.odp_caps.general_caps, 0);
	errno = 0;
	assert_null(ibv_create_cq_ex(ctx, &ca));	/* no completion timestamps */
	assert_int_equal(errno, EOPNOTSUPP);
	pd = lib.alloc_pd(ctx);
	errno = 0;
	assert_null(create_ah(pd, &ah));	/* no UD, no address handles */
	assert_int_equal(errno, EOPNOTSUPP);
	lib.dealloc_pd(pd);
	lib.close_device(ctx);
}

/* Sends into a QP that receives through a shared queue: receives are taken in posting order,
 * into the buffers of the queue's PD; the limit event fires; a queue in use stays. */
static void test_shared_receive_queue(void **state)
{
	int (*modify_srq)(struct ibv_srq *, struct ibv_srq_attr *, int) =
		dlsym(lib.so, "ibv_modify_srq");
	struct ibv_srq_attr sa = { .srq_limit = 2 };
	struct ibv_async_event ev;
	struct ibv_wc wc[2];
	struct pair p;
	struct ibv_recv_wr rwr[3], *bad = NULL;
	struct ibv_sge sge[3];

	(void)state;
	p.oa = fvt_defaults();
	p.ob = fvt_defaults();
	p.ob.srq_wr = 16;
	pair_up(&p, 8192);
	assert_int_not_equal(fvt_post_recv(&p.b, 1, NULL, 0, 0), 0);	/* the QP has no RQ */
	for (int i = 0; i < 3; i++) {
		sge[i] = (struct ibv_sge){ .addr = (uintptr_t)p.b.buf + 1024 * (unsigned)i,
					   .length = 1024, .lkey = p.b.mr->lkey };
		rwr[i] = (struct ibv_recv_wr){ .wr_id = 100 + (unsigned)i, .sg_list = &sge[i],
					       .num_sge = 1, .next = i < 2 ? &rwr[i + 1] : NULL };
	}
	assert_int_equal(ibv_post_srq_recv(p.b.srq, rwr, &bad), 0);
	assert_int_equal(modify_srq(p.b.srq, &sa, IBV_SRQ_LIMIT), 0);
	for (int i = 0; i < 2; i++) {
		memset(p.a.buf, 'x' + i, 512);
		assert_int_equal(fvt_post_rdma(&p.a, IBV_WR_SEND, (uint64_t)i, p.a.buf, 512,
					       p.a.mr->lkey, 0, 0, IBV_SEND_SIGNALED, 0), 0);
		assert_int_equal(fvt_poll(p.b.cq, wc, 1, 5000), 1);
		assert_int_equal(wc[0].status, IBV_WC_SUCCESS);
		assert_int_equal(wc[0].opcode, IBV_WC_RECV);
		assert_int_equal(wc[0].wr_id, 100 + (unsigned)i);
		assert_int_equal(wc[0].qp_num, p.b.qp->qp_num);
		assert_int_equal((unsigned char)p.b.buf[1024 * i + 511], 'x' + i);
		assert_int_equal(fvt_poll(p.a.cq, wc, 1, 5000), 1);
	}
	/* 3 posted, 2 taken: 1 left, below the limit of 2 */
	assert_int_equal(fvt_async_event(&lib, p.b.ctx, 2000, &ev), IBV_EVENT_SRQ_LIMIT_REACHED);
	assert_ptr_equal(ev.element.srq, p.b.srq);
	assert_int_equal(lib.destroy_srq(p.b.srq), EBUSY);
	pair_down(&p);
}

static int setup(void **state)
{
	(void)state;
	unsetenv("FABRICLAB_FAKEVERBS_DEVICES");
	unsetenv("FABRICLAB_FAKEVERBS_INJECT");
	fvt_describe(fabric_dir, sizeof(fabric_dir), ", \"retry_ms\": 500", NULL);
	return fvt_load(&lib);
}

static int teardown(void **state)
{
	(void)state;
	fvt_remove_fabric(fabric_dir);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_symbol_versions),
		cmocka_unit_test(test_completion_channel),
		cmocka_unit_test(test_wr_api_batches),
		cmocka_unit_test(test_truthful_capabilities),
		cmocka_unit_test(test_shared_receive_queue),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
