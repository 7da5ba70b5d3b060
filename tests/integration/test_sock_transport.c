/*
 * The socket transport driven directly through fl_socket_transport, both ends
 * in this process (and a forked child for a killed peer), over lo.
 */
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "plugin/base/error.h"
#include "plugin/base/fl_types.h"
#include "plugin/transport/socket/sock_comm.h"
#include "plugin/transport/socket/sock_config.h"
#include "plugin/transport/socket/sock_handle.h"
#include "plugin/transport/transport.h"

#define HELLO_TIMEOUT_MS 400
#define DEADLINE_S 10.0

static const struct fl_transport *tp = &fl_socket_transport;

struct pair {
	void *listen, *send, *recv;
	uint8_t handle[FL_HANDLE_SIZE];
};

static const struct fl_endpoint listener_ep = { "listener-node", "lo", 0, 3, 0xfeedULL };
static const struct fl_endpoint connector_ep = { "connector-node", "lo", 0, 5, 0xfeedULL };

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void fill(uint8_t *buf, size_t len, unsigned seed)
{
	uint32_t x = seed * 2654435761u + 1;

	for (size_t i = 0; i < len; i++) {
		x = x * 1103515245u + 12345u;
		buf[i] = (uint8_t)(x >> 16);
	}
}

static int setup_group(void **state)
{
	int ndev = 0;

	(void)state;
	setenv("FABRICLAB_SOCKET_IFNAME", "lo", 1);
	unsetenv("NCCL_SOCKET_FAMILY");
	unsetenv("FABRICLAB_SOCKET_NSTREAMS");
	unsetenv("FABRICLAB_SOCKET_INLINE");
	unsetenv("FABRICLAB_SOCKET_MIN_CHUNK");
	unsetenv("FABRICLAB_SYSFS_ROOT");
	setenv("FABRICLAB_SOCKET_HELLO_TIMEOUT_MS", "400", 1);
	/* 3 streams: more than the default, so rotation covers odd counts */
	setenv("FABRICLAB_SOCKET_NSTREAMS", "3", 1);
	if (tp->init() != FL_OK) {
		fprintf(stderr, "init: %s\n", fl_error_text());
		return -1;
	}
	return tp->devices(&ndev) == FL_OK && ndev >= 1 ? 0 : -1;
}

/* Drives connect and accept in turns until both give a comm. */
static void establish(struct pair *p)
{
	double end = now_s() + DEADLINE_S;

	while (!p->send || !p->recv) {
		if (!p->send)
			assert_int_equal(tp->connect(0, &connector_ep, p->handle, &p->send), FL_OK);
		if (!p->recv)
			assert_int_equal(tp->accept(p->listen, &p->recv), FL_OK);
		assert_true(now_s() < end);
	}
}

static void open_pair(struct pair *p)
{
	memset(p, 0, sizeof(*p));
	assert_int_equal(tp->listen(0, &listener_ep, p->handle, &p->listen), FL_OK);
	assert_non_null(p->listen);
	establish(p);
}

static void close_pair(struct pair *p)
{
	if (p->send)
		assert_int_equal(tp->close_send(p->send), FL_OK);
	if (p->recv)
		assert_int_equal(tp->close_recv(p->recv), FL_OK);
	assert_int_equal(tp->close_listen(p->listen), FL_OK);
}

/* Tests until done; returns the last rc (non-OK stops early). */
static int wait_done(void *req, int *sizes, struct fl_xfer_times *times, double limit_s)
{
	double end = now_s() + limit_s;
	int done = 0, rc;

	do {
		rc = tp->test(req, &done, sizes, times);
		if (rc || done)
			return rc;
	} while (now_s() < end);
	fail_msg("request not done within %.1f s", limit_s);
	return -1;
}

/* Tests a send and a receive in turns, as NCCL's proxy thread does, until both are done. */
static void wait_both(void *sreq, int *sent, struct fl_xfer_times *st, void *rreq, int *got,
		      struct fl_xfer_times *rt)
{
	double end = now_s() + DEADLINE_S;
	int sdone = 0, rdone = 0;

	while (!sdone || !rdone) {
		if (!sdone)
			assert_int_equal(tp->test(sreq, &sdone, sent, st), FL_OK);
		if (!rdone)
			assert_int_equal(tp->test(rreq, &rdone, got, rt), FL_OK);
		if (now_s() > end)
			fail_msg("send %s, receive %s after %.0f s", sdone ? "done" : "pending",
				 rdone ? "done" : "pending", DEADLINE_S);
	}
}

static void post_recv(void *comm, int n, void **bufs, size_t *sizes, int *tags, void **req)
{
	double end = now_s() + DEADLINE_S;

	do
		assert_int_equal(tp->irecv(comm, n, bufs, sizes, tags, NULL, req), FL_OK);
	while (!*req && now_s() < end);
	assert_non_null(*req);
}

