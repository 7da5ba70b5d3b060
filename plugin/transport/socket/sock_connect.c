/*
 * The connecting side. NCCL calls connect again with the same handle until it
 * returns a comm, so the streams being opened live in a private table keyed by
 * the listener's address and nonce (never by a pointer read from the handle).
 * Done when every stream is connected and its hello written; the listener's
 * accept may run before, during or after.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/error.h"
#include "sock_comm.h"
#include "sock_handle.h"
#include "sock_listen.h"
#include "sock_sys.h"

#define SOCK_MAX_FDS (1 + SOCK_MAX_STREAMS)

struct sock_opening {
	struct sock_opening *next;
	struct sock_handle to;
	struct sock_rules rules;
	unsigned nfds; /* control + data streams */
	int fd[SOCK_MAX_FDS];
	uint8_t connected[SOCK_MAX_FDS];
	size_t sent[SOCK_MAX_FDS];
	uint8_t hello[SOCK_MAX_FDS][SOCK_HELLO_SIZE];
	char addr[SOCK_ADDR_STRLEN];
	char peer[FL_NODE_NAME_LEN + SOCK_ADDR_STRLEN + 4]; /* "node (addr)", for messages */
};

static pthread_mutex_t openings_lock = PTHREAD_MUTEX_INITIALIZER;
static struct sock_opening *openings;

static struct sock_opening **find(const struct sock_handle *h)
{
	struct sock_opening **o = &openings;

	while (*o && !sock_handle_same_listener(&(*o)->to, h))
		o = &(*o)->next;
	return o;
}

static void destroy(struct sock_opening *o)
{
	for (unsigned i = 0; i < o->nfds; i++)
		if (o->fd[i] >= 0)
			close(o->fd[i]);
	free(o);
}

static void write_hellos(struct sock_opening *o, const struct fl_endpoint *self)
{
	struct sock_hello hello = {
		.nstreams = (uint8_t)o->rules.nstreams,
		.nonce = o->to.nonce,
		.conn_id = sock_random_u64(),
		.inline_max = (uint32_t)o->rules.inline_max,
		.min_chunk = (uint32_t)o->rules.min_chunk,
	};

	for (unsigned i = 0; i < o->nfds; i++) {
		hello.kind = i ? SOCK_STREAM_DATA : SOCK_STREAM_CONTROL;
		hello.index = (uint8_t)(i ? i - 1 : 0);
		if (!i)
			hello.endpoint = *self;
		else
			memset(&hello.endpoint, 0, sizeof(hello.endpoint));
		sock_hello_encode(&hello, o->hello[i]);
	}
}

static int start(const struct sock_handle *h, const struct fl_endpoint *self,
		 struct sock_opening **out)
{
	struct sock_opening *o = calloc(1, sizeof(*o));
	int rc = FL_OK;

	if (!o)
		return fl_fail(FL_ERR_SYSTEM, "out of memory for a socket connect");
	o->to = *h;
	o->rules = (struct sock_rules){ (unsigned)sock_cfg.nstreams, sock_cfg.inline_max,
					sock_cfg.min_chunk };
	o->nfds = 1 + o->rules.nstreams;
	sock_addr_format((struct sockaddr *)&h->addr, o->addr, sizeof(o->addr));
	snprintf(o->peer, sizeof(o->peer), "%s (%s)", h->listener.node, o->addr);
	for (unsigned i = 0; i < o->nfds; i++)
		o->fd[i] = -1;
	write_hellos(o, self);
	for (unsigned i = 0; i < o->nfds && !rc; i++) {
		int connected;

		rc = sock_connect_start(&h->addr, h->addrlen, sock_cfg.sock_buf, o->peer, &o->fd[i],
					&connected);
		o->connected[i] = (uint8_t)connected;
	}
	if (rc) {
		destroy(o);
		return rc;
	}
	*out = o;
	return FL_OK;
}

/* Learns which pending connects finished, without waiting. */
static int check_connected(struct sock_opening *o)
{
	int rc = FL_OK;

	for (unsigned i = 0; i < o->nfds && !rc; i++) {
		int connected;

		if (o->connected[i])
			continue;
		rc = sock_connect_check(o->fd[i], o->peer, &connected);
		o->connected[i] = (uint8_t)connected;
	}
	return rc;
}

/* Writes what it can of the hellos; returns FL_OK with *all set once every one is out. */
static int send_hellos(struct sock_opening *o, int *all)
{
	*all = 1;
	for (unsigned i = 0; i < o->nfds; i++) {
		ssize_t n;

		if (!o->connected[i]) {
			*all = 0;
			continue;
		}
		if (o->sent[i] == SOCK_HELLO_SIZE)
			continue;
		n = send(o->fd[i], o->hello[i] + o->sent[i], SOCK_HELLO_SIZE - o->sent[i],
			 MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
			return fl_fail(FL_ERR_SYSTEM, "hello to %s: %s", o->peer, strerror(errno));
		if (n > 0)
			o->sent[i] += (size_t)n;
		if (o->sent[i] < SOCK_HELLO_SIZE)
			*all = 0;
	}
	return FL_OK;
}

static int finish(struct sock_opening *o, void **send_comm)
{
	int rc = sock_send_comm_create(o->fd[0], o->fd + 1, &o->rules, &o->to.listener, o->addr,
				       (struct sock_send_comm **)send_comm);

	free(o); /* the fds belong to the comm now, or were closed */
	return rc;
}

int sock_connect_step(const struct fl_endpoint *self, const void *handle, void **send_comm)
{
	struct sock_handle h;
	struct sock_opening **slot, *o;
	int rc, all = 0;

	*send_comm = NULL;
	rc = sock_handle_decode(handle, &h);
	if (rc)
		return rc;
	pthread_mutex_lock(&openings_lock);
	slot = find(&h);
	if (!*slot)
		rc = start(&h, self, slot);
	o = *slot;
	if (!rc)
		rc = check_connected(o);
	if (!rc)
		rc = send_hellos(o, &all);
	if (rc || all)
		*slot = o ? o->next : NULL;
	pthread_mutex_unlock(&openings_lock);
	if (rc) {
		if (o)
			destroy(o);
		return rc;
	}
	return all ? finish(o, send_comm) : FL_OK;
}
