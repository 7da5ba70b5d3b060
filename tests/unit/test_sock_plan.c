/* How messages are cut over data streams: the split, the rotor, and both ends agreeing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "plugin/base/fl_types.h"
#include "plugin/transport/socket/sock_handle.h"
#include "plugin/transport/socket/sock_plan.h"

static void test_header_roundtrip(void **state)
{
	struct sock_msg_header in = { (1ULL << 40) + 3, -5, 0xfffffffe }, out;
	uint8_t buf[SOCK_MSG_HEADER_SIZE];

	(void)state;
	sock_msg_encode(&in, buf);
	sock_msg_decode(buf, &out);
	assert_true(out.size == in.size);
	assert_int_equal(out.tag, -5);
	assert_int_equal(out.seq, 0xfffffffe);
}

static void test_inline_cases(void **state)
{
	struct sock_rules rules = { 4, 16384, 65536 };
	struct sock_split s;
	unsigned rotor = 1;

	(void)state;
	sock_plan(&rules, 0, &rotor, &s);
	assert_int_equal(s.n, 0);
	sock_plan(&rules, 16384, &rotor, &s);
	assert_int_equal(s.n, 0);
	assert_int_equal(rotor, 1); /* inline messages leave the rotor alone */
	rules.nstreams = 0;          /* no data streams: everything inline */
	sock_plan(&rules, 1 << 30, &rotor, &s);
	assert_int_equal(s.n, 0);
}

static void test_piece_counts(void **state)
{
	struct sock_rules rules = { 4, 16384, 65536 };
	struct sock_split s;
	unsigned rotor = 0;

	(void)state;
	sock_plan(&rules, 16385, &rotor, &s);
	assert_int_equal(s.n, 1); /* below one min chunk: one piece */
	assert_int_equal(s.first, 0);
	assert_int_equal(rotor, 1);
	sock_plan(&rules, 2 * 65536, &rotor, &s);
	assert_int_equal(s.n, 2);
	assert_int_equal(s.first, 1);
	assert_int_equal(s.chunk, 65536);
	assert_int_equal(rotor, 3);
	sock_plan(&rules, 64 << 20, &rotor, &s);
	assert_int_equal(s.n, 4); /* capped at K */
	assert_int_equal(s.chunk, 16 << 20);
	assert_int_equal(s.first, 3);
	assert_int_equal(rotor, 3);
	assert_int_equal(sock_piece_stream(&s, 0, 4), 3);
	assert_int_equal(sock_piece_stream(&s, 1, 4), 0);
	assert_int_equal(sock_piece_stream(&s, 3, 4), 2);
}

/* Every plan covers the message exactly once, with non-empty pieces within the rules. */
static void check_split(const struct sock_rules *rules, size_t size)
{
	unsigned rotor = (unsigned)(size % (rules->nstreams ? rules->nstreams : 1));
	unsigned before = rotor;
	size_t covered = 0, max_pieces;
	struct sock_split s;

	sock_plan(rules, size, &rotor, &s);
	if (size <= rules->inline_max) {
		assert_int_equal(s.n, 0);
		return;
	}
	max_pieces = (size + rules->min_chunk - 1) / rules->min_chunk;
	assert_true(s.n >= 1 && s.n <= rules->nstreams && s.n <= max_pieces);
	assert_int_equal(s.chunk % SOCK_PIECE_ALIGN, 0);
	for (unsigned i = 0; i < s.n; i++) {
		size_t len = sock_piece_len(&s, size, i);

		assert_true(len > 0);
		assert_true(sock_piece_offset(&s, i) == covered);
		covered += len;
	}
	assert_true(covered == size);
	assert_int_equal(rotor, (before + s.n) % rules->nstreams);
}

static void test_split_properties(void **state)
{
	static const struct sock_rules rules[] = {
		{ 1, 0, 4096 }, { 2, 16384, 65536 }, { 3, 128, 4096 }, { 16, 0, 4096 },
		{ 16, 1 << 20, 1 << 20 }, { 7, 1000, 12288 },
	};

	(void)state;
	srand(7);
	for (size_t r = 0; r < sizeof(rules) / sizeof(rules[0]); r++) {
		for (size_t size = 0; size < 70000; size += 997)
			check_split(&rules[r], size);
		for (int i = 0; i < 2000; i++)
			check_split(&rules[r], (size_t)rand() * 37 % (300u << 20));
		check_split(&rules[r], (size_t)1 << 33);
	}
}

/*
 * The receiver learns the sender's rules from its hello and plans the same
 * sizes in the same order with its own rotor: both must name the same stream,
 * offset and length for every piece.
 */
static void test_both_ends_agree(void **state)
{
	struct sock_rules sender = { 5, 8192, 16384 }, receiver;
	struct sock_hello hello = { .kind = SOCK_STREAM_CONTROL, .nstreams = 5, .nonce = 9,
				    .inline_max = 8192, .min_chunk = 16384 };
	uint8_t wire[SOCK_HELLO_SIZE];
	unsigned srotor = 0, rrotor = 0, used[5] = { 0 };

	(void)state;
	sock_hello_encode(&hello, wire);
	assert_int_equal(sock_hello_decode(wire, 9, &hello), 0);
	receiver = (struct sock_rules){ hello.nstreams, hello.inline_max, hello.min_chunk };
	srand(99);
	for (int m = 0; m < 5000; m++) {
		size_t size = (size_t)(rand() % 4 ? rand() % 100000 : rand() % (8 << 20));
		struct sock_split a, b;

		sock_plan(&sender, size, &srotor, &a);
		sock_plan(&receiver, size, &rrotor, &b);
		assert_int_equal(a.n, b.n);
		for (unsigned i = 0; i < a.n; i++) {
			unsigned stream = sock_piece_stream(&a, i, 5);

			assert_int_equal(stream, sock_piece_stream(&b, i, 5));
			assert_true(sock_piece_offset(&a, i) == sock_piece_offset(&b, i));
			assert_true(sock_piece_len(&a, size, i) == sock_piece_len(&b, size, i));
			used[stream]++;
		}
		assert_int_equal(srotor, rrotor);
	}
	/* the rotor spreads single-piece messages over every stream */
	for (int i = 0; i < 5; i++)
		assert_true(used[i] > 500);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_header_roundtrip),
		cmocka_unit_test(test_inline_cases),
		cmocka_unit_test(test_piece_counts),
		cmocka_unit_test(test_split_properties),
		cmocka_unit_test(test_both_ends_agree),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
