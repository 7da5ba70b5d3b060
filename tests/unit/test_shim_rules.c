/*
 * The shim's model of NCCL's proxy (shim/nccl_rules.c), rule by rule, with the values NCCL's
 * sources give (tag v2.30.7-1 unless said; each rule's comment cites its lines), release by
 * release where they differ.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "plugin/base/fl_types.h"
#include "shim/ll_lines.h"
#include "shim/nccl_rules.h"

#define KiB 1024u
#define MiB (1024u * 1024u)

static const char *const vars[] = { "FABRICLAB_SHIM_NCCL", "FABRICLAB_SHIM_PROTO",
				     "NCCL_P2P_NET_CHUNKSIZE", "NCCL_CHUNK_SIZE",
				     "NCCL_NET_OPTIONAL_RECV_COMPLETION", "NCCL_NET_FORCE_FLUSH",
				     "FABRICLAB_SHIM_REG_PASSES" };

static void rules_with(struct shim_rules *r, const char *release, size_t step)
{
	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		unsetenv(vars[i]);
	if (release)
		setenv("FABRICLAB_SHIM_NCCL", release, 1);
	assert_int_equal(shim_rules_read(r, step), FL_OK);
}

static void test_release(void **state)
{
	const char *bad[] = { "2.22", "2.31", "3.30", "2.30.", "2.30x", "2.30.7.1", "230", "" };
	struct shim_rules r;
	char name[16];

	(void)state;
	rules_with(&r, NULL, 512 * KiB);
	assert_string_equal(shim_rules_release_name(&r, name, sizeof(name)), "2.30.7");
	assert_int_equal(shim_rules_max_net_version(&r), 12);
	rules_with(&r, "2.28.9", 512 * KiB);
	assert_string_equal(shim_rules_release_name(&r, name, sizeof(name)), "2.28.9");
	assert_int_equal(shim_rules_max_net_version(&r), 11);
	rules_with(&r, "2.26", 512 * KiB);
	assert_int_equal(shim_rules_max_net_version(&r), 10);
	rules_with(&r, "2.24", 512 * KiB);
	assert_int_equal(shim_rules_max_net_version(&r), 9);
	rules_with(&r, "2.23.4", 512 * KiB);
	assert_int_equal(shim_rules_max_net_version(&r), 8);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		setenv("FABRICLAB_SHIM_NCCL", bad[i], 1);
		assert_int_equal(shim_rules_read(&r, 512 * KiB) == FL_OK, bad[i][0] == '\0');
	}
	unsetenv("FABRICLAB_SHIM_NCCL");
}

/* Simple: 1 MiB slices of 2 steps, chunks of 4 steps; LL 32 KiB of payload in a 64 KiB step;
 * LL128 562.5 KiB in 600 KiB. Receives post the whole slot. */
static void test_coll_shapes(void **state)
{
	struct shim_coll_shape s;
	struct shim_rules r;

	(void)state;
	rules_with(&r, NULL, 512 * KiB);
	shim_rules_coll(&r, SHIM_PROTO_SIMPLE, &s);
	assert_int_equal(s.slice_steps, 2);
	assert_int_equal(s.slices_per_chunk, 2);
	assert_int_equal(s.chunk, 2 * MiB);
	assert_int_equal(s.recv_bytes, 1 * MiB);
	shim_rules_coll(&r, SHIM_PROTO_LL, &s);
	assert_int_equal(s.slice_steps, 1);
	assert_int_equal(s.chunk, 32 * KiB);
	assert_int_equal(s.recv_bytes, 64 * KiB);
	shim_rules_coll(&r, SHIM_PROTO_LL128, &s);
	assert_int_equal(s.chunk, 576000);
	assert_int_equal(s.recv_bytes, 614400);
	/* the step is NCCL_BUFFSIZE / 8: 4 KiB steps slice 8 KiB */
	rules_with(&r, NULL, 4 * KiB);
	shim_rules_coll(&r, SHIM_PROTO_SIMPLE, &s);
	assert_int_equal(s.recv_bytes, 8 * KiB);
	assert_int_equal(s.chunk, 16 * KiB);
	unsetenv("FABRICLAB_SHIM_NCCL");
	assert_int_not_equal(shim_rules_read(&r, 64), FL_OK); /* a chunk below one grain */
}

static void test_simple_slices(void **state)
{
	struct shim_coll_shape s;
	struct shim_rules r;

	(void)state;
	rules_with(&r, NULL, 512 * KiB);
	shim_rules_coll(&r, SHIM_PROTO_SIMPLE, &s);
	/* a full chunk: two 1 MiB slices */
	assert_int_equal(shim_rules_simple_slice(&s, 2 * MiB / 4, 4), 1 * MiB / 4);
	/* a short one: half, in 16-element steps, never under a 32nd of a slice */
	assert_int_equal(shim_rules_simple_slice(&s, 83336, 4), 41680);
	assert_int_equal(shim_rules_simple_slice(&s, 1000, 4), 8192);
	assert_int_equal(shim_rules_simple_slice(&s, 0, 4), 8192);
}

