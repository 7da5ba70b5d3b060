/* The fake verbs library across processes: RDMA write-with-immediate and read between a parent and
 * a forked child, a peer that dies (its requesters fail with RETRY_EXC_ERR, never hang), and the
 * environment variables that configure devices and inject errors in a fresh process. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include <cmocka.h>

#include "fabric/nic/fv_test.h"

static struct fvt_lib lib;
static char fabric_dir[128];

#define BIG (64u << 20)

struct chan {
	int to_child[2], to_parent[2];
};

static void chan_open(struct chan *c)
{
	assert_int_equal(pipe(c->to_child), 0);
	assert_int_equal(pipe(c->to_parent), 0);
}

/* After fork: each side keeps only its ends, so that a side that dies reads as EOF. */
static void chan_side(struct chan *c, bool child)
{
	close(child ? c->to_child[1] : c->to_child[0]);
	close(child ? c->to_parent[0] : c->to_parent[1]);
}

static void chan_close(struct chan *c)
{
	close(c->to_child[1]);
	close(c->to_parent[0]);
}

/* Child: connects to the parent, checks a 64 MiB write-with-immediate, then reads 4 KiB back
 * from the parent. Exit status 0 or the number of the failed step. */
static int child_write_read(struct chan *c)
{
	struct fvt_opts o = fvt_defaults();
	struct fvt_ep ep;
	struct fvt_addr me, peer;
	struct ibv_wc wc;
	char ok = 1;

	if (fvt_ep_init(&lib, &ep, &o, BIG))
		return 1;
	me = fvt_addr_of(&lib, &ep);
	if (fvt_put(c->to_parent[1], &me, sizeof(me)) || fvt_get(c->to_child[0], &peer, sizeof(peer)))
		return 2;
	if (fvt_connect(&lib, &ep, &o, &peer) || fvt_post_recv(&ep, 42, NULL, 0, 0))
		return 3;
	if (fvt_put(c->to_parent[1], &ok, 1))
		return 4;
	if (fvt_poll(ep.cq, &wc, 1, 20000) != 1 || wc.status != IBV_WC_SUCCESS ||
	    wc.opcode != IBV_WC_RECV_RDMA_WITH_IMM || wc.wr_id != 42 || wc.byte_len != BIG ||
	    ntohl(wc.imm_data) != 0x5151)
		return 5;
	for (size_t i = 0; i < BIG; i += 4093)
		if (ep.buf[i] != (char)(i % 251))
			return 6;
	if (fvt_post_rdma(&ep, IBV_WR_RDMA_READ, 7, ep.buf, 4096, ep.mr->lkey, peer.addr + 8192,
			  peer.rkey, IBV_SEND_SIGNALED, 0) ||
	    fvt_poll(ep.cq, &wc, 1, 5000) != 1 || wc.status != IBV_WC_SUCCESS ||
	    wc.opcode != IBV_WC_RDMA_READ || wc.byte_len != 4096)
		return 7;
	for (size_t i = 0; i < 4096; i++)
		if (ep.buf[i] != (char)((i + 8192) % 251))
			return 8;
	if (fvt_put(c->to_parent[1], &ok, 1) || fvt_get(c->to_child[0], &ok, 1))
		return 9;
	fvt_ep_fini(&lib, &ep);
	return 0;
}

