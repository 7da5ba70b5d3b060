/* The wrap layer over a scripted fake transport: counting, pooling, errors, setup, hops. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "plugin/base/clock.h"
#include "plugin/base/error.h"
#include "plugin/stats/hop.h"
#include "plugin/wrap/wrap.h"
#include "plugin/wrap/wrap_internal.h"

/* The fake: every request completes on its `polls_left`-th test, or fails. */
struct fake_req {
	int polls_left;
	int n;
	int sizes[FL_MAX_RECVS];
	int fail;
	struct fl_xfer_times times;
};

static struct {
	struct fake_req reqs[1024];
	int used;
	int hold_requests;   /* isend/irecv hand back NULL: "not now" */
	int never_complete;
	int fail_test;
	int connect_calls_until_up;
	int isend_calls;
	int mem_type_seen;
	int last_tag;
	struct fl_xfer_times next_times; /* handed to the next request posted */
	/* the direct path (struct fl_direct): what f_direct answers, and what went through it */
	int direct_answer, direct_asks, direct_posts, direct_tests, tests, fail_post;
	int direct_leaves_sizes; /* its test leaves sizes unwritten, as fastsocket's */
	int direct_writes_zero;  /* its test writes 0, as aws-ofi-nccl's early receives */
	int leaves_recv_sizes;   /* the transport's test says a receive's size is not known */
} fake;

static int warn_lines;

static void count_logger(int level, unsigned long flags, const char *file, int line,
			 const char *fmt, ...)
{
	(void)flags, (void)file, (void)line, (void)fmt;
	if (level == FL_LOG_WARN)
		warn_lines++;
}

static int f_init(void) { return FL_OK; }
static int f_devices(int *n) { *n = 1; return FL_OK; }

static int f_props(int dev, struct fl_props *p)
{
	memset(p, 0, sizeof(*p));
	p->name = dev == 0 ? "fake0" : "?";
	return FL_OK;
}

static int f_listen(int dev, const struct fl_endpoint *self, void *handle, void **lc)
{
	(void)dev;
	memcpy(handle, self, sizeof(*self));
	*lc = &fake;
	return FL_OK;
}

static int f_connect(int dev, const struct fl_endpoint *self, void *handle, void **sc)
{
	(void)dev, (void)self, (void)handle;
	*sc = --fake.connect_calls_until_up <= 0 ? (void *)&fake.reqs[1000] : NULL;
	return FL_OK;
}

static int f_accept(void *lc, void **rc)
{
	*rc = lc;
	return FL_OK;
}

static int f_peer(void *comm, struct fl_endpoint *peer)
{
	(void)comm;
	memset(peer, 0, sizeof(*peer));
	strcpy(peer->node, "remote");
	strcpy(peer->dev_name, "fake9");
	peer->rank = 7;
	return FL_OK;
}

static int f_reg(void *comm, void *data, size_t size, int type, void **mh)
{
	(void)comm, (void)data, (void)size;
	fake.mem_type_seen = type;
	*mh = &fake;
	return FL_OK;
}

static int f_dereg(void *comm, void *mh) { (void)comm, (void)mh; return FL_OK; }

static void *new_req(int n, const size_t *sizes)
{
	struct fake_req *r;

	if (fake.hold_requests)
		return NULL;
	r = &fake.reqs[fake.used++ % 1000];
	r->polls_left = fake.never_complete ? -1 : 2;
	r->n = n;
	r->fail = fake.fail_test;
	r->times = fake.next_times;
	for (int i = 0; i < n; i++)
		r->sizes[i] = (int)sizes[i];
	return r;
}

static int f_isend(void *sc, void *data, size_t size, int tag, void *mh, void **req)
{
	(void)sc, (void)data, (void)mh;
	fake.isend_calls++;
	fake.last_tag = tag;
	*req = new_req(1, &size);
	return FL_OK;
}

static int f_irecv(void *rc, int n, void **data, size_t *sizes, int *tags, void **mh, void **req)
{
	(void)rc, (void)data, (void)tags, (void)mh;
	*req = new_req(n, sizes);
	return FL_OK;
}

static int f_iflush(void *rc, int n, void **data, int *sizes, void **mh, void **req)
{
	size_t none[FL_MAX_RECVS] = { 0 };

	(void)rc, (void)data, (void)sizes, (void)mh;
	*req = new_req(n, none);
	return FL_OK;
}

