/*
 * FLSOCK_WAIT_CTS: flsock sending as NCCL's IB transport and IBext do: isend
 * hands back no request ("not now") until the receiver has posted the buffer
 * the send goes to (2.28.9 src/transport/net_ib.cc:2201-2209, ncclIbIsend: the
 * receiver's irecv writes the buffer into the sender's FIFO; while the slot is
 * not there yet, *request = NULL). So a sender never waits inside a request it
 * was given: a receiver that posts late shows only in how often isend said
 * "not now", never in the sender's posted -> done times.
 * Here the FIFO is a credit per posted receive, one byte on a side channel per
 * connection (flsock_side.h): irecv writes it, isend reads it without blocking. Bounded table, one
 * lock: a test artifact.
 */
#ifndef FLSOCK_CTS_H
#define FLSOCK_CTS_H

#include <pthread.h>
#include <stdio.h>
#include <sys/socket.h>
#include <unistd.h>

#include "flsock_side.h"

#define CTS_SLOTS 256

struct cts_entry {
	const void *comm; /* a listen, send or recv comm; NULL: free */
	int fd;
	int credits;      /* read off the socket, not yet spent (send comms) */
};

static pthread_mutex_t cts_lock = PTHREAD_MUTEX_INITIALIZER;
static struct cts_entry cts[CTS_SLOTS];

static struct cts_entry *cts_find(const void *comm)
{
	for (int i = 0; i < CTS_SLOTS; i++)
		if (cts[i].comm == comm)
			return &cts[i];
	return NULL;
}

static int cts_put(const void *comm, int fd)
{
	struct cts_entry *e;

	pthread_mutex_lock(&cts_lock);
	e = cts_find(NULL);
	if (e)
		*e = (struct cts_entry){ comm, fd, 0 };
	pthread_mutex_unlock(&cts_lock);
	return e ? FL_OK : FL_ERR_SYSTEM;
}

static int cts_fd(const void *comm)
{
	struct cts_entry *e;
	int fd;

	pthread_mutex_lock(&cts_lock);
	e = cts_find(comm);
	fd = e ? e->fd : -1;
	pthread_mutex_unlock(&cts_lock);
	return fd;
}

static int cts_open(const void *handle, void *comm, int listen_end)
{
	int fd = side_open(handle, "cts", listen_end);

	if (fd < 0 || cts_put(comm, fd)) {
		if (fd >= 0)
			close(fd);
		return FL_ERR_SYSTEM;
	}
	return FL_OK;
}

static int cts_listen(const void *handle, void *listen_comm)
{
	return cts_open(handle, listen_comm, 1);
}

/* In the same call as the socket transport's connect: the peer's accept finds it at once. */
static int cts_join(const void *handle, void *send_comm)
{
	return cts_open(handle, send_comm, 0);
}

static int cts_accept(void *listen_comm, void *recv_comm)
{
	int lfd = cts_fd(listen_comm), fd = lfd >= 0 ? accept(lfd, NULL, NULL) : -1;

	if (fd < 0 || cts_put(recv_comm, fd)) {
		if (fd >= 0)
			close(fd);
		return FL_ERR_SYSTEM;
	}
	return FL_OK;
}

/* The receiver posted a buffer: the sender may send into it. */
static int cts_grant(void *recv_comm)
{
	int fd = cts_fd(recv_comm);
	char one = 1;

	return fd >= 0 && write(fd, &one, 1) == 1 ? FL_OK : FL_ERR_SYSTEM;
}

/* 1: a posted buffer is there for the next send (spent); 0: not now. */
static int cts_take(void *send_comm)
{
	char got[64];
	struct cts_entry *e;
	ssize_t n;
	int ok = 0;

	pthread_mutex_lock(&cts_lock);
	e = cts_find(send_comm);
	if (e && !e->credits) {
		n = recv(e->fd, got, sizeof(got), MSG_DONTWAIT);
		e->credits += n > 0 ? (int)n : 0;
	}
	if (e && e->credits) {
		e->credits--;
		ok = 1;
	}
	pthread_mutex_unlock(&cts_lock);
	return e ? ok : 1;
}

/* The socket transport said "not now" itself: the buffer is still there. */
static void cts_give_back(void *send_comm)
{
	struct cts_entry *e;

	pthread_mutex_lock(&cts_lock);
	e = cts_find(send_comm);
	if (e)
		e->credits++;
	pthread_mutex_unlock(&cts_lock);
}

static void cts_close(const void *comm)
{
	struct cts_entry *e;

	pthread_mutex_lock(&cts_lock);
	e = cts_find(comm);
	if (e) {
		close(e->fd);
		e->comm = NULL;
	}
	pthread_mutex_unlock(&cts_lock);
}

#endif
