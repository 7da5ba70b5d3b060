/*
 * Switches in the emulated fabric's physics (fabric/nic/fv_physics.c, fv_elements.c): a
 * message crosses every element of its path (its NIC out, the leaf's cable up to a spine, the
 * cable down, the other NIC in), and an element's capacity is shared by every hop through it,
 * whichever processes post them. Four nodes, each its own process, on two leaves joined by
 * one spine with one cable per leaf at a NIC's rate (oversubscribed 2:1), ports 1x SDR moving
 * bytes 10 times slower (31.25 MB/s), 1 ms one way; each case writes 4 MiB per pair at once,
 * in 512 KiB writes all in flight:
 *  - node0 -> node2 and node1 -> node3 share leaf0's one cable up: each takes about twice its
 *    wire time; node0 -> node1 and node2 -> node3 stay within their leaves and do not;
 *  - the spine at 50% slows a hop across it to half its rate; a leaf port at 50% (leaf1:2,
 *    node3's) slows the hop into node3 alike;
 *  - the fabric's counters (counters.json) say leaf0's cable up carried both writes.
 * Bounds are lower bounds with the physics' own arithmetic (less 5%), and the same-leaf control
 * an upper one: it fails if the cable is not shared, or if everything slowed down.
 */
#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include <sys/wait.h>

#include <cmocka.h>

#include "fabric/nic/fv_test.h"

#define BUF (4u << 20)
#define STEP (512u << 10)
#define RATE_MB_S 31.25 /* 2.5 Gbit/s / 10 */
#define MAX_PAIRS 2

#define NIC(node, leaf, port) "{\"name\": \"" node "\", \"nics\": [{\"name\": \"mlx5_0\", " \
	"\"port\": \"ib:1x:sdr\", \"leaf\": \"" leaf "\", \"leaf_port\": " #port "}]}"
#define FABRIC "\"layout\": \"fat-tree:leaves=2,spines=1,cables=1\", " \
	"\"switches\": [{\"name\": \"leaf0\", \"role\": \"leaf\"}, " \
	"{\"name\": \"leaf1\", \"role\": \"leaf\"}, {\"name\": \"spine0\", \"role\": \"spine\"}], " \
	"\"nodes\": [" NIC("node0", "leaf0", 1) ", " NIC("node1", "leaf0", 2) ", " \
	NIC("node2", "leaf1", 1) ", " NIC("node3", "leaf1", 2) "], " \
	"\"uplinks\": [{\"leaf\": \"leaf0\", \"spine\": \"spine0\", \"cables\": 1}, " \
	"{\"leaf\": \"leaf1\", \"spine\": \"spine0\", \"cables\": 1}], " \
	"\"physics\": {\"rate_div\": 10, \"latency_ns\": 1000000, \"msg_cost_ns\": 100000}"

struct pair {
	const char *src, *dst;
};

struct chan {
	int addr_to_dst[2], addr_to_src[2], ready[2], go[2], done[2];
};

static char fabric_dir[128];

static double wire_ms(size_t bytes)
{
	return (double)bytes / (RATE_MB_S * 1e3);
}

static int side(const char *node, struct fvt_lib *lib, struct fvt_ep *ep, int out, int in,
		struct fvt_addr *peer)
{
	struct fvt_opts o = fvt_defaults();
	struct fvt_addr me;

	setenv("FABRICLAB_FABRIC_NODE", node, 1);
	if (fvt_load(lib) || fvt_ep_init(lib, ep, &o, BUF))
		return 1;
	me = fvt_addr_of(lib, ep);
	if (fvt_put(out, &me, sizeof(me)) || fvt_get(in, peer, sizeof(*peer)) ||
	    fvt_connect(lib, ep, &o, peer))
		return 2;
	return 0;
}

/* The receiving node: its NIC takes the write, then it waits for the sender to be done. */
static int receiver(const struct pair *p, struct chan *c)
{
	struct fvt_lib lib;
	struct fvt_ep ep;
	struct fvt_addr peer;
	char b = 1;

	if (side(p->dst, &lib, &ep, c->addr_to_src[1], c->addr_to_dst[0], &peer) ||
	    fvt_put(c->ready[1], &b, 1) || fvt_get(c->done[0], &b, 1))
		return 1;
	fvt_ep_fini(&lib, &ep);
	return 0;
}

/* The sending node: once told to go, writes BUF and says how long it took, in ms. */
static int sender(const struct pair *p, struct chan *c)
{
	struct fvt_lib lib;
	struct fvt_ep ep;
	struct fvt_addr peer;
	struct ibv_wc wc;
	uint64_t t0;
	double ms;
	char b = 1;

	if (side(p->src, &lib, &ep, c->addr_to_dst[1], c->addr_to_src[0], &peer))
		return 1;
	if (fvt_put(c->ready[1], &b, 1) || fvt_get(c->go[0], &b, 1))
		return 2;
	t0 = fvt_ms();
	/* in NCCL's 512 KiB steps, all in flight: hops through one element take turns */
	for (uint32_t off = 0; off < BUF; off += STEP)
		if (fvt_post_rdma(&ep, IBV_WR_RDMA_WRITE, off, (char *)ep.buf + off, STEP,
				  ep.mr->lkey, peer.addr + off, peer.rkey, IBV_SEND_SIGNALED, 0))
			return 3;
	for (uint32_t off = 0; off < BUF; off += STEP)
		if (fvt_poll(ep.cq, &wc, 1, 20000) != 1 || wc.status != IBV_WC_SUCCESS)
			return 3;
	ms = (double)(fvt_ms() - t0);
	if (fvt_put(c->ready[1], &ms, sizeof(ms)) || fvt_put(c->done[1], &b, 1))
		return 4;
	fvt_ep_fini(&lib, &ep);
	return 0;
}