static int f_test(void *request, int *done, int *sizes, struct fl_xfer_times *t)
{
	struct fake_req *r = request;

	fake.tests++;
	if (r->fail)
		return fl_fail(FL_ERR_SYSTEM, "peer went away");
	*done = r->polls_left > 0 && --r->polls_left == 0;
	if (*done) {
		memcpy(sizes, r->sizes, sizeof(int) * (size_t)r->n);
		if (fake.leaves_recv_sizes)
			for (int i = 0; i < r->n; i++)
				sizes[i] = FL_SIZE_UNWRITTEN;
		*t = r->times;
	}
	return FL_OK;
}

static int f_close(void *c) { (void)c; return FL_OK; }

/* The plugin behind the fake, called directly: NCCL's v10+ shapes, no error text of its own. */
static int d_isend(void *sc, void *data, size_t size, int tag, void *mh, void *ph, void **req)
{
	(void)data, (void)tag, (void)mh, (void)ph;
	assert_ptr_equal(sc, &fake.reqs[1001]);
	fake.direct_posts++;
	if (fake.fail_post)
		return FL_ERR_SYSTEM;
	*req = new_req(1, &size);
	return FL_OK;
}

static int d_irecv(void *rc, int n, void **data, size_t *sizes, int *tags, void **mh, void **ph,
		   void **req)
{
	(void)data, (void)tags, (void)mh;
	assert_ptr_equal(rc, &fake.reqs[1001]);
	assert_int_equal(n, 1);
	assert_non_null(ph);
	fake.direct_posts++;
	*req = new_req(n, sizes);
	return FL_OK;
}

static int d_test(void *request, int *done, int *sizes)
{
	struct fake_req *r = request;

	fake.direct_tests++;
	if (r->fail)
		return FL_ERR_SYSTEM;
	*done = r->polls_left > 0 && --r->polls_left == 0;
	if (*done && !fake.direct_leaves_sizes)
		sizes[0] = fake.direct_writes_zero ? 0 : r->sizes[0];
	return FL_OK;
}

static int d_fail(void *transport_comm, const char *op, int rc)
{
	(void)transport_comm;
	return fl_fail(rc, "fake's plugin: %s failed (error %d)", op, rc);
}

static int f_direct(void *comm, struct fl_direct *d)
{
	(void)comm;
	fake.direct_asks++;
	if (fake.direct_answer == FL_DIRECT_ON)
		*d = (struct fl_direct){ .comm = &fake.reqs[1001], .isend = d_isend,
					 .irecv = d_irecv, .test = d_test, .fail = d_fail };
	return fake.direct_answer;
}

/* Only the hand-over of a forwarding transport: its own requests go through f_isend etc. */
static const struct fl_forward fake_forward = { .direct = f_direct };

static const struct fl_transport fake_transport = {
	.name = "fake", .init = f_init, .devices = f_devices, .get_properties = f_props,
	.listen = f_listen, .connect = f_connect, .accept = f_accept, .peer = f_peer,
	.reg_mr = f_reg, .dereg_mr = f_dereg, .isend = f_isend, .irecv = f_irecv,
	.iflush = f_iflush, .test = f_test, .close_send = f_close, .close_recv = f_close,
	.close_listen = f_close, .forward = &fake_forward,
};

static void *ctx;

static int setup(void **state)
{
	(void)state;
	memset(&fake, 0, sizeof(fake));
	warn_lines = 0;
	fl_hops_reset();
	return 0;
}

static struct fl_wcomm *connect_send(void)
{
	char handle[FL_HANDLE_SIZE] = { 0 };
	void *sc = NULL;

	fake.connect_calls_until_up = 1;
	assert_int_equal(fl_wrap_connect(ctx, 0, handle, &sc), FL_OK);
	assert_non_null(sc);
	return sc;
}

static struct fl_wcomm *accept_recv(void)
{
	char handle[FL_HANDLE_SIZE] = { 0 };
	void *lc = NULL, *rc = NULL;

	assert_int_equal(fl_wrap_listen(ctx, 0, handle, &lc), FL_OK);
	assert_int_equal(fl_wrap_accept(lc, &rc), FL_OK);
	assert_non_null(rc);
	assert_int_equal(fl_wrap_close_listen(lc), FL_OK);
	return rc;
}

