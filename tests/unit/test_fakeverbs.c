/* The fake verbs library inside one process: devices and ports as configured, the RC state
 * machine, RDMA write / write-with-immediate / read / send, and the checks that must fail a wrong
 * use of verbs as a ConnectX would (access flags, rkeys, CQ and SQ depth, limits). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "fabric/nic/fv_test.h"

static struct fvt_lib lib;
static char fabric_dir[128];

/* Two connected endpoints in this process. */
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

static void pair_default(struct pair *p, size_t len)
{
	p->oa = fvt_defaults();
	p->ob = fvt_defaults();
	pair_up(p, len);
}

static void pair_down(struct pair *p)
{
	fvt_ep_fini(&lib, &p->a);
	fvt_ep_fini(&lib, &p->b);
}

static enum ibv_qp_state qp_state(struct ibv_qp *qp)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr i;

	assert_int_equal(lib.query_qp(qp, &a, IBV_QP_STATE, &i), 0);
	return a.qp_state;
}

static void test_devices_ports_and_gids(void **state)
{
	struct ibv_context *ib, *eth;
	struct ibv_port_attr pa;
	struct ibv_gid_entry ge;
	struct verbs_context *vctx;
	struct ibv_device_attr da;
	int n = 0;
	struct ibv_device **list = lib.get_device_list(&n);

	(void)state;
	assert_int_equal(n, 2);
	assert_string_equal(lib.get_device_name(list[0]), "mlx5_0");
	assert_string_equal(lib.get_device_name(list[1]), "mlx5_1");
	assert_true(lib.get_device_guid(list[0]) != 0);
	lib.free_device_list(list);

	ib = fvt_open(&lib, "mlx5_0");
	eth = fvt_open(&lib, "mlx5_1");
	assert_non_null(ib);
	assert_non_null(eth);
	assert_int_equal(lib.query_device(ib, &da), 0);
	assert_int_equal(da.phys_port_cnt, 1);
	assert_int_equal(da.vendor_id, 0x02c9);

	/* both paths verbs.h's ibv_query_port macro may take */
	memset(&pa, 0, sizeof(pa));
	assert_int_equal(lib.query_port(ib, 1, &pa), 0);
	assert_int_equal(pa.state, IBV_PORT_ACTIVE);
	assert_int_equal(pa.link_layer, IBV_LINK_LAYER_INFINIBAND);
	assert_int_equal(pa.active_width, 2);	/* 4X */
	assert_int_equal(pa.active_speed, 64);	/* HDR */
	assert_true(pa.lid != 0);
	assert_int_equal(pa.active_mtu, IBV_MTU_4096);
	vctx = verbs_get_ctx_op(eth, query_port);
	assert_non_null(vctx);
	memset(&pa, 0, sizeof(pa));
	assert_int_equal(vctx->query_port(eth, 1, &pa, sizeof(pa)), 0);
	assert_int_equal(pa.link_layer, IBV_LINK_LAYER_ETHERNET);
	assert_int_equal(pa.active_speed, 32);	/* 25 Gb/s lanes */
	assert_int_equal(pa.lid, 0);
	assert_int_not_equal(lib.query_port(ib, 2, &pa), 0);

	assert_int_equal(lib.query_gid_ex(eth, 1, 3, &ge, 0, sizeof(ge)), 0);
	assert_int_equal(ge.gid_type, IBV_GID_TYPE_ROCE_V2);
	assert_int_equal(ge.gid.raw[10], 0xff);
	assert_int_equal(ge.gid.raw[12], 127);
	assert_int_equal(ge.gid.raw[15], 1);
	assert_int_equal(lib.query_gid_ex(eth, 1, 2, &ge, 0, sizeof(ge)), 0);
	assert_int_equal(ge.gid_type, IBV_GID_TYPE_ROCE_V1);
	assert_int_equal(lib.query_gid_ex(eth, 1, 5, &ge, 0, sizeof(ge)), ENODATA);
	assert_int_equal(lib.query_gid_ex(ib, 1, 0, &ge, 0, sizeof(ge)), 0);
	assert_int_equal(ge.gid_type, IBV_GID_TYPE_IB);
	assert_int_equal(ge.gid.raw[0], 0xfe);
	/* no dma-buf importer: the answer NCCL's probe reads as "unsupported" */
	errno = 0;
	assert_null(lib.reg_dmabuf_mr(NULL, 0, 0, 0, -1, 0));
	assert_int_equal(errno, EOPNOTSUPP);
	lib.close_device(ib);
	lib.close_device(eth);
}

