/*
 * The ib transport driven directly (no wrap, no shim) over the fake verbs
 * library, both ends in this process: properties, data at awkward sizes over
 * 3 QPs, multi-receive matched by tag, clipping, back-pressure, iflush on
 * "GPU" memory (a fixture sysfs says nvidia-peermem is loaded), and every
 * error path: an unregistered buffer, a tag the receiver never posted, an
 * injected remote access error, a QP in error, a port going down. The fake's
 * QPs hold 1024 send WRs where 256 are asked for (as drivers that round up do):
 * the transport must still keep at most 255 in flight, the count its CQs are
 * sized for; data buffers are registered with relaxed ordering. Every wait
 * is bounded: a hang fails the test instead.
 */
#include <dlfcn.h>
#include <libgen.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <infiniband/verbs.h>

#include "fabric/topo/topo_test.h"
#include "plugin/base/clock.h"
#include "plugin/base/error.h"
#include "plugin/base/identity.h"
#include "plugin/transport/ib/ib_comm.h"
#include "plugin/transport/ib/ib_mr.h"
#include "plugin/transport/pace.h"
#include "plugin/transport/transport.h"
#include "tests/skip.h"

#define WAIT_NS (10ULL * 1000000000ULL)

static const struct fl_transport *tp = &fl_ib_transport;
static char fake_path[PATH_MAX];
static char sysfs_root[] = "/tmp/fabriclab-ibt-sysfs.XXXXXX";
static char fabric_dir[] = "/tmp/fabriclab-ibt-fabric.XXXXXX";

struct pair {
	void *send, *recv, *listen;
};

static void *fake_symbol(const char *name)
{
	void *lib = dlopen(fake_path, RTLD_NOW | RTLD_NOLOAD);
	void *sym = lib ? dlsym(lib, name) : NULL;

	assert_non_null(sym);
	return sym;
}

static void connect_pair(int dev, struct pair *p)
{
	struct fl_endpoint self;
	char handle[FL_HANDLE_SIZE];
	uint64_t end = fl_clock_ns() + WAIT_NS;

	fl_identity_local(&self, dev, "t", 1);
	memset(p, 0, sizeof(*p));
	assert_int_equal(tp->listen(dev, &self, handle, &p->listen), FL_OK);
	while (!p->send || !p->recv) {
		if (!p->send)
			assert_int_equal(tp->connect(dev, &self, handle, &p->send), FL_OK);
		if (!p->recv)
			assert_int_equal(tp->accept(p->listen, &p->recv), FL_OK);
		assert_true(fl_clock_ns() < end);
	}
	assert_int_equal(tp->close_listen(p->listen), FL_OK);
}

static void close_pair(struct pair *p)
{
	assert_int_equal(tp->close_send(p->send), FL_OK);
	assert_int_equal(tp->close_recv(p->recv), FL_OK);
}

/* Tests requests until each is done or one fails; returns that failure. */
static int wait_all(void **reqs, int n, int sizes[][FL_MAX_RECVS])
{
	int done[16] = { 0 }, left = n;
	uint64_t end = fl_clock_ns() + WAIT_NS;

	while (left) {
		for (int i = 0; i < n; i++) {
			struct fl_xfer_times t;
			int rc;

			if (done[i])
				continue;
			rc = tp->test(reqs[i], &done[i], sizes[i], &t);
			if (rc)
				return rc;
			left -= done[i];
		}
		if (fl_clock_ns() > end)
			fail_msg("requests still pending after 10 s: a hang");
	}
	return FL_OK;
}