static void wait_done(void *req, int *sizes)
{
	int done = 0, polls = 0;

	while (!done) {
		assert_int_equal(fl_wrap_test(req, &done, sizes), FL_OK);
		assert_true(++polls < 10);
	}
}

static uint64_t counter(_Atomic uint64_t *c)
{
	return atomic_load(c);
}

static void test_send_is_counted_once_done(void **state)
{
	struct fl_wcomm *c = connect_send();
	char buf[100];
	void *req = NULL;
	int size = -1, done = 0;

	(void)state;
	assert_int_equal(fl_wrap_isend(c, buf, 100, 3, NULL, NULL, &req), FL_OK);
	assert_non_null(req);
	assert_int_equal(fl_wrap_test(req, &done, &size), FL_OK);
	assert_int_equal(done, 0);
	assert_int_equal(counter(&c->stats.bytes), 0);
	wait_done(req, &size);
	assert_int_equal(size, 100);
	assert_int_equal(counter(&c->stats.bytes), 100);
	assert_int_equal(fl_stats_messages(&c->stats), 1);
	assert_int_equal(counter(&c->stats.sizes.n[fl_size_bucket(100)]), 1);
	assert_int_equal(fl_wrap_close_send(c), FL_OK);
}

static void test_multi_recv_sums_slots_and_allows_null_sizes(void **state)
{
	struct fl_wcomm *c = accept_recv();
	char a[10], b[20], d[30];
	void *data[3] = { a, b, d }, *mh[3] = { 0 }, *req = NULL;
	size_t sizes[3] = { 10, 20, 30 };
	int tags[3] = { 1, 2, 3 };

	(void)state;
	assert_string_equal(c->peer.node, "remote");
	assert_int_equal(c->peer.rank, 7);
	assert_int_equal(fl_wrap_irecv(c, 3, data, sizes, tags, mh, NULL, &req), FL_OK);
	wait_done(req, NULL);
	assert_int_equal(counter(&c->stats.bytes), 60);
	assert_int_equal(fl_stats_messages(&c->stats), 1);
	assert_int_equal(counter(&c->stats.sizes.n[fl_size_bucket(60)]), 1);
	assert_int_equal(fl_wrap_close_recv(c), FL_OK);
}

static void test_flush_moves_no_bytes(void **state)
{
	struct fl_wcomm *c = accept_recv();
	void *req = NULL;

	(void)state;
	assert_int_equal(fl_wrap_iflush(c, 1, NULL, NULL, NULL, &req), FL_OK);
	wait_done(req, NULL);
	assert_int_equal(counter(&c->stats.bytes), 0);
	assert_int_equal(fl_stats_messages(&c->stats), 0);
	fl_wrap_close_recv(c);
}

static void test_transport_backpressure_passes_null_request(void **state)
{
	struct fl_wcomm *c = connect_send();
	void *req = (void *)0x1;

	(void)state;
	fake.hold_requests = 1;
	assert_int_equal(fl_wrap_isend(c, NULL, 0, 0, NULL, NULL, &req), FL_OK);
	assert_null(req);
	assert_int_equal(c->free_head, 0);
	fl_wrap_close_send(c);
}

static void test_full_pool_returns_null_without_calling_transport(void **state)
{
	struct fl_wcomm *c = connect_send();
	void *req = NULL;

	(void)state;
	fake.never_complete = 1;
	for (int i = 0; i < FL_WRAP_POOL; i++) {
		assert_int_equal(fl_wrap_isend(c, NULL, 1, 0, NULL, NULL, &req), FL_OK);
		assert_non_null(req);
	}
	assert_int_equal(fake.isend_calls, FL_WRAP_POOL);
	assert_int_equal(fl_wrap_isend(c, NULL, 1, 0, NULL, NULL, &req), FL_OK);
	assert_null(req);
	assert_int_equal(fake.isend_calls, FL_WRAP_POOL);
	fl_wrap_close_send(c);
}