static void post_send(void *comm, void *buf, size_t size, int tag, void **req)
{
	assert_int_equal(tp->isend(comm, buf, size, tag, NULL, req), FL_OK);
	assert_non_null(*req);
}

static void test_properties(void **state)
{
	struct fl_props props;

	(void)state;
	assert_int_equal(tp->get_properties(0, &props), FL_OK);
	assert_string_equal(props.name, "lo");
	assert_null(props.pci_path); /* lo has no device behind it */
	assert_int_equal(props.speed_mbps, 10000);
	assert_int_equal(props.ptr_support, FL_PTR_HOST);
	assert_int_equal(props.max_recvs, FL_MAX_RECVS);
	assert_int_equal(props.max_comms, 65536);
	assert_int_equal(props.vdev_count, 1);
	assert_int_equal(props.vdevs[0], 0);
	assert_int_equal(props.guid, 0);
	assert_true(props.max_p2p_bytes == FL_MAX_NET_BYTES);
	assert_int_equal(props.max_multi_request_size, 1);
	assert_int_equal(tp->get_properties(99, &props), FL_ERR_INTERNAL);
}

static void test_accept_before_connect_returns_null(void **state)
{
	struct pair p;
	struct fl_endpoint ep;

	(void)state;
	memset(&p, 0, sizeof(p));
	assert_int_equal(tp->listen(0, &listener_ep, p.handle, &p.listen), FL_OK);
	for (int i = 0; i < 3; i++) {
		p.recv = (void *)0x1;
		assert_int_equal(tp->accept(p.listen, &p.recv), FL_OK);
		assert_null(p.recv);
	}
	establish(&p);
	assert_int_equal(tp->peer(p.send, &ep), FL_OK);
	assert_string_equal(ep.node, "listener-node");
	assert_int_equal(ep.rank, 3);
	assert_true(ep.comm_hash == 0xfeedULL);
	assert_int_equal(tp->peer(p.recv, &ep), FL_OK);
	assert_string_equal(ep.node, "connector-node");
	assert_int_equal(ep.rank, 5);
	/* the connection is taken: nothing more to accept */
	{
		void *again = (void *)0x1;

		assert_int_equal(tp->accept(p.listen, &again), FL_OK);
		assert_null(again);
	}
	close_pair(&p);
}

/* One message of `size` into a buffer `extra` bytes larger; checks bytes and sizes. */
static void roundtrip(struct pair *p, size_t size, size_t extra, int tag)
{
	uint8_t *src = malloc(size + 1), *dst = malloc(size + extra + 1);
	void *sreq = NULL, *rreq = NULL, *bufs[1] = { dst };
	size_t cap = size + extra;
	int got = -1, sent = -1;
	struct fl_xfer_times rt = { 0 }, st = { 0 };

	assert_non_null(src);
	assert_non_null(dst);
	fill(src, size, (unsigned)size);
	memset(dst, 0xee, cap + 1);
	post_recv(p->recv, 1, bufs, &cap, &tag, &rreq);
	post_send(p->send, src, size, tag, &sreq);
	wait_both(sreq, &sent, &st, rreq, &got, &rt);
	assert_int_equal(got, (int)size);
	assert_int_equal(sent, (int)size);
	assert_memory_equal(src, dst, size);
	assert_int_equal(dst[size], 0xee); /* nothing past the message */
	assert_true(rt.ready_ns > 0 && st.ready_ns > 0);
	if (size) {
		/* The receiver may not have watched the bytes arrive: then it gives no time. */
		assert_true(rt.wire_start_ns <= rt.wire_end_ns);
		assert_true(st.wire_start_ns > 0 && st.wire_start_ns <= st.wire_end_ns);
		assert_true(st.ready_ns <= st.wire_start_ns);
	}
	free(src);
	free(dst);
}

static void test_sizes(void **state)
{
	static const size_t sizes[] = {
		1, 2, 7, 100, 4095, 4096, 16383, 16384, 16385, 65535, 65536, 65537, 131073,
		3 * 65536 + 1, 262145, (1 << 20) + 3, (8 << 20) - 1, 64 << 20,
	};
	struct pair p;

	(void)state;
	open_pair(&p);
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		roundtrip(&p, sizes[i], 0, (int)i);
	close_pair(&p);
}

static void test_zero_bytes_and_larger_buffer(void **state)
{
	struct pair p;

	(void)state;
	open_pair(&p);
	roundtrip(&p, 0, 0, 1);
	roundtrip(&p, 0, 4096, 2);
	roundtrip(&p, 1000, 1 << 20, 3);      /* inline into a big buffer */
	roundtrip(&p, 300000, 5 << 20, 4);    /* split into a big buffer */
	roundtrip(&p, 1, 0, -7);              /* negative tags travel too */
	close_pair(&p);
}

/*
 * The connector picks the stream count and the split rules and tells the
 * listener in its hello; the receiver must follow whatever it is told.
 */