static void setup_env(const char *argv0)
{
	char self[PATH_MAX], cmd[PATH_MAX + 200];

	snprintf(self, sizeof(self), "%s", argv0);
	snprintf(fake_path, sizeof(fake_path), "%s/../libfabriclab-fakeverbs.so", dirname(self));
	if (!mkdtemp(sysfs_root) || !mkdtemp(fabric_dir))
		exit(1);
	/* placement for mlx5_0 and a loaded nvidia-peermem */
	snprintf(cmd, sizeof(cmd),
		 "cd %s && mkdir -p devices/pci0000:00/0000:00:05.0 class/infiniband/mlx5_0 "
		 "module/nvidia_peermem && echo 1.0 > module/nvidia_peermem/version && "
		 "ln -s ../../../devices/pci0000:00/0000:00:05.0 class/infiniband/mlx5_0/device",
		 sysfs_root);
	if (system(cmd))
		exit(1);
	setenv("FABRICLAB_IBVERBS_LIB", fake_path, 1);
	setenv("FABRICLAB_SYSFS_ROOT", sysfs_root, 1);
	if (ft_test_describe(fabric_dir, ", \"retry_ms\": 300, \"max_send_wr\": 1024", NULL))
		exit(1);
	setenv("FABRICLAB_IB_QPS", "3", 1);
	unsetenv("NCCL_IB_PCI_RELAXED_ORDERING");
	setenv("FABRICLAB_SOCKET_IFNAME", "lo", 1);
	unsetenv("NCCL_IB_HCA");
	unsetenv("FABRICLAB_IB_HCA");
}

static void test_properties(void **state)
{
	struct fl_props p;
	int ndev = 0;
	char real[PATH_MAX];

	(void)state;
	assert_int_equal(tp->init(), FL_OK);
	assert_int_equal(tp->devices(&ndev), FL_OK);
	assert_int_equal(ndev, 2);
	assert_int_equal(tp->get_properties(0, &p), FL_OK);
	assert_string_equal(p.name, "mlx5_0");
	assert_int_equal(p.speed_mbps, 200000);
	assert_int_equal(p.port, 1);
	assert_int_equal(p.max_recvs, 8);
	assert_int_equal(p.reg_is_global, 1);
	assert_true(p.guid != 0);
	assert_true(p.ptr_support & FL_PTR_HOST);
	assert_true(p.ptr_support & FL_PTR_CUDA); /* the fixture's nvidia_peermem */
	snprintf(real, sizeof(real), "%s/devices/pci0000:00/0000:00:05.0", sysfs_root);
	assert_non_null(p.pci_path);
	assert_non_null(strstr(p.pci_path, "/devices/pci0000:00/0000:00:05.0"));
	assert_int_equal(tp->get_properties(1, &p), FL_OK);
	assert_string_equal(p.name, "mlx5_1");
	assert_int_equal(p.speed_mbps, 100000);
	assert_null(p.pci_path); /* no sysfs entry: NULL, not a guess */
	assert_int_equal(tp->get_properties(2, &p), FL_ERR_INTERNAL);
}

static void fill(uint8_t *b, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		b[i] = (uint8_t)(i * 31 + seed);
}

static void check_transfer(int dev, size_t size)
{
	struct pair p;
	size_t cap = size + 256;
	uint8_t *src = malloc(size + 1), *dst = malloc(cap);
	void *smr, *rmr, *reqs[2];
	size_t rsize = cap;
	int tag = 7, sizes[2][FL_MAX_RECVS];
	void *d = dst;

	connect_pair(dev, &p);
	fill(src, size, (unsigned)size);
	memset(dst, 0xee, cap);
	assert_int_equal(tp->reg_mr(p.send, src, size + 1, FL_PTR_HOST, &smr), FL_OK);
	assert_int_equal(tp->reg_mr(p.recv, dst, cap, FL_PTR_HOST, &rmr), FL_OK);
	assert_int_equal(tp->irecv(p.recv, 1, &d, &rsize, &tag, &rmr, &reqs[1]), FL_OK);
	assert_int_equal(tp->isend(p.send, src, size, 7, smr, &reqs[0]), FL_OK);
	assert_non_null(reqs[0]);
	assert_non_null(reqs[1]);
	assert_int_equal(wait_all(reqs, 2, sizes), FL_OK);
	assert_int_equal(sizes[0][0], (int)size);
	assert_int_equal(sizes[1][0], (int)size);
	assert_memory_equal(src, dst, size);
	assert_int_equal(dst[size], 0xee); /* nothing past the message */
	tp->dereg_mr(p.send, smr);
	tp->dereg_mr(p.recv, rmr);
	close_pair(&p);
	free(src);
	free(dst);
}