static int wait_child(pid_t pid)
{
	int st = 0;

	if (waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void test_cross_process_write_imm_and_read(void **state)
{
	struct fvt_opts o = fvt_defaults();
	struct fvt_ep ep;
	struct fvt_addr me, peer;
	struct ibv_wc wc;
	struct chan c;
	uint64_t t0;
	pid_t pid;
	char ok;

	(void)state;
	chan_open(&c);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		chan_side(&c, true);
		_exit(child_write_read(&c));
	}
	chan_side(&c, false);
	assert_int_equal(fvt_ep_init(&lib, &ep, &o, BIG), 0);
	for (size_t i = 0; i < BIG; i++)
		ep.buf[i] = (char)(i % 251);
	me = fvt_addr_of(&lib, &ep);
	assert_int_equal(fvt_get(c.to_parent[0], &peer, sizeof(peer)), 0);
	assert_int_equal(fvt_put(c.to_child[1], &me, sizeof(me)), 0);
	assert_int_equal(fvt_connect(&lib, &ep, &o, &peer), 0);
	assert_int_equal(fvt_get(c.to_parent[0], &ok, 1), 0);	/* its receive is posted */
	t0 = fvt_ms();
	assert_int_equal(fvt_post_rdma(&ep, IBV_WR_RDMA_WRITE_WITH_IMM, 1, ep.buf, BIG, ep.mr->lkey,
				       peer.addr, peer.rkey, IBV_SEND_SIGNALED, 0x5151), 0);
	assert_int_equal(fvt_poll(ep.cq, &wc, 1, 20000), 1);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	print_message("64 MiB across processes in %llu ms\n", (unsigned long long)(fvt_ms() - t0));
	assert_int_equal(fvt_get(c.to_parent[0], &ok, 1), 0);	/* its read is done */
	assert_int_equal(fvt_put(c.to_child[1], &ok, 1), 0);
	assert_int_equal(wait_child(pid), 0);
	chan_close(&c);
	fvt_ep_fini(&lib, &ep);
}

/* Child: connects, then waits to be killed (or stopped) by the parent. */
static int child_connect_and_wait(struct chan *c)
{
	struct fvt_opts o = fvt_defaults();
	struct fvt_ep ep;
	struct fvt_addr me, peer;
	char ok = 1;

	if (fvt_ep_init(&lib, &ep, &o, 16384))
		return 1;
	me = fvt_addr_of(&lib, &ep);
	if (fvt_put(c->to_parent[1], &me, sizeof(me)) || fvt_get(c->to_child[0], &peer, sizeof(peer)))
		return 2;
	if (fvt_connect(&lib, &ep, &o, &peer) || fvt_put(c->to_parent[1], &ok, 1))
		return 3;
	/* until the parent kills it, or is gone itself (EOF): never outlives a failed test */
	fvt_get(c->to_child[0], &ok, 1);
	return 0;
}

/* Forks a child that connects to ep (made here with buf_len bytes) and waits to be killed. */
static pid_t start_waiting_peer(struct chan *c, struct fvt_ep *ep, const struct fvt_opts *o,
				size_t buf_len, struct fvt_addr *peer)
{
	struct fvt_addr me;
	pid_t pid;
	char ok;

	chan_open(c);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		chan_side(c, true);
		_exit(child_connect_and_wait(c));
	}
	chan_side(c, false);
	assert_int_equal(fvt_ep_init(&lib, ep, o, buf_len), 0);
	me = fvt_addr_of(&lib, ep);
	assert_int_equal(fvt_get(c->to_parent[0], peer, sizeof(*peer)), 0);
	assert_int_equal(fvt_put(c->to_child[1], &me, sizeof(me)), 0);
	assert_int_equal(fvt_connect(&lib, ep, o, peer), 0);
	assert_int_equal(fvt_get(c->to_parent[0], &ok, 1), 0);
	return pid;
}

