/* Connecting ranks: listen, exchange handles, connect and accept the way NCCL does. */
#include "shim.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "boot_socket.h"
#include "watchdog.h"

#define CONNECT_PAUSE_NS 100000L

/* "connect() to rank 2 and accept() from rank 0 not done" for a timeout message. */
static int fail_pending(const struct shim_world *w, const struct shim_link *link)
{
	char what[96] = "";

	if (link->send_peer >= 0 && !link->send_comm)
		snprintf(what, sizeof(what), "connect() to rank %d", link->send_peer);
	if (link->recv_peer >= 0 && !link->recv_comm)
		snprintf(what + strlen(what), sizeof(what) - strlen(what),
			 "%saccept() from rank %d", what[0] ? " and " : "", link->recv_peer);
	return shim_fail(FL_ERR_SYSTEM, "%s not done after %d s", what, w->timeout_ms / 1000);
}

/*
 * NCCL's pattern: call connect and accept in turn until both return a comm,
 * never finishing one before starting the other (each may need the other
 * side's progress).
 */
static int connect_and_accept(struct shim_world *w, struct shim_link *link, void *handle,
			      void *listen_comm)
{
	struct timespec pause = { 0, CONNECT_PAUSE_NS };
	uint64_t deadline = shim_deadline_ms(w->timeout_ms);
	int rc;

	while ((link->send_peer >= 0 && !link->send_comm) ||
	       (link->recv_peer >= 0 && !link->recv_comm)) {
		void *before_send = link->send_comm, *before_recv = link->recv_comm;

		if (link->send_peer >= 0 && !link->send_comm) {
			rc = SHIM_WATCHED(w, "connect() to", link->send_peer,
					  shim_net_connect(&w->net, w->dev, handle,
							   &link->send_comm));
			if (rc)
				return shim_fail(rc, "connect() to rank %d failed: %s (%d)",
						 link->send_peer, shim_result_name(rc), rc);
		}
		if (link->recv_peer >= 0 && !link->recv_comm) {
			rc = SHIM_WATCHED(w, "accept() from", link->recv_peer,
					  shim_net_accept(&w->net, listen_comm, &link->recv_comm));
			if (rc)
				return shim_fail(rc, "accept() from rank %d failed: %s (%d)",
						 link->recv_peer, shim_result_name(rc), rc);
		}
		if (link->send_comm != before_send || link->recv_comm != before_recv)
			continue;
		if (shim_now_ns() > deadline)
			return fail_pending(w, link);
		nanosleep(&pause, NULL);
	}
	return FL_OK;
}

/*
 * NCCL's receive buffers: a collective's NCCL_STEPS steps of its protocol (2.30.7
 * src/transport/net.cc:1098-1103), or the shared pool of NCCL_SHARED_STEPS p2pChunkSize slots
 * point-to-point receives land in (:1104-1111, 688-694); one ring serves both here, as a
 * connection runs one op at a time.
 */
static size_t staging_bytes(const struct shim_world *w)
{
	struct shim_coll_shape c;
	size_t coll, p2p = SHIM_NCCL_SHARED_STEPS * w->rules.p2p_chunk;

	shim_rules_coll(&w->rules, w->rules.proto, &c);
	coll = SHIM_STEPS * c.step;
	return coll > p2p ? coll : p2p;
}

static int register_staging(struct shim_world *w, struct shim_link *link)
{
	size_t bytes = staging_bytes(w);
	int rc;

	rc = shim_mem_alloc_net(w, bytes, (void **)&link->staging);
	if (rc)
		return rc;
	link->staging_bytes = bytes;
	rc = shim_mem_register(w, link->recv_comm, link->staging, bytes, &link->staging_mh);
	if (rc)
		return shim_fail(rc, "regMr() of the staging buffers failed: %s (%d)",
				 shim_result_name(rc), rc);
	return FL_OK;
}

/* LL and LL128 sends leave from NCCL's own buffer, where the GPU wrote the lines (:914-920). */
static int register_send_staging(struct shim_world *w, struct shim_link *link)
{
	size_t bytes = SHIM_STEPS * w->rules.step[w->rules.proto];
	int rc;

	if (w->rules.proto == SHIM_PROTO_SIMPLE)
		return FL_OK;
	rc = shim_mem_alloc_net(w, bytes, (void **)&link->send_staging);
	if (rc)
		return rc;
	rc = shim_mem_register(w, link->send_comm, link->send_staging, bytes,
			       &link->send_staging_mh);
	if (rc)
		return shim_fail(rc, "regMr() of the send buffers failed: %s (%d)",
				 shim_result_name(rc), rc);
	return FL_OK;
}