static void test_sizes_over_three_qps(void **state)
{
	static const size_t sizes[] = { 0, 1, 127, 128, 129, 4097, 3u << 20 };

	(void)state;
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		check_transfer(0, sizes[i]); /* InfiniBand: LIDs */
		check_transfer(1, sizes[i]); /* RoCE: GRH with the chosen GID */
	}
}

/* NCCL's rule: relaxed ordering whenever the library has ibv_reg_mr_iova2 (the fake has). */
static void test_relaxed_ordering(void **state)
{
	int (*mr_access)(const struct ibv_mr *) = fake_symbol("fakeverbs_mr_access");
	size_t size = 1 << 16;
	uint8_t *buf = malloc(size);
	struct pair p;
	void *mh;
	int access;

	(void)state;
	connect_pair(0, &p);
	assert_int_equal(tp->reg_mr(p.send, buf, size, FL_PTR_HOST, &mh), FL_OK);
	access = mr_access(((struct ib_mr *)mh)->mr);
	assert_true(access > 0);
	assert_true(access & IBV_ACCESS_RELAXED_ORDERING);
	assert_true(access & IBV_ACCESS_REMOTE_WRITE);
	tp->dereg_mr(p.send, mh);
	close_pair(&p);
	free(buf);
}

/* 64 messages of 16 MiB over 3 QPs want ~6 writes each per QP: far more than a send queue's
 * 256, which the device (1024 slots) would take. The transport must stop at 255 in flight. */
static void test_send_queue_deeper_than_asked(void **state)
{
	uint64_t (*high_water)(void) = fake_symbol("fakeverbs_sq_high_water");
	void (*pause_nic)(int) = fake_symbol("fakeverbs_pause_nic");
	enum { N = 64 };
	const size_t size = 16u << 20;
	uint8_t *src = malloc(size), *dst = malloc(size);
	void *smr, *rmr, *reqs[2 * N];
	int done[2 * N] = { 0 }, left = 2 * N, tag = 3, sizes[FL_MAX_RECVS];
	uint64_t end = fl_clock_ns() + 4 * WAIT_NS, high;
	struct pair p;

	(void)state;
	connect_pair(0, &p);
	fill(src, size, 5);
	assert_int_equal(tp->reg_mr(p.send, src, size, FL_PTR_HOST, &smr), FL_OK);
	assert_int_equal(tp->reg_mr(p.recv, dst, size, FL_PTR_HOST, &rmr), FL_OK);
	for (int i = 0; i < N; i++) {
		size_t rsize = size;
		void *d = dst;

		assert_int_equal(tp->irecv(p.recv, 1, &d, &rsize, &tag, &rmr, &reqs[N + i]), FL_OK);
	}
	/* every CTS has landed, so the sender may post all 64 at once */
	while (ib_fifo_arrived(&((struct ib_send_comm *)p.send)->fifo[ib_fifo_index(N - 1)],
			       N - 1) <= 0) {
		assert_true(fl_clock_ns() < end);
		usleep(1000);
	}
	/* nothing completes while the sends are posted: the send queues fill to their limit */
	pause_nic(1);
	high_water();
	for (int i = 0; i < N; i++) {
		assert_int_equal(tp->isend(p.send, src, size, 3, smr, &reqs[i]), FL_OK);
		assert_non_null(reqs[i]);
	}
	high = high_water();
	pause_nic(0);
	while (left) {
		for (int i = 0; i < 2 * N; i++) {
			struct fl_xfer_times t;

			if (!done[i]) {
				assert_int_equal(tp->test(reqs[i], &done[i], sizes, &t), FL_OK);
				left -= done[i];
			}
		}
		if (fl_clock_ns() > end)
			fail_msg("%d requests still pending after 40 s: a hang", left);
	}
	if (high != IB_SQ_DEPTH - 1)
		fail_msg("%llu send WRs in flight on one QP: the transport counts on %d",
			 (unsigned long long)high, IB_SQ_DEPTH - 1);
	assert_memory_equal(src, dst, size);
	tp->dereg_mr(p.send, smr);
	tp->dereg_mr(p.recv, rmr);
	close_pair(&p);
	free(src);
	free(dst);
}