static void test_dead_peer_fails_requests(void **state)
{
	struct fvt_opts o = fvt_defaults();
	struct fvt_ep ep;
	struct fvt_addr peer;
	struct ibv_wc wc;
	struct chan c;
	uint64_t t0;
	pid_t pid;

	(void)state;
	/* NCCL's timeout: retries alone would take seconds, the death must be noticed sooner */
	o.timeout = 20;
	pid = start_waiting_peer(&c, &ep, &o, 4096, &peer);
	/* a send the child has no receive for: it waits at the child (rnr_retry 7) */
	assert_int_equal(fvt_post_rdma(&ep, IBV_WR_SEND, 1, ep.buf, 8, ep.mr->lkey, 0, 0,
				       IBV_SEND_SIGNALED, 0), 0);
	usleep(100000);
	assert_int_equal(ibv_poll_cq(ep.cq, 1, &wc), 0);
	kill(pid, SIGKILL);
	assert_int_equal(wait_child(pid), 128 + SIGKILL);
	t0 = fvt_ms();
	assert_int_equal(fvt_poll(ep.cq, &wc, 1, 5000), 1);
	assert_int_equal(wc.status, IBV_WC_RETRY_EXC_ERR);
	/* the retry window is 8 s here: only noticing the death ends it this soon */
	assert_true(fvt_ms() - t0 < 4000);
	/* a fresh connection to the dead process fails at once too */
	{
		struct ibv_qp_attr a;
		struct ibv_qp_init_attr init;

		assert_int_equal(lib.query_qp(ep.qp, &a, IBV_QP_STATE, &init), 0);
		assert_int_equal(a.qp_state, IBV_QPS_ERR);
		a.qp_state = IBV_QPS_RESET;
		assert_int_equal(lib.modify_qp(ep.qp, &a, IBV_QP_STATE), 0);
	}
	assert_int_equal(fvt_connect(&lib, &ep, &o, &peer), 0);
	assert_int_equal(fvt_post_rdma(&ep, IBV_WR_RDMA_WRITE, 2, ep.buf, 8, ep.mr->lkey, peer.addr,
				       peer.rkey, 0, 0), 0);
	assert_int_equal(fvt_poll(ep.cq, &wc, 1, 3000), 1);
	assert_int_equal(wc.status, IBV_WC_RETRY_EXC_ERR);
	assert_int_equal(wc.wr_id, 2);
	chan_close(&c);
	fvt_ep_fini(&lib, &ep);
}

/* More requests than a ring holds, while the responder process is stopped: the requester keeps
 * them queued, and once the responder runs again every one executes, in order. */
static void test_full_ring_flow_control(void **state)
{
	const int n = 3000;
	struct fvt_opts o = fvt_defaults();
	struct fvt_ep ep;
	struct fvt_addr peer;
	struct ibv_wc wc;
	struct chan c;
	pid_t pid;

	(void)state;
	o.max_send_wr = 4096;
	o.timeout = 17;	/* a 4 s retry window: the stop below stays far inside it */
	pid = start_waiting_peer(&c, &ep, &o, 16384, &peer);
	kill(pid, SIGSTOP);
	for (int i = 0; i < n; i++) {
		uint32_t v = (uint32_t)i + 1;

		/* inline, each to its own word: a request lost or run twice shows in the result */
		assert_int_equal(fvt_post_rdma(&ep, IBV_WR_RDMA_WRITE, (uint64_t)i, &v, 4, 0,
					       peer.addr + 4 * (uint64_t)i, peer.rkey,
					       IBV_SEND_INLINE |
					       (i == n - 1 ? IBV_SEND_SIGNALED : 0), 0), 0);
	}
	usleep(150000);
	assert_int_equal(ibv_poll_cq(ep.cq, 1, &wc), 0);
	kill(pid, SIGCONT);
	assert_int_equal(fvt_poll(ep.cq, &wc, 1, 10000), 1);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(wc.wr_id, (uint64_t)(n - 1));
	assert_int_equal(fvt_post_rdma(&ep, IBV_WR_RDMA_READ, 9, ep.buf, 4 * n, ep.mr->lkey,
				       peer.addr, peer.rkey, IBV_SEND_SIGNALED, 0), 0);
	assert_int_equal(fvt_poll(ep.cq, &wc, 1, 5000), 1);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	for (int i = 0; i < n; i++) {
		uint32_t v;

		memcpy(&v, ep.buf + 4 * i, 4);
		assert_int_equal(v, (uint32_t)i + 1);
	}
	kill(pid, SIGKILL);
	wait_child(pid);
	chan_close(&c);
	fvt_ep_fini(&lib, &ep);
}