/* Loops of n chunks, the last one shared in 16-byte multiples; the ring's chunk per step. */
static void test_ring(void **state)
{
	(void)state;
	assert_int_equal(shim_rules_loop_chunk(16 * MiB, 4, 524288, 4), 524288);
	assert_int_equal(shim_rules_loop_chunk(250001, 3, 524288, 4), 83336);
	assert_int_equal(shim_rules_loop_chunk(2, 4, 524288, 4), 4);
	/* rank 1 of 4: sends chunks 0, 3, 2, 1, 0, 3; receives 3, 2, 1, 0, 3, 2 */
	for (int s = 0; s < 6; s++) {
		assert_int_equal(shim_rules_ring_chunk(1, 4, s, 0), (4 + 0 - s % 4) % 4);
		assert_int_equal(shim_rules_ring_chunk(1, 4, s, 1), (4 + 3 - s % 4) % 4);
	}
	assert_false(shim_rules_subs_share_comm(1));
	assert_true(shim_rules_subs_share_comm(8));
}

static void test_wire_and_depth(void **state)
{
	(void)state;
	assert_int_equal(shim_rules_wire_bytes(SHIM_PROTO_SIMPLE, 1000), 1000);
	assert_int_equal(shim_rules_wire_bytes(SHIM_PROTO_LL, 1000), 2000);
	assert_int_equal(shim_rules_wire_bytes(SHIM_PROTO_LL, 1001), 2016);
	assert_int_equal(shim_rules_wire_bytes(SHIM_PROTO_LL, 0), 0);
	assert_int_equal(shim_rules_wire_bytes(SHIM_PROTO_LL128, 1920), 2048);
	assert_int_equal(shim_rules_wire_bytes(SHIM_PROTO_LL128, 1921), 4096);
	/* min(NCCL_STEPS, 16 / nsubs) steps, in transfers of slice_steps */
	assert_int_equal(shim_rules_depth(1, 2), 4);
	assert_int_equal(shim_rules_depth(1, 1), 8);
	assert_int_equal(shim_rules_depth(2, 1), 8);
	assert_int_equal(shim_rules_depth(3, 1), 5);
	assert_int_equal(shim_rules_depth(4, 1), 4);
	assert_int_equal(shim_rules_depth(8, 1), 2);
}

static void test_p2p(void **state)
{
	struct shim_p2p_shape s;
	struct shim_rules r;

	(void)state;
	rules_with(&r, NULL, 512 * KiB);
	shim_rules_p2p(&r, 1000, &s); /* under a step: a quarter */
	assert_int_equal(s.chunk, 32 * KiB);
	assert_int_equal(s.nsteps, 1);
	assert_int_equal(s.recv_bytes, 128 * KiB);
	shim_rules_p2p(&r, 1 * MiB - 1, &s); /* under 8 steps: half */
	assert_int_equal(s.chunk, 64 * KiB);
	assert_int_equal(s.nsteps, 16);
	shim_rules_p2p(&r, 1 * MiB, &s);
	assert_int_equal(s.chunk, 128 * KiB);
	shim_rules_p2p(&r, 16 * MiB, &s);
	assert_int_equal(s.chunk, 128 * KiB);
	assert_int_equal(s.nsteps, 128);
	shim_rules_p2p(&r, 0, &s); /* an empty op is one step of 0 bytes */
	assert_int_equal(s.nsteps, 1);
	setenv("NCCL_CHUNK_SIZE", "100000", 1); /* kept to 4 significant bits: 98304 */
	assert_int_equal(shim_rules_read(&r, 512 * KiB), FL_OK);
	shim_rules_p2p(&r, 16 * MiB, &s);
	assert_int_equal(s.chunk, 98304);
	/* 2.28 posts the slot clamped to the op's nbytes, min(bytes, chunk) */
	rules_with(&r, "2.28", 512 * KiB);
	shim_rules_p2p(&r, 1000, &s);
	assert_int_equal(s.recv_bytes, 1000);
	shim_rules_p2p(&r, 16 * MiB, &s);
	assert_int_equal(s.recv_bytes, 128 * KiB);
	/* the chunk never exceeds Simple's step */
	rules_with(&r, NULL, 4 * KiB);
	shim_rules_p2p(&r, 16 * MiB, &s);
	assert_int_equal(s.chunk, 4 * KiB);
	assert_int_equal(s.recv_bytes, 4 * KiB);
	unsetenv("NCCL_CHUNK_SIZE");
}

static void test_hint(void **state)
{
	struct shim_rules r;

	(void)state;
	rules_with(&r, NULL, 512 * KiB);
	assert_true(shim_rules_recv_hint(&r, SHIM_PROTO_LL, 1));
	assert_true(shim_rules_recv_hint(&r, SHIM_PROTO_LL128, 1));
	assert_false(shim_rules_recv_hint(&r, SHIM_PROTO_SIMPLE, 1));
	assert_false(shim_rules_recv_hint(&r, SHIM_PROTO_LL, 2)); /* grouped */
	rules_with(&r, "2.23", 512 * KiB);
	assert_false(shim_rules_recv_hint(&r, SHIM_PROTO_LL, 1));
	rules_with(&r, "2.24", 512 * KiB);
	assert_true(shim_rules_recv_hint(&r, SHIM_PROTO_LL, 1));
	setenv("NCCL_NET_OPTIONAL_RECV_COMPLETION", "0", 1);
	assert_int_equal(shim_rules_read(&r, 512 * KiB), FL_OK);
	assert_false(shim_rules_recv_hint(&r, SHIM_PROTO_LL, 1));
	unsetenv("NCCL_NET_OPTIONAL_RECV_COMPLETION");
}