static void test_multi_recv_by_tag(void **state)
{
	enum { N = 3, SZ = 10000 };
	struct pair p;
	static uint8_t src[N][SZ], dst[N][SZ + 100];
	void *smr, *rmr, *data[N], *mh[N], *reqs[N + 1];
	size_t rsizes[N];
	int tags[N] = { 10, 11, 12 }, sizes[N + 1][FL_MAX_RECVS];
	/* the sender posts in another order; the last send is longer than its buffer */
	int order[N] = { 2, 0, 1 };
	size_t send_len[N] = { SZ, 5000, SZ + 100 };

	(void)state;
	connect_pair(0, &p);
	assert_int_equal(tp->reg_mr(p.send, src, sizeof(src), FL_PTR_HOST, &smr), FL_OK);
	assert_int_equal(tp->reg_mr(p.recv, dst, sizeof(dst), FL_PTR_HOST, &rmr), FL_OK);
	for (int i = 0; i < N; i++) {
		data[i] = dst[i];
		mh[i] = rmr;
		rsizes[i] = i == 1 ? SZ + 100 : SZ;
		fill(src[i], SZ, (unsigned)i + 1);
	}
	memset(dst, 0, sizeof(dst));
	assert_int_equal(tp->irecv(p.recv, N, data, rsizes, tags, mh, &reqs[N]), FL_OK);
	for (int k = 0; k < N; k++) {
		int i = order[k];

		assert_int_equal(tp->isend(p.send, src[i], send_len[k] > SZ ? SZ : send_len[k],
					   tags[i], smr, &reqs[k]), FL_OK);
	}
	assert_int_equal(wait_all(reqs, N + 1, sizes), FL_OK);
	assert_int_equal(sizes[N][2], SZ);   /* tag 12 <- first send */
	assert_int_equal(sizes[N][0], 5000); /* tag 10 <- second send */
	assert_int_equal(sizes[N][1], SZ);   /* tag 11 <- third send */
	assert_memory_equal(dst[2], src[2], SZ);
	assert_memory_equal(dst[0], src[0], 5000);
	assert_memory_equal(dst[1], src[1], SZ);
	close_pair(&p);
}

/*
 * A grouped receive's sub-streams (one tag each) send on their own schedules:
 * tag 10 sends for two receives before tag 11 sends for the first. Each send
 * must land in its own receive's buffer for its tag, and nothing may fail.
 */
static void test_sub_streams_out_of_step(void **state)
{
	enum { SZ = 4096 };
	struct pair p;
	static uint8_t src[4][SZ], dst[4][SZ];
	void *smr, *rmr, *data[2], *mh[2], *reqs[6];
	size_t rsizes[2] = { SZ, SZ };
	int tags[2] = { 10, 11 }, sizes[6][FL_MAX_RECVS];
	/* src[0] = tag 10 for receive 0, src[1] = tag 10 for receive 1, then tag 11's */
	static const int send_tag[4] = { 10, 10, 11, 11 };
	static const int lands_in[4] = { 0, 2, 1, 3 }; /* dst[2r + (tag == 11)] */

	(void)state;
	connect_pair(0, &p);
	assert_int_equal(tp->reg_mr(p.send, src, sizeof(src), FL_PTR_HOST, &smr), FL_OK);
	assert_int_equal(tp->reg_mr(p.recv, dst, sizeof(dst), FL_PTR_HOST, &rmr), FL_OK);
	memset(dst, 0, sizeof(dst));
	mh[0] = mh[1] = rmr;
	for (int r = 0; r < 2; r++) {
		data[0] = dst[2 * r];
		data[1] = dst[2 * r + 1];
		assert_int_equal(tp->irecv(p.recv, 2, data, rsizes, tags, mh, &reqs[4 + r]),
				 FL_OK);
		assert_non_null(reqs[4 + r]);
	}
	for (int i = 0; i < 4; i++) {
		fill(src[i], SZ, (unsigned)i + 7);
		assert_int_equal(tp->isend(p.send, src[i], SZ, send_tag[i], smr, &reqs[i]), FL_OK);
		assert_non_null(reqs[i]);
	}
	assert_int_equal(wait_all(reqs, 6, sizes), FL_OK);
	for (int i = 0; i < 4; i++)
		assert_memory_equal(dst[lands_in[i]], src[i], SZ);
	close_pair(&p);
}