/* FABRICLAB_FAKEVERBS_DMABUF=1: a memfd stands in for a GPU buffer's dma-buf. */
static int child_dmabuf(void)
{
	struct fvt_opts o = fvt_defaults();
	struct fvt_ep ep;
	struct fvt_addr self;
	struct ibv_mr *mr;
	struct ibv_wc wc;
	char *view;
	int fd;

	if (fvt_ep_init(&lib, &ep, &o, 4096))
		return 20;
	errno = 0;
	if (lib.reg_dmabuf_mr(ep.pd, 0, 4096, 0, -1, 0) || errno != EBADF)
		return 21;
	fd = memfd_create("fake-dmabuf", 0);
	if (fd < 0 || ftruncate(fd, 8192))
		return 22;
	view = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	mr = lib.reg_dmabuf_mr(ep.pd, 4096, 4096, 0x10000, fd,
			       IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	if (view == MAP_FAILED || !mr)
		return 23;
	self = fvt_addr_of(&lib, &ep);
	strcpy(ep.buf, "to the gpu");
	if (fvt_connect(&lib, &ep, &o, &self) ||
	    fvt_post_rdma(&ep, IBV_WR_RDMA_WRITE, 1, ep.buf, 11, ep.mr->lkey, 0x10000 + 16,
			  mr->rkey, IBV_SEND_SIGNALED, 0) ||
	    fvt_poll(ep.cq, &wc, 1, 3000) != 1 || wc.status != IBV_WC_SUCCESS)
		return 24;
	if (strcmp(view + 4096 + 16, "to the gpu"))
		return 25;
	lib.dereg_mr(mr);
	munmap(view, 8192);
	close(fd);
	fvt_ep_fini(&lib, &ep);
	return 0;
}

/* Runs in a fresh process (exec) so that the environment is read at first use. */
static int child_env(void)
{
	struct fvt_opts o = fvt_defaults();
	struct ibv_port_attr pa;
	struct ibv_context *ctx;
	struct ibv_device **list;
	struct fvt_ep ep;
	struct fvt_addr self;
	struct ibv_wc wc;
	int n = 0;

	if (fvt_load(&lib))
		return 1;
	list = lib.get_device_list(&n);
	if (!list || n != 2 || strcmp(lib.get_device_name(list[1]), "mlx5_3"))
		return 2;
	lib.free_device_list(list);
	ctx = fvt_open(&lib, "mlx5_0");
	if (!ctx || lib.query_port(ctx, 1, &pa) || pa.active_width != 16 ||
	    pa.active_speed != 128 || pa.state != IBV_PORT_ACTIVE)
		return 3;
	if (lib.query_port(ctx, 2, &pa) || pa.link_layer != IBV_LINK_LAYER_ETHERNET ||
	    pa.state != IBV_PORT_DOWN || pa.phys_state != 3 || pa.active_speed != 128)
		return 4;
	lib.close_device(ctx);
	ctx = fvt_open(&lib, "mlx5_3");
	if (!ctx || lib.query_port(ctx, 1, &pa) || pa.active_width != 8 || pa.active_speed != 32)
		return 5;
	lib.close_device(ctx);
	/* FABRICLAB_FAKEVERBS_INJECT=rem_access@2: the second WR fails */
	if (fvt_ep_init(&lib, &ep, &o, 4096))
		return 6;
	self = fvt_addr_of(&lib, &ep);
	if (fvt_connect(&lib, &ep, &o, &self))
		return 7;
	for (int i = 1; i <= 2; i++) {
		if (fvt_post_rdma(&ep, IBV_WR_RDMA_WRITE, (uint64_t)i, ep.buf, 8, ep.mr->lkey,
				  self.addr + 64, self.rkey, IBV_SEND_SIGNALED, 0) ||
		    fvt_poll(ep.cq, &wc, 1, 3000) != 1 || wc.wr_id != (uint64_t)i ||
		    wc.status != (i == 1 ? IBV_WC_SUCCESS : IBV_WC_REM_ACCESS_ERR))
			return 7 + i;
	}
	fvt_ep_fini(&lib, &ep);
	return child_dmabuf();
}

/* A process of "node1" (FABRICLAB_FABRIC_NODE=node1, the description's second node): its own
 * LIDs, reached by the parent's. */
static int child_node(int rfd, int wfd)
{
	struct fvt_opts o = fvt_defaults();
	struct fvt_ep ep;
	struct fvt_addr me, peer;
	struct ibv_wc wc;

	if (fvt_load(&lib) || fvt_ep_init(&lib, &ep, &o, 4096))
		return 1;
	me = fvt_addr_of(&lib, &ep);
	if (fvt_put(wfd, &me, sizeof(me)) || fvt_get(rfd, &peer, sizeof(peer)))
		return 2;
	if (peer.lid == me.lid || fvt_connect(&lib, &ep, &o, &peer))
		return 3;
	strcpy(ep.buf, "from node 1");
	if (fvt_post_rdma(&ep, IBV_WR_RDMA_WRITE_WITH_IMM, 1, ep.buf, 12, ep.mr->lkey, peer.addr,
			  peer.rkey, IBV_SEND_SIGNALED, 1) ||
	    fvt_poll(ep.cq, &wc, 1, 5000) != 1 || wc.status != IBV_WC_SUCCESS)
		return 4;
	fvt_ep_fini(&lib, &ep);
	return 0;
}

static void test_nodes_have_their_own_addresses(void **state)
{
	struct fvt_opts o = fvt_defaults();
	char exe[PATH_MAX], rfd[16], wfd[16];
	ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	struct fvt_ep ep;
	struct fvt_addr me, peer;
	struct ibv_wc wc;
	struct chan c;
	pid_t pid;

	(void)state;
	exe[len > 0 ? len : 0] = 0;
	chan_open(&c);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		chan_side(&c, true);
		snprintf(rfd, sizeof(rfd), "%d", c.to_child[0]);
		snprintf(wfd, sizeof(wfd), "%d", c.to_parent[1]);
		setenv("FABRICLAB_FABRIC_NODE", "node1", 1); /* the description's second node */
		execl(exe, exe, "--child-node", rfd, wfd, (char *)NULL);
		_exit(127);
	}
	chan_side(&c, false);
	assert_int_equal(fvt_ep_init(&lib, &ep, &o, 4096), 0);
	me = fvt_addr_of(&lib, &ep);
	assert_int_equal(fvt_get(c.to_parent[0], &peer, sizeof(peer)), 0);
	assert_int_not_equal(peer.lid, me.lid);
	assert_int_equal(fvt_connect(&lib, &ep, &o, &peer), 0);
	assert_int_equal(fvt_post_recv(&ep, 5, NULL, 0, 0), 0);
	assert_int_equal(fvt_put(c.to_child[1], &me, sizeof(me)), 0);
	assert_int_equal(fvt_poll(ep.cq, &wc, 1, 5000), 1);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(wc.slid, peer.lid);
	assert_string_equal(ep.buf, "from node 1");
	assert_int_equal(wait_child(pid), 0);
	chan_close(&c);
	fvt_ep_fini(&lib, &ep);
}