static void test_connector_rules_win(void **state)
{
	static const struct {
		int nstreams;
		size_t inline_max, min_chunk;
	} rules[] = {
		{ 0, 16384, 65536 },  /* everything on the control stream */
		{ 1, 0, 4096 },       /* nothing inline, small pieces */
		{ 16, 1 << 20, 4096 }, /* big inline, many streams */
		{ 5, 100, 1 << 20 },
	};
	static const size_t sizes[] = { 0, 100, 101, 16385, (1 << 20) + 5, 8 << 20 };
	struct sock_config saved = sock_cfg;

	(void)state;
	for (size_t r = 0; r < sizeof(rules) / sizeof(rules[0]); r++) {
		struct pair p;

		sock_cfg.nstreams = rules[r].nstreams;
		sock_cfg.inline_max = rules[r].inline_max;
		sock_cfg.min_chunk = rules[r].min_chunk;
		open_pair(&p);
		sock_cfg = saved; /* the listener side keeps the defaults */
		for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
			roundtrip(&p, sizes[i], 1, (int)i);
		close_pair(&p);
	}
}

#define OUTSTANDING 32

/* Tests every unfinished request, newest first, until all are done; got[i] = received bytes. */
static void drive_all(void **sreq, void **rreq, int *got, int n)
{
	double end = now_s() + DEADLINE_S;
	int left = 2 * n;

	while (left) {
		for (int i = n - 1; i >= 0; i--) {
			int done = 0, sent = -1;

			if (rreq[i]) {
				assert_int_equal(tp->test(rreq[i], &done, &got[i], NULL), FL_OK);
				if (done) {
					rreq[i] = NULL;
					left--;
				}
			}
			done = 0;
			if (sreq[i]) {
				assert_int_equal(tp->test(sreq[i], &done, &sent, NULL), FL_OK);
				if (done) {
					sreq[i] = NULL;
					left--;
				}
			}
		}
		assert_true(now_s() < end);
	}
}

static size_t outstanding_size(int i)
{
	static const size_t pattern[] = { 8, 20000, 1 << 20, 0, 70001, 4096, 3 << 20, 16384 };

	return pattern[i % 8] + (size_t)i;
}

static void test_32_outstanding(void **state)
{
	uint8_t *src[OUTSTANDING], *dst[OUTSTANDING];
	void *sreq[OUTSTANDING], *rreq[OUTSTANDING], *extra = NULL;
	size_t cap[OUTSTANDING];
	int got[OUTSTANDING];
	struct pair p;

	(void)state;
	open_pair(&p);
	for (int i = 0; i < OUTSTANDING; i++) {
		void *buf;
		int tag = 9;

		cap[i] = outstanding_size(i);
		src[i] = malloc(cap[i] + 1);
		dst[i] = malloc(cap[i] + 1);
		fill(src[i], cap[i], (unsigned)i + 100);
		buf = dst[i];
		rreq[i] = NULL;
		assert_int_equal(tp->irecv(p.recv, 1, &buf, &cap[i], &tag, NULL, &rreq[i]), FL_OK);
		assert_non_null(rreq[i]);
	}
	/* the pool holds 32 receives: the 33rd is "not now" */
	{
		void *buf = dst[0];
		size_t sz = 1;
		int tag = 9;

		assert_int_equal(tp->irecv(p.recv, 1, &buf, &sz, &tag, NULL, &extra), FL_OK);
		assert_null(extra);
	}
	for (int i = 0; i < OUTSTANDING; i++)
		post_send(p.send, src[i], cap[i], 9, &sreq[i]);
	/* test newest first, as a proxy that polls everything would: older ones must progress */
	drive_all(sreq, rreq, got, OUTSTANDING);
	for (int i = 0; i < OUTSTANDING; i++) {
		assert_int_equal(got[i], (int)cap[i]);
		assert_memory_equal(src[i], dst[i], cap[i]);
	}
	for (int i = 0; i < OUTSTANDING; i++) {
		free(src[i]);
		free(dst[i]);
	}
	close_pair(&p);
}

/* 256 sends outstanding at once is the pool; the 257th says "not now". */
static void test_send_pool_exhaustion(void **state)
{
	enum { N = FL_MAX_REQUESTS * FL_MAX_RECVS, SZ = 1 << 20 };
	uint8_t *src = calloc(1, SZ), *dst = malloc(SZ);
	void **sreq = calloc(N, sizeof(void *)), *more = (void *)0x1;
	struct pair p;

	(void)state;
	open_pair(&p);
	/* nobody receives yet, so the kernel buffers fill and sends stay pending */
	for (int i = 0; i < N; i++)
		post_send(p.send, src, SZ, 1, &sreq[i]);
	assert_int_equal(tp->isend(p.send, src, SZ, 1, NULL, &more), FL_OK);
	assert_null(more);
	for (int i = 0; i < N; i++) {
		void *rreq = NULL, *buf = dst;
		size_t cap = SZ;
		int tag = 1, got = 0;

		post_recv(p.recv, 1, &buf, &cap, &tag, &rreq);
		assert_int_equal(wait_done(rreq, &got, NULL, DEADLINE_S), FL_OK);
		assert_int_equal(got, SZ);
	}
	for (int i = 0; i < N; i++)
		assert_int_equal(wait_done(sreq[i], NULL, NULL, DEADLINE_S), FL_OK);
	free(sreq);
	free(src);
	free(dst);
	close_pair(&p);
}

