/*
 * The listening (receiving) side of ib connections. accept never blocks:
 * incoming side channels wait in a bounded table while their hello and the
 * sender's metadata arrive; a stream that is not a hello for this listener,
 * or stays silent past the timeout, is dropped without disturbing real peers.
 * Then the receiver's QPs connect to the sender's, its metadata goes back,
 * and the comm is handed out once the sender says its QPs are ready.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/clock.h"
#include "ib_meta.h"
#include "ib_side.h"
#include "base/log.h"
#include "transport/socket/sock_bytes.h"
#include "transport/socket/sock_handle.h"
#include "transport/socket/sock_sys.h"

#define IB_PENDING_MAX 32
#define IB_SETUP_TIMEOUT_NS (20ULL * 1000000000ULL)

enum pending_state { FREE, AWAITING_HELLO, SENDING_META, AWAITING_READY };

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

static int take_new(struct ib_listen_comm *l, uint64_t now)
{
	for (int i = 0; i < IB_PENDING_MAX; i++) {
		struct ib_pending *p = &l->pending[i];
		int fd;

		if (p->state != FREE)
			continue;
		fd = accept4(l->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ||
			    errno == ECONNABORTED)
				return FL_OK;
			return fl_fail(FL_ERR_SYSTEM, "ib listener accept: %s", strerror(errno));
		}
		memset(p, 0, sizeof(*p));
		p->fd = fd;
		p->state = AWAITING_HELLO;
		p->since_ns = now;
		sock_peer_format(fd, p->addr, sizeof(p->addr));
		sock_tune(fd, 0);
		ib_io_start(&p->io, SOCK_HELLO_SIZE + IB_META_SIZE);
	}
	return FL_OK;
}

/* The sender's hello and metadata are in: make the receiving side and answer. */
static int answer(struct ib_listen_comm *l, struct ib_pending *p, int *stranger)
{
	struct sock_hello hello;
	struct ib_meta remote, mine;
	int rc;

	*stranger = 1;
	if (sock_hello_decode(p->io.buf, l->nonce, &hello) ||
	    hello.kind != SOCK_STREAM_CONTROL ||
	    ib_meta_decode(p->io.buf + SOCK_HELLO_SIZE, &remote))
		return FL_ERR_REMOTE;
	*stranger = 0;
	p->comm = aligned_alloc(64, IB_ROUND64(sizeof(*p->comm)));
	if (!p->comm)
		return fl_fail(FL_ERR_SYSTEM, "out of memory for an ib recv comm");
	memset(p->comm, 0, sizeof(*p->comm));
	p->comm->link.peer = hello.endpoint;
	rc = ib_link_open(&p->comm->link, l->dev, remote.nqps, 0);
	if (!rc)
		rc = ib_recv_comm_init(p->comm);
	if (!rc)
		rc = ib_link_connect(&p->comm->link, &remote);
	if (rc)
		return rc;
	p->comm->fifo_addr = remote.fifo_addr;
	p->comm->fifo_rkey = remote.fifo_rkey;
	ib_link_describe(&p->comm->link, &mine);
	ib_meta_encode(&mine, p->io.buf);
	ib_io_start(&p->io, IB_META_SIZE);
	p->state = SENDING_META;
	return FL_OK;
}

/* Advances one pending side channel; *out when its comm is ready. */
static int advance(struct ib_listen_comm *l, struct ib_pending *p, uint64_t now, void **out)
{
	int complete = 0, stranger = 0, rc;

	switch (p->state) {
	case AWAITING_HELLO:
		rc = ib_io_recv(p->fd, &p->io, &complete);
		if (!rc && complete)
			rc = answer(l, p, &stranger);
		if (rc && (stranger || rc == FL_ERR_REMOTE)) {
			drop(p, fl_error_text());
			return FL_OK;
		}
		if (rc) {
			release(p);
			return rc;
		}
		break;
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
	uint64_t now = fl_clock_ns();
	int rc;

	*recv_comm = NULL;
	if (!l)
		return fl_fail(FL_ERR_INTERNAL, "accept on a NULL listen comm");
	rc = take_new(l, now);
	for (int i = 0; !rc && !*recv_comm && i < IB_PENDING_MAX; i++)
		if (l->pending[i].state != FREE)
			rc = advance(l, &l->pending[i], now, recv_comm);
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
	close(l->fd);
	free(l);
	return FL_OK;
}
