/*
 * Who is at each end of an ext connection. The inner plugin owns the handle
 * (it may use all 128 bytes) and the wire, so identity travels two ways:
 *  - receiver -> sender: in the handle's tail when the inner's listen left it
 *    zero: [payload][len][check][magic 2], taken out again before the inner's
 *    first connect sees the handle, so the inner always reads what it wrote;
 *  - sender -> receiver: a hidden first message on the connection (the inner's
 *    own isend/irecv on a registered host buffer), posted by the comm's first
 *    isend/irecv ahead of the data and tested in its calls (ext_hello_drive).
 * Both cost only setup time; nothing is added per message but one test of a
 * pointer in isend/irecv/test.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/error.h"
#include "ext_internal.h"

#define TRAILER_MAGIC0 0x66 /* 'f' */
#define TRAILER_MAGIC1 0x4c /* 'L' */
#define TRAILER_FIXED 4     /* len, check, magic */
#define HELLO_MAGIC "FLEXTHL1"
#define HELLO_TAG 0x464c /* the inner may match tags: both ends post the same one */

static uint8_t check_of(const uint8_t *p, size_t n)
{
	uint8_t c = 0x5a;

	for (size_t i = 0; i < n; i++)
		c = (uint8_t)((c << 1 | c >> 7) ^ p[i]);
	return c;
}

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static size_t put_text(uint8_t *p, const char *s, size_t max)
{
	size_t n = strnlen(s, max - 1);

	memcpy(p, s, n);
	p[n] = 0;
	return n + 1;
}

/* payload: dev (1 byte), rank (4), dev name, NUL, node, NUL */
static size_t trailer_payload(uint8_t *p, const struct fl_endpoint *self)
{
	size_t n = 0;

	p[n++] = (uint8_t)self->dev;
	put32(p + n, (uint32_t)self->rank);
	n += 4;
	n += put_text(p + n, self->dev_name, FL_DEV_NAME_LEN);
	n += put_text(p + n, self->node, FL_NODE_NAME_LEN);
	return n;
}

void ext_trailer_put(void *handle, const struct fl_endpoint *self)
{
	uint8_t payload[8 + FL_DEV_NAME_LEN + FL_NODE_NAME_LEN], *h = handle;
	size_t len = trailer_payload(payload, self), start;

	if (len > sizeof(payload))
		return;
	start = FL_HANDLE_SIZE - TRAILER_FIXED - len;
	for (size_t i = start; i < FL_HANDLE_SIZE; i++)
		if (h[i])
			return; /* the inner uses its tail: the sender will not know us */
	memcpy(h + start, payload, len);
	h[FL_HANDLE_SIZE - 4] = (uint8_t)len;
	h[FL_HANDLE_SIZE - 3] = check_of(payload, len);
	h[FL_HANDLE_SIZE - 2] = TRAILER_MAGIC0;
	h[FL_HANDLE_SIZE - 1] = TRAILER_MAGIC1;
}

static int text_at(const uint8_t *p, const uint8_t *end, char *out, size_t max, size_t *used)
{
	size_t n = strnlen((const char *)p, (size_t)(end - p));

	if (p + n >= end || n >= max)
		return -1;
	memcpy(out, p, n + 1);
	*used = n + 1;
	return 0;
}

int ext_trailer_take(void *handle, struct fl_endpoint *peer)
{
	uint8_t *h = handle, *p, *end = h + FL_HANDLE_SIZE - TRAILER_FIXED;
	size_t len = h[FL_HANDLE_SIZE - 4], used;

	if (h[FL_HANDLE_SIZE - 2] != TRAILER_MAGIC0 || h[FL_HANDLE_SIZE - 1] != TRAILER_MAGIC1 ||
	    len < 7 || len > FL_HANDLE_SIZE - TRAILER_FIXED)
		return -1;
	p = end - len;
	if (check_of(p, len) != h[FL_HANDLE_SIZE - 3])
		return -1;
	peer->dev = p[0];
	peer->rank = (int32_t)get32(p + 1);
	p += 5;
	if (text_at(p, end, peer->dev_name, FL_DEV_NAME_LEN, &used))
		return -1;
	p += used;
	if (text_at(p, end, peer->node, FL_NODE_NAME_LEN, &used))
		return -1;
	memset(end - len, 0, len + TRAILER_FIXED);
	return 0;
}

