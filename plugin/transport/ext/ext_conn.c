/*
 * Connection setup over the inner plugin. connect and accept wait for nothing
 * but the inner's own connect and accept: a comm is handed to NCCL in the call
 * where the inner hands back its own, and the hidden hello (ext_hello.c) is
 * posted by the comm's first isend/irecv, ahead of its data, and tested in the
 * comm's calls until it moved (ext_hello_drive). Waiting
 * for it here would hang a pair of ranks whose inner completes a first send only
 * once the peer accepted (fastsocket: tests/inner/flsock_net.c FLSOCK_WAIT_ACCEPT),
 * as NCCL calls connect and accept of a pair in turn on one thread. A pending
 * connect is found again by its handle (NCCL calls again with the same buffer).
 * NCCL's device-handle pointer goes to every inner connect/accept unchanged.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/log.h"
#include "ext_internal.h"

static pthread_mutex_t pending_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ext_pending_send *pending; /* setup only: never touched by the data path */
static _Atomic uint32_t conn_ids;

uint32_t ext_next_conn_id(void)
{
	return atomic_fetch_add(&conn_ids, 1) + 1;
}

struct ext_comm *ext_comm_new(void *inner, int send, uint32_t id, const struct fl_endpoint *peer)
{
	struct ext_comm *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->inner = inner;
	c->send = send;
	c->id = id;
	c->peer = *peer;
	return c;
}

static struct ext_ctx *ctx_or_process(void *tctx)
{
	return tctx ? tctx : &ext_process_ctx;
}

int ext_hello_on_device(int dev)
{
	struct fl_props p;

	if (!ext_hello_on)
		return 0;
	return ext_inner_props(&ext_plugin, dev, &p) || p.net_device_type == FL_ABI_DEVICE_HOST;
}

int ext_listen_ctx(void *tctx, int dev, const struct fl_endpoint *self, void *handle,
		   void **listen_comm)
{
	struct ext_listen *l = calloc(1, sizeof(*l));
	int rc;

	*listen_comm = NULL;
	if (!l)
		return fl_fail(FL_ERR_SYSTEM, "ext: out of memory for a listener");
	memset(handle, 0, FL_HANDLE_SIZE);
	rc = ext_inner_listen(&ext_plugin, ctx_or_process(tctx), dev, handle, &l->inner);
	if (rc || !l->inner) {
		free(l);
		return fl_fail(rc ? rc : FL_ERR_INTERNAL, "ext: %s listen on device %d failed "
			       "(error %d)", ext_plugin.name, dev, rc);
	}
	l->self = *self;
	l->with_hello = ext_hello_on_device(dev);
	ext_trailer_put(handle, self);
	*listen_comm = l;
	return FL_OK;
}

/* ---- send side ---- */

static struct ext_pending_send *find_pending(const void *handle, int unlink)
{
	struct ext_pending_send **pp, *p;

	pthread_mutex_lock(&pending_lock);
	for (pp = &pending; (p = *pp) && p->handle != handle; pp = &p->next)
		;
	if (p && unlink)
		*pp = p->next;
	pthread_mutex_unlock(&pending_lock);
	return p;
}

static struct ext_pending_send *new_pending(void *handle, const struct fl_endpoint *self)
{
	struct ext_pending_send *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->handle = handle;
	p->self = *self;
	p->id = ext_next_conn_id();
	p->peer.rank = -1;
	ext_trailer_take(handle, &p->peer);
	p->peer.comm_hash = self->comm_hash;
	pthread_mutex_lock(&pending_lock);
	p->next = pending;
	pending = p;
	pthread_mutex_unlock(&pending_lock);
	return p;
}

static void drop_pending(struct ext_pending_send *p, int close_inner)
{
	find_pending(p->handle, 1);
	if (close_inner && p->inner)
		ext_plugin.close_send(p->inner);
	free(p);
}

/* The hello's buffer, our identity in it: the comm's first isend posts it. */
static int hello_ready(struct ext_comm *c, const struct fl_endpoint *self, int with_hello)
{
	if (!with_hello)
		return FL_OK;
	c->hello.buf = aligned_alloc(64, EXT_HELLO_SIZE);
	if (!c->hello.buf)
		return fl_fail(FL_ERR_SYSTEM, "ext: out of memory for the hello");
	if (c->send)
		ext_hello_encode(c->hello.buf, self, c->id);
	else
		memset(c->hello.buf, 0, EXT_HELLO_SIZE);
	c->peer_later = !c->send;
	return FL_OK;
}

static int connect_done(struct ext_pending_send *p, int dev, void **send_comm)
{
	struct ext_comm *c = ext_comm_new(p->inner, 1, p->id, &p->peer);

	if (!c || hello_ready(c, &p->self, ext_hello_on_device(dev))) {
		free(c);
		drop_pending(p, 1);
		return fl_fail(FL_ERR_SYSTEM, "ext: out of memory for a connection");
	}
	FL_INFO("ext connection %u send %s/%s -> %s/%s (rank %d)%s", c->id, p->self.node,
		p->self.dev_name, p->peer.node[0] ? p->peer.node : "?",
		p->peer.dev_name[0] ? p->peer.dev_name : "?", p->peer.rank,
		p->peer.node[0] ? "" : ": the inner's handle had no room for the receiver's name");
	drop_pending(p, 0);
	*send_comm = c;
	return FL_OK;
}

