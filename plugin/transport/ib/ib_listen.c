/*
 * The listening (receiving) side of ib connections. accept never blocks:
 * the socket transport's door (sock_admit) takes incoming side channels and
 * reads their hello and the sender's metadata; a stream that is not a hello
 * for this listener, stays silent past the timeout or is one of a crowd of
 * strangers is dropped there without disturbing real peers.
 * Then the receiver's QPs connect to the sender's, its metadata goes back,
 * and the comm is handed out once the sender says its QPs are ready.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/clock.h"
#include "ib_meta.h"
#include "ib_side.h"
#include "base/log.h"
#include "transport/socket/sock_admit.h"
#include "transport/socket/sock_bytes.h"
#include "transport/socket/sock_handle.h"
#include "transport/socket/sock_sys.h"

#define IB_PENDING_MAX 32
#define IB_SETUP_TIMEOUT_NS (20ULL * 1000000000ULL)

enum pending_state { FREE, SENDING_META, AWAITING_READY };

struct ib_pending {
	int fd;
	enum pending_state state;
	uint64_t since_ns;
	struct ib_io io;
	struct ib_recv_comm *comm;
	char addr[SOCK_ADDR_STRLEN];
};

struct ib_listen_comm {
	int fd;
	uint64_t nonce;
	struct ib_device *dev;
	struct sock_admit door;
	struct ib_pending pending[IB_PENDING_MAX];
};

int ib_listen_open(struct ib_device *dev, const struct fl_endpoint *self, void *handle,
		   void **listen_comm)
{
	struct ib_listen_comm *l = calloc(1, sizeof(*l));
	struct sock_handle h = { 0 };
	int rc;

	*listen_comm = NULL;
	if (!l)
		return fl_fail(FL_ERR_SYSTEM, "out of memory for an ib listener");
	rc = ib_side_listen(&l->fd, &h.addr, &h.addrlen);
	if (!rc) {
		char addr[SOCK_ADDR_STRLEN], name[96];

		sock_addr_format((struct sockaddr *)&h.addr, addr, sizeof(addr));
		snprintf(name, sizeof(name), "ib listener on %s", addr);
		rc = sock_admit_open(&l->door, l->fd, SOCK_HELLO_SIZE + IB_META_SIZE,
				     ib_side_hello_timeout_ns(), name);
		if (rc)
			close(l->fd);
	}
	if (rc) {
		free(l);
		return rc;
	}
	l->dev = dev;
	l->nonce = sock_random_u64();
	h.nonce = l->nonce;
	h.listener = *self;
	sock_handle_encode(&h, handle);
	*listen_comm = l;
	return FL_OK;
}

static void release(struct ib_pending *p)
{
	if (p->comm) {
		ib_recv_comm_fini(p->comm);
		free(p->comm);
		p->comm = NULL;
	}
	if (p->fd >= 0)
		close(p->fd);
	p->fd = -1;
	p->state = FREE;
}

static void drop(struct ib_pending *p, const char *why)
{
	FL_INFO("ib listener: dropping side channel from %s: %s", p->addr, why);
	release(p);
}

/* The sender's hello and metadata are in: make the receiving side and answer. */
static int answer(struct ib_listen_comm *l, struct ib_pending *p, const struct sock_hello *hello,
		  const struct ib_meta *remote)
{
	struct ib_meta mine;
	int rc;

	p->comm = aligned_alloc(64, IB_ROUND64(sizeof(*p->comm)));
	if (!p->comm)
		return fl_fail(FL_ERR_SYSTEM, "out of memory for an ib recv comm");
	memset(p->comm, 0, sizeof(*p->comm));
	p->comm->link.peer = hello->endpoint;
	rc = ib_link_open(&p->comm->link, l->dev, remote->nqps, 0);
	if (!rc)
		rc = ib_recv_comm_init(p->comm);
	if (!rc)
		rc = ib_link_connect(&p->comm->link, remote);
	if (rc)
		return rc;
	p->comm->fifo_addr = remote->fifo_addr;
	p->comm->fifo_rkey = remote->fifo_rkey;
	ib_link_describe(&p->comm->link, &mine);
	ib_meta_encode(&mine, p->io.buf);
	ib_io_start(&p->io, IB_META_SIZE);
	p->state = SENDING_META;
	return FL_OK;
}

