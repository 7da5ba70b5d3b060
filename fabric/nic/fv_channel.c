/* Completion channels: a pipe per channel. An armed CQ that receives a completion writes its own
 * address into the pipe once, so the channel's fd becomes readable exactly as a kernel's
 * completion event file does, and ibv_get_cq_event reads the CQ back from it. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "fv_internal.h"

struct fv_channel {
	struct ibv_comp_channel ch;	/* ch.fd is the read end */
	int wr_fd;
};

#define fv_channel_of(c) ((struct fv_channel *)(c))

struct ibv_comp_channel *ibv_create_comp_channel(struct ibv_context *context)
{
	struct fv_channel *c = calloc(1, sizeof(*c));
	int fds[2];

	if (!c) {
		errno = ENOMEM;
		return NULL;
	}
	if (pipe2(fds, O_CLOEXEC)) {
		int err = errno;

		free(c);
		errno = err;
		return NULL;
	}
	/* the write side never blocks: an armed CQ signals once, so the pipe holds at most one
	 * address per CQ */
	fcntl(fds[1], F_SETFL, O_NONBLOCK);
	c->ch.context = context;
	c->ch.fd = fds[0];
	c->ch.refcnt = 0;
	c->wr_fd = fds[1];
	return &c->ch;
}

int ibv_destroy_comp_channel(struct ibv_comp_channel *channel)
{
	struct fv_channel *c = fv_channel_of(channel);

	if (__atomic_load_n(&channel->refcnt, __ATOMIC_ACQUIRE))
		return EBUSY;	/* CQs still report to it */
	close(c->ch.fd);
	close(c->wr_fd);
	free(c);
	return 0;
}

void fv_channel_attach(struct ibv_comp_channel *channel)
{
	__atomic_add_fetch(&channel->refcnt, 1, __ATOMIC_ACQ_REL);
}

void fv_channel_detach(struct ibv_comp_channel *channel)
{
	__atomic_sub_fetch(&channel->refcnt, 1, __ATOMIC_ACQ_REL);
}

void fv_channel_signal(struct ibv_comp_channel *channel, struct ibv_cq *cq)
{
	if (write(fv_channel_of(channel)->wr_fd, &cq, sizeof(cq)) != sizeof(cq))
		fv_log("completion channel %p full: event for CQ %p lost", (void *)channel,
		       (void *)cq);
}

int ibv_get_cq_event(struct ibv_comp_channel *channel, struct ibv_cq **cq, void **cq_context)
{
	struct ibv_cq *got;
	ssize_t n;

	do
		n = read(channel->fd, &got, sizeof(got));
	while (n < 0 && errno == EINTR);
	if (n != sizeof(got))
		return -1;	/* errno from read: EAGAIN when the fd was made non-blocking */
	*cq = got;
	*cq_context = got->cq_context;
	return 0;
}

void ibv_ack_cq_events(struct ibv_cq *cq, unsigned int nevents)
{
	pthread_mutex_lock(&cq->mutex);
	cq->comp_events_completed += nevents;
	pthread_cond_signal(&cq->cond);
	pthread_mutex_unlock(&cq->mutex);
}

/* context->ops.req_notify_cq: the next completion (or one already waiting, which hardware
 * reports at once too) raises one event. Solicited-only arming is treated as arming for every
 * completion, a superset the specification allows. */
int fv_op_req_notify_cq(struct ibv_cq *ibcq, int solicited_only)
{
	struct fv_cq *cq = fv_cq_of(ibcq);

	(void)solicited_only;
	if (!ibcq->channel)
		return EINVAL;
	pthread_mutex_lock(&cq->lock);
	if (cq->count) {
		cq->armed = false;
		fv_channel_signal(ibcq->channel, ibcq);
	} else {
		cq->armed = true;
	}
	pthread_mutex_unlock(&cq->lock);
	return 0;
}