/*
 * A receive-side throttle is charged the bytes that arrive, as the socket
 * transport's is, not the size of the buffers posted: 20 messages of 1 KiB
 * into 1 MiB buffers through a 10 MiB/s pacer owe it 2 ms of wire time, not 2 s (each
 * clear-to-send would wait out the 100 ms its buffer was charged).
 */
static void test_rx_pacer_charges_bytes_received(void **state)
{
	enum { CAP = 1 << 20, MSG = 1024, N = 20 };
	static uint8_t src[MSG], dst[CAP];
	struct pair p;
	void *smr, *rmr, *d = dst, *reqs[2];
	size_t rsize = CAP;
	int tag = 7, sizes[2][FL_MAX_RECVS];
	struct fl_pacer *pacer;
	uint64_t owed_ns;

	(void)state;
	connect_pair(0, &p);
	pacer = fl_pace_create(10u << 20, 0, fl_clock_ns());
	assert_non_null(pacer);
	tp->set_pacer(p.recv, pacer);
	assert_int_equal(tp->reg_mr(p.send, src, sizeof(src), FL_PTR_HOST, &smr), FL_OK);
	assert_int_equal(tp->reg_mr(p.recv, dst, sizeof(dst), FL_PTR_HOST, &rmr), FL_OK);
	for (int i = 0; i < N; i++) {
		assert_int_equal(tp->irecv(p.recv, 1, &d, &rsize, &tag, &rmr, &reqs[1]), FL_OK);
		assert_int_equal(tp->isend(p.send, src, MSG, tag, smr, &reqs[0]), FL_OK);
		assert_int_equal(wait_all(reqs, 2, sizes), FL_OK);
		assert_int_equal(sizes[1][0], MSG);
	}
	owed_ns = fl_pace_wait_ns(pacer, fl_clock_ns());
	assert_true(owed_ns < 10 * 1000000ull); /* 100 ms (one buffer) if charged their size */
	close_pair(&p);
	fl_pace_destroy(pacer);
}

/*
 * Sends queued behind a message the sender's own throttle holds back wait on
 * that link, not on the receiver: with every receive posted first, each
 * send's wait on its receiver (post -> CTS matched, stats.h peer_wait_ns)
 * stays far below the time it queued behind the sends before it. Counted as
 * the receiver's, a slow link out of a node read as a straggler at the node
 * it enters.
 */