static void test_errors_are_returned_and_logged_once(void **state)
{
	struct fl_wcomm *c = connect_send();
	void *r1 = NULL, *r2 = NULL;
	int done = 1;

	(void)state;
	fake.fail_test = 1;
	assert_int_equal(fl_wrap_isend(c, NULL, 1, 0, NULL, NULL, &r1), FL_OK);
	assert_int_equal(fl_wrap_isend(c, NULL, 1, 0, NULL, NULL, &r2), FL_OK);
	assert_int_equal(fl_wrap_test(r1, &done, NULL), FL_ERR_SYSTEM);
	assert_int_equal(done, 0);
	assert_int_equal(fl_wrap_test(r2, &done, NULL), FL_ERR_SYSTEM);
	assert_int_equal(warn_lines, 1);
	fl_wrap_close_send(c);
}

static void test_irecv_rejects_too_many_buffers(void **state)
{
	struct fl_wcomm *c = accept_recv();
	void *req = NULL;

	(void)state;
	assert_int_equal(fl_wrap_irecv(c, FL_MAX_RECVS + 1, NULL, NULL, NULL, NULL, NULL, &req),
			 FL_ERR_INTERNAL);
	assert_null(req);
	fl_wrap_close_recv(c);
}

static void test_connect_stays_null_until_transport_is_up(void **state)
{
	char handle[FL_HANDLE_SIZE] = { 0 };
	void *sc = NULL;

	(void)state;
	fake.connect_calls_until_up = 3;
	assert_int_equal(fl_wrap_connect(ctx, 0, handle, &sc), FL_OK);
	assert_null(sc);
	assert_int_equal(fl_wrap_connect(ctx, 0, handle, &sc), FL_OK);
	assert_null(sc);
	assert_int_equal(fl_wrap_connect(ctx, 0, handle, &sc), FL_OK);
	assert_non_null(sc);
	fl_wrap_close_send(sc);
}

static void test_registration_records_memory_type(void **state)
{
	struct fl_wcomm *c = connect_send();
	void *mh = NULL;

	(void)state;
	assert_int_equal(fl_wrap_reg_mr(c, NULL, 64, FL_PTR_CUDA, &mh), FL_OK);
	assert_int_equal(fake.mem_type_seen, FL_PTR_CUDA);
	assert_int_equal(atomic_load(&c->stats.mem_types), FL_PTR_CUDA);
	assert_int_equal(fl_wrap_reg_mr_dmabuf(c, NULL, 64, FL_PTR_CUDA, 0, 3, &mh),
			 FL_ERR_INTERNAL);
	assert_int_equal(fl_wrap_dereg_mr(c, &fake), FL_OK);
	fl_wrap_close_send(c);
}

static void test_listen_puts_local_identity_in_handle(void **state)
{
	char handle[FL_HANDLE_SIZE] = { 0 };
	struct fl_endpoint ep;
	void *lc = NULL;

	(void)state;
	assert_int_equal(fl_wrap_listen(ctx, 0, handle, &lc), FL_OK);
	memcpy(&ep, handle, sizeof(ep));
	assert_string_equal(ep.node, "unit-node");
	assert_string_equal(ep.dev_name, "fake0");
	assert_int_equal(ep.rank, 5);
	assert_int_equal(ep.comm_hash, 0xabcULL);
	fl_wrap_close_listen(lc);
}


static void test_tags_name_ranks_and_only_the_first_is_kept(void **state)
{
	struct fl_wcomm *s = connect_send(), *r = accept_recv();
	int tags[2] = { 6, 6 };
	size_t sizes[2] = { 1, 1 };
	void *data[2] = { NULL, NULL }, *req = NULL;

	(void)state;
	assert_int_equal(atomic_load(&s->stats.tag_rank), -1);
	assert_int_equal(fl_wrap_isend(s, NULL, 1, 4, NULL, NULL, &req), FL_OK);
	wait_done(req, NULL);
	assert_int_equal(fl_wrap_isend(s, NULL, 1, 9, NULL, NULL, &req), FL_OK);
	wait_done(req, NULL);
	assert_int_equal(fake.last_tag, 9); /* passed on unchanged */
	assert_int_equal(atomic_load(&s->stats.tag_rank), 4);
	assert_int_equal(fl_wrap_irecv(r, 2, data, sizes, tags, NULL, NULL, &req), FL_OK);
	wait_done(req, NULL);
	assert_int_equal(atomic_load(&r->stats.tag_rank), 6);
	fl_wrap_close_send(s);
	fl_wrap_close_recv(r);
}

