#include "sock_handle.h"

#include <netinet/in.h>
#include <string.h>

#include "base/error.h"
#include "sock_bytes.h"
#include "sock_config.h"

/* Handle layout (offsets in bytes). */
enum {
	H_FAMILY = SOCK_RECORD_HEADER_SIZE,
	H_PORT = 12,
	H_ADDR = 16,
	H_SCOPE = 32,
	H_DEV = 36,
	H_NONCE = 40,
	H_RANK = 48,
	H_HASH = 56,
	H_DEV_NAME = 64,
	H_NODE = 80,
	H_NODE_LEN = FL_HANDLE_SIZE - H_NODE,
};

/* Hello layout. */
enum {
	E_KIND = SOCK_RECORD_HEADER_SIZE,
	E_INDEX = 11,
	E_NSTREAMS = 12,
	E_NONCE = 16,
	E_CONN = 24,
	E_INLINE = 32,
	E_CHUNK = 36,
	E_DEV = 40,
	E_RANK = 44,
	E_HASH = 48,
	E_DEV_NAME = 56,
	E_NODE = 72,
	E_NODE_LEN = FL_NODE_NAME_LEN,
};

_Static_assert(FL_HANDLE_SIZE <= 128, "NCCL gives a listen handle 128 bytes");
_Static_assert(H_NODE_LEN > 0 && H_NODE_LEN <= FL_NODE_NAME_LEN, "handle node field");
_Static_assert(H_DEV_NAME + FL_DEV_NAME_LEN == H_NODE, "handle layout");
_Static_assert(E_DEV_NAME + FL_DEV_NAME_LEN == E_NODE, "hello layout");
_Static_assert(E_NODE + E_NODE_LEN <= SOCK_HELLO_SIZE, "hello fits");

enum { WIRE_INET = 4, WIRE_INET6 = 6 };

/* Copies a C string into a fixed field, truncated, always NUL-terminated. */
static void put_text(uint8_t *field, size_t len, const char *text)
{
	size_t n = strnlen(text, len - 1);

	memset(field, 0, len);
	memcpy(field, text, n);
}

static int get_text(const uint8_t *field, size_t len, char *out, size_t outlen)
{
	size_t n = strnlen((const char *)field, len);

	if (n == len || n >= outlen)
		return -1;
	memcpy(out, field, n);
	out[n] = '\0';
	return 0;
}

/* Where the fields of an fl_endpoint sit in a record. */
struct endpoint_layout {
	int dev, rank, hash, dev_name, node;
	size_t node_len;
};

static const struct endpoint_layout in_handle = { H_DEV, H_RANK, H_HASH, H_DEV_NAME, H_NODE,
						  H_NODE_LEN };
static const struct endpoint_layout in_hello = { E_DEV, E_RANK, E_HASH, E_DEV_NAME, E_NODE,
						 E_NODE_LEN };

static void put_endpoint(uint8_t *b, const struct endpoint_layout *at,
			 const struct fl_endpoint *ep)
{
	sock_put_u32(b + at->dev, (uint32_t)ep->dev);
	sock_put_u32(b + at->rank, (uint32_t)ep->rank);
	sock_put_u64(b + at->hash, ep->comm_hash);
	put_text(b + at->dev_name, FL_DEV_NAME_LEN, ep->dev_name);
	put_text(b + at->node, at->node_len, ep->node);
}

static int get_endpoint(const uint8_t *b, const struct endpoint_layout *at,
			struct fl_endpoint *ep)
{
	memset(ep, 0, sizeof(*ep));
	ep->dev = (int32_t)sock_get_u32(b + at->dev);
	ep->rank = (int32_t)sock_get_u32(b + at->rank);
	ep->comm_hash = sock_get_u64(b + at->hash);
	if (get_text(b + at->dev_name, FL_DEV_NAME_LEN, ep->dev_name, sizeof(ep->dev_name)))
		return -1;
	return get_text(b + at->node, at->node_len, ep->node, sizeof(ep->node));
}

void sock_record_start(uint8_t *buf, size_t size, uint64_t magic, uint16_t version)
{
	memset(buf, 0, size);
	sock_put_u64(buf, magic);
	sock_put_u16(buf + 8, version);
}

int sock_record_check(const uint8_t *buf, uint64_t magic, uint16_t version, int err,
		      const char *what)
{
	if (sock_get_u64(buf) != magic)
		return fl_fail(err, "%s: bad magic 0x%016llx (not a fabriclab %s)", what,
			       (unsigned long long)sock_get_u64(buf), what);
	if (sock_get_u16(buf + 8) != version)
		return fl_fail(err, "%s: version %u, this plugin speaks %u", what,
			       sock_get_u16(buf + 8), version);
	return FL_OK;
}

int sock_handle_same_listener(const struct sock_handle *a, const struct sock_handle *b)
{
	return a->nonce == b->nonce && a->addrlen == b->addrlen &&
	       !memcmp(&a->addr, &b->addr, a->addrlen);
}

void sock_handle_encode(const struct sock_handle *h, void *buf)
{
	uint8_t *b = buf;

	sock_record_start(b, FL_HANDLE_SIZE, SOCK_HANDLE_MAGIC, SOCK_WIRE_VERSION);
	if (h->addr.ss_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)&h->addr;

		sock_put_u16(b + H_FAMILY, WIRE_INET);
		sock_put_u16(b + H_PORT, ntohs(in->sin_port));
		memcpy(b + H_ADDR, &in->sin_addr, 4);
	} else {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)&h->addr;

		sock_put_u16(b + H_FAMILY, WIRE_INET6);
		sock_put_u16(b + H_PORT, ntohs(in6->sin6_port));
		memcpy(b + H_ADDR, &in6->sin6_addr, 16);
		sock_put_u32(b + H_SCOPE, in6->sin6_scope_id);
	}
	sock_put_u64(b + H_NONCE, h->nonce);
	put_endpoint(b, &in_handle, &h->listener);
}

