/*
 * The connecting (sending) side of an ib connection, one non-blocking step per
 * NCCL call: TCP connect, hello + the sender's metadata out, the receiver's
 * metadata in, QPs to RTR and RTS, ready out. Connections being opened live
 * in a private table keyed by the listener's address and nonce, as the
 * socket transport's do.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ib_config.h"
#include "ib_meta.h"
#include "ib_side.h"
#include "transport/socket/sock_bytes.h"
#include "transport/socket/sock_config.h"
#include "transport/socket/sock_handle.h"
#include "transport/socket/sock_sys.h"

enum opening_state { CONNECTING, SENDING_HELLO, AWAITING_META, SENDING_READY };

struct ib_opening {
	struct ib_opening *next;
	struct sock_handle to;
	int fd;
	enum opening_state state;
	struct ib_io io;
	struct ib_send_comm *comm;
	char addr[SOCK_ADDR_STRLEN];
};

static pthread_mutex_t openings_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ib_opening *openings;

static struct ib_opening **find(const struct sock_handle *h)
{
	struct ib_opening **o = &openings;

	while (*o && !sock_handle_same_listener(&(*o)->to, h))
		o = &(*o)->next;
	return o;
}

static void destroy(struct ib_opening *o)
{
	if (o->comm) {
		ib_send_comm_fini(o->comm);
		free(o->comm);
	}
	if (o->fd >= 0)
		close(o->fd);
	free(o);
}

static void write_hello(struct ib_opening *o, const struct fl_endpoint *self)
{
	struct sock_hello hello = {
		.kind = SOCK_STREAM_CONTROL,
		.nonce = o->to.nonce,
		.conn_id = sock_random_u64(),
		.inline_max = SOCK_DEFAULT_INLINE,
		.min_chunk = SOCK_DEFAULT_MIN_CHUNK,
		.endpoint = *self,
	};
	struct ib_meta meta;

	ib_link_describe(&o->comm->link, &meta);
	meta.fifo_addr = (uintptr_t)o->comm->fifo;
	meta.fifo_rkey = o->comm->fifo_mr->rkey;
	sock_hello_encode(&hello, o->io.buf);
	ib_meta_encode(&meta, o->io.buf + SOCK_HELLO_SIZE);
	ib_io_start(&o->io, SOCK_HELLO_SIZE + IB_META_SIZE);
}

static int start(struct ib_device *dev, const struct sock_handle *h,
		 const struct fl_endpoint *self, struct ib_opening **out)
{
	struct ib_opening *o = calloc(1, sizeof(*o));
	int rc, connected;

	if (!o)
		return fl_fail(FL_ERR_SYSTEM, "out of memory for an ib connect");
	o->to = *h;
	o->fd = -1;
	sock_addr_format((struct sockaddr *)&h->addr, o->addr, sizeof(o->addr));
	o->comm = aligned_alloc(64, IB_ROUND64(sizeof(*o->comm)));
	rc = o->comm ? FL_OK : fl_fail(FL_ERR_SYSTEM, "out of memory for an ib send comm");
	if (!rc) {
		memset(o->comm, 0, sizeof(*o->comm));
		rc = ib_link_open(&o->comm->link, dev, ib_cfg.nqps, 1);
	}
	if (!rc)
		rc = ib_send_comm_init(o->comm);
	if (!rc) {
		/* one that finished at once shows at the first sock_connect_check */
		rc = sock_connect_start(&h->addr, h->addrlen, 0, o->addr, &o->fd, &connected);
	}
	if (rc) {
		destroy(o);
		return rc;
	}
	write_hello(o, self);
	o->comm->link.peer = h->listener;
	*out = o;
	return FL_OK;
}

/* One step; *done once the comm is ready for traffic. */
static int step(struct ib_opening *o, int *done)
{
	int complete = 0, rc = FL_OK;
	struct ib_meta remote;

	*done = 0;
	switch (o->state) {
	case CONNECTING:
		rc = sock_connect_check(o->fd, o->addr, &complete);
		if (!rc && complete)
			o->state = SENDING_HELLO;
		return rc;
	case SENDING_HELLO:
		rc = ib_io_send(o->fd, &o->io, &complete);
		if (!rc && complete) {
			o->state = AWAITING_META;
			ib_io_start(&o->io, IB_META_SIZE);
		}
		return rc;
	case AWAITING_META:
		rc = ib_io_recv(o->fd, &o->io, &complete);
		if (rc || !complete)
			return rc;
		rc = ib_meta_decode(o->io.buf, &remote);
		if (!rc)
			rc = ib_link_connect(&o->comm->link, &remote);
		if (rc)
			return rc;
		sock_put_u64(o->io.buf, IB_READY_MAGIC);
		ib_io_start(&o->io, IB_READY_SIZE);
		o->state = SENDING_READY;
		return FL_OK;
	case SENDING_READY:
		rc = ib_io_send(o->fd, &o->io, &complete);
		*done = !rc && complete;
		return rc;
	}
	return fl_fail(FL_ERR_INTERNAL, "ib connect in state %d", o->state);
}

int ib_connect_step(struct ib_device *dev, const struct fl_endpoint *self, const void *handle,
		    void **send_comm)
{
	struct ib_opening **slot, *o;
	struct sock_handle h;
	int rc, done = 0;

	*send_comm = NULL;
	rc = sock_handle_decode(handle, &h);
	if (rc)
		return rc;
	pthread_mutex_lock(&openings_lock);
	slot = find(&h);
	if (!*slot)
		rc = start(dev, &h, self, slot);
	o = *slot;
	for (int i = 0; !rc && !done && i < 4; i++) {
		enum opening_state before = o->state;

		rc = step(o, &done);
		if (o->state == before && !done)
			break; /* waiting on the peer */
	}
	if (rc || done)
		*slot = o ? o->next : NULL;
	pthread_mutex_unlock(&openings_lock);
	if (rc) {
		char why[FL_ERROR_LEN];

		snprintf(why, sizeof(why), "%s", fl_error_text());
		if (o)
			destroy(o);
		return fl_fail(rc, "ib connect to %s: %s", h.listener.node, why);
	}
	if (!done)
		return FL_OK;
	o->comm->link.fd = o->fd;
	*send_comm = o->comm;
	free(o);
	return FL_OK;
}