static void test_flush(void **state)
{
	struct shim_rules r;

	(void)state;
	rules_with(&r, NULL, 512 * KiB);
	assert_true(shim_rules_need_flush(&r, 80, 0));
	assert_true(shim_rules_need_flush(&r, 0, 0)); /* unknown: as below 9.0 */
	assert_false(shim_rules_need_flush(&r, 90, 0));
	assert_false(shim_rules_need_flush(&r, 100, 0));
	assert_true(shim_rules_need_flush(&r, 90, 1));
	rules_with(&r, "2.23", 512 * KiB); /* 2.23 reads no forceFlush */
	assert_false(shim_rules_need_flush(&r, 90, 1));
	setenv("NCCL_NET_FORCE_FLUSH", "1", 1);
	assert_int_equal(shim_rules_read(&r, 512 * KiB), FL_OK);
	assert_true(shim_rules_need_flush(&r, 90, 0));
	unsetenv("NCCL_NET_FORCE_FLUSH");
	assert_true(shim_rules_flush_step(SHIM_PROTO_SIMPLE, 1, 4096));
	assert_false(shim_rules_flush_step(SHIM_PROTO_SIMPLE, 1, 0)); /* nothing reported */
	assert_false(shim_rules_flush_step(SHIM_PROTO_LL128, 1, 4096));
	assert_false(shim_rules_flush_step(SHIM_PROTO_SIMPLE, 0, 4096));
}

/*
 * Registered user buffers (FABRICLAB_SHIM_REG_PASSES): only over GPUDirect and with bytes
 * (2.30.7 enqueue.cc:953-971), in NCCL_MAX_NET_SIZE steps posting just the op
 * (enqueue.cc:1080-1085, net.cc:1543-1545), the kernel waited for that many passes.
 */
static void test_registered(void **state)
{
	struct shim_rules r;
	struct shim_p2p_shape s;

	(void)state;
	rules_with(&r, NULL, 512 * KiB);
	assert_false(shim_rules_p2p_registered(&r, 1, 1000)); /* unset: nothing registered */
	assert_int_equal(shim_rules_reg_wait(&r), 0);
	setenv("FABRICLAB_SHIM_REG_PASSES", "3", 1);
	assert_int_equal(shim_rules_read(&r, 512 * KiB), FL_OK);
	assert_true(shim_rules_p2p_registered(&r, 1, 1000));
	assert_false(shim_rules_p2p_registered(&r, 0, 1000)); /* no direct NIC */
	assert_false(shim_rules_p2p_registered(&r, 1, 0));
	assert_int_equal(shim_rules_reg_wait(&r), 3);
	shim_rules_p2p_reg(&r, 1000, &s);
	assert_int_equal(s.nsteps, 1);
	assert_int_equal(s.recv_bytes, 1000);
	shim_rules_p2p_reg(&r, (3UL << 30) + 5, &s);
	assert_int_equal(s.nsteps, 4);
	assert_int_equal(s.chunk, 1UL << 30);
	assert_int_equal(s.recv_bytes, 1UL << 30);
	setenv("FABRICLAB_SHIM_REG_PASSES", "-2", 1);
	assert_int_not_equal(shim_rules_read(&r, 512 * KiB), FL_OK);
	unsetenv("FABRICLAB_SHIM_REG_PASSES");
}

/* LL and LL128 lines: packed, not ready under another step's flag, read back whole. */
static void test_lines(void **state)
{
	static uint64_t wire[8192 / 8];
	float in[600], out[600];
	int protos[] = { SHIM_PROTO_LL, SHIM_PROTO_LL128 };

	(void)state;
	for (int i = 0; i < 600; i++)
		in[i] = (float)i * 0.5f;
	for (size_t p = 0; p < 2; p++) {
		size_t bytes = sizeof(in) - 4, wire_bytes;

		wire_bytes = shim_lines_pack(protos[p], wire, in, bytes, 7);
		assert_int_equal(wire_bytes, shim_rules_wire_bytes(protos[p], bytes));
		assert_true(shim_lines_ready(protos[p], wire, bytes, 7));
		assert_false(shim_lines_ready(protos[p], wire, bytes, 8));
		shim_lines_unpack(protos[p], out, wire, bytes);
		assert_memory_equal(out, in, bytes);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_release),     cmocka_unit_test(test_coll_shapes),
		cmocka_unit_test(test_simple_slices), cmocka_unit_test(test_wire_and_depth),
		cmocka_unit_test(test_p2p),         cmocka_unit_test(test_hint),
		cmocka_unit_test(test_flush),       cmocka_unit_test(test_lines),
		cmocka_unit_test(test_ring),        cmocka_unit_test(test_registered),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