static void decode_address(const uint8_t *b, struct sock_handle *h)
{
	uint16_t port = htons(sock_get_u16(b + H_PORT));

	memset(&h->addr, 0, sizeof(h->addr));
	if (sock_get_u16(b + H_FAMILY) == WIRE_INET) {
		struct sockaddr_in *in = (struct sockaddr_in *)&h->addr;

		in->sin_family = AF_INET;
		in->sin_port = port;
		memcpy(&in->sin_addr, b + H_ADDR, 4);
		h->addrlen = sizeof(*in);
	} else {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&h->addr;

		in6->sin6_family = AF_INET6;
		in6->sin6_port = port;
		memcpy(&in6->sin6_addr, b + H_ADDR, 16);
		in6->sin6_scope_id = sock_get_u32(b + H_SCOPE);
		h->addrlen = sizeof(*in6);
	}
}

int sock_handle_decode(const void *buf, struct sock_handle *h)
{
	const uint8_t *b = buf;
	uint16_t family;

	if (!b)
		return fl_fail(FL_ERR_ARGUMENT, "socket handle: NULL");
	if (sock_record_check(b, SOCK_HANDLE_MAGIC, SOCK_WIRE_VERSION, FL_ERR_ARGUMENT,
			      "socket handle"))
		return FL_ERR_ARGUMENT;
	family = sock_get_u16(b + H_FAMILY);
	if (family != WIRE_INET && family != WIRE_INET6)
		return fl_fail(FL_ERR_ARGUMENT, "socket handle: unknown address family %u", family);
	if (!sock_get_u16(b + H_PORT))
		return fl_fail(FL_ERR_ARGUMENT, "socket handle: port 0");
	if (get_endpoint(b, &in_handle, &h->listener))
		return fl_fail(FL_ERR_ARGUMENT,
			       "socket handle: node or device name not terminated");
	decode_address(b, h);
	h->nonce = sock_get_u64(b + H_NONCE);
	return FL_OK;
}

void sock_hello_encode(const struct sock_hello *h, uint8_t buf[SOCK_HELLO_SIZE])
{
	sock_record_start(buf, SOCK_HELLO_SIZE, SOCK_HELLO_MAGIC, SOCK_WIRE_VERSION);
	buf[E_KIND] = h->kind;
	buf[E_INDEX] = h->index;
	buf[E_NSTREAMS] = h->nstreams;
	sock_put_u64(buf + E_NONCE, h->nonce);
	sock_put_u64(buf + E_CONN, h->conn_id);
	sock_put_u32(buf + E_INLINE, h->inline_max);
	sock_put_u32(buf + E_CHUNK, h->min_chunk);
	if (h->kind == SOCK_STREAM_CONTROL)
		put_endpoint(buf, &in_hello, &h->endpoint);
}

static int check_stream(const struct sock_hello *h)
{
	if (h->kind != SOCK_STREAM_CONTROL && h->kind != SOCK_STREAM_DATA)
		return fl_fail(FL_ERR_REMOTE, "hello: unknown stream kind %u", h->kind);
	if (h->nstreams > SOCK_MAX_STREAMS)
		return fl_fail(FL_ERR_REMOTE, "hello: %u data streams (at most %d)", h->nstreams,
			       SOCK_MAX_STREAMS);
	if (h->kind == SOCK_STREAM_CONTROL ? h->index != 0 : h->index >= h->nstreams)
		return fl_fail(FL_ERR_REMOTE, "hello: stream index %u of %u", h->index,
			       h->nstreams);
	if (h->inline_max > SOCK_MAX_INLINE || h->min_chunk < SOCK_MIN_CHUNK_FLOOR ||
	    h->min_chunk > SOCK_MIN_CHUNK_CEIL)
		return fl_fail(FL_ERR_REMOTE, "hello: inline %u / min chunk %u out of range",
			       h->inline_max, h->min_chunk);
	return FL_OK;
}

int sock_hello_decode(const uint8_t buf[SOCK_HELLO_SIZE], uint64_t nonce, struct sock_hello *h)
{
	if (sock_record_check(buf, SOCK_HELLO_MAGIC, SOCK_WIRE_VERSION, FL_ERR_REMOTE, "hello"))
		return FL_ERR_REMOTE;
	memset(h, 0, sizeof(*h));
	h->nonce = sock_get_u64(buf + E_NONCE);
	if (h->nonce != nonce)
		return fl_fail(FL_ERR_REMOTE, "hello: nonce does not match this listener");
	h->kind = buf[E_KIND];
	h->index = buf[E_INDEX];
	h->nstreams = buf[E_NSTREAMS];
	h->conn_id = sock_get_u64(buf + E_CONN);
	h->inline_max = sock_get_u32(buf + E_INLINE);
	h->min_chunk = sock_get_u32(buf + E_CHUNK);
	if (check_stream(h))
		return FL_ERR_REMOTE;
	if (h->kind == SOCK_STREAM_CONTROL &&
	    get_endpoint(buf, &in_hello, &h->endpoint))
		return fl_fail(FL_ERR_REMOTE, "hello: node or device name not terminated");
	return FL_OK;
}