static void test_multi_recv_tags(void **state)
{
	enum { N = FL_MAX_RECVS };
	static const size_t msg_size[N] = { 5, 0, 100000, 16384, 1 << 20, 65537, 1, 9000 };
	uint8_t *src[N], *dst[N];
	void *bufs[N], *rreq = NULL, *sreq[N];
	size_t caps[N];
	int tags[N], got[N];
	struct pair p;

	(void)state;
	open_pair(&p);
	/* slot i waits for tag 7 - i; messages come with tags 0..7 */
	for (int i = 0; i < N; i++) {
		int tag = N - 1 - i;

		tags[i] = tag;
		caps[i] = msg_size[tag] + 64;
		dst[i] = malloc(caps[i]);
		bufs[i] = dst[i];
		got[i] = -1;
	}
	post_recv(p.recv, N, bufs, caps, tags, &rreq);
	for (int t = 0; t < N; t++) {
		src[t] = malloc(msg_size[t] + 1);
		fill(src[t], msg_size[t], (unsigned)t + 7);
		post_send(p.send, src[t], msg_size[t], t, &sreq[t]);
	}
	assert_int_equal(wait_done(rreq, got, NULL, DEADLINE_S), FL_OK);
	for (int i = 0; i < N; i++) {
		int tag = tags[i];

		assert_int_equal(got[i], (int)msg_size[tag]);
		assert_memory_equal(dst[i], src[tag], msg_size[tag]);
	}
	for (int t = 0; t < N; t++) {
		assert_int_equal(wait_done(sreq[t], NULL, NULL, DEADLINE_S), FL_OK);
		free(src[t]);
		free(dst[t]);
	}
	/* two multi-receives back to back: FIFO, the first takes the first 8 messages */
	roundtrip(&p, 12345, 0, 77);
	close_pair(&p);
}

/*
 * Sub-operations sharing a comm send on their own schedules (NCCL 2.30.7
 * src/transport/net.cc:862, 1048, 1323-1426): tag 1's second message comes before tag 2's
 * first. It lands in the next receive with a free slot of its tag, posted then or later, and
 * each receive still gets one message of each tag, in each tag's order.
 */
static void test_tag_runs_a_receive_ahead(void **state)
{
	static const int order[] = { 1, 1, 2, 2 }; /* tags, as sent */
	uint8_t src[4][2048], dst[2][2][2048];
	void *sreq[4], *rreq[2];
	void *bufs[2][2] = { { dst[0][0], dst[0][1] }, { dst[1][0], dst[1][1] } };
	size_t caps[2] = { sizeof(dst[0][0]), sizeof(dst[0][1]) };
	int tags[2] = { 1, 2 }, got[2][2];
	struct pair p;

	(void)state;
	open_pair(&p);
	memset(dst, 0, sizeof(dst));
	post_recv(p.recv, 2, bufs[0], caps, tags, &rreq[0]);
	for (int m = 0; m < 4; m++) {
		fill(src[m], 1000 + (size_t)m, (unsigned)m + 90);
		post_send(p.send, src[m], 1000 + (size_t)m, order[m], &sreq[m]);
	}
	/* the second message of tag 1 waits, whole, for the receive posted now */
	post_recv(p.recv, 2, bufs[1], caps, tags, &rreq[1]);
	for (int r = 0; r < 2; r++)
		assert_int_equal(wait_done(rreq[r], got[r], NULL, DEADLINE_S), FL_OK);
	/* receive r: tag 1's message r (sent r-th) and tag 2's message r (sent 2 + r-th) */
	for (int r = 0; r < 2; r++) {
		assert_int_equal(got[r][0], 1000 + r);
		assert_memory_equal(dst[r][0], src[r], 1000 + (size_t)r);
		assert_int_equal(got[r][1], 1002 + r);
		assert_memory_equal(dst[r][1], src[2 + r], 1002 + (size_t)r);
	}
	for (int m = 0; m < 4; m++)
		assert_int_equal(wait_done(sreq[m], NULL, NULL, DEADLINE_S), FL_OK);
	close_pair(&p);
}

/* Until `bytes` wait unread in fd's receive queue. */
static void wait_readable(int fd, size_t bytes)
{
	double end = now_s() + DEADLINE_S;
	int n = 0;

	while (ioctl(fd, FIONREAD, &n) == 0 && (size_t)n < bytes && now_s() < end)
		usleep(1000);
	assert_int_equal(n, (int)bytes);
}