static const struct fl_hop_snapshot *find_hop(const struct fl_hop_snapshot *h, int n, int view)
{
	for (int i = 0; i < n; i++)
		if (h[i].key.view == view)
			return &h[i];
	fail_msg("no hop with view %d among %d", view, n);
	return NULL;
}

static void test_connections_join_one_hop_per_direction(void **state)
{
	struct fl_wcomm *s1 = connect_send(), *s2 = connect_send(), *r = accept_recv();
	struct fl_hop_snapshot *hops;
	const struct fl_hop_snapshot *h;
	int n;

	(void)state;
	n = fl_hops_snapshot(&hops);
	assert_int_equal(n, 2);
	h = find_hop(hops, n, FL_HOP_SEND);
	assert_string_equal(h->key.src_node, "unit-node");
	assert_string_equal(h->key.src_dev, "fake0");
	assert_string_equal(h->key.dst_node, "remote");
	assert_string_equal(h->key.dst_dev, "fake9");
	assert_int_equal(h->connections, 2);
	assert_int_equal(h->src_rank, 5); /* FABRICLAB_RANK */
	assert_int_equal(h->dst_rank, 7); /* the peer's hello */
	h = find_hop(hops, n, FL_HOP_RECV);
	assert_string_equal(h->key.src_node, "remote");
	assert_string_equal(h->key.dst_dev, "fake0");
	assert_int_equal(h->connections, 1);
	assert_int_equal(h->src_rank, 7);
	assert_int_equal(h->dst_rank, 5);
	free(hops);
	fl_wrap_close_send(s1);
	fl_wrap_close_send(s2);
	fl_wrap_close_recv(r);
}

static void send_timed(struct fl_wcomm *c, int bytes, uint64_t ready, uint64_t start, uint64_t end)
{
	void *req = NULL;

	fake.next_times = (struct fl_xfer_times){ .ready_ns = ready, .wire_start_ns = start,
						  .wire_end_ns = end };
	assert_int_equal(fl_wrap_isend(c, NULL, (size_t)bytes, 0, NULL, NULL, &req), FL_OK);
	wait_done(req, NULL);
}

/* Two channels of one hop overlap on the wire: the union counts the overlap once. */
static void test_hop_wire_time_is_the_union_over_its_connections(void **state)
{
	struct fl_wcomm *a = connect_send(), *b = connect_send();
	uint64_t t0 = fl_clock_ns(), T = t0 + 1000000000ULL, t1;
	struct fl_hop_snapshot *hops;
	uint64_t wait_lo, wait_hi;

	(void)state;
	send_timed(a, 1000, T, T, T + 100);
	send_timed(b, 1000, T, T + 50, T + 200);
	send_timed(a, 1000, T + 300, T + 300, T + 400);
	t1 = fl_clock_ns();
	fl_wrap_close_send(a); /* one closed, one live: both must count */
	assert_int_equal(fl_hops_snapshot(&hops), 1);
	assert_int_equal(hops[0].t.bytes, 3000);
	assert_int_equal(hops[0].t.messages, 3);
	assert_int_equal(hops[0].wire_ns, 300);
	assert_int_equal(hops[0].t.wire_bridged_ns, 0);
	assert_int_equal(hops[0].t.wire_max_ns, 150);
	assert_int_equal(hops[0].t.wire_times[fl_time_bucket(100)], 2);
	/* Each request waited from its post (between t0 and t1) until ready. */
	wait_lo = 3 * T + 300 - 3 * t1;
	wait_hi = 3 * T + 300 - 3 * t0;
	assert_in_range(hops[0].t.peer_wait_ns, wait_lo, wait_hi);
	assert_in_range(hops[0].active_ns, 1, t1 - t0);
	free(hops);
	fl_wrap_close_send(b);
}

/* A transport clock that claims the wire started before the post cannot stretch the union. */
static void test_wire_before_post_is_clamped_to_the_post(void **state)
{
	struct fl_wcomm *a = connect_send();
	uint64_t t0 = fl_clock_ns(), T = t0 + 1000000, t1;
	struct fl_hop_snapshot *hops;

	(void)state;
	send_timed(a, 10, 0, 1, T);
	t1 = fl_clock_ns();
	assert_int_equal(fl_hops_snapshot(&hops), 1);
	assert_in_range(hops[0].wire_ns, T - t1, T - t0);
	assert_int_equal(hops[0].t.peer_wait_ns, 0); /* ready not observed */
	free(hops);
	fl_wrap_close_send(a);
}

