/* The listen handle and the stream hello: round trips, and every malformed form rejected. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "plugin/base/error.h"
#include "plugin/base/fl_types.h"
#include "plugin/transport/socket/sock_config.h"
#include "plugin/transport/socket/sock_handle.h"

static const struct fl_endpoint ep = { "node-a.example", "eth3", 2, 17, 0x1122334455667788ULL };

static void v4_handle(struct sock_handle *h)
{
	struct sockaddr_in *in = (struct sockaddr_in *)&h->addr;

	memset(h, 0, sizeof(*h));
	in->sin_family = AF_INET;
	in->sin_port = htons(40123);
	in->sin_addr.s_addr = htonl(0x0a000102);
	h->addrlen = sizeof(*in);
	h->nonce = 0xdeadbeefcafef00dULL;
	h->listener = ep;
}

static void assert_endpoint_equal(const struct fl_endpoint *a, const struct fl_endpoint *b)
{
	assert_string_equal(a->node, b->node);
	assert_string_equal(a->dev_name, b->dev_name);
	assert_int_equal(a->dev, b->dev);
	assert_int_equal(a->rank, b->rank);
	assert_true(a->comm_hash == b->comm_hash);
}

static void test_handle_v4_roundtrip(void **state)
{
	uint8_t buf[FL_HANDLE_SIZE];
	struct sock_handle in, out;

	(void)state;
	v4_handle(&in);
	sock_handle_encode(&in, buf);
	assert_int_equal(sock_handle_decode(buf, &out), FL_OK);
	assert_int_equal(out.addrlen, sizeof(struct sockaddr_in));
	assert_memory_equal(&out.addr, &in.addr, sizeof(struct sockaddr_in));
	assert_true(out.nonce == in.nonce);
	assert_endpoint_equal(&out.listener, &ep);
}

static void test_handle_v6_roundtrip(void **state)
{
	uint8_t buf[FL_HANDLE_SIZE];
	struct sock_handle in, out;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&in.addr;

	(void)state;
	memset(&in, 0, sizeof(in));
	in6->sin6_family = AF_INET6;
	in6->sin6_port = htons(5);
	assert_int_equal(inet_pton(AF_INET6, "fd00::1:2", &in6->sin6_addr), 1);
	in6->sin6_scope_id = 7;
	in.addrlen = sizeof(*in6);
	in.nonce = 1;
	in.listener = ep;
	in.listener.rank = -1;
	sock_handle_encode(&in, buf);
	assert_int_equal(sock_handle_decode(buf, &out), FL_OK);
	assert_int_equal(out.addrlen, sizeof(struct sockaddr_in6));
	assert_memory_equal(&out.addr, &in.addr, sizeof(struct sockaddr_in6));
	assert_int_equal(out.listener.rank, -1);
}

static void test_handle_long_names_truncated(void **state)
{
	uint8_t buf[FL_HANDLE_SIZE];
	struct sock_handle in, out;

	(void)state;
	v4_handle(&in);
	memset(in.listener.node, 'n', sizeof(in.listener.node) - 1);
	in.listener.node[sizeof(in.listener.node) - 1] = '\0';
	memset(in.listener.dev_name, 'd', sizeof(in.listener.dev_name) - 1);
	in.listener.dev_name[sizeof(in.listener.dev_name) - 1] = '\0';
	sock_handle_encode(&in, buf);
	assert_int_equal(sock_handle_decode(buf, &out), FL_OK);
	assert_true(strlen(out.listener.node) > 0);
	assert_memory_equal(out.listener.node, in.listener.node, strlen(out.listener.node));
	assert_string_equal(out.listener.dev_name, in.listener.dev_name);
}

/* Encodes a good handle, lets `spoil` break it, expects FL_ERR_ARGUMENT naming `why`. */
static void expect_rejected(void (*spoil)(uint8_t *), const char *why)
{
	uint8_t buf[FL_HANDLE_SIZE];
	struct sock_handle h;

	v4_handle(&h);
	sock_handle_encode(&h, buf);
	spoil(buf);
	fl_error_clear();
	assert_int_equal(sock_handle_decode(buf, &h), FL_ERR_ARGUMENT);
	assert_non_null(strstr(fl_error_text(), why));
}

static void bad_magic(uint8_t *b) { b[3] ^= 0x40; }
static void bad_version(uint8_t *b) { b[8] = 9; }
static void bad_family(uint8_t *b) { b[10] = 5; }
static void zero_port(uint8_t *b) { b[12] = 0; b[13] = 0; }
static void unterminated_dev(uint8_t *b) { memset(b + 64, 'x', FL_DEV_NAME_LEN); }
static void unterminated_node(uint8_t *b) { memset(b + 80, 'x', FL_HANDLE_SIZE - 80); }

static void test_handle_malformed(void **state)
{
	(void)state;
	expect_rejected(bad_magic, "magic");
	expect_rejected(bad_version, "version");
	expect_rejected(bad_family, "family");
	expect_rejected(zero_port, "port 0");
	expect_rejected(unterminated_dev, "not terminated");
	expect_rejected(unterminated_node, "not terminated");
}

