/* The CTS FIFO across many laps, the 128-byte striping over QPs, the setup records. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "plugin/base/fl_types.h"
#include "plugin/transport/ib/ib_fifo.h"
#include "plugin/transport/ib/ib_meta.h"
#include "plugin/transport/ib/ib_stripe.h"

/* The receiver's RDMA write of one slot, done as memcpy of n entries. */
static void write_slot(struct ib_fifo_slot *fifo, const struct ib_fifo_slot *shadow,
		       uint64_t count, int n)
{
	memcpy(&fifo[ib_fifo_index(count)], &shadow[ib_fifo_index(count)],
	       (size_t)n * sizeof(struct ib_cts));
}

static void test_fifo_laps(void **state)
{
	static struct ib_fifo_slot fifo[IB_FIFO_DEPTH], shadow[IB_FIFO_DEPTH];
	uint64_t recv = 0, send = 0;

	(void)state;
	/* 10 laps with a varying number of receives in flight and of buffers each */
	while (send < 10 * IB_FIFO_DEPTH) {
		int burst = (int)(send % IB_FIFO_DEPTH) + 1;

		while (recv < send + (uint64_t)burst && recv - send < IB_FIFO_DEPTH) {
			int n = (int)(recv % FL_MAX_RECVS) + 1;
			struct ib_cts *e = shadow[ib_fifo_index(recv)].e;

			for (int i = 0; i < n; i++)
				ib_cts_fill(&e[i], recv, n, 0x1000 * recv + (uint64_t)i, 64 + i,
					    (uint32_t)recv, i, 0);
			write_slot(fifo, shadow, recv, n);
			recv++;
		}
		/* the next slot the sender wants: all there, matching, never stale */
		int n = ib_fifo_arrived(&fifo[ib_fifo_index(send)], send);

		assert_int_equal(n, (int)(send % FL_MAX_RECVS) + 1);
		for (int i = 0; i < n; i++) {
			const struct ib_cts *e = &fifo[ib_fifo_index(send)].e[i];

			assert_true(e->addr == 0x1000 * send + (uint64_t)i);
			assert_int_equal(e->rkey, (uint32_t)send);
		}
		send++;
		/* a slot not yet rewritten for this lap holds last lap's entries: not ready */
		if (recv == send)
			assert_int_equal(ib_fifo_arrived(&fifo[ib_fifo_index(send)], send), 0);
	}
}

static void test_fifo_partial_and_malformed(void **state)
{
	static struct ib_fifo_slot slot;

	(void)state;
	memset(&slot, 0, sizeof(slot));
	assert_int_equal(ib_fifo_arrived(&slot, 0), 0); /* zeroed memory is never valid */
	for (int i = 0; i < 3; i++)
		ib_cts_fill(&slot.e[i], 41, 3, 0, 1, 1, i, 0);
	assert_int_equal(ib_fifo_arrived(&slot, 41), 3);
	slot.e[2].seq = 41; /* last entry still from the previous receive */
	assert_int_equal(ib_fifo_arrived(&slot, 41), 0);
	slot.e[2].seq = 42;
	slot.e[0].nreqs = FL_MAX_RECVS + 1;
	assert_int_equal(ib_fifo_arrived(&slot, 41), -1);
	slot.e[0].nreqs = 0;
	assert_int_equal(ib_fifo_arrived(&slot, 41), -1);
}

static void check_split(size_t size, int nqps)
{
	struct ib_share sh[IB_MAX_QPS];
	size_t total = 0, first = 0;

	ib_stripe_split(size, nqps, sh);
	for (int i = 0; i < nqps; i++) {
		assert_true(sh[i].off == total); /* contiguous, in order */
		total += sh[i].len;
		if (sh[i].off < size)
			assert_true(sh[i].off % IB_STRIPE_ALIGN == 0); /* starts on a 128-B line */
		if (i + 1 < nqps && sh[i + 1].len)
			assert_true(sh[i].len % IB_STRIPE_ALIGN == 0);
		if (!i)
			first = sh[i].len;
		else
			assert_true(sh[i].len <= first);
	}
	assert_true(total == size);
	/* balanced: no share larger than an equal split rounded up to a line */
	assert_true(first <= (size + (size_t)nqps - 1) / (size_t)nqps + IB_STRIPE_ALIGN);
}

static void test_striping(void **state)
{
	static const size_t sizes[] = { 0, 1, 127, 128, 129, 255, 256, 1000, 4096, 65537,
					(1 << 20) + 3, 64 << 20 };

	(void)state;
	for (int q = 1; q <= IB_MAX_QPS; q++)
		for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
			check_split(sizes[i], q);
	/* small messages stay on one QP: LL128 lines are never split */
	struct ib_share sh[IB_MAX_QPS];

	ib_stripe_split(128, 4, sh);
	assert_true(sh[0].len == 128 && sh[1].len == 0 && sh[3].len == 0);
	ib_stripe_split(1000, 4, sh);
	assert_true(sh[0].len == 256 && sh[3].len == 232);
	assert_int_equal(ib_stripe_pieces(0), 1);
	assert_int_equal(ib_stripe_pieces(IB_PIECE_MAX + 1), 2);
}

static void test_meta_roundtrip(void **state)
{
	struct ib_meta in = { .nqps = 3, .link_layer = IBV_LINK_LAYER_ETHERNET, .port = 1,
			      .mtu = IBV_MTU_4096, .lid = 0, .fifo_addr = 0x7f0012345000ULL,
			      .fifo_rkey = 0xabcdef01 };
	struct ib_meta out;
	uint8_t buf[IB_META_SIZE];

	(void)state;
	for (int i = 0; i < 16; i++)
		in.gid[i] = (uint8_t)(i * 7);
	for (int i = 0; i < 3; i++)
		in.qpn[i] = 0x100 + (uint32_t)i;
	ib_meta_encode(&in, buf);
	assert_int_equal(ib_meta_decode(buf, &out), FL_OK);
	assert_memory_equal(&in, &out, sizeof(in));
	/* strangers and garbage are rejected with a reason */
	buf[10] = 9; /* nqps */
	assert_int_equal(ib_meta_decode(buf, &out), FL_ERR_REMOTE);
	buf[0] ^= 1;
	assert_int_equal(ib_meta_decode(buf, &out), FL_ERR_REMOTE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fifo_laps),
		cmocka_unit_test(test_fifo_partial_and_malformed),
		cmocka_unit_test(test_striping),
		cmocka_unit_test(test_meta_roundtrip),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