/* A request the transport timed only in part is rated on the part it timed. */
static void test_partly_timed_requests_rate_only_the_timed_bytes(void **state)
{
	struct fl_wcomm *a = connect_send();
	uint64_t T = fl_clock_ns() + 1000000000ULL;
	struct fl_hop_snapshot *hops;
	void *req = NULL;

	(void)state;
	fake.next_times = (struct fl_xfer_times){ .ready_ns = T, .wire_start_ns = T,
						  .wire_end_ns = T + 100, .wire_bytes = 250 };
	assert_int_equal(fl_wrap_isend(a, NULL, 1000, 0, NULL, NULL, &req), FL_OK);
	wait_done(req, NULL);
	send_timed(a, 1000, T + 200, T + 200, T + 300); /* 0 = every byte timed */
	assert_int_equal(fl_hops_snapshot(&hops), 1);
	assert_int_equal(hops[0].t.bytes, 2000);
	assert_int_equal(hops[0].t.wire_bytes, 1250);
	assert_int_equal(hops[0].wire_ns, 200);
	free(hops);
	fl_wrap_close_send(a);
}

/*
 * The transport hands the data path over (ext over a v10+ plugin): requests posted before stay
 * the transport's and are tested through it, later ones go to the plugin directly, are timed
 * posted -> done and counted, and the transport is not asked again.
 */
static void test_direct_path_once_the_transport_hands_it_over(void **state)
{
	struct fl_wcomm *c = connect_send();
	void *r1 = NULL, *r2 = NULL, *r3 = NULL;
	int size = -1;

	(void)state;
	assert_int_equal(fl_wrap_isend(c, NULL, 100, 0, NULL, NULL, &r1), FL_OK);
	assert_int_equal(fake.isend_calls, 1);
	assert_int_equal(fake.direct_asks, 1); /* FL_DIRECT_NOT_YET */
	fake.direct_answer = FL_DIRECT_ON;
	assert_int_equal(fl_wrap_isend(c, NULL, 200, 0, NULL, NULL, &r2), FL_OK);
	assert_int_equal(fl_wrap_isend(c, NULL, 300, 0, NULL, NULL, &r3), FL_OK);
	assert_int_equal(fake.direct_asks, 2);
	assert_int_equal(fake.isend_calls, 1);
	assert_int_equal(fake.direct_posts, 2);
	wait_done(r1, &size);
	assert_int_equal(size, 100);
	assert_int_equal(fake.direct_tests, 0);
	wait_done(r2, &size);
	assert_int_equal(size, 200);
	assert_int_equal(fake.tests, 2); /* r1's two polls, none of r2's */
	assert_int_equal(fake.direct_tests, 2);
	fake.direct_leaves_sizes = 1; /* the posted size is reported, as ext does */
	wait_done(r3, &size);
	assert_int_equal(size, 300);
	assert_int_equal(counter(&c->stats.bytes), 600);
	assert_int_equal(fl_stats_messages(&c->stats), 3);
	assert_int_equal(counter(&c->stats.wire_bytes), 500); /* whole requests: r2, r3 */
	assert_int_equal(fl_wrap_close_send(c), FL_OK);
}

/* One buffer with NCCL's profiler handles goes direct; a multi-receive or none through. */
static void test_direct_receives_take_one_buffer_with_profiler_handles(void **state)
{
	struct fl_wcomm *c = accept_recv();
	char a[10], b[20];
	void *data[2] = { a, b }, *mh[2] = { 0 }, *ph[2] = { 0 }, *req[3] = { 0 };
	size_t sizes[2] = { 10, 20 };
	int tags[2] = { 1, 2 }, got[2] = { -1, -1 };

	(void)state;
	fake.direct_answer = FL_DIRECT_ON;
	assert_int_equal(fl_wrap_irecv(c, 1, data, sizes, tags, mh, ph, &req[0]), FL_OK);
	assert_int_equal(fl_wrap_irecv(c, 2, data, sizes, tags, mh, ph, &req[1]), FL_OK);
	assert_int_equal(fl_wrap_irecv(c, 1, data, sizes, tags, mh, NULL, &req[2]), FL_OK);
	assert_int_equal(fake.direct_posts, 1);
	for (int i = 0; i < 3; i++)
		wait_done(req[i], got);
	assert_int_equal(fake.direct_tests, 2);
	assert_int_equal(fake.tests, 4);
	assert_int_equal(counter(&c->stats.bytes), 10 + 30 + 10);
	fl_wrap_close_recv(c);
}