static void test_state_machine_order_and_masks(void **state)
{
	struct fvt_opts o = fvt_defaults();
	struct fvt_ep ep;
	struct fvt_addr self;
	struct ibv_qp_attr a;
	char c = 0;

	(void)state;
	assert_int_equal(fvt_ep_init(&lib, &ep, &o, 4096), 0);
	self = fvt_addr_of(&lib, &ep);
	/* posting before RTS is refused */
	assert_int_equal(fvt_post_rdma(&ep, IBV_WR_RDMA_WRITE, 1, ep.buf, 8, ep.mr->lkey,
				       self.addr, self.rkey, IBV_SEND_SIGNALED, 0), EINVAL);
	assert_int_equal(fvt_post_recv(&ep, 1, ep.buf, 8, ep.mr->lkey), EINVAL);
	/* skipping INIT is refused */
	assert_int_not_equal(fvt_to_rtr(&lib, &ep, &o, &self), 0);
	/* INIT without access flags is refused */
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	assert_int_equal(lib.modify_qp(ep.qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT),
			 EINVAL);
	/* a port that does not exist is refused */
	a.port_num = 2;
	assert_int_equal(lib.modify_qp(ep.qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
						      IBV_QP_ACCESS_FLAGS), EINVAL);
	assert_int_equal(qp_state(ep.qp), IBV_QPS_RESET);
	assert_int_equal(fvt_to_init(&lib, &ep, &o), 0);
	assert_int_equal(fvt_post_recv(&ep, 1, ep.buf, 8, ep.mr->lkey), 0);
	assert_int_not_equal(fvt_to_rts(&lib, &ep, &o), 0);
	/* RTR without MIN_RNR_TIMER, and RTR with an attribute that belongs to RTS */
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = self.qpn;
	a.max_dest_rd_atomic = 1;
	a.ah_attr.dlid = self.lid;
	a.ah_attr.port_num = 1;
	assert_int_equal(lib.modify_qp(ep.qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
						      IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
						      IBV_QP_MAX_DEST_RD_ATOMIC), EINVAL);
	assert_int_equal(lib.modify_qp(ep.qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
						      IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
						      IBV_QP_MAX_DEST_RD_ATOMIC |
						      IBV_QP_MIN_RNR_TIMER | IBV_QP_SQ_PSN),
			 EINVAL);
	assert_int_equal(qp_state(ep.qp), IBV_QPS_INIT);
	assert_int_equal(fvt_to_rtr(&lib, &ep, &o, &self), 0);
	assert_int_equal(fvt_post_rdma(&ep, IBV_WR_RDMA_WRITE, 1, ep.buf, 8, ep.mr->lkey,
				       self.addr, self.rkey, IBV_SEND_SIGNALED, 0), EINVAL);
	/* RTS without RNR_RETRY */
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	assert_int_equal(lib.modify_qp(ep.qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
						      IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC),
			 EINVAL);
	/* out-of-range values */
	a.retry_cnt = 8;
	a.rnr_retry = 7;
	assert_int_equal(lib.modify_qp(ep.qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
						      IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
						      IBV_QP_MAX_QP_RD_ATOMIC), EINVAL);
	assert_int_equal(fvt_to_rts(&lib, &ep, &o), 0);
	assert_int_equal(qp_state(ep.qp), IBV_QPS_RTS);
	/* a QP pointed at itself works (NCCL's flush QP) */
	ep.buf[0] = 'x';
	assert_int_equal(fvt_post_rdma(&ep, IBV_WR_RDMA_WRITE, 7, ep.buf, 1, ep.mr->lkey,
				       self.addr + 100, self.rkey, IBV_SEND_SIGNALED, 0), 0);
	{
		struct ibv_wc wc;

		assert_int_equal(fvt_poll(ep.cq, &wc, 1, 2000), 1);
		assert_int_equal(wc.status, IBV_WC_SUCCESS);
		assert_int_equal(wc.wr_id, 7);
		c = ep.buf[100];
	}
	assert_int_equal(c, 'x');
	/* RESET from anywhere, and the order starts again */
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RESET;
	assert_int_equal(lib.modify_qp(ep.qp, &a, IBV_QP_STATE), 0);
	assert_int_not_equal(fvt_to_rts(&lib, &ep, &o), 0);
	fvt_ep_fini(&lib, &ep);
}

static void test_roce_needs_grh(void **state)
{
	struct fvt_opts o = fvt_defaults();
	struct fvt_ep ep;
	struct fvt_addr self;
	struct ibv_wc wc;

	(void)state;
	o.dev = "mlx5_1";
	assert_int_equal(fvt_ep_init(&lib, &ep, &o, 4096), 0);
	self = fvt_addr_of(&lib, &ep);
	assert_int_equal(fvt_to_init(&lib, &ep, &o), 0);
	ep.gid_index = -1;	/* an IB-style address vector: no GRH */
	assert_int_not_equal(fvt_to_rtr(&lib, &ep, &o, &self), 0);
	ep.gid_index = 3;
	assert_int_equal(fvt_connect(&lib, &ep, &o, &self), 0);
	strcpy(ep.buf, "roce");
	assert_int_equal(fvt_post_rdma(&ep, IBV_WR_RDMA_WRITE, 1, ep.buf, 5, ep.mr->lkey,
				       self.addr + 64, self.rkey, IBV_SEND_SIGNALED, 0), 0);
	assert_int_equal(fvt_poll(ep.cq, &wc, 1, 2000), 1);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_string_equal(ep.buf + 64, "roce");
	fvt_ep_fini(&lib, &ep);
}