/*
 * The receiver reads the next header in the same call as the payload before
 * it: that header must wait, whole, for a receive posted later, and then
 * claim it like any other (inline payloads, the next one sent with no receive
 * posted for it yet; a zero-byte message last).
 */
static void test_header_read_ahead_of_its_receive(void **state)
{
	static const size_t size[] = { 1000, 3000, 0 };
	enum { N = sizeof(size) / sizeof(size[0]) };
	uint8_t src[N][4096], dst[N][4096];
	void *sreq[N], *rreq;
	size_t queued = 0;
	struct pair p;

	(void)state;
	open_pair(&p);
	for (int i = 0; i < N; i++) {
		fill(src[i], size[i], (unsigned)i + 40);
		post_send(p.send, src[i], size[i], 10 + i, &sreq[i]);
		assert_int_equal(wait_done(sreq[i], NULL, NULL, DEADLINE_S), FL_OK);
		queued += SOCK_MSG_HEADER_SIZE + size[i];
	}
	wait_readable(((struct sock_recv_comm *)p.recv)->link.ctrl_fd, queued);
	for (int i = 0; i < N; i++) {
		void *buf = dst[i];
		size_t cap = sizeof(dst[i]);
		int tag = 10 + i, got = -1;

		memset(dst[i], 0, sizeof(dst[i]));
		post_recv(p.recv, 1, &buf, &cap, &tag, &rreq);
		assert_int_equal(wait_done(rreq, &got, NULL, DEADLINE_S), FL_OK);
		assert_int_equal(got, (int)size[i]);
		assert_memory_equal(dst[i], src[i], size[i]);
		if (i + 1 < N) /* all bytes were there: the next header came with this payload */
			assert_int_equal(((struct sock_recv_comm *)p.recv)->header_got,
					 SOCK_MSG_HEADER_SIZE);
	}
	close_pair(&p);
}

/*
 * Many small messages already queued: one read takes several at once, and
 * with 264 bytes each (header and payload) the 32nd header straddles the end
 * of the first 8 KiB read into the receiver's stage. Every message must
 * come out whole, in order.
 */
static void test_small_messages_straddle_reads(void **state)
{
	enum { N = 64, SIZE = 248 };
	static uint8_t src[N][SIZE], dst[SIZE];
	void *sreq[N], *rreq;
	struct pair p;

	(void)state;
	open_pair(&p);
	for (int i = 0; i < N; i++) {
		fill(src[i], SIZE, (unsigned)i + 90);
		post_send(p.send, src[i], SIZE, i, &sreq[i]);
		assert_int_equal(wait_done(sreq[i], NULL, NULL, DEADLINE_S), FL_OK);
	}
	wait_readable(((struct sock_recv_comm *)p.recv)->link.ctrl_fd,
		      N * (SOCK_MSG_HEADER_SIZE + SIZE));
	for (int i = 0; i < N; i++) {
		void *buf = dst;
		size_t cap = sizeof(dst);
		int got = -1;

		memset(dst, 0, sizeof(dst));
		post_recv(p.recv, 1, &buf, &cap, &i, &rreq);
		assert_int_equal(wait_done(rreq, &got, NULL, DEADLINE_S), FL_OK);
		assert_int_equal(got, SIZE);
		assert_memory_equal(dst, src[i], SIZE);
	}
	close_pair(&p);
}

/*
 * Moves a pair's control stream onto a local socket pair whose sender side
 * holds `sndbuf` bytes, so writes stop wherever the buffer fills, and
 * quickly: over TCP a window this small stalls on delayed ACKs.
 */
static void squeeze_control(struct pair *p, int sndbuf)
{
	int sp[2];

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sp), 0);
	assert_int_equal(setsockopt(sp[0], SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf)), 0);
	assert_int_equal(setsockopt(sp[1], SOL_SOCKET, SO_RCVBUF, &sndbuf, sizeof(sndbuf)), 0);
	assert_true(dup2(sp[0], ((struct sock_send_comm *)p->send)->link.ctrl_fd) >= 0);
	assert_true(dup2(sp[1], ((struct sock_recv_comm *)p->recv)->link.ctrl_fd) >= 0);
	close(sp[0]);
	close(sp[1]);
}

/*
 * Small payloads are copied behind their header at isend (one buffer, one
 * send); larger inline ones go as header + payload. With a tiny socket buffer
 * the kernel takes a little at a time, so writes stop inside a copied
 * buffer, inside a header and inside an uncopied payload, and one gather
 * mixes both kinds: every byte must still arrive, in order, as posted.
 */