static int child_bad_env(void)
{
	int n = -1;

	if (fvt_load(&lib))
		return 1;
	errno = 0;
	if (lib.get_device_list(&n) != NULL || n != 0 || errno != EINVAL)
		return 2;
	return 0;
}

static int run_self(const char *mode, const char *devices, const char *inject)
{
	char exe[PATH_MAX];
	ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	pid_t pid;

	exe[len > 0 ? len : 0] = 0;
	pid = fork();
	if (pid == 0) {
		setenv("FABRICLAB_FAKEVERBS_DEVICES", devices, 1);
		setenv("FABRICLAB_FAKEVERBS_INJECT", inject, 1);
		setenv("FABRICLAB_FAKEVERBS_DMABUF", "1", 1);
		execl(exe, exe, mode, (char *)NULL);
		_exit(127);
	}
	return wait_child(pid);
}

/* A child with the description at `path` instead of the test's; how it exits. */
static int run_described(const char *mode, const char *path)
{
	char exe[PATH_MAX];
	ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	pid_t pid;

	exe[len > 0 ? len : 0] = 0;
	pid = fork();
	if (pid == 0) {
		setenv("FABRICLAB_FABRIC", path, 1);
		execl(exe, exe, mode, (char *)NULL);
		_exit(127);
	}
	return wait_child(pid);
}

