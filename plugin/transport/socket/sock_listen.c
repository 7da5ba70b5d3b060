/*
 * The listening side. accept() is a state machine that never blocks: new TCP
 * streams go into a bounded table, their hellos are read without waiting, and
 * anything that is not a hello for this listener (garbage, early close,
 * silence past the timeout) is dropped without disturbing the real peer.
 */
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/error.h"
#include "base/log.h"
#include "sock_comm.h"
#include "sock_handle.h"
#include "sock_listen.h"
#include "sock_sys.h"

#define SOCK_PENDING_MAX 64

struct sock_pending {
	int fd;            /* -1: free slot */
	int valid;         /* a whole hello for this listener arrived */
	uint64_t since_ns; /* accepted, or (valid) joined its connection */
	size_t got;
	uint8_t buf[SOCK_HELLO_SIZE];
	struct sock_hello hello;
	char addr[SOCK_ADDR_STRLEN];
};

struct sock_listen_comm {
	int fd;
	uint64_t nonce;
	uint64_t timeout_ns;
	char name[SOCK_ADDR_STRLEN];
	struct sock_pending pending[SOCK_PENDING_MAX];
};

int sock_listen_bind(int fd, const struct sock_iface *iface, size_t bufsize,
		     struct sockaddr_storage *addr, socklen_t *addrlen)
{
	*addr = iface->addr;
	*addrlen = iface->addrlen;
	if (addr->ss_family == AF_INET)
		((struct sockaddr_in *)addr)->sin_port = 0;
	else
		((struct sockaddr_in6 *)addr)->sin6_port = 0;
	/* buffer sizes set before listen() pass to accepted streams with the right window scale */
	if (bufsize && sock_tune(fd, bufsize))
		return FL_ERR_SYSTEM;
	if (bind(fd, (struct sockaddr *)addr, *addrlen))
		return fl_fail(FL_ERR_SYSTEM, "bind on %s: %s", iface->name, strerror(errno));
	if (listen(fd, SOMAXCONN))
		return fl_fail(FL_ERR_SYSTEM, "listen on %s: %s", iface->name, strerror(errno));
	if (getsockname(fd, (struct sockaddr *)addr, addrlen))
		return fl_fail(FL_ERR_SYSTEM, "getsockname on %s: %s", iface->name,
			       strerror(errno));
	return FL_OK;
}