/* The plugin's errors come back as they are, in the words the transport would use. */
static void test_direct_errors_are_the_transports(void **state)
{
	struct fl_wcomm *c = connect_send();
	void *req = (void *)0x1;
	int done = 1;

	(void)state;
	fake.direct_answer = FL_DIRECT_ON;
	fake.fail_post = 1;
	assert_int_equal(fl_wrap_isend(c, NULL, 1, 0, NULL, NULL, &req), FL_ERR_SYSTEM);
	assert_null(req);
	assert_non_null(strstr(fl_error_text(), "fake's plugin: isend failed (error"));
	assert_int_equal(c->free_head, 0); /* its pooled request went back */
	fake.fail_post = 0;
	fake.fail_test = 1;
	assert_int_equal(fl_wrap_isend(c, NULL, 1, 0, NULL, NULL, &req), FL_OK);
	assert_int_equal(fl_wrap_test(req, &done, NULL), FL_ERR_SYSTEM);
	assert_int_equal(done, 0);
	assert_non_null(strstr(fl_error_text(), "fake's plugin: test failed (error"));
	assert_int_equal(warn_lines, 1);
	fl_wrap_close_send(c);
}

/* FL_DIRECT_NEVER is final: the transport is not asked again and keeps every request. */
static void test_direct_never_is_not_asked_again(void **state)
{
	struct fl_wcomm *c = connect_send();
	void *req = NULL;

	(void)state;
	fake.direct_answer = FL_DIRECT_NEVER;
	for (int i = 0; i < 3; i++) {
		assert_int_equal(fl_wrap_isend(c, NULL, 1, 0, NULL, NULL, &req), FL_OK);
		wait_done(req, NULL);
	}
	assert_int_equal(fake.direct_asks, 1);
	assert_int_equal(fake.isend_calls, 3);
	assert_int_equal(fake.direct_posts, 0);
	fl_wrap_close_send(c);
}

/*
 * A receive whose size the transport does not know (ext over an inner that writes none) reaches
 * NCCL as 0, what NCCL reads unwrapped (2.30.7 src/transport/net.cc:1617-1619), never the posted
 * slot, and is counted unsized with no bytes; the same on the direct path.
 */
static void test_unsized_receives_reach_nccl_as_zero(void **state)
{
	struct fl_wcomm *c = accept_recv();
	char a[1000];
	void *data[1] = { a }, *mh[1] = { 0 }, *ph[1] = { 0 }, *req = NULL;
	size_t sizes[1] = { sizeof(a) };
	int tags[1] = { 1 }, got = 0;

	(void)state;
	fake.leaves_recv_sizes = 1;
	assert_int_equal(fl_wrap_irecv(c, 1, data, sizes, tags, mh, ph, &req), FL_OK);
	wait_done(req, &got);
	assert_int_equal(got, 0);
	fake.direct_answer = FL_DIRECT_ON;
	fake.direct_leaves_sizes = 1;
	assert_int_equal(fl_wrap_irecv(c, 1, data, sizes, tags, mh, ph, &req), FL_OK);
	assert_int_equal(fake.direct_posts, 1);
	got = 0;
	wait_done(req, &got);
	assert_int_equal(got, 0);
	assert_int_equal(counter(&c->stats.bytes), 0);
	assert_int_equal(counter(&c->stats.unsized), 2);
	assert_int_equal(fl_stats_messages(&c->stats), 2);
	assert_true(counter(&c->stats.outstanding_ns) > 0); /* still timed */
	fl_wrap_close_recv(c);
}

/*
 * A direct receive posted with NCCL's optional-completion hint that comes back with 0 bytes may
 * be done before its data (aws-ofi-nccl): counted unsized and not timed. Without the hint, a 0
 * written is a size like any other; the transport's own test says untimed itself.
 */