static void test_write_imm_unsignalled_and_byte_len(void **state)
{
	const size_t len = 1 << 20;
	struct pair p;
	struct ibv_wc wc[4];
	struct fvt_addr ab;

	(void)state;
	pair_default(&p, 2 * len);
	ab = fvt_addr_of(&lib, &p.b);
	for (size_t i = 0; i < len; i++)
		p.a.buf[i] = (char)(i * 7 + 3);
	assert_int_equal(fvt_post_recv(&p.b, 99, NULL, 0, 0), 0);
	/* bulk unsignalled, then a signalled write-with-immediate carrying the size */
	assert_int_equal(fvt_post_rdma(&p.a, IBV_WR_RDMA_WRITE, 1, p.a.buf, (uint32_t)len - 100,
				       p.a.mr->lkey, ab.addr + len, ab.rkey, 0, 0), 0);
	assert_int_equal(fvt_post_rdma(&p.a, IBV_WR_RDMA_WRITE_WITH_IMM, 2, p.a.buf + len - 100,
				       100, p.a.mr->lkey, ab.addr + 2 * len - 100, ab.rkey,
				       IBV_SEND_SIGNALED, 0xabcdef), 0);
	assert_int_equal(fvt_poll(p.b.cq, wc, 1, 5000), 1);
	assert_int_equal(wc[0].status, IBV_WC_SUCCESS);
	assert_int_equal(wc[0].opcode, IBV_WC_RECV_RDMA_WITH_IMM);
	assert_int_equal(wc[0].wr_id, 99);
	assert_int_equal(wc[0].byte_len, 100);
	assert_true(wc[0].wc_flags & IBV_WC_WITH_IMM);
	assert_int_equal(ntohl(wc[0].imm_data), 0xabcdef);
	assert_int_equal(wc[0].src_qp, p.a.qp->qp_num);
	assert_memory_equal(p.a.buf, p.b.buf + len, len);
	/* only the signalled WR completes on the requester */
	assert_int_equal(fvt_poll(p.a.cq, wc, 2, 300), 1);
	assert_int_equal(wc[0].wr_id, 2);
	assert_int_equal(wc[0].opcode, IBV_WC_RDMA_WRITE);
	assert_int_equal(wc[0].status, IBV_WC_SUCCESS);
	/* a zero-length write-with-immediate (bulk first, then the signal) needs no valid rkey */
	assert_int_equal(fvt_post_recv(&p.b, 100, NULL, 0, 0), 0);
	assert_int_equal(fvt_post_rdma(&p.a, IBV_WR_RDMA_WRITE_WITH_IMM, 3, NULL, 0, 0, 0, 0,
				       IBV_SEND_SIGNALED, 7), 0);
	assert_int_equal(fvt_poll(p.b.cq, wc, 1, 2000), 1);
	assert_int_equal(wc[0].status, IBV_WC_SUCCESS);
	assert_int_equal(wc[0].byte_len, 0);
	assert_int_equal(ntohl(wc[0].imm_data), 7);
	assert_int_equal(fvt_poll(p.a.cq, wc, 1, 2000), 1);
	assert_int_equal(wc[0].status, IBV_WC_SUCCESS);
	pair_down(&p);
}

