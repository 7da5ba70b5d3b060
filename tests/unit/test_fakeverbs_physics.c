/*
 * The emulated NIC's physics (fabric/nic/fv_physics.c) as the fabric's description gives it,
 * between a parent (node0) and a forked child (node1), ports 1x SDR moving bytes 10 times
 * slower (rate_div 10: 31.25 MB/s), 2 ms one way, 0.5 ms per message:
 *  - a write completes after its bytes' time on the wire and a round trip, not at once;
 *  - a one-MTU message posted behind a large one on another QP is interleaved with it, as a
 *    NIC arbitrates its QPs packet by packet: it completes long before the large one.
 * Bounds are lower bounds with the physics' own arithmetic; upper ones only catch a stuck NIC.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include <sys/wait.h>

#include <cmocka.h>

#include "fabric/nic/fv_test.h"

#define NEPS 2
#define BUF (4u << 20)
#define RATE_MB_S 31.25 /* 2.5 Gbit/s / 10 */
#define ONE_WAY_MS 2.0
#define COST_MS 0.5
/* The description: two nodes, one port each, the physics above (no switches) */
#define NODES "\"nodes\": [{\"name\": \"node0\", \"nics\": [{\"name\": \"mlx5_0\", " \
	"\"port\": \"ib:1x:sdr\"}]}, {\"name\": \"node1\", \"nics\": [{\"name\": \"mlx5_0\", " \
	"\"port\": \"ib:1x:sdr\"}]}]"
#define PHYSICS "\"physics\": {\"on\": true, \"rate_div\": 10, \"latency_ns\": 2000000, " \
	"\"msg_cost_ns\": 500000}"

static struct fvt_lib lib;
static char fabric_dir[128];
static struct fvt_ep eps[NEPS];
static struct fvt_addr peers[NEPS];
static int to_child[2], to_parent[2];
static pid_t child;

/* Both sides: NEPS endpoints, their addresses sent on out, the peer's read from in, connected. */
static int endpoints(int out, int in)
{
	struct fvt_opts o = fvt_defaults();
	struct fvt_addr me;

	for (int i = 0; i < NEPS; i++) {
		if (fvt_ep_init(&lib, &eps[i], &o, BUF))
			return 1;
		me = fvt_addr_of(&lib, &eps[i]);
		if (fvt_put(out, &me, sizeof(me)))
			return 2;
	}
	for (int i = 0; i < NEPS; i++)
		if (fvt_get(in, &peers[i], sizeof(peers[i])) || fvt_connect(&lib, &eps[i], &o, &peers[i]))
			return 3;
	return 0;
}

/* The child: its NIC takes the parent's writes until the parent closes the pipe. */
static int child_main(void)
{
	char ok = 1;

	if (endpoints(to_parent[1], to_child[0]) || fvt_put(to_parent[1], &ok, 1))
		return 1;
	fvt_get(to_child[0], &ok, 1); /* EOF: the parent is done */
	for (int i = 0; i < NEPS; i++)
		fvt_ep_fini(&lib, &eps[i]);
	return 0;
}

static double wire_ms(size_t bytes)
{
	return (double)bytes / (RATE_MB_S * 1e3);
}

static uint64_t write_to_peer(int i, size_t len, uint64_t wr_id)
{
	assert_int_equal(fvt_post_rdma(&eps[i], IBV_WR_RDMA_WRITE, wr_id, eps[i].buf, (uint32_t)len,
				       eps[i].mr->lkey, peers[i].addr, peers[i].rkey,
				       IBV_SEND_SIGNALED, 0), 0);
	return fvt_ms();
}

static uint64_t completed_after(int i, uint64_t wr_id, uint64_t t0)
{
	struct ibv_wc wc;

	assert_int_equal(fvt_poll(eps[i].cq, &wc, 1, 10000), 1);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(wc.wr_id, wr_id);
	return fvt_ms() - t0;
}

static void test_write_takes_its_wire_time_and_a_round_trip(void **state)
{
	/* on the port (bytes + cost), one way, the acknowledgement back, the cost again */
	double least = wire_ms(1u << 20) + 2 * ONE_WAY_MS + 2 * COST_MS;
	uint64_t ms;

	(void)state;
	ms = completed_after(0, 1, write_to_peer(0, 1u << 20, 1));
	print_message("1 MiB: %llu ms (physics: %.1f ms)\n", (unsigned long long)ms, least);
	assert_true((double)ms >= least - 1.0);
	assert_true(ms < 2000);
}

static void test_one_mtu_is_interleaved_with_a_large_message(void **state)
{
	double large = wire_ms(BUF);
	uint64_t t0, small_ms, large_ms;

	(void)state;
	t0 = write_to_peer(0, BUF, 2);
	write_to_peer(1, 64, 3);
	small_ms = completed_after(1, 3, t0);
	large_ms = completed_after(0, 2, t0);
	print_message("4 MiB: %llu ms, 64 B behind it on another QP: %llu ms (4 MiB on the wire: "
		      "%.0f ms)\n", (unsigned long long)large_ms, (unsigned long long)small_ms,
		      large);
	assert_true((double)large_ms >= large);
	assert_true((double)small_ms < large / 2);
}

static int setup(void **state)
{
	char ok;

	(void)state;
	if (fvt_describe(fabric_dir, sizeof(fabric_dir), NULL, NODES ", " PHYSICS) ||
	    fvt_load(&lib) || pipe(to_child) || pipe(to_parent))
		return -1;
	child = fork();
	if (child == 0) {
		setenv("FABRICLAB_FABRIC_NODE", "node1", 1);
		close(to_child[1]);
		close(to_parent[0]);
		_exit(child_main());
	}
	close(to_child[0]);
	close(to_parent[1]);
	return child < 0 || endpoints(to_child[1], to_parent[0]) || fvt_get(to_parent[0], &ok, 1);
}

static int teardown(void **state)
{
	int st = 0;

	(void)state;
	close(to_child[1]);
	waitpid(child, &st, 0);
	for (int i = 0; i < NEPS; i++)
		fvt_ep_fini(&lib, &eps[i]);
	fvt_remove_fabric(fabric_dir);
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_write_takes_its_wire_time_and_a_round_trip),
		cmocka_unit_test(test_one_mtu_is_interleaved_with_a_large_message),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