static int exchange_and_connect(struct shim_world *w, struct shim_link *link, void *listen_comm,
				const char *handle)
{
	char *handles = calloc((size_t)w->nranks, FL_HANDLE_SIZE);
	int rc;

	if (!handles)
		return shim_fail(FL_ERR_SYSTEM, "out of memory");
	rc = shim_boot_allgather(&w->boot, handle, handles, FL_HANDLE_SIZE);
	/* connect() may keep its progress in the handle: pass the same buffer every time. */
	if (!rc && (link->send_peer >= 0 || link->recv_peer >= 0))
		rc = connect_and_accept(w, link, handles + (size_t)(link->send_peer >= 0 ?
					link->send_peer : 0) * FL_HANDLE_SIZE, listen_comm);
	free(handles);
	return rc;
}

int shim_link_open(struct shim_world *w, int send_peer, int recv_peer, struct shim_link *link)
{
	char handle[FL_HANDLE_SIZE] = { 0 };
	void *listen_comm = NULL;
	int rc;

	*link = (struct shim_link){ .send_peer = send_peer, .recv_peer = recv_peer };
	/* A rank that sits the round out still takes part in the exchange. */
	rc = recv_peer >= 0 ? SHIM_WATCHED(w, "listen() for", recv_peer,
					   shim_net_listen(&w->net, w->dev, handle, &listen_comm)) :
			      FL_OK;
	if (rc)
		return shim_fail(rc, "listen() on device %d failed: %s (%d)", w->dev,
				 shim_result_name(rc), rc);
	rc = exchange_and_connect(w, link, listen_comm, handle);
	if (listen_comm)
		shim_net_close_listen(&w->net, listen_comm);
	if (!rc && link->recv_comm)
		rc = register_staging(w, link);
	if (!rc && link->send_comm)
		rc = register_send_staging(w, link);
	if (rc) {
		shim_link_close(w, link);
		return rc;
	}
	SHIM_INFO(SHIM_LOG_INIT | SHIM_LOG_NET, "shim: connected: send to rank %d, receive from "
		  "rank %d", send_peer, recv_peer);
	return FL_OK;
}

void shim_link_close(struct shim_world *w, struct shim_link *link)
{
	if (link->staging_mh)
		shim_net_dereg_mr(&w->net, link->recv_comm, link->staging_mh);
	shim_mem_free_net(w, link->staging);
	if (link->send_staging_mh)
		shim_net_dereg_mr(&w->net, link->send_comm, link->send_staging_mh);
	shim_mem_free_net(w, link->send_staging);
	if (link->send_comm)
		shim_net_close_send(&w->net, link->send_comm);
	if (link->recv_comm)
		shim_net_close_recv(&w->net, link->recv_comm);
	*link = (struct shim_link){ .send_peer = link->send_peer, .recv_peer = link->recv_peer };
}

static int register_links(struct shim_world *w, struct shim_link *links, int nlinks,
			  struct shim_buf *buf, void *data, size_t size)
{
	int rc = FL_OK;

	*buf = (struct shim_buf){ .data = data, .size = size, .net = data, .link = links,
				  .nlinks = nlinks };
	/* No GPUDirect: NCCL moves GPU data through registered host memory, and so do we. */
	if (shim_mem_staged(w)) {
		rc = shim_mem_alloc_net(w, size, &buf->net);
		if (rc)
			return rc;
	}
	for (int i = 0; !rc && i < nlinks; i++) {
		if (links[i].send_comm)
			rc = shim_mem_register(w, links[i].send_comm, buf->net, size,
					       &buf->send_mh[i]);
		if (!rc && links[i].recv_comm)
			rc = shim_mem_register(w, links[i].recv_comm, buf->net, size,
					       &buf->recv_mh[i]);
	}
	if (rc) {
		shim_buf_deregister(w, buf);
		return shim_fail(rc, "regMr() of %zu bytes failed: %s (%d)", size,
				 shim_result_name(rc), rc);
	}
	return FL_OK;
}

int shim_buf_register(struct shim_world *w, struct shim_buf *buf, void *data, size_t size)
{
	return register_links(w, w->ring, w->channels, buf, data, size);
}

int shim_buf_register_on(struct shim_world *w, struct shim_link *link, struct shim_buf *buf,
			 void *data, size_t size)
{
	return register_links(w, link, 1, buf, data, size);
}

void shim_buf_deregister(struct shim_world *w, struct shim_buf *buf)
{
	for (int i = 0; i < buf->nlinks; i++) {
		if (buf->send_mh[i] && !w->broken)
			shim_net_dereg_mr(&w->net, buf->link[i].send_comm, buf->send_mh[i]);
		if (buf->recv_mh[i] && !w->broken)
			shim_net_dereg_mr(&w->net, buf->link[i].recv_comm, buf->recv_mh[i]);
		buf->send_mh[i] = buf->recv_mh[i] = NULL;
	}
	if (buf->net && buf->net != buf->data)
		shim_mem_free_net(w, buf->net);
	buf->net = NULL;
}