static void test_queued_sends_do_not_wait_on_the_receiver(void **state)
{
	enum { MSG = 256 << 10, N = 4, CAP = N * MSG };
	static uint8_t src[MSG], dst[CAP];
	struct pair p;
	void *smr, *rmr, *sends[N], *recvs[N];
	size_t rsize = MSG;
	int tag = 3, done[N] = { 0 }, rdone[N] = { 0 }, sizes[FL_MAX_RECVS], left = 2 * N;
	uint64_t posted, ready[N] = { 0 }, msg_ns, end = fl_clock_ns() + WAIT_NS;
	struct fl_pacer *pacer;

	(void)state;
	connect_pair(0, &p);
	pacer = fl_pace_create(5u << 20, 0, fl_clock_ns()); /* 5 MiB/s: 50 ms a message */
	assert_non_null(pacer);
	msg_ns = fl_pace_cost_ns(pacer, MSG);
	tp->set_pacer(p.send, pacer);
	assert_int_equal(tp->reg_mr(p.send, src, sizeof(src), FL_PTR_HOST, &smr), FL_OK);
	assert_int_equal(tp->reg_mr(p.recv, dst, sizeof(dst), FL_PTR_HOST, &rmr), FL_OK);
	for (int i = 0; i < N; i++) {
		void *d = dst + (size_t)i * MSG;

		assert_int_equal(tp->irecv(p.recv, 1, &d, &rsize, &tag, &rmr, &recvs[i]), FL_OK);
		assert_non_null(recvs[i]);
	}
	posted = fl_clock_ns();
	for (int i = 0; i < N; i++) {
		assert_int_equal(tp->isend(p.send, src, MSG, tag, smr, &sends[i]), FL_OK);
		assert_non_null(sends[i]);
	}
	while (left) {
		for (int i = 0; i < N; i++) {
			struct fl_xfer_times t = { 0 };

			if (!done[i]) {
				assert_int_equal(tp->test(sends[i], &done[i], sizes, &t), FL_OK);
				ready[i] = done[i] ? t.ready_ns : 0;
				left -= done[i];
			}
			if (!rdone[i]) {
				assert_int_equal(tp->test(recvs[i], &rdone[i], sizes, &t), FL_OK);
				left -= rdone[i];
			}
		}
		assert_true(fl_clock_ns() < end);
	}
	/* the last send queued about (N - 1) messages' time behind the others */
	for (int i = 1; i < N; i++)
		assert_true(ready[i] - posted < msg_ns);
	close_pair(&p);
	fl_pace_destroy(pacer);
}

static void test_clip_and_backpressure(void **state)
{
	struct pair p;
	static uint8_t src[4096], dst[4096];
	void *smr, *rmr, *reqs[2], *d = dst, *extra = NULL;
	void *many[64];
	size_t small = 100;
	int tag = 1, sizes[2][FL_MAX_RECVS];

	(void)state;
	connect_pair(0, &p);
	assert_int_equal(tp->reg_mr(p.send, src, sizeof(src), FL_PTR_HOST, &smr), FL_OK);
	assert_int_equal(tp->reg_mr(p.recv, dst, sizeof(dst), FL_PTR_HOST, &rmr), FL_OK);
	/* a send longer than the posted buffer is cut to it: the buffer is never overrun */
	memset(dst, 0, sizeof(dst));
	fill(src, sizeof(src), 3);
	assert_int_equal(tp->irecv(p.recv, 1, &d, &small, &tag, &rmr, &reqs[1]), FL_OK);
	assert_int_equal(tp->isend(p.send, src, 4096, 1, smr, &reqs[0]), FL_OK);
	assert_int_equal(wait_all(reqs, 2, sizes), FL_OK);
	assert_int_equal(sizes[0][0], 100);
	assert_int_equal(sizes[1][0], 100);
	assert_int_equal(dst[100], 0);
	/* 64 receives in flight fill the FIFO; the 65th is refused for now (NULL) */
	for (int i = 0; i < 64; i++) {
		assert_int_equal(tp->irecv(p.recv, 1, &d, &small, &tag, &rmr, &many[i]), FL_OK);
		assert_non_null(many[i]);
	}
	assert_int_equal(tp->irecv(p.recv, 1, &d, &small, &tag, &rmr, &extra), FL_OK);
	assert_null(extra);
	close_pair(&p);
}