int sock_listen_open(const struct sock_iface *iface, const struct fl_endpoint *self, void *handle,
		     void **listen_comm)
{
	struct sock_listen_comm *l;
	struct sock_handle h = { 0 };
	int rc;

	*listen_comm = NULL;
	l = calloc(1, sizeof(*l));
	if (!l)
		return fl_fail(FL_ERR_SYSTEM, "out of memory for a socket listener");
	for (int i = 0; i < SOCK_PENDING_MAX; i++)
		l->pending[i].fd = -1;
	l->fd = socket(iface->addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (l->fd < 0) {
		rc = fl_fail(FL_ERR_SYSTEM, "socket: %s", strerror(errno));
		free(l);
		return rc;
	}
	rc = sock_listen_bind(l->fd, iface, sock_cfg.sock_buf, &h.addr, &h.addrlen);
	if (rc) {
		close(l->fd);
		free(l);
		return rc;
	}
	l->nonce = sock_random_u64();
	l->timeout_ns = (uint64_t)sock_cfg.hello_timeout_ms * 1000000ULL;
	sock_addr_format((struct sockaddr *)&h.addr, l->name, sizeof(l->name));
	h.nonce = l->nonce;
	h.listener = *self;
	sock_handle_encode(&h, handle);
	*listen_comm = l;
	return FL_OK;
}

static void drop(struct sock_pending *p, const char *why)
{
	FL_INFO("socket listener: dropping stream from %s: %s", p->addr, why);
	close(p->fd);
	p->fd = -1;
}

static struct sock_pending *free_slot(struct sock_listen_comm *l)
{
	for (int i = 0; i < SOCK_PENDING_MAX; i++)
		if (l->pending[i].fd < 0)
			return &l->pending[i];
	return NULL;
}

/* Moves streams from the kernel's backlog into the table while it has room. */
static int take_new_streams(struct sock_listen_comm *l, uint64_t now)
{
	struct sock_pending *p;

	while ((p = free_slot(l))) {
		int fd = accept4(l->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return FL_OK;
			if (errno == EINTR || errno == ECONNABORTED || errno == EPROTO)
				continue;
			return fl_fail(FL_ERR_SYSTEM, "accept on %s: %s", l->name, strerror(errno));
		}
		memset(p, 0, sizeof(*p));
		p->fd = fd;
		p->since_ns = now;
		sock_peer_format(fd, p->addr, sizeof(p->addr));
		if (sock_tune(fd, 0))
			drop(p, fl_error_text());
	}
	return FL_OK;
}

static int same_stream(const struct sock_hello *a, const struct sock_hello *b)
{
	return a->conn_id == b->conn_id && a->kind == b->kind && a->index == b->index;
}

/* A valid hello still has to fit the connection its id names. */
static const char *misfit(const struct sock_listen_comm *l, const struct sock_pending *p)
{
	for (int i = 0; i < SOCK_PENDING_MAX; i++) {
		const struct sock_pending *o = &l->pending[i];

		if (o == p || o->fd < 0 || !o->valid || o->hello.conn_id != p->hello.conn_id)
			continue;
		if (same_stream(&o->hello, &p->hello))
			return "a second stream with the same place in its connection";
		if (o->hello.nstreams != p->hello.nstreams)
			return "stream count differs from the rest of its connection";
	}
	return NULL;
}

static void read_hello(struct sock_listen_comm *l, struct sock_pending *p, uint64_t now)
{
	ssize_t n = recv(p->fd, p->buf + p->got, SOCK_HELLO_SIZE - p->got, MSG_DONTWAIT);
	const char *why;

	if (n == 0) {
		drop(p, "closed before its hello");
		return;
	}
	if (n < 0) {
		if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
			drop(p, strerror(errno));
		else if (now - p->since_ns > l->timeout_ns)
			drop(p, "no hello within FABRICLAB_SOCKET_HELLO_TIMEOUT_MS");
		return;
	}
	p->got += (size_t)n;
	if (p->got < SOCK_HELLO_SIZE)
		return;
	if (sock_hello_decode(p->buf, l->nonce, &p->hello)) {
		drop(p, fl_error_text());
		return;
	}
	p->valid = 1;
	p->since_ns = now;
	why = misfit(l, p);
	if (why)
		drop(p, why);
}

/* Finds the streams of connection `conn`; returns how many data streams are in. */
static unsigned gather_connection(struct sock_listen_comm *l, uint64_t conn,
				  struct sock_pending **ctrl, struct sock_pending **data,
				  uint64_t *last_join)
{
	unsigned ndata = 0;

	*ctrl = NULL;
	*last_join = 0;
	for (int i = 0; i < SOCK_PENDING_MAX; i++) {
		struct sock_pending *p = &l->pending[i];

		if (p->fd < 0 || !p->valid || p->hello.conn_id != conn)
			continue;
		if (p->since_ns > *last_join)
			*last_join = p->since_ns;
		if (p->hello.kind == SOCK_STREAM_CONTROL) {
			*ctrl = p;
		} else {
			data[p->hello.index] = p;
			ndata++;
		}
	}
	return ndata;
}

static int hand_over(struct sock_pending *ctrl, struct sock_pending **data, void **recv_comm)
{
	const struct sock_hello *h = &ctrl->hello;
	struct sock_rules rules = { h->nstreams, h->inline_max, h->min_chunk };
	int fds[SOCK_MAX_STREAMS];
	int ctrl_fd = ctrl->fd;

	for (unsigned i = 0; i < h->nstreams; i++) {
		fds[i] = data[i]->fd;
		data[i]->fd = -1;
	}
	ctrl->fd = -1;
	return sock_recv_comm_create(ctrl_fd, fds, &rules, &h->endpoint, ctrl->addr,
				     (struct sock_recv_comm **)recv_comm);
}

/* Returns a connection whose streams are all in; drops ones that stopped growing. */
static int assemble(struct sock_listen_comm *l, uint64_t now, void **recv_comm)
{
	for (int i = 0; i < SOCK_PENDING_MAX; i++) {
		struct sock_pending *data[SOCK_MAX_STREAMS], *ctrl;
		struct sock_pending *p = &l->pending[i];
		uint64_t conn, last_join;
		unsigned ndata;

		if (p->fd < 0 || !p->valid)
			continue;
		conn = p->hello.conn_id;
		ndata = gather_connection(l, conn, &ctrl, data, &last_join);
		if (ctrl && ndata == ctrl->hello.nstreams)
			return hand_over(ctrl, data, recv_comm);
		if (now - last_join <= l->timeout_ns)
			continue;
		for (int j = 0; j < SOCK_PENDING_MAX; j++)
			if (l->pending[j].fd >= 0 && l->pending[j].valid &&
			    l->pending[j].hello.conn_id == conn)
				drop(&l->pending[j], "its connection stayed incomplete");
	}
	return FL_OK;
}

int sock_listen_accept(void *listen_comm, void **recv_comm)
{
	struct sock_listen_comm *l = listen_comm;
	uint64_t now = fl_clock_ns();
	int rc;

	*recv_comm = NULL;
	if (!l)
		return fl_fail(FL_ERR_INTERNAL, "accept on a NULL listen comm");
	rc = take_new_streams(l, now);
	if (rc)
		return rc;
	for (int i = 0; i < SOCK_PENDING_MAX; i++)
		if (l->pending[i].fd >= 0 && !l->pending[i].valid)
			read_hello(l, &l->pending[i], now);
	return assemble(l, now, recv_comm);
}

int sock_listen_close(void *listen_comm)
{
	struct sock_listen_comm *l = listen_comm;

	if (!l)
		return FL_OK;
	for (int i = 0; i < SOCK_PENDING_MAX; i++)
		if (l->pending[i].fd >= 0)
			close(l->pending[i].fd);
	close(l->fd);
	free(l);
	return FL_OK;
}