/* magic 8, pid 4, conn id 4, dev 4, rank 4, comm hash 8, dev name 16, node 48 */
enum { H_PID = 8, H_CONN = 12, H_DEV = 16, H_RANK = 20, H_HASH = 24, H_DEV_NAME = 32,
       H_NODE = H_DEV_NAME + FL_DEV_NAME_LEN, H_END = H_NODE + FL_NODE_NAME_LEN };
_Static_assert(H_END <= EXT_HELLO_SIZE, "hello fits its buffer");

void ext_hello_encode(uint8_t *buf, const struct fl_endpoint *self, uint32_t conn_id)
{
	memset(buf, 0, EXT_HELLO_SIZE);
	memcpy(buf, HELLO_MAGIC, 8);
	put32(buf + H_PID, (uint32_t)getpid());
	put32(buf + H_CONN, conn_id);
	put32(buf + H_DEV, (uint32_t)self->dev);
	put32(buf + H_RANK, (uint32_t)self->rank);
	put32(buf + H_HASH, (uint32_t)self->comm_hash);
	put32(buf + H_HASH + 4, (uint32_t)(self->comm_hash >> 32));
	put_text(buf + H_DEV_NAME, self->dev_name, FL_DEV_NAME_LEN);
	put_text(buf + H_NODE, self->node, FL_NODE_NAME_LEN);
}

int ext_hello_decode(const uint8_t *buf, struct fl_endpoint *peer, uint32_t *pid,
		     uint32_t *conn_id)
{
	if (memcmp(buf, HELLO_MAGIC, 8))
		return fl_fail(FL_ERR_USAGE, "ext: the first message of a connection is not "
			       "fabriclab's hello: every rank must run fabriclab with the same "
			       "FABRICLAB_TRANSPORT=ext:... and FABRICLAB_EXT_HELLO");
	memset(peer, 0, sizeof(*peer));
	*pid = get32(buf + H_PID);
	*conn_id = get32(buf + H_CONN);
	peer->dev = (int32_t)get32(buf + H_DEV);
	peer->rank = (int32_t)get32(buf + H_RANK);
	peer->comm_hash = get32(buf + H_HASH) | (uint64_t)get32(buf + H_HASH + 4) << 32;
	memcpy(peer->dev_name, buf + H_DEV_NAME, FL_DEV_NAME_LEN - 1);
	memcpy(peer->node, buf + H_NODE, FL_NODE_NAME_LEN - 1);
	return FL_OK;
}

static int post_hello(void *comm, int send, struct ext_hello_xfer *x)
{
	size_t size = EXT_HELLO_SIZE;
	int tag = HELLO_TAG;
	void *data = x->buf;

	/* ext's own profiler handles: NCCL has none for the hello (ext_prof.c) */
	if (send)
		return ext_inner_isend(&ext_plugin, comm, data, size, tag, x->mhandle,
				       ext_no_phandle, &x->request);
	return ext_inner_irecv(&ext_plugin, comm, 1, &data, &size, &tag, &x->mhandle,
			       ext_no_phandles, &x->request);
}

int ext_hello_step(void *comm, int send, struct ext_hello_xfer *x, int *done)
{
	int rc, sizes[1] = { 0 };

	*done = 0;
	if (!x->mhandle) {
		rc = ext_inner_reg_mr(&ext_plugin, comm, x->buf, EXT_HELLO_SIZE, FL_PTR_HOST,
				      &x->mhandle);
		if (rc)
			return fl_fail(rc, "ext: %s cannot register host memory for the hello "
				       "(error %d); set FABRICLAB_EXT_HELLO=0 on every rank",
				       ext_plugin.name, rc);
	}
	if (!x->request) {
		rc = post_hello(comm, send, x);
		if (rc)
			return fl_fail(rc, "ext: %s of the hello failed (error %d)",
				       send ? "isend" : "irecv", rc);
		if (!x->request)
			return FL_OK; /* not now: the comm's next isend/irecv tries again */
	}
	rc = ext_plugin.test(x->request, done, sizes);
	if (rc)
		return fl_fail(rc, "ext: test of the hello failed (error %d)", rc);
	if (*done && !send && ext_plugin.irecv_consumed) /* the inner frees it only then */
		rc = ext_plugin.irecv_consumed(comm, 1, x->request);
	if (*done)
		x->request = NULL;
	return rc ? fl_fail(rc, "ext: irecvConsumed of the hello failed (error %d)", rc) : FL_OK;
}

void ext_hello_release(void *comm, struct ext_hello_xfer *x)
{
	if (x->mhandle && comm)
		ext_plugin.dereg_mr(comm, x->mhandle);
	free(x->buf);
	memset(x, 0, sizeof(*x));
}
