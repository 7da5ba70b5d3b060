/*
 * FLSOCK_WAIT_ACCEPT: flsock behaving as google/nccl-fastsocket does with its
 * default flow placement (FLOW_PLACEMENT_ENABLE=1, net_fastsocket.cc:140):
 *  - connect hands back a comm at once while the connection is still being
 *    made (ncclSocketConnectV2, net_fastsocket.cc:779-798: a thread connects,
 *    comm->connected = false until then);
 *  - that connection completes only after the peer's accept answered it
 *    (ncclSocketAsyncConnectV2 waits to receive the acceptor's queue id,
 *    net_fastsocket.cc:739-741, which ncclSocketAcceptV2 sends after accept(),
 *    :816, :853-854);
 *  - the first test of a send request blocks until then (ncclFastSocketTest ->
 *    ncclCommProgress -> enqueueTask -> waitConnect, :1432-1440, :1320, :688-692:
 *    a spin on comm->connected).
 * A small "gate" stands for the accept answer: a side channel (flsock_side.h);
 * connect joins it, accept writes one byte on it, and a send comm's first test reads
 * that byte, blocking. Bounded tables, one lock: a test artifact.
 * FLSOCK_GATE_STALL (tests of the shim's timeout): "accept" never answers, so
 * the peer's first send test blocks for ever; "connect" waits for the answer
 * inside connect itself, so two ranks that connect before they accept both hang
 * there (what a hello moved inside connect did over fastsocket).
 */
#ifndef FLSOCK_GATE_H
#define FLSOCK_GATE_H

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include "flsock_side.h"

#define GATE_SLOTS 256

struct gate_entry {
	const void *key; /* a listen comm, a send comm, or a send request */
	int fd;          /* the gate: listening, or joined (-1 once open) */
	const void *comm; /* for a request: its send comm */
};

static pthread_mutex_t gate_lock = PTHREAD_MUTEX_INITIALIZER;
static struct gate_entry gates[GATE_SLOTS];

static int gate_stalls(const char *where)
{
	const char *v = getenv("FLSOCK_GATE_STALL");

	return v && !strcmp(v, where);
}

static int gate_put(const void *key, int fd, const void *comm)
{
	pthread_mutex_lock(&gate_lock);
	for (int i = 0; i < GATE_SLOTS; i++) {
		if (!gates[i].key) {
			gates[i] = (struct gate_entry){ key, fd, comm };
			pthread_mutex_unlock(&gate_lock);
			return 0;
		}
	}
	pthread_mutex_unlock(&gate_lock);
	return -1;
}

/* Takes the entry out; 0 when found. */
static int gate_take(const void *key, struct gate_entry *out)
{
	int found = -1;

	pthread_mutex_lock(&gate_lock);
	for (int i = 0; i < GATE_SLOTS && found; i++) {
		if (gates[i].key == key) {
			*out = gates[i];
			gates[i].key = NULL;
			found = 0;
		}
	}
	pthread_mutex_unlock(&gate_lock);
	return found;
}

static int gate_listen(const void *handle, void *listen_comm)
{
	int fd = side_open(handle, "gate", 1);

	if (fd < 0 || gate_put(listen_comm, fd, NULL)) {
		if (fd >= 0)
			close(fd);
		return FL_ERR_SYSTEM;
	}
	return FL_OK;
}

/* The connection is under way: the comm goes back to the caller, not yet open. */
static int gate_join(const void *handle, void *send_comm)
{
	int fd = side_open(handle, "gate", 0);

	if (fd < 0 || gate_put(send_comm, fd, NULL)) {
		if (fd >= 0)
			close(fd);
		return FL_ERR_SYSTEM;
	}
	if (gate_stalls("connect")) {
		char yes = 0;

		return read(fd, &yes, 1) == 1 ? FL_OK : FL_ERR_SYSTEM;
	}
	return FL_OK;
}

/* fastsocket's accept blocks in accept() and answers each connection (:816, :853). */
static int gate_answer(void *listen_comm)
{
	struct gate_entry l;
	char yes = 1;
	int fd, rc;

	if (gate_take(listen_comm, &l))
		return FL_ERR_INTERNAL;
	fd = accept(l.fd, NULL, NULL);
	if (fd >= 0 && gate_stalls("accept"))
		return FL_OK; /* never answered, never closed: the peer's read waits */
	rc = fd >= 0 && write(fd, &yes, 1) == 1 ? FL_OK : FL_ERR_SYSTEM;
	if (fd >= 0)
		close(fd);
	gate_put(listen_comm, l.fd, NULL); /* closed with the listen comm */
	return rc;
}

static void gate_close_listen(void *listen_comm)
{
	struct gate_entry l;

	if (!gate_take(listen_comm, &l))
		close(l.fd);
}

/* A send posted before the connection is open: its test waits for the gate. */
static void gate_note_send(void *send_comm, void *request)
{
	struct gate_entry c;

	if (!request || gate_take(send_comm, &c))
		return;
	gate_put(send_comm, c.fd, NULL);
	gate_put(request, -1, send_comm);
}

/* waitConnect: blocks until the peer's accept answered (the whole point of this plugin). */
static int gate_wait(void *request)
{
	struct gate_entry r, c;
	char yes = 0;

	if (gate_take(request, &r))
		return FL_OK;
	if (gate_take(r.comm, &c))
		return FL_OK; /* opened by an earlier request's test */
	if (read(c.fd, &yes, 1) != 1 || yes != 1) {
		close(c.fd);
		return FL_ERR_SYSTEM;
	}
	close(c.fd);
	return FL_OK;
}

static void gate_close_send(void *send_comm)
{
	struct gate_entry c;

	if (!gate_take(send_comm, &c))
		close(c.fd);
}

#endif