static struct ib_pending *free_pending(struct ib_listen_comm *l)
{
	for (int i = 0; i < IB_PENDING_MAX; i++)
		if (l->pending[i].state == FREE)
			return &l->pending[i];
	return NULL;
}

/* The door has a hello and metadata: answer if they are a peer's for this listener. */
static int arrived(void *ctx, struct sock_newcomer *n, const char **reject)
{
	struct ib_listen_comm *l = ctx;
	struct sock_hello hello;
	struct ib_meta remote;
	struct ib_pending *p;
	int rc;

	if (sock_hello_decode(n->record, l->nonce, &hello) ||
	    ib_meta_decode(n->record + SOCK_HELLO_SIZE, &remote)) {
		*reject = fl_error_text();
		return FL_OK;
	}
	if (hello.kind != SOCK_STREAM_CONTROL) {
		*reject = "a data stream's hello on an ib side channel";
		return FL_OK;
	}
	p = free_pending(l);
	if (!p) {
		*reject = "too many ib connections in setup at once";
		return FL_OK;
	}
	memset(p, 0, sizeof(*p));
	p->fd = n->fd;
	p->since_ns = fl_clock_ns();
	memcpy(p->addr, n->addr, sizeof(p->addr));
	n->fd = -1;
	rc = answer(l, p, &hello, &remote);
	if (rc == FL_ERR_REMOTE) {
		drop(p, fl_error_text());
		return FL_OK;
	}
	if (rc)
		release(p);
	return rc;
}

/* Advances one pending side channel; *out when its comm is ready. */
static int advance(struct ib_pending *p, uint64_t now, void **out)
{
	int complete = 0, rc;

	switch (p->state) {
	case SENDING_META:
		rc = ib_io_send(p->fd, &p->io, &complete);
		if (!rc && complete) {
			ib_io_start(&p->io, IB_READY_SIZE);
			p->state = AWAITING_READY;
		}
		break;
	case AWAITING_READY:
		rc = ib_io_recv(p->fd, &p->io, &complete);
		if (!rc && complete && sock_get_u64(p->io.buf) != IB_READY_MAGIC)
			rc = fl_fail(FL_ERR_REMOTE, "bad ready word");
		if (!rc && complete) {
			p->comm->link.fd = p->fd;
			*out = p->comm;
			p->comm = NULL;
			p->fd = -1;
			p->state = FREE;
			return FL_OK;
		}
		break;
	default:
		return FL_OK;
	}
	if (rc) {
		drop(p, fl_error_text());
		return FL_OK;
	}
	if (now - p->since_ns > IB_SETUP_TIMEOUT_NS)
		drop(p, "connection setup did not finish in time");
	return FL_OK;
}

int ib_listen_accept(void *listen_comm, void **recv_comm)
{
	struct ib_listen_comm *l = listen_comm;
	uint64_t now;
	int rc;

	*recv_comm = NULL;
	if (!l)
		return fl_fail(FL_ERR_INTERNAL, "accept on a NULL listen comm");
	rc = sock_admit_poll(&l->door, fl_clock_ns(), arrived, l);
	now = fl_clock_ns(); /* after arrivals stamped themselves */
	for (int i = 0; !rc && !*recv_comm && i < IB_PENDING_MAX; i++)
		if (l->pending[i].state != FREE)
			rc = advance(&l->pending[i], now, recv_comm);
	return rc;
}

int ib_listen_close(void *listen_comm)
{
	struct ib_listen_comm *l = listen_comm;

	if (!l)
		return FL_OK;
	for (int i = 0; i < IB_PENDING_MAX; i++)
		if (l->pending[i].state != FREE)
			release(&l->pending[i]);
	sock_admit_close(&l->door);
	close(l->fd);
	free(l);
	return FL_OK;
}
