/*
 * FLSOCK_IN_ORDER: flsock testing requests as google/nccl-fastsocket does: a
 * comm's requests complete in the order they were posted, and test() on any
 * but the oldest one still outstanding on its comm is an error
 * (net_fastsocket.cc:1432-1447, ncclFastSocketTest: "test called with invalid
 * request", ncclInternalError, when r is not comm->rq.next_inactive()).
 * NCCL tests a connection's requests oldest first (2.28.9
 * src/transport/net.cc:1335-1339, 1503-1508), so it never meets that error;
 * a wrapper that posts requests of its own on the inner's comm (ext's hidden
 * hello) must test those before NCCL's. Bounded table, one lock: a test artifact.
 */
#ifndef FLSOCK_ORDER_H
#define FLSOCK_ORDER_H

#include <pthread.h>
#include <stdint.h>

#define ORDER_SLOTS 2048

struct order_entry {
	const void *request; /* NULL: free */
	const void *comm;
	uint64_t seq;
};

static pthread_mutex_t order_lock = PTHREAD_MUTEX_INITIALIZER;
static struct order_entry order[ORDER_SLOTS];
static uint64_t order_seq;

/* A request was posted on comm: it completes after every earlier one of comm. */
static int order_note(const void *comm, const void *request)
{
	int rc = FL_ERR_INTERNAL;

	if (!request)
		return FL_OK;
	pthread_mutex_lock(&order_lock);
	for (int i = 0; i < ORDER_SLOTS && rc; i++) {
		if (!order[i].request) {
			order[i] = (struct order_entry){ request, comm, ++order_seq };
			rc = FL_OK;
		}
	}
	pthread_mutex_unlock(&order_lock);
	if (rc)
		FL_WARN("flsock: more than %d requests outstanding (a test plugin's bound)",
			ORDER_SLOTS);
	return rc;
}

/* 0 when request is its comm's oldest outstanding one (or not tracked). */
static int order_check(const void *request)
{
	const struct order_entry *mine = NULL;
	int older = 0;

	pthread_mutex_lock(&order_lock);
	for (int i = 0; i < ORDER_SLOTS && !mine; i++)
		if (order[i].request == request)
			mine = &order[i];
	for (int i = 0; mine && i < ORDER_SLOTS; i++)
		older += order[i].request && order[i].comm == mine->comm &&
			 order[i].seq < mine->seq;
	pthread_mutex_unlock(&order_lock);
	if (!older)
		return FL_OK;
	FL_WARN("flsock: test called with request %p while %d older one(s) of its comm are "
		"outstanding (fastsocket: \"test called with invalid request\")", request, older);
	return FL_ERR_INTERNAL;
}

static void order_forget_where(const void *key, int by_comm)
{
	pthread_mutex_lock(&order_lock);
	for (int i = 0; i < ORDER_SLOTS; i++)
		if (order[i].request && (by_comm ? order[i].comm : order[i].request) == key)
			order[i].request = NULL;
	pthread_mutex_unlock(&order_lock);
}

static void order_done(const void *request)
{
	order_forget_where(request, 0);
}

static void order_close(const void *comm)
{
	order_forget_where(comm, 1);
}

#endif