static void test_iflush(void **state)
{
	struct pair p;
	static uint8_t gpu[8192], host[64];
	void *mr_gpu, *mr_host, *req, *data[1];
	int sizes[1][FL_MAX_RECVS], n[1] = { 8192 };

	(void)state;
	connect_pair(0, &p);
	/* "GPU" memory: the fixture says peer memory works, so CUDA registrations are taken */
	assert_int_equal(tp->reg_mr(p.recv, gpu, sizeof(gpu), FL_PTR_CUDA, &mr_gpu), FL_OK);
	data[0] = gpu;
	assert_int_equal(tp->iflush(p.recv, 1, data, n, &mr_gpu, &req), FL_OK);
	assert_non_null(req);
	assert_int_equal(wait_all(&req, 1, sizes), FL_OK);
	/* twice: the loopback QP is reused */
	assert_int_equal(tp->iflush(p.recv, 1, data, n, &mr_gpu, &req), FL_OK);
	assert_int_equal(wait_all(&req, 1, sizes), FL_OK);
	/* host memory needs no flush: done at once */
	assert_int_equal(tp->reg_mr(p.recv, host, sizeof(host), FL_PTR_HOST, &mr_host), FL_OK);
	data[0] = host;
	n[0] = 64;
	assert_int_equal(tp->iflush(p.recv, 1, data, n, &mr_host, &req), FL_OK);
	assert_int_equal(wait_all(&req, 1, sizes), FL_OK);
	/* dma-buf: the fake has no dma-buf support, so it is not advertised and refused */
	assert_int_not_equal(tp->reg_mr_dmabuf(p.recv, gpu, 64, FL_PTR_CUDA, 0, 3, &req), FL_OK);
	tp->dereg_mr(p.recv, mr_gpu);
	tp->dereg_mr(p.recv, mr_host);
	close_pair(&p);
}

static void test_bad_buffers(void **state)
{
	struct pair p;
	static uint8_t buf[8192];
	void *mr, *req = NULL, *d = buf + 4096;
	size_t sz = 8192;
	int tag = 1;

	(void)state;
	connect_pair(0, &p);
	assert_int_equal(tp->reg_mr(p.send, buf, 4096, FL_PTR_HOST, &mr), FL_OK);
	/* past the end of its registration: refused before anything is posted */
	assert_int_equal(tp->isend(p.send, buf + 100, 8000, 1, mr, &req), FL_ERR_INTERNAL);
	assert_non_null(strstr(fl_error_text(), "outside its registration"));
	assert_null(req);
	assert_int_equal(tp->irecv(p.recv, 1, &d, &sz, &tag, &mr, &req), FL_ERR_INTERNAL);
	/* memory types the device cannot register */
	assert_int_equal(tp->reg_mr(p.send, buf, 64, 0x10, &req), FL_ERR_INTERNAL);
	close_pair(&p);
}

static void test_tag_mismatch(void **state)
{
	struct pair p;
	static uint8_t buf[4096];
	void *mr, *reqs[2], *d = buf;
	size_t sz = 64;
	int tag = 5, sizes[2][FL_MAX_RECVS], rc;

	(void)state;
	connect_pair(0, &p);
	assert_int_equal(tp->reg_mr(p.send, buf, sizeof(buf), FL_PTR_HOST, &mr), FL_OK);
	assert_int_equal(tp->irecv(p.recv, 1, &d, &sz, &tag, &mr, &reqs[1]), FL_OK);
	/* the send waits for the CTS, then finds no buffer with its tag */
	rc = tp->isend(p.send, buf + 1024, 64, 6, mr, &reqs[0]);
	if (!rc)
		rc = wait_all(reqs, 1, sizes);
	assert_int_equal(rc, FL_ERR_INTERNAL);
	assert_non_null(strstr(fl_error_text(), "tag 6"));
	close_pair(&p);
}

/* An error the fake injects on the next send WR must come back from test with its text. */
static void check_injected(const char *rule, const char *text, int dev)
{
	int (*inject)(const char *) = fake_symbol("fakeverbs_inject");
	struct pair p;
	static uint8_t src[1 << 16], dst[1 << 16];
	void *smr, *rmr, *reqs[2], *d = dst;
	size_t sz = sizeof(dst);
	int tag = 1, sizes[2][FL_MAX_RECVS], rc;

	connect_pair(dev, &p);
	assert_int_equal(tp->reg_mr(p.send, src, sizeof(src), FL_PTR_HOST, &smr), FL_OK);
	assert_int_equal(tp->reg_mr(p.recv, dst, sizeof(dst), FL_PTR_HOST, &rmr), FL_OK);
	assert_int_equal(tp->irecv(p.recv, 1, &d, &sz, &tag, &rmr, &reqs[1]), FL_OK);
	/* let the CTS go first: the next WR this process sends is the payload */
	for (int i = 0; i < 1000; i++)
		tp->test(reqs[1], &(int){ 0 }, NULL, &(struct fl_xfer_times){ 0 });
	assert_int_equal(inject(rule), 0);
	assert_int_equal(tp->isend(p.send, src, sizeof(src), 1, smr, &reqs[0]), FL_OK);
	rc = wait_all(reqs, 1, sizes);
	assert_int_equal(rc, FL_ERR_SYSTEM);
	if (!strstr(fl_error_text(), text))
		fail_msg("error text \"%s\" does not say \"%s\"", fl_error_text(), text);
	/* the comm stays failed: later calls say the same */
	assert_int_equal(tp->isend(p.send, src, 10, 1, smr, &reqs[0]), FL_ERR_SYSTEM);
	assert_non_null(strstr(fl_error_text(), text));
	close_pair(&p);
}