static int write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	return !f || fputs(text, f) < 0 || fclose(f) ? -1 : 0;
}

/* A malformed description, or one whose node lacks what it asks, gives no devices (EINVAL). */
static void test_bad_description_gives_no_devices(void **state)
{
	static const char *const bad[] = {
		"{\"fabriclab_fabric\": 1, \"nodes\": [",
		"{\"fabriclab_fabric\": 1, \"nodes\": [{\"name\": \"node0\", \"nics\": "
		"[{\"name\": \"mlx5_0\", \"port\": \"ib:3x:hdr\"}]}]}",
		"{\"fabriclab_fabric\": 1, \"nodes\": [{\"name\": \"node0\", \"nics\": []}], "
		"\"physics\": {\"rate_dvi\": 2}}",
		"{\"fabriclab_fabric\": 2, \"nodes\": []}",
	};
	char path[PATH_MAX];

	(void)state;
	snprintf(path, sizeof(path), "%s/bad.json", fabric_dir);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(write_text(path, bad[i]), 0);
		assert_int_equal(run_described("--child-bad-env", path), 0);
	}
	unlink(path);
}

static void test_environment_configures_devices_and_errors(void **state)
{
	(void)state;
	assert_int_equal(run_self("--child-env",
				  "mlx5_0=ib:2x:ndr+eth:4x:100g:down,mlx5_3=ib:12x:edr",
				  "rem_access@2"), 0);
	assert_int_equal(run_self("--child-bad-env", "mlx5_0=ib:3x:hdr", ""), 0);
	assert_int_equal(run_self("--child-bad-env", "mlx5_0", ""), 0);
}

static int setup(void **state)
{
	(void)state;
	fvt_private_fabric(fabric_dir, sizeof(fabric_dir));
	unsetenv("FABRICLAB_FAKEVERBS_DEVICES");
	unsetenv("FABRICLAB_FAKEVERBS_INJECT");
	unsetenv("FABRICLAB_FAKEVERBS_RETRY_MS");
	return fvt_load(&lib);
}

static int teardown(void **state)
{
	(void)state;
	fvt_remove_fabric(fabric_dir);
	return 0;
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cross_process_write_imm_and_read),
		cmocka_unit_test(test_dead_peer_fails_requests),
		cmocka_unit_test(test_full_ring_flow_control),
		cmocka_unit_test(test_environment_configures_devices_and_errors),
		cmocka_unit_test(test_bad_description_gives_no_devices),
		cmocka_unit_test(test_nodes_have_their_own_addresses),
	};

	if (argc > 1 && strcmp(argv[1], "--child-env") == 0)
		return child_env();
	if (argc > 1 && strcmp(argv[1], "--child-bad-env") == 0)
		return child_bad_env();
	if (argc > 3 && strcmp(argv[1], "--child-node") == 0)
		return child_node(atoi(argv[2]), atoi(argv[3]));
	return cmocka_run_group_tests(tests, setup, teardown);
}