static pid_t spawn(int (*fn)(const struct pair *, struct chan *), const struct pair *p,
		   struct chan *c)
{
	pid_t pid = fork();

	if (pid == 0)
		exit(fn(p, c)); /* exit, not _exit: the fabric writes its counters at exit */
	return pid;
}

/* The pairs' writes at once on the fabric with these faults; each one's time in ms[]. */
static void run(const char *faults, const struct pair *pairs, int n, double *ms)
{
	char members[4096];
	struct chan c[MAX_PAIRS];
	pid_t pid[2 * MAX_PAIRS];
	char b = 1;
	int st;

	snprintf(members, sizeof(members), "%s, \"faults\": [%s]", FABRIC, faults);
	assert_int_equal(fvt_describe(fabric_dir, sizeof(fabric_dir), NULL, members), 0);
	for (int i = 0; i < n; i++) {
		int *fds = (int *)&c[i];

		for (size_t k = 0; k < sizeof(c[i]) / sizeof(int); k += 2)
			assert_int_equal(pipe(fds + k), 0);
		pid[2 * i] = spawn(receiver, &pairs[i], &c[i]);
		pid[2 * i + 1] = spawn(sender, &pairs[i], &c[i]);
	}
	for (int i = 0; i < n; i++) { /* both ends connected */
		assert_int_equal(fvt_get(c[i].ready[0], &b, 1), 0);
		assert_int_equal(fvt_get(c[i].ready[0], &b, 1), 0);
	}
	for (int i = 0; i < n; i++)
		assert_int_equal(fvt_put(c[i].go[1], &b, 1), 0);
	for (int i = 0; i < n; i++)
		assert_int_equal(fvt_get(c[i].ready[0], &ms[i], sizeof(ms[i])), 0);
	for (int i = 0; i < 2 * n; i++) {
		assert_int_equal(waitpid(pid[i], &st, 0), pid[i]);
		assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	}
	for (int i = 0; i < n; i++)
		for (size_t k = 0; k < sizeof(c[i]) / sizeof(int); k++)
			close(((int *)&c[i])[k]);
}

/* Bytes the element named carried, from the fabric's counters.json; -1 when not there. */
static double counted_bytes(const char *element)
{
	char path[256];
	json_t *root, *el;
	size_t i;
	double bytes = -1;

	snprintf(path, sizeof(path), "%s/counters.json", fabric_dir);
	root = json_load_file(path, 0, NULL);
	json_array_foreach(json_object_get(root, "elements"), i, el)
		if (!strcmp(json_string_value(json_object_get(el, "element")) ?: "", element))
			bytes = (double)json_integer_value(json_object_get(el, "bytes"));
	json_decref(root);
	return bytes;
}

static void test_hops_through_one_cable_share_it(void **state)
{
	static const struct pair across[] = { { "node0", "node2" }, { "node1", "node3" } };
	static const struct pair within[] = { { "node0", "node1" }, { "node2", "node3" } };
	double a[2], w[2], wire = wire_ms(BUF);

	(void)state;
	run("", across, 2, a);
	assert_true(counted_bytes("leaf0 -> spine0 #0") >= 2.0 * BUF);
	fvt_remove_fabric(fabric_dir);
	run("", within, 2, w);
	fvt_remove_fabric(fabric_dir);
	print_message("4 MiB each, at once: across the spine %.0f and %.0f ms, within the leaves "
		      "%.0f and %.0f ms (one write alone on the wire: %.0f ms)\n", a[0], a[1], w[0],
		      w[1], wire);
	/* the cable takes turns by message: one write ends a 512 KiB step before the other */
	assert_true(a[0] >= (2 - 1.0 / 8) * 0.95 * wire && a[1] >= (2 - 1.0 / 8) * 0.95 * wire);
	assert_true(a[0] >= 1.9 * wire || a[1] >= 1.9 * wire);
	assert_true(w[0] < 1.5 * wire && w[1] < 1.5 * wire);
}

static void test_a_slow_spine_or_leaf_port_slows_the_hops_through_it(void **state)
{
	static const struct pair across[] = { { "node0", "node2" } };
	static const struct pair into3[] = { { "node0", "node3" } };
	double s, p, wire = wire_ms(BUF);

	(void)state;
	run("{\"element\": \"spine0\", \"rate_pct\": 50}", across, 1, &s);
	fvt_remove_fabric(fabric_dir);
	run("{\"element\": \"leaf1:2\", \"rate_pct\": 50}", into3, 1, &p);
	fvt_remove_fabric(fabric_dir);
	print_message("4 MiB across a spine at 50%%: %.0f ms; into a leaf port at 50%%: %.0f ms "
		      "(on the wire at full rate: %.0f ms)\n", s, p, wire);
	assert_true(s >= 1.9 * wire);
	assert_true(p >= 1.9 * wire);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hops_through_one_cable_share_it),
		cmocka_unit_test(test_a_slow_spine_or_leaf_port_slows_the_hops_through_it),
	};

	unsetenv("FABRICLAB_FAKEVERBS_DEVICES");
	unsetenv("FABRICLAB_FAKEVERBS_PHYSICS");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
