/*
 * The listening side. accept() is a state machine that never blocks: the door
 * (sock_admit) takes new TCP streams and reads their hellos without waiting;
 * streams whose hello is for this listener wait here for the rest of their
 * connection, and anything else (garbage, early close, silence past the
 * timeout, a crowd of strangers) is dropped without disturbing the real peer.
 */
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/error.h"
#include "base/log.h"
#include "sock_admit.h"
#include "sock_comm.h"
#include "sock_handle.h"
#include "sock_listen.h"
#include "sock_sys.h"

#define SOCK_JOINED_MAX 64 /* identified streams waiting for the rest of their connection */

struct sock_joined {
	int fd;            /* -1: free slot */
	uint64_t since_ns; /* joined its connection */
	struct sock_hello hello;
	char addr[SOCK_ADDR_STRLEN];
};

struct sock_listen_comm {
	int fd;
	uint64_t nonce;
	uint64_t timeout_ns;
	char name[SOCK_ADDR_STRLEN];
	struct sock_admit door;
	struct sock_joined joined[SOCK_JOINED_MAX];
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
	char door_name[96];
	int rc;

	*listen_comm = NULL;
	l = calloc(1, sizeof(*l));
	if (!l)
		return fl_fail(FL_ERR_SYSTEM, "out of memory for a socket listener");
	for (int i = 0; i < SOCK_JOINED_MAX; i++)
		l->joined[i].fd = -1;
	l->fd = socket(iface->addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (l->fd < 0) {
		rc = fl_fail(FL_ERR_SYSTEM, "socket: %s", strerror(errno));
		free(l);
		return rc;
	}
	rc = sock_listen_bind(l->fd, iface, sock_cfg.sock_buf, &h.addr, &h.addrlen);
	l->timeout_ns = (uint64_t)sock_cfg.hello_timeout_ms * 1000000ULL;
	sock_addr_format((struct sockaddr *)&h.addr, l->name, sizeof(l->name));
	snprintf(door_name, sizeof(door_name), "socket listener on %s", l->name);
	if (!rc)
		rc = sock_admit_open(&l->door, l->fd, SOCK_HELLO_SIZE, l->timeout_ns, door_name);
	if (rc) {
		close(l->fd);
		free(l);
		return rc;
	}
	l->nonce = sock_random_u64();
	h.nonce = l->nonce;
	h.listener = *self;
	sock_handle_encode(&h, handle);
	*listen_comm = l;
	return FL_OK;
}

static void drop(struct sock_listen_comm *l, struct sock_joined *j, const char *why)
{
	sock_admit_reject(&l->door, j->fd, j->addr, why);
	j->fd = -1;
}

static int same_stream(const struct sock_hello *a, const struct sock_hello *b)
{
	return a->conn_id == b->conn_id && a->kind == b->kind && a->index == b->index;
}

/* A valid hello still has to fit the connection its id names. */
static const char *misfit(const struct sock_listen_comm *l, const struct sock_hello *h)
{
	for (int i = 0; i < SOCK_JOINED_MAX; i++) {
		const struct sock_joined *o = &l->joined[i];

		if (o->fd < 0 || o->hello.conn_id != h->conn_id)
			continue;
		if (same_stream(&o->hello, h))
			return "a second stream with the same place in its connection";
		if (o->hello.nstreams != h->nstreams)
			return "stream count differs from the rest of its connection";
	}
	return NULL;
}

static struct sock_joined *free_joined(struct sock_listen_comm *l)
{
	for (int i = 0; i < SOCK_JOINED_MAX; i++)
		if (l->joined[i].fd < 0)
			return &l->joined[i];
	return NULL;
}

/* The door has a whole hello: keep the stream if it is one of our peers'. */
static int arrived(void *ctx, struct sock_newcomer *n, const char **reject)
{
	struct sock_listen_comm *l = ctx;
	struct sock_joined *j;
	struct sock_hello hello;

	if (sock_hello_decode(n->record, l->nonce, &hello)) {
		*reject = fl_error_text();
		return FL_OK;
	}
	*reject = misfit(l, &hello);
	if (*reject)
		return FL_OK;
	j = free_joined(l);
	if (!j) {
		*reject = "too many streams waiting for their connections";
		return FL_OK;
	}
	j->fd = n->fd;
	j->hello = hello;
	j->since_ns = fl_clock_ns();
	memcpy(j->addr, n->addr, sizeof(j->addr));
	n->fd = -1;
	return FL_OK;
}

/* Finds the streams of connection `conn`; returns how many data streams are in. */
static unsigned gather_connection(struct sock_listen_comm *l, uint64_t conn,
				  struct sock_joined **ctrl, struct sock_joined **data,
				  uint64_t *last_join)
{
	unsigned ndata = 0;

	*ctrl = NULL;
	*last_join = 0;
	for (int i = 0; i < SOCK_JOINED_MAX; i++) {
		struct sock_joined *j = &l->joined[i];

		if (j->fd < 0 || j->hello.conn_id != conn)
			continue;
		if (j->since_ns > *last_join)
			*last_join = j->since_ns;
		if (j->hello.kind == SOCK_STREAM_CONTROL) {
			*ctrl = j;
		} else {
			data[j->hello.index] = j;
			ndata++;
		}
	}
	return ndata;
}

static int hand_over(struct sock_joined *ctrl, struct sock_joined **data, void **recv_comm)
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
	for (int i = 0; i < SOCK_JOINED_MAX; i++) {
		struct sock_joined *data[SOCK_MAX_STREAMS], *ctrl;
		struct sock_joined *j = &l->joined[i];
		uint64_t conn, last_join;
		unsigned ndata;

		if (j->fd < 0)
			continue;
		conn = j->hello.conn_id;
		ndata = gather_connection(l, conn, &ctrl, data, &last_join);
		if (ctrl && ndata == ctrl->hello.nstreams)
			return hand_over(ctrl, data, recv_comm);
		if (now - last_join <= l->timeout_ns)
			continue;
		for (int k = 0; k < SOCK_JOINED_MAX; k++)
			if (l->joined[k].fd >= 0 && l->joined[k].hello.conn_id == conn)
				drop(l, &l->joined[k], "its connection stayed incomplete");
	}
	return FL_OK;
}

int sock_listen_accept(void *listen_comm, void **recv_comm)
{
	struct sock_listen_comm *l = listen_comm;
	int rc;

	*recv_comm = NULL;
	if (!l)
		return fl_fail(FL_ERR_INTERNAL, "accept on a NULL listen comm");
	rc = sock_admit_poll(&l->door, fl_clock_ns(), arrived, l);
	if (rc)
		return rc;
	return assemble(l, fl_clock_ns(), recv_comm);
}

int sock_listen_close(void *listen_comm)
{
	struct sock_listen_comm *l = listen_comm;

	if (!l)
		return FL_OK;
	for (int i = 0; i < SOCK_JOINED_MAX; i++)
		if (l->joined[i].fd >= 0)
			close(l->joined[i].fd);
	sock_admit_close(&l->door);
	close(l->fd);
	free(l);
	return FL_OK;
}