/* Random damage to a good handle: always a clean verdict, and a valid one round-trips. */
static void test_handle_fuzz(void **state)
{
	uint8_t good[FL_HANDLE_SIZE], buf[FL_HANDLE_SIZE], again[FL_HANDLE_SIZE];
	struct sock_handle h;
	int accepted = 0, rejected = 0;

	(void)state;
	v4_handle(&h);
	sock_handle_encode(&h, good);
	srand(12345);
	for (int i = 0; i < 20000; i++) {
		int rc;

		memcpy(buf, good, sizeof(buf));
		for (int k = 0, n = 1 + rand() % 4; k < n; k++)
			buf[rand() % FL_HANDLE_SIZE] = (uint8_t)rand();
		rc = sock_handle_decode(buf, &h);
		assert_true(rc == FL_OK || rc == FL_ERR_ARGUMENT);
		if (rc) {
			rejected++;
			continue;
		}
		accepted++;
		sock_handle_encode(&h, again);
		assert_int_equal(sock_handle_decode(again, &h), FL_OK);
	}
	assert_true(accepted > 0 && rejected > 0);
	assert_int_equal(sock_handle_decode(NULL, &h), FL_ERR_ARGUMENT);
}

static struct sock_hello control_hello(void)
{
	struct sock_hello h = {
		.kind = SOCK_STREAM_CONTROL,
		.index = 0,
		.nstreams = 4,
		.nonce = 0xabcdef,
		.conn_id = 0x123456789ULL,
		.inline_max = 16384,
		.min_chunk = 65536,
		.endpoint = ep,
	};

	return h;
}

static void test_hello_roundtrip(void **state)
{
	uint8_t buf[SOCK_HELLO_SIZE];
	struct sock_hello in = control_hello(), out;

	(void)state;
	sock_hello_encode(&in, buf);
	assert_int_equal(sock_hello_decode(buf, in.nonce, &out), FL_OK);
	assert_int_equal(out.kind, SOCK_STREAM_CONTROL);
	assert_int_equal(out.nstreams, 4);
	assert_true(out.conn_id == in.conn_id);
	assert_int_equal(out.inline_max, 16384);
	assert_int_equal(out.min_chunk, 65536);
	assert_endpoint_equal(&out.endpoint, &ep);

	in.kind = SOCK_STREAM_DATA;
	in.index = 3;
	sock_hello_encode(&in, buf);
	assert_int_equal(sock_hello_decode(buf, in.nonce, &out), FL_OK);
	assert_int_equal(out.kind, SOCK_STREAM_DATA);
	assert_int_equal(out.index, 3);
	assert_string_equal(out.endpoint.node, ""); /* identity rides on control only */
}

static void expect_hello_rejected(struct sock_hello h, uint64_t nonce, const char *why)
{
	uint8_t buf[SOCK_HELLO_SIZE];
	struct sock_hello out;

	sock_hello_encode(&h, buf);
	fl_error_clear();
	assert_int_equal(sock_hello_decode(buf, nonce, &out), FL_ERR_REMOTE);
	assert_non_null(strstr(fl_error_text(), why));
}

static void test_hello_invalid_fields(void **state)
{
	struct sock_hello h = control_hello();

	(void)state;
	expect_hello_rejected(h, h.nonce + 1, "nonce");
	h.kind = 2;
	expect_hello_rejected(h, h.nonce, "kind");
	h = control_hello();
	h.nstreams = SOCK_MAX_STREAMS + 1;
	expect_hello_rejected(h, h.nonce, "data streams");
	h = control_hello();
	h.index = 1; /* control is always stream 0 */
	expect_hello_rejected(h, h.nonce, "index");
	h.kind = SOCK_STREAM_DATA;
	h.index = 4; /* of 4 data streams: 0..3 */
	expect_hello_rejected(h, h.nonce, "index");
	h = control_hello();
	h.inline_max = SOCK_MAX_INLINE + 1;
	expect_hello_rejected(h, h.nonce, "out of range");
	h = control_hello();
	h.min_chunk = 1;
	expect_hello_rejected(h, h.nonce, "out of range");
}

static void test_hello_garbage(void **state)
{
	uint8_t buf[SOCK_HELLO_SIZE];
	struct sock_hello h = control_hello(), out;

	(void)state;
	memset(buf, 0, sizeof(buf));
	assert_int_equal(sock_hello_decode(buf, 0, &out), FL_ERR_REMOTE);
	assert_non_null(strstr(fl_error_text(), "magic"));
	sock_hello_encode(&h, buf);
	buf[8] = 2; /* version */
	assert_int_equal(sock_hello_decode(buf, h.nonce, &out), FL_ERR_REMOTE);
	assert_non_null(strstr(fl_error_text(), "version"));
	sock_hello_encode(&h, buf);
	memset(buf + 72, 'z', FL_NODE_NAME_LEN); /* node name without NUL */
	assert_int_equal(sock_hello_decode(buf, h.nonce, &out), FL_ERR_REMOTE);
	assert_non_null(strstr(fl_error_text(), "not terminated"));
	/* the same bytes are fine on a data stream, which carries no identity */
	h.kind = SOCK_STREAM_DATA;
	sock_hello_encode(&h, buf);
	memset(buf + 72, 'z', FL_NODE_NAME_LEN);
	assert_int_equal(sock_hello_decode(buf, h.nonce, &out), FL_OK);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_handle_v4_roundtrip),
		cmocka_unit_test(test_handle_v6_roundtrip),
		cmocka_unit_test(test_handle_long_names_truncated),
		cmocka_unit_test(test_handle_malformed),
		cmocka_unit_test(test_handle_fuzz),
		cmocka_unit_test(test_hello_roundtrip),
		cmocka_unit_test(test_hello_invalid_fields),
		cmocka_unit_test(test_hello_garbage),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