int ext_connect_ctx(void *tctx, int dev, const struct fl_endpoint *self, void *handle,
		    void **send_comm, void **dev_comm)
{
	struct fl_abi_dev_handle *none = NULL, **devh = dev_comm ? (void *)dev_comm : &none;
	struct ext_pending_send *p = find_pending(handle, 0);
	int rc;

	*send_comm = NULL;
	/* NCCL gave up on a connect and reused its handle's memory for another communicator */
	if (p && p->self.comm_hash != self->comm_hash) {
		drop_pending(p, 1);
		p = NULL;
	}
	if (!p && !(p = new_pending(handle, self)))
		return fl_fail(FL_ERR_SYSTEM, "ext: out of memory for a connect");
	rc = ext_inner_connect(&ext_plugin, ctx_or_process(tctx), dev, handle, &p->inner, devh);
	if (rc) {
		drop_pending(p, 0);
		return fl_fail(rc, "ext: %s connect on device %d failed (error %d)",
			       ext_plugin.name, dev, rc);
	}
	return p->inner ? connect_done(p, dev, send_comm) : FL_OK;
}

/* ---- receive side ---- */

int ext_accept_dev(void *listen_comm, void **recv_comm, void **dev_comm)
{
	struct fl_abi_dev_handle *none = NULL, **devh = dev_comm ? (void *)dev_comm : &none;
	struct fl_endpoint unknown = { .rank = -1 };
	struct ext_listen *l = listen_comm;
	void *inner = NULL;
	struct ext_comm *c;
	int rc;

	*recv_comm = NULL;
	rc = ext_inner_accept(&ext_plugin, l->inner, &inner, devh);
	if (rc)
		return fl_fail(rc, "ext: %s accept failed (error %d)", ext_plugin.name, rc);
	if (!inner)
		return FL_OK;
	c = ext_comm_new(inner, 0, ext_next_conn_id(), &unknown);
	if (!c || hello_ready(c, &l->self, l->with_hello)) {
		free(c);
		ext_plugin.close_recv(inner);
		return fl_fail(FL_ERR_SYSTEM, "ext: out of memory for a connection");
	}
	*recv_comm = c;
	return FL_OK;
}

int ext_accept(void *listen_comm, void **recv_comm)
{
	return ext_accept_dev(listen_comm, recv_comm, NULL);
}

/* The receive side's hello named the sender: the wrap joins its hop at its next call. */
static int hello_arrived(struct ext_comm *c)
{
	uint32_t pid = 0, id = 0;
	int rc = ext_hello_decode(c->hello.buf, &c->peer, &pid, &id);

	if (rc)
		return rc;
	c->peer_later = 0;
	FL_INFO("ext connection %u recv <- %s/%s (rank %d, pid %u, its connection %u)", c->id,
		c->peer.node[0] ? c->peer.node : "?", c->peer.dev_name[0] ? c->peer.dev_name : "?",
		c->peer.rank, pid, id);
	return FL_OK;
}

int ext_hello_drive(struct ext_comm *c, int *posted)
{
	int done = 0, rc = ext_hello_step(c->inner, c->send, &c->hello, &done);

	*posted = done || c->hello.request;
	if (!rc && done && !c->send)
		rc = hello_arrived(c);
	if (!rc && done)
		ext_hello_release(c->inner, &c->hello);
	return rc;
}

int ext_peer(void *comm, struct fl_endpoint *peer)
{
	const struct ext_comm *c = comm;

	if (c->peer_later)
		return FL_PEER_LATER;
	if (!c->peer.node[0])
		return FL_ERR_INTERNAL; /* unknown: the wrap names it from NCCL's tags */
	*peer = c->peer;
	return FL_OK;
}

static int close_comm(struct ext_comm *c, int (*close_inner)(void *))
{
	int rc;

	if (!c)
		return FL_OK;
	ext_hello_release(c->inner, &c->hello); /* closed before its hello moved */
	rc = close_inner(c->inner);
	free(c);
	return rc ? fl_fail(rc, "ext: %s close failed (error %d)", ext_plugin.name, rc) : FL_OK;
}

int ext_close_send(void *send_comm)
{
	return close_comm(send_comm, ext_plugin.close_send);
}

int ext_close_recv(void *recv_comm)
{
	return close_comm(recv_comm, ext_plugin.close_recv);
}

int ext_close_listen(void *listen_comm)
{
	struct ext_listen *l = listen_comm;
	int rc;

	if (!l)
		return FL_OK;
	rc = ext_plugin.close_listen(l->inner);
	free(l);
	return rc ? fl_fail(rc, "ext: %s closeListen failed (error %d)", ext_plugin.name, rc) :
		    FL_OK;
}