static void test_injected_errors(void **state)
{
	(void)state;
	check_injected("rem_access@1", "remote access error", 0);
	check_injected("retry_exceeded@1", "retry counter exceeded", 0);
	check_injected("qp_error@1", "Flushed", 1);
}

/* Last: the port stays down for the rest of the process. */
static void test_port_down(void **state)
{
	int (*set_state)(const char *, int, int) = fake_symbol("fakeverbs_set_port_state");
	struct pair p;
	static uint8_t buf[4096];
	void *mr, *reqs[2], *d = buf;
	size_t sz = 64;
	int tag = 5, sizes[2][FL_MAX_RECVS], rc;
	uint64_t start;

	(void)state;
	connect_pair(1, &p);
	assert_int_equal(tp->reg_mr(p.recv, buf, sizeof(buf), FL_PTR_HOST, &mr), FL_OK);
	/* a receive whose CTS went out; its sender never sends */
	assert_int_equal(tp->irecv(p.recv, 1, &d, &sz, &tag, &mr, &reqs[0]), FL_OK);
	for (int i = 0; i < 1000; i++)
		tp->test(reqs[0], &(int){ 0 }, NULL, &(struct fl_xfer_times){ 0 });
	/* nothing is outstanding on the wire: only the port's async event can tell */
	assert_int_equal(set_state("mlx5_1", 1, IBV_PORT_DOWN), 0);
	start = fl_clock_ns();
	rc = wait_all(reqs, 1, sizes);
	assert_int_equal(rc, FL_ERR_SYSTEM);
	if (!strstr(fl_error_text(), "port went down"))
		fail_msg("error text \"%s\" does not say the port went down", fl_error_text());
	assert_true(fl_clock_ns() - start < 5ULL * 1000000000ULL);
	close_pair(&p);
}

static int cleanup(void **state)
{
	char cmd[256];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s %s", sysfs_root, fabric_dir);
	if (system(cmd))
		fprintf(stderr, "could not remove %s %s\n", sysfs_root, fabric_dir);
	return 0;
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_properties),
		cmocka_unit_test(test_sizes_over_three_qps),
		cmocka_unit_test(test_relaxed_ordering),
		cmocka_unit_test(test_send_queue_deeper_than_asked),
		cmocka_unit_test(test_multi_recv_by_tag),
		cmocka_unit_test(test_sub_streams_out_of_step),
		cmocka_unit_test(test_rx_pacer_charges_bytes_received),
		cmocka_unit_test(test_queued_sends_do_not_wait_on_the_receiver),
		cmocka_unit_test(test_clip_and_backpressure),
		cmocka_unit_test(test_iflush),
		cmocka_unit_test(test_bad_buffers),
		cmocka_unit_test(test_tag_mismatch),
		cmocka_unit_test(test_injected_errors),
		cmocka_unit_test(test_port_down),
	};

	(void)argc;
	setup_env(argv[0]);
	if (access(fake_path, R_OK)) {
		char why[4200];

		snprintf(why, sizeof(why), "%s not built (make all builds it)", fake_path);
		return fl_test_status(0, why);
	}
	fl_clock_init();
	return cmocka_run_group_tests(tests, NULL, cleanup);
}