static void test_copied_and_uncopied_payloads_under_backpressure(void **state)
{
	enum { N = 200 };
	static const size_t pattern[] = { 0, 1, 17, SOCK_SEND_COPY_MAX - 1, SOCK_SEND_COPY_MAX,
					  SOCK_SEND_COPY_MAX + 1, 1000, 3001, 255 };
	static uint8_t src[N][3001], dst[3001];
	void *sreq[N], *rreq;
	struct pair p;

	(void)state;
	open_pair(&p);
	squeeze_control(&p, 1024);
	for (int i = 0; i < N; i++) {
		fill(src[i], pattern[i % 9], (unsigned)i + 300);
		post_send(p.send, src[i], pattern[i % 9], i, &sreq[i]);
	}
	for (int i = 0; i < N; i++) {
		size_t size = pattern[i % 9], cap = sizeof(dst);
		void *buf = dst;
		int got = -1, sent = -1;

		memset(dst, 0xee, sizeof(dst));
		post_recv(p.recv, 1, &buf, &cap, &i, &rreq);
		wait_both(sreq[i], &sent, NULL, rreq, &got, NULL);
		assert_int_equal(sent, (int)size);
		assert_int_equal(got, (int)size);
		assert_memory_equal(dst, src[i], size);
	}
	close_pair(&p);
}

static void test_message_larger_than_slot(void **state)
{
	uint8_t src[2000] = { 0 }, dst[1000];
	void *buf = dst, *sreq = NULL, *rreq = NULL;
	size_t cap = sizeof(dst);
	int tag = 42, got = 0, rc;
	struct pair p;

	(void)state;
	open_pair(&p);
	post_recv(p.recv, 1, &buf, &cap, &tag, &rreq);
	post_send(p.send, src, sizeof(src), tag, &sreq);
	rc = wait_done(rreq, &got, NULL, DEADLINE_S);
	assert_int_equal(rc, FL_ERR_USAGE);
	assert_non_null(strstr(fl_error_text(), "2000"));
	assert_non_null(strstr(fl_error_text(), "1000"));
	assert_non_null(strstr(fl_error_text(), "tag 42"));
	/* and the connection stays failed */
	rreq = NULL;
	assert_int_equal(tp->irecv(p.recv, 1, &buf, &cap, &tag, NULL, &rreq), FL_ERR_USAGE);
	assert_null(rreq);
	close_pair(&p);
}

static int dial(const struct sock_handle *h)
{
	int fd = socket(h->addr.ss_family, SOCK_STREAM, 0);

	assert_true(fd >= 0);
	assert_int_equal(connect(fd, (const struct sockaddr *)&h->addr, h->addrlen), 0);
	return fd;
}

/* 1 if the listener closed this stream (EOF or reset) within limit_s. */
static int closed_by_listener(int fd, void *listen, double limit_s)
{
	double end = now_s() + limit_s;
	char c;

	while (now_s() < end) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		void *rc = NULL;

		assert_int_equal(tp->accept(listen, &rc), FL_OK);
		assert_null(rc);
		if (poll(&pfd, 1, 10) == 1) {
			ssize_t n = recv(fd, &c, 1, MSG_DONTWAIT);

			if (n == 0 || (n < 0 && errno == ECONNRESET))
				return 1;
		}
	}
	return 0;
}

static void test_strangers_do_not_disturb(void **state)
{
	uint8_t garbage[SOCK_HELLO_SIZE], magic_only[8], wrong_nonce[SOCK_HELLO_SIZE];
	struct sock_hello hello = { .kind = SOCK_STREAM_CONTROL, .nstreams = 1,
				    .inline_max = 1024, .min_chunk = 65536 };
	struct sock_handle h;
	int g, s, m, w;
	struct pair p;

	(void)state;
	memset(&p, 0, sizeof(p));
	assert_int_equal(tp->listen(0, &listener_ep, p.handle, &p.listen), FL_OK);
	assert_int_equal(sock_handle_decode(p.handle, &h), FL_OK);
	fill(garbage, sizeof(garbage), 3);
	hello.nonce = h.nonce + 1;
	sock_hello_encode(&hello, wrong_nonce);
	memcpy(magic_only, wrong_nonce, sizeof(magic_only));
	g = dial(&h);
	s = dial(&h);
	m = dial(&h);
	w = dial(&h);
	assert_int_equal(send(g, garbage, sizeof(garbage), 0), (ssize_t)sizeof(garbage));
	assert_int_equal(send(m, magic_only, sizeof(magic_only), 0), (ssize_t)sizeof(magic_only));
	assert_int_equal(send(w, wrong_nonce, sizeof(wrong_nonce), 0),
			 (ssize_t)sizeof(wrong_nonce));
	close(m);
	/* strangers first in the backlog, then the real connection */
	establish(&p);
	roundtrip(&p, 1 << 20, 0, 1);
	roundtrip(&p, 10, 0, 2);
	assert_true(closed_by_listener(g, p.listen, 2.0));
	assert_true(closed_by_listener(w, p.listen, 2.0));
	/* the silent one goes after the hello timeout, not before */
	assert_true(closed_by_listener(s, p.listen, HELLO_TIMEOUT_MS * 3 / 1000.0 + 1.0));
	close(g);
	close(s);
	close(w);
	close_pair(&p);
}