static void test_early_receives_are_not_timed(void **state)
{
	struct fl_wcomm *c = accept_recv();
	char a[1000];
	void *data[1] = { a }, *mh[1] = { 0 }, *ph[1] = { 0 }, *req;
	size_t sizes[1] = { sizeof(a) };
	int tags[1] = { 1 }, got = -1;

	(void)state;
	fake.next_times = (struct fl_xfer_times){ .untimed = 1 };
	req = NULL;
	assert_int_equal(fl_wrap_irecv(c, 1, data, sizes, tags, mh, ph, &req), FL_OK);
	wait_done(req, &got);
	assert_int_equal(got, (int)sizeof(a));
	assert_int_equal(counter(&c->stats.outstanding_ns), 0);
	fake.next_times = (struct fl_xfer_times){ 0 };
	fake.direct_answer = FL_DIRECT_ON;
	fake.direct_writes_zero = 1;
	req = FL_OPTIONAL_RECV_COMPLETION;
	assert_int_equal(fl_wrap_irecv(c, 1, data, sizes, tags, mh, ph, &req), FL_OK);
	wait_done(req, &got);
	assert_int_equal(got, 0);
	assert_int_equal(counter(&c->stats.unsized), 1);
	assert_int_equal(counter(&c->stats.outstanding_ns), 0);
	assert_int_equal(counter(&c->stats.wire_bytes), 0);
	req = NULL;
	assert_int_equal(fl_wrap_irecv(c, 1, data, sizes, tags, mh, ph, &req), FL_OK);
	wait_done(req, &got);
	assert_int_equal(counter(&c->stats.unsized), 1);
	assert_true(counter(&c->stats.outstanding_ns) > 0);
	assert_int_equal(fl_stats_messages(&c->stats), 3);
	assert_int_equal(counter(&c->stats.bytes), sizeof(a));
	fl_wrap_close_recv(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_send_is_counted_once_done, setup),
		cmocka_unit_test_setup(test_partly_timed_requests_rate_only_the_timed_bytes, setup),
		cmocka_unit_test_setup(test_multi_recv_sums_slots_and_allows_null_sizes, setup),
		cmocka_unit_test_setup(test_flush_moves_no_bytes, setup),
		cmocka_unit_test_setup(test_transport_backpressure_passes_null_request, setup),
		cmocka_unit_test_setup(test_full_pool_returns_null_without_calling_transport, setup),
		cmocka_unit_test_setup(test_errors_are_returned_and_logged_once, setup),
		cmocka_unit_test_setup(test_irecv_rejects_too_many_buffers, setup),
		cmocka_unit_test_setup(test_connect_stays_null_until_transport_is_up, setup),
		cmocka_unit_test_setup(test_registration_records_memory_type, setup),
		cmocka_unit_test_setup(test_listen_puts_local_identity_in_handle, setup),
		cmocka_unit_test_setup(test_tags_name_ranks_and_only_the_first_is_kept, setup),
		cmocka_unit_test_setup(test_connections_join_one_hop_per_direction, setup),
		cmocka_unit_test_setup(test_hop_wire_time_is_the_union_over_its_connections, setup),
		cmocka_unit_test_setup(test_wire_before_post_is_clamped_to_the_post, setup),
		cmocka_unit_test_setup(test_direct_path_once_the_transport_hands_it_over, setup),
		cmocka_unit_test_setup(test_direct_receives_take_one_buffer_with_profiler_handles,
				       setup),
		cmocka_unit_test_setup(test_direct_errors_are_the_transports, setup),
		cmocka_unit_test_setup(test_direct_never_is_not_asked_again, setup),
		cmocka_unit_test_setup(test_unsized_receives_reach_nccl_as_zero, setup),
		cmocka_unit_test_setup(test_early_receives_are_not_timed, setup),
	};
	int rc;

	setenv("FABRICLAB_NODE_NAME", "unit-node", 1);
	setenv("FABRICLAB_RANK", "5", 1);
	setenv("FABRICLAB_REPORT", "off", 1); /* test_report_final covers the files */
	fl_wrap_use_transport(&fake_transport);
	if (fl_wrap_init(&ctx, 0xabc, -1, count_logger) != FL_OK)
		return 1;
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	fl_wrap_finalize(ctx);
	return rc;
}