static void test_read_send_recv_and_inline(void **state)
{
	struct pair p;
	struct ibv_wc wc[2];
	struct fvt_addr ab;
	char msg[48];

	(void)state;
	pair_default(&p, 8192);
	ab = fvt_addr_of(&lib, &p.b);
	strcpy(p.b.buf + 4096, "read me");
	assert_int_equal(fvt_post_rdma(&p.a, IBV_WR_RDMA_READ, 5, p.a.buf, 8, p.a.mr->lkey,
				       ab.addr + 4096, ab.rkey, IBV_SEND_SIGNALED, 0), 0);
	assert_int_equal(fvt_poll(p.a.cq, wc, 1, 2000), 1);
	assert_int_equal(wc[0].status, IBV_WC_SUCCESS);
	assert_int_equal(wc[0].opcode, IBV_WC_RDMA_READ);
	assert_int_equal(wc[0].byte_len, 8);
	assert_string_equal(p.a.buf, "read me");

	/* an inline send: the buffer is not registered and may be reused at once */
	assert_int_equal(fvt_post_recv(&p.b, 11, p.b.buf, 64, p.b.mr->lkey), 0);
	snprintf(msg, sizeof(msg), "inline hello");
	assert_int_equal(fvt_post_rdma(&p.a, IBV_WR_SEND, 6, msg, 13, 0, 0, 0,
				       IBV_SEND_SIGNALED | IBV_SEND_INLINE, 0), 0);
	memset(msg, 0, sizeof(msg));
	assert_int_equal(fvt_poll(p.b.cq, wc, 1, 2000), 1);
	assert_int_equal(wc[0].opcode, IBV_WC_RECV);
	assert_int_equal(wc[0].byte_len, 13);
	assert_int_equal(wc[0].wr_id, 11);
	assert_false(wc[0].wc_flags & IBV_WC_WITH_IMM);
	assert_string_equal(p.b.buf, "inline hello");
	assert_int_equal(fvt_poll(p.a.cq, wc, 1, 2000), 1);
	assert_int_equal(wc[0].opcode, IBV_WC_SEND);

	/* inline larger than max_inline_data, too many SGEs: refused at post (mlx5's errno) */
	{
		char big[128] = { 0 };
		struct ibv_sge sge[3] = { { (uintptr_t)p.a.buf, 8, p.a.mr->lkey },
					  { (uintptr_t)p.a.buf, 8, p.a.mr->lkey },
					  { (uintptr_t)p.a.buf, 8, p.a.mr->lkey } };
		struct ibv_send_wr wr, *bad = NULL;

		assert_int_equal(fvt_post_rdma(&p.a, IBV_WR_SEND, 7, big, sizeof(big), 0, 0, 0,
					       IBV_SEND_INLINE, 0), ENOMEM);
		memset(&wr, 0, sizeof(wr));
		wr.sg_list = sge;
		wr.num_sge = 3;
		wr.opcode = IBV_WR_SEND;
		assert_int_equal(ibv_post_send(p.a.qp, &wr, &bad), ENOMEM);
		assert_ptr_equal(bad, &wr);
	}
	/* a send larger than the receive buffer: LOC_LEN_ERR at the responder */
	assert_int_equal(fvt_post_recv(&p.b, 12, p.b.buf, 4, p.b.mr->lkey), 0);
	assert_int_equal(fvt_post_rdma(&p.a, IBV_WR_SEND, 8, p.a.buf, 16, p.a.mr->lkey, 0, 0,
				       IBV_SEND_SIGNALED, 0), 0);
	assert_int_equal(fvt_poll(p.b.cq, wc, 1, 2000), 1);
	assert_int_equal(wc[0].status, IBV_WC_LOC_LEN_ERR);
	assert_int_equal(fvt_poll(p.a.cq, wc, 1, 2000), 1);
	assert_int_equal(wc[0].status, IBV_WC_REM_INV_REQ_ERR);
	assert_int_equal(qp_state(p.a.qp), IBV_QPS_ERR);
	pair_down(&p);
}

static void expect_one(struct ibv_cq *cq, enum ibv_wc_status status, uint64_t wr_id)
{
	struct ibv_wc wc;

	assert_int_equal(fvt_poll(cq, &wc, 1, 3000), 1);
	if (wc.status != status)
		fprintf(stderr, "got %s, want %s\n", lib.wc_status_str(wc.status),
			lib.wc_status_str(status));
	assert_int_equal(wc.status, status);
	assert_int_equal(wc.wr_id, wr_id);
}