static void test_silent_stranger_keeps_its_slot_until_timeout(void **state)
{
	struct sock_handle h;
	struct pair p;
	double start;
	int s;

	(void)state;
	memset(&p, 0, sizeof(p));
	assert_int_equal(tp->listen(0, &listener_ep, p.handle, &p.listen), FL_OK);
	assert_int_equal(sock_handle_decode(p.handle, &h), FL_OK);
	s = dial(&h);
	start = now_s();
	assert_true(closed_by_listener(s, p.listen, 5.0));
	assert_true(now_s() - start >= HELLO_TIMEOUT_MS / 1000.0 - 0.05);
	close(s);
	close_pair(&p);
}

static void test_sender_closed_mid_transfer(void **state)
{
	enum { SZ = 64 << 20 };
	uint8_t *src = calloc(1, SZ), *dst = malloc(SZ);
	void *sreq = NULL, *rreq = NULL, *buf = dst;
	size_t cap = SZ;
	int tag = 0, done = 0, rc;
	struct pair p;
	double start;

	(void)state;
	open_pair(&p);
	post_send(p.send, src, SZ, tag, &sreq);
	assert_int_equal(tp->test(sreq, &done, NULL, NULL), FL_OK);
	assert_int_equal(done, 0); /* nobody receives yet: 64 MiB cannot fit in the kernel */
	assert_int_equal(tp->close_send(p.send), FL_OK);
	p.send = NULL;
	post_recv(p.recv, 1, &buf, &cap, &tag, &rreq);
	start = now_s();
	rc = wait_done(rreq, NULL, NULL, 5.0);
	assert_int_equal(rc, FL_ERR_SYSTEM);
	assert_true(now_s() - start < 5.0);
	assert_non_null(strstr(fl_error_text(), "connector-node"));
	assert_non_null(strstr(fl_error_text(), "127.0.0.1"));
	free(src);
	free(dst);
	close_pair(&p);
}

/* Child: connects, starts a 64 MiB send, says so on the pipe, keeps testing until killed. */
static void child_sender(const uint8_t *handle, int ready_fd)
{
	enum { SZ = 64 << 20 };
	uint8_t *src = calloc(1, SZ);
	void *send = NULL, *req = NULL;
	int done = 0;

	while (!send)
		if (tp->connect(0, &connector_ep, (void *)handle, &send))
			_exit(2);
	if (tp->isend(send, src, SZ, 0, NULL, &req) || !req)
		_exit(3);
	if (write(ready_fd, "x", 1) != 1)
		_exit(4);
	for (;;)
		if (tp->test(req, &done, NULL, NULL))
			_exit(5);
}

static void test_killed_sender(void **state)
{
	enum { SZ = 64 << 20 };
	uint8_t *dst = malloc(SZ);
	void *rreq = NULL, *buf = dst;
	size_t cap = SZ;
	int tag = 0, pipefd[2], rc;
	struct pair p;
	double start;
	pid_t pid;
	char c;

	(void)state;
	memset(&p, 0, sizeof(p));
	assert_int_equal(tp->listen(0, &listener_ep, p.handle, &p.listen), FL_OK);
	assert_int_equal(pipe(pipefd), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		close(pipefd[0]);
		child_sender(p.handle, pipefd[1]);
	}
	close(pipefd[1]);
	while (!p.recv)
		assert_int_equal(tp->accept(p.listen, &p.recv), FL_OK);
	assert_int_equal(read(pipefd[0], &c, 1), 1);
	usleep(50 * 1000);
	assert_int_equal(kill(pid, SIGKILL), 0);
	assert_int_equal(waitpid(pid, NULL, 0), pid);
	post_recv(p.recv, 1, &buf, &cap, &tag, &rreq);
	start = now_s();
	rc = wait_done(rreq, NULL, NULL, 5.0);
	assert_int_equal(rc, FL_ERR_SYSTEM);
	assert_true(now_s() - start < 5.0);
	assert_non_null(strstr(fl_error_text(), "connector-node"));
	/* later calls fail the same way, immediately */
	rreq = NULL;
	assert_int_equal(tp->irecv(p.recv, 1, &buf, &cap, &tag, NULL, &rreq), FL_ERR_SYSTEM);
	close(pipefd[0]);
	free(dst);
	close_pair(&p);
}

/* Child: accepts, then sits there without receiving until killed. */
static void child_receiver(void *listen, int ready_fd)
{
	void *recv = NULL;

	while (!recv)
		if (tp->accept(listen, &recv))
			_exit(2);
	if (write(ready_fd, "x", 1) != 1)
		_exit(4);
	for (;;)
		pause();
}

static void test_killed_receiver(void **state)
{
	enum { SZ = 64 << 20 };
	uint8_t *src = calloc(1, SZ);
	void *sreq = NULL;
	int pipefd[2], rc;
	struct pair p;
	double start;
	pid_t pid;
	char c;

	(void)state;
	memset(&p, 0, sizeof(p));
	assert_int_equal(tp->listen(0, &listener_ep, p.handle, &p.listen), FL_OK);
	assert_int_equal(pipe(pipefd), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		close(pipefd[0]);
		child_receiver(p.listen, pipefd[1]);
	}
	close(pipefd[1]);
	while (!p.send)
		assert_int_equal(tp->connect(0, &connector_ep, p.handle, &p.send), FL_OK);
	assert_int_equal(read(pipefd[0], &c, 1), 1);
	post_send(p.send, src, SZ, 0, &sreq);
	usleep(50 * 1000);
	assert_int_equal(kill(pid, SIGKILL), 0);
	assert_int_equal(waitpid(pid, NULL, 0), pid);
	start = now_s();
	rc = wait_done(sreq, NULL, NULL, 5.0);
	assert_int_equal(rc, FL_ERR_SYSTEM);
	assert_true(now_s() - start < 5.0);
	assert_non_null(strstr(fl_error_text(), "listener-node"));
	close(pipefd[0]);
	free(src);
	close_pair(&p);
}

static void test_malformed_handles(void **state)
{
	uint8_t good[FL_HANDLE_SIZE], bad[FL_HANDLE_SIZE];
	void *listen = NULL, *send;

	(void)state;
	assert_int_equal(tp->listen(0, &listener_ep, good, &listen), FL_OK);
	for (unsigned seed = 0; seed < 200; seed++) {
		fill(bad, sizeof(bad), seed);
		send = (void *)0x1;
		assert_int_not_equal(tp->connect(0, &connector_ep, bad, &send), FL_OK);
		assert_null(send);
	}
	/* a real handle with one field broken */
	memcpy(bad, good, sizeof(bad));
	bad[0] ^= 0xff; /* magic */
	assert_int_equal(tp->connect(0, &connector_ep, bad, &send), FL_ERR_ARGUMENT);
	memcpy(bad, good, sizeof(bad));
	memset(bad + 80, 'x', FL_HANDLE_SIZE - 80); /* node name without its NUL */
	assert_int_equal(tp->connect(0, &connector_ep, bad, &send), FL_ERR_ARGUMENT);
	assert_null(send);
	assert_int_equal(tp->connect(7, &connector_ep, good, &send), FL_ERR_INTERNAL);
	assert_int_equal(tp->close_listen(listen), FL_OK);
}

static void test_registration_and_flush(void **state)
{
	uint8_t buf[64];
	void *mh = NULL, *req = (void *)0x1;
	int size = 64;
	void *data = buf;
	struct pair p;

	(void)state;
	open_pair(&p);
	assert_int_equal(tp->reg_mr(p.send, buf, sizeof(buf), FL_PTR_HOST, &mh), FL_OK);
	assert_non_null(mh);
	assert_int_equal(tp->dereg_mr(p.send, mh), FL_OK);
	assert_int_equal(tp->reg_mr(p.recv, buf, sizeof(buf), FL_PTR_CUDA, &mh), FL_ERR_INTERNAL);
	assert_int_equal(tp->reg_mr_dmabuf(p.recv, buf, sizeof(buf), FL_PTR_CUDA, 0, 3, &mh),
			 FL_ERR_INTERNAL);
	assert_int_equal(tp->iflush(p.recv, 1, &data, &size, &mh, &req), FL_ERR_INTERNAL);
	assert_null(req);
	close_pair(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_properties),
		cmocka_unit_test(test_accept_before_connect_returns_null),
		cmocka_unit_test(test_sizes),
		cmocka_unit_test(test_zero_bytes_and_larger_buffer),
		cmocka_unit_test(test_connector_rules_win),
		cmocka_unit_test(test_32_outstanding),
		cmocka_unit_test(test_tag_runs_a_receive_ahead),
		cmocka_unit_test(test_send_pool_exhaustion),
		cmocka_unit_test(test_multi_recv_tags),
		cmocka_unit_test(test_message_larger_than_slot),
		cmocka_unit_test(test_header_read_ahead_of_its_receive),
		cmocka_unit_test(test_small_messages_straddle_reads),
		cmocka_unit_test(test_copied_and_uncopied_payloads_under_backpressure),
		cmocka_unit_test(test_strangers_do_not_disturb),
		cmocka_unit_test(test_silent_stranger_keeps_its_slot_until_timeout),
		cmocka_unit_test(test_sender_closed_mid_transfer),
		cmocka_unit_test(test_killed_sender),
		cmocka_unit_test(test_killed_receiver),
		cmocka_unit_test(test_malformed_handles),
		cmocka_unit_test(test_registration_and_flush),
	};

	/* SIGPIPE stays fatal: every send must carry MSG_NOSIGNAL */
	return cmocka_run_group_tests(tests, setup_group, NULL);
}