static void test_remote_access_checks(void **state)
{
	struct pair p;
	struct fvt_addr ab;
	struct ibv_mr *ro, *bad;
	struct ibv_pd *other_pd;

	(void)state;
	/* registration rules: remote write needs local write */
	pair_default(&p, 8192);
	errno = 0;
	assert_null(lib.reg_mr(p.b.pd, p.b.buf, 64, IBV_ACCESS_REMOTE_WRITE));
	assert_int_equal(errno, EINVAL);
	ab = fvt_addr_of(&lib, &p.b);

	/* an MR without REMOTE_WRITE: the write fails, both QPs end in error */
	ro = lib.reg_mr(p.b.pd, p.b.buf, 4096, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
	assert_non_null(ro);
	assert_int_equal(fvt_post_rdma(&p.a, IBV_WR_RDMA_WRITE, 1, p.a.buf, 8, p.a.mr->lkey,
				       ab.addr, ro->rkey, 0, 0), 0);
	/* a good write already on the wire behind it is refused too, and flushes */
	assert_int_equal(fvt_post_rdma(&p.a, IBV_WR_RDMA_WRITE, 2, p.a.buf, 8, p.a.mr->lkey,
				       ab.addr, ab.rkey, 0, 0), 0);
	/* unsignalled, yet the error completes */
	expect_one(p.a.cq, IBV_WC_REM_ACCESS_ERR, 1);
	expect_one(p.a.cq, IBV_WC_WR_FLUSH_ERR, 2);
	assert_int_equal(qp_state(p.a.qp), IBV_QPS_ERR);
	assert_int_equal(fvt_async_event(&lib, p.b.ctx, 2000, NULL), IBV_EVENT_QP_ACCESS_ERR);
	assert_int_equal(qp_state(p.b.qp), IBV_QPS_ERR);
	/* later WRs on a QP in error flush */
	assert_int_equal(fvt_post_rdma(&p.a, IBV_WR_RDMA_WRITE, 3, p.a.buf, 8, p.a.mr->lkey,
				       ab.addr, ab.rkey, 0, 0), 0);
	expect_one(p.a.cq, IBV_WC_WR_FLUSH_ERR, 3);
	lib.dereg_mr(ro);
	pair_down(&p);

	/* an rkey of an MR in another PD (an rkey mix-up) */
	pair_default(&p, 8192);
	ab = fvt_addr_of(&lib, &p.b);
	other_pd = lib.alloc_pd(p.b.ctx);
	bad = lib.reg_mr(other_pd, p.b.buf, 4096, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	assert_int_equal(fvt_post_rdma(&p.a, IBV_WR_RDMA_WRITE, 3, p.a.buf, 8, p.a.mr->lkey,
				       ab.addr, bad->rkey, IBV_SEND_SIGNALED, 0), 0);
	expect_one(p.a.cq, IBV_WC_REM_ACCESS_ERR, 3);
	assert_int_equal(lib.dealloc_pd(other_pd), EBUSY);	/* MR still in it */
	lib.dereg_mr(bad);
	assert_int_equal(lib.dealloc_pd(other_pd), 0);
	pair_down(&p);

	/* out of bounds by one byte; then the requester's own lkey wrong */
	pair_default(&p, 8192);
	ab = fvt_addr_of(&lib, &p.b);
	assert_int_equal(fvt_post_rdma(&p.a, IBV_WR_RDMA_WRITE, 4, p.a.buf, 16, p.a.mr->lkey,
				       ab.addr + 8192 - 15, ab.rkey, IBV_SEND_SIGNALED, 0), 0);
	expect_one(p.a.cq, IBV_WC_REM_ACCESS_ERR, 4);
	pair_down(&p);
	pair_default(&p, 8192);
	ab = fvt_addr_of(&lib, &p.b);
	assert_int_equal(fvt_post_rdma(&p.a, IBV_WR_RDMA_WRITE, 5, p.a.buf, 16, p.a.mr->lkey + 1,
				       ab.addr, ab.rkey, IBV_SEND_SIGNALED, 0), 0);
	expect_one(p.a.cq, IBV_WC_LOC_PROT_ERR, 5);
	pair_down(&p);

	/* a QP opened without remote read: reads are refused even with a good rkey */
	p.oa = fvt_defaults();
	p.ob = fvt_defaults();
	p.ob.qp_access = IBV_ACCESS_REMOTE_WRITE;
	pair_up(&p, 8192);
	ab = fvt_addr_of(&lib, &p.b);
	assert_int_equal(fvt_post_rdma(&p.a, IBV_WR_RDMA_READ, 6, p.a.buf, 16, p.a.mr->lkey,
				       ab.addr, ab.rkey, IBV_SEND_SIGNALED, 0), 0);
	expect_one(p.a.cq, IBV_WC_REM_ACCESS_ERR, 6);
	pair_down(&p);

	/* reads need initiator depth at the requester and responder resources at the responder */
	p.oa = fvt_defaults();
	p.ob = fvt_defaults();
	p.oa.max_rd_atomic = 0;
	pair_up(&p, 8192);
	ab = fvt_addr_of(&lib, &p.b);
	assert_int_equal(fvt_post_rdma(&p.a, IBV_WR_RDMA_READ, 8, p.a.buf, 16, p.a.mr->lkey,
				       ab.addr, ab.rkey, IBV_SEND_SIGNALED, 0), 0);
	expect_one(p.a.cq, IBV_WC_LOC_QP_OP_ERR, 8);
	pair_down(&p);
	p.oa = fvt_defaults();
	p.ob = fvt_defaults();
	p.ob.max_dest_rd_atomic = 0;
	pair_up(&p, 8192);
	ab = fvt_addr_of(&lib, &p.b);
	assert_int_equal(fvt_post_rdma(&p.a, IBV_WR_RDMA_READ, 9, p.a.buf, 16, p.a.mr->lkey,
				       ab.addr, ab.rkey, IBV_SEND_SIGNALED, 0), 0);
	expect_one(p.a.cq, IBV_WC_REM_INV_REQ_ERR, 9);
	assert_int_equal(fvt_async_event(&lib, p.b.ctx, 2000, NULL), IBV_EVENT_QP_REQ_ERR);
	pair_down(&p);

	/* a read into local memory registered without LOCAL_WRITE */
	p.oa = fvt_defaults();
	p.ob = fvt_defaults();
	p.oa.mr_access = IBV_ACCESS_REMOTE_READ;
	pair_up(&p, 8192);
	ab = fvt_addr_of(&lib, &p.b);
	assert_int_equal(fvt_post_rdma(&p.a, IBV_WR_RDMA_READ, 7, p.a.buf, 16, p.a.mr->lkey,
				       ab.addr, ab.rkey, IBV_SEND_SIGNALED, 0), 0);
	expect_one(p.a.cq, IBV_WC_LOC_PROT_ERR, 7);
	pair_down(&p);
}

static void test_cq_overrun_is_an_error(void **state)
{
	struct pair p;
	struct fvt_addr ab;
	struct ibv_wc wc[8];

	(void)state;
	p.oa = fvt_defaults();
	p.ob = fvt_defaults();
	p.oa.cqe = 4;
	pair_up(&p, 4096);
	ab = fvt_addr_of(&lib, &p.b);
	for (int i = 0; i < 6; i++)
		assert_int_equal(fvt_post_rdma(&p.a, IBV_WR_RDMA_WRITE, (uint64_t)i, p.a.buf, 8,
					       p.a.mr->lkey, ab.addr, ab.rkey, IBV_SEND_SIGNALED,
					       0), 0);
	assert_int_equal(fvt_async_event(&lib, p.a.ctx, 3000, NULL), IBV_EVENT_CQ_ERR);
	assert_int_equal(ibv_poll_cq(p.a.cq, 8, wc), -1);
	pair_down(&p);
}

static void test_send_queue_depth_needs_signalling(void **state)
{
	struct pair p;
	struct fvt_addr ab;
	struct ibv_wc wc;

	(void)state;
	p.oa = fvt_defaults();
	p.ob = fvt_defaults();
	p.oa.max_send_wr = 4;
	pair_up(&p, 4096);
	ab = fvt_addr_of(&lib, &p.b);
	/* unsignalled WRs keep their slots until a later signalled one is polled */
	for (int i = 0; i < 4; i++)
		assert_int_equal(fvt_post_rdma(&p.a, IBV_WR_RDMA_WRITE, (uint64_t)i, p.a.buf, 8,
					       p.a.mr->lkey, ab.addr, ab.rkey,
					       i == 3 ? IBV_SEND_SIGNALED : 0, 0), 0);
	assert_int_equal(fvt_post_rdma(&p.a, IBV_WR_RDMA_WRITE, 4, p.a.buf, 8, p.a.mr->lkey,
				       ab.addr, ab.rkey, 0, 0), ENOMEM);
	assert_int_equal(fvt_poll(p.a.cq, &wc, 1, 2000), 1);
	assert_int_equal(wc.wr_id, 3);
	for (int i = 0; i < 4; i++)
		assert_int_equal(fvt_post_rdma(&p.a, IBV_WR_RDMA_WRITE, 10, p.a.buf, 8,
					       p.a.mr->lkey, ab.addr, ab.rkey, 0, 0), 0);
	assert_int_equal(fvt_post_rdma(&p.a, IBV_WR_RDMA_WRITE, 11, p.a.buf, 8, p.a.mr->lkey,
				       ab.addr, ab.rkey, 0, 0), ENOMEM);
	/* receive queue depth likewise */
	for (uint32_t i = 0; i < p.ob.max_recv_wr; i++)
		assert_int_equal(fvt_post_recv(&p.b, i, NULL, 0, 0), 0);
	assert_int_equal(fvt_post_recv(&p.b, 99, NULL, 0, 0), ENOMEM);
	pair_down(&p);
}

static void test_rnr_without_receive(void **state)
{
	struct pair p;
	struct fvt_addr ab;
	struct ibv_wc wc;

	(void)state;
	/* rnr_retry 7 waits for ever: a receive posted late still completes the write */
	pair_default(&p, 4096);
	ab = fvt_addr_of(&lib, &p.b);
	assert_int_equal(fvt_post_rdma(&p.a, IBV_WR_RDMA_WRITE_WITH_IMM, 1, p.a.buf, 8,
				       p.a.mr->lkey, ab.addr, ab.rkey, IBV_SEND_SIGNALED, 5), 0);
	usleep(50000);
	assert_int_equal(ibv_poll_cq(p.a.cq, 1, &wc), 0);
	assert_int_equal(fvt_post_recv(&p.b, 2, NULL, 0, 0), 0);
	expect_one(p.a.cq, IBV_WC_SUCCESS, 1);
	expect_one(p.b.cq, IBV_WC_SUCCESS, 2);
	pair_down(&p);

	/* a bounded rnr_retry gives up */
	p.oa = fvt_defaults();
	p.ob = fvt_defaults();
	p.oa.rnr_retry = 1;
	p.ob.min_rnr_timer = 1;
	pair_up(&p, 4096);
	ab = fvt_addr_of(&lib, &p.b);
	assert_int_equal(fvt_post_rdma(&p.a, IBV_WR_SEND, 3, p.a.buf, 8, p.a.mr->lkey, 0, 0,
				       IBV_SEND_SIGNALED, 0), 0);
	expect_one(p.a.cq, IBV_WC_RNR_RETRY_EXC_ERR, 3);
	pair_down(&p);
}

static void test_wrong_destination_retry_exceeded(void **state)
{
	struct fvt_opts o = fvt_defaults();
	struct fvt_ep a, b, c;
	struct fvt_addr ab, ac;

	(void)state;
	assert_int_equal(fvt_ep_init(&lib, &a, &o, 4096), 0);
	assert_int_equal(fvt_ep_init(&lib, &b, &o, 4096), 0);
	assert_int_equal(fvt_ep_init(&lib, &c, &o, 4096), 0);
	ab = fvt_addr_of(&lib, &b);
	ac = fvt_addr_of(&lib, &c);
	/* a -> b, but b points at c: b ignores a, a's retries run out */
	assert_int_equal(fvt_connect(&lib, &a, &o, &ab), 0);
	assert_int_equal(fvt_connect(&lib, &b, &o, &ac), 0);
	assert_int_equal(fvt_post_rdma(&a, IBV_WR_RDMA_WRITE, 1, a.buf, 8, a.mr->lkey, ab.addr,
				       ab.rkey, IBV_SEND_SIGNALED, 0), 0);
	expect_one(a.cq, IBV_WC_RETRY_EXC_ERR, 1);
	fvt_ep_fini(&lib, &a);
	fvt_ep_fini(&lib, &b);
	fvt_ep_fini(&lib, &c);
}

static void test_address_vector_must_reach_the_port(void **state)
{
	struct fvt_opts o = fvt_defaults();
	struct fvt_ep a, b;
	struct fvt_addr aa, ab, wrong;

	(void)state;
	/* InfiniBand: the right QPN behind the wrong LID is nobody */
	assert_int_equal(fvt_ep_init(&lib, &a, &o, 4096), 0);
	assert_int_equal(fvt_ep_init(&lib, &b, &o, 4096), 0);
	aa = fvt_addr_of(&lib, &a);
	ab = fvt_addr_of(&lib, &b);
	wrong = ab;
	wrong.lid = (uint16_t)(ab.lid + 1);
	assert_int_equal(fvt_connect(&lib, &a, &o, &wrong), 0);
	assert_int_equal(fvt_connect(&lib, &b, &o, &aa), 0);
	assert_int_equal(fvt_post_rdma(&a, IBV_WR_RDMA_WRITE, 1, a.buf, 8, a.mr->lkey, ab.addr,
				       ab.rkey, IBV_SEND_SIGNALED, 0), 0);
	expect_one(a.cq, IBV_WC_RETRY_EXC_ERR, 1);
	fvt_ep_fini(&lib, &a);
	fvt_ep_fini(&lib, &b);

	/* RoCE: a RoCE v1 source GID talking to a v2 one */
	o.dev = "mlx5_1";
	assert_int_equal(fvt_ep_init(&lib, &a, &o, 4096), 0);
	assert_int_equal(fvt_ep_init(&lib, &b, &o, 4096), 0);
	a.gid_index = 2;
	aa = fvt_addr_of(&lib, &a);
	ab = fvt_addr_of(&lib, &b);
	assert_int_equal(fvt_connect(&lib, &a, &o, &ab), 0);
	assert_int_equal(fvt_connect(&lib, &b, &o, &aa), 0);
	assert_int_equal(fvt_post_rdma(&a, IBV_WR_RDMA_WRITE, 2, a.buf, 8, a.mr->lkey, ab.addr,
				       ab.rkey, IBV_SEND_SIGNALED, 0), 0);
	expect_one(a.cq, IBV_WC_RETRY_EXC_ERR, 2);
	fvt_ep_fini(&lib, &a);
	fvt_ep_fini(&lib, &b);
}

static void test_receive_needs_local_write(void **state)
{
	struct pair p;
	struct ibv_mr *ro;
	struct ibv_wc wc;

	(void)state;
	pair_default(&p, 8192);
	ro = lib.reg_mr(p.b.pd, p.b.buf, 4096, 0);
	assert_non_null(ro);
	assert_int_equal(fvt_post_recv(&p.b, 21, p.b.buf, 64, ro->lkey), 0);
	assert_int_equal(fvt_post_rdma(&p.a, IBV_WR_SEND, 22, p.a.buf, 16, p.a.mr->lkey, 0, 0,
				       IBV_SEND_SIGNALED, 0), 0);
	assert_int_equal(fvt_poll(p.b.cq, &wc, 1, 2000), 1);
	assert_int_equal(wc.status, IBV_WC_LOC_PROT_ERR);
	assert_int_equal(wc.wr_id, 21);
	expect_one(p.a.cq, IBV_WC_REM_OP_ERR, 22);
	lib.dereg_mr(ro);
	pair_down(&p);
}

static void test_injected_errors(void **state)
{
	struct pair p;
	struct fvt_addr ab;
	struct ibv_async_event ev;
	struct ibv_port_attr pa;

	(void)state;
	assert_int_equal(lib.inject("bogus@1"), EINVAL);
	assert_int_equal(lib.inject("qp_error@0"), EINVAL);

	pair_default(&p, 4096);
	ab = fvt_addr_of(&lib, &p.b);
	assert_int_equal(lib.inject("retry_exceeded@2"), 0);
	assert_int_equal(fvt_post_rdma(&p.a, IBV_WR_RDMA_WRITE, 1, p.a.buf, 8, p.a.mr->lkey,
				       ab.addr, ab.rkey, IBV_SEND_SIGNALED, 0), 0);
	expect_one(p.a.cq, IBV_WC_SUCCESS, 1);
	assert_int_equal(fvt_post_rdma(&p.a, IBV_WR_RDMA_WRITE, 2, p.a.buf, 8, p.a.mr->lkey,
				       ab.addr, ab.rkey, 0, 0), 0);
	expect_one(p.a.cq, IBV_WC_RETRY_EXC_ERR, 2);
	assert_int_equal(qp_state(p.a.qp), IBV_QPS_ERR);
	pair_down(&p);

	pair_default(&p, 4096);
	ab = fvt_addr_of(&lib, &p.b);
	assert_int_equal(lib.inject("rem_access@1"), 0);
	assert_int_equal(fvt_post_rdma(&p.a, IBV_WR_RDMA_WRITE, 3, p.a.buf, 8, p.a.mr->lkey,
				       ab.addr, ab.rkey, IBV_SEND_SIGNALED, 0), 0);
	expect_one(p.a.cq, IBV_WC_REM_ACCESS_ERR, 3);
	pair_down(&p);

	pair_default(&p, 4096);
	ab = fvt_addr_of(&lib, &p.b);
	assert_int_equal(lib.inject("qp_error@1"), 0);
	assert_int_equal(fvt_post_rdma(&p.a, IBV_WR_RDMA_WRITE, 4, p.a.buf, 8, p.a.mr->lkey,
				       ab.addr, ab.rkey, 0, 0), 0);
	expect_one(p.a.cq, IBV_WC_WR_FLUSH_ERR, 4);
	assert_int_equal(fvt_async_event(&lib, p.a.ctx, 2000, &ev), IBV_EVENT_QP_FATAL);
	assert_ptr_equal(ev.element.qp, p.a.qp);
	pair_down(&p);

	pair_default(&p, 4096);
	ab = fvt_addr_of(&lib, &p.b);
	assert_int_equal(lib.inject("port_down@1"), 0);
	assert_int_equal(fvt_post_rdma(&p.a, IBV_WR_RDMA_WRITE, 5, p.a.buf, 8, p.a.mr->lkey,
				       ab.addr, ab.rkey, IBV_SEND_SIGNALED, 0), 0);
	expect_one(p.a.cq, IBV_WC_RETRY_EXC_ERR, 5);
	assert_int_equal(fvt_async_event(&lib, p.a.ctx, 2000, &ev), IBV_EVENT_PORT_ERR);
	assert_int_equal(ev.element.port_num, 1);
	assert_int_equal(lib.query_port(p.a.ctx, 1, &pa), 0);
	assert_int_equal(pa.state, IBV_PORT_DOWN);
	/* back up: PORT_ACTIVE, and a fresh connection works again */
	assert_int_equal(lib.set_port_state("mlx5_0", 1, IBV_PORT_ACTIVE), 0);
	assert_int_equal(fvt_async_event(&lib, p.a.ctx, 2000, NULL), IBV_EVENT_PORT_ACTIVE);
	assert_int_equal(lib.set_port_state("mlx5_9", 1, IBV_PORT_ACTIVE), ENODEV);
	pair_down(&p);
	pair_default(&p, 4096);
	ab = fvt_addr_of(&lib, &p.b);
	assert_int_equal(fvt_post_rdma(&p.a, IBV_WR_RDMA_WRITE, 6, p.a.buf, 8, p.a.mr->lkey,
				       ab.addr, ab.rkey, IBV_SEND_SIGNALED, 0), 0);
	expect_one(p.a.cq, IBV_WC_SUCCESS, 6);
	pair_down(&p);
}

static void test_destroy_order_enforced(void **state)
{
	struct fvt_opts o = fvt_defaults();
	struct fvt_ep ep;

	(void)state;
	assert_int_equal(fvt_ep_init(&lib, &ep, &o, 4096), 0);
	assert_int_equal(lib.destroy_cq(ep.cq), EBUSY);
	assert_int_equal(lib.dealloc_pd(ep.pd), EBUSY);
	fvt_ep_fini(&lib, &ep);
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
		cmocka_unit_test(test_devices_ports_and_gids),
		cmocka_unit_test(test_state_machine_order_and_masks),
		cmocka_unit_test(test_roce_needs_grh),
		cmocka_unit_test(test_write_imm_unsignalled_and_byte_len),
		cmocka_unit_test(test_read_send_recv_and_inline),
		cmocka_unit_test(test_remote_access_checks),
		cmocka_unit_test(test_cq_overrun_is_an_error),
		cmocka_unit_test(test_send_queue_depth_needs_signalling),
		cmocka_unit_test(test_rnr_without_receive),
		cmocka_unit_test(test_wrong_destination_retry_exceeded),
		cmocka_unit_test(test_address_vector_must_reach_the_port),
		cmocka_unit_test(test_receive_needs_local_write),
		cmocka_unit_test(test_injected_errors),
		cmocka_unit_test(test_destroy_order_enforced),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
