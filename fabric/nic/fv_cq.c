/* Completion queues of a fixed depth: one entry too many puts the CQ in error, as on hardware. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fv_internal.h"

struct ibv_cq *ibv_create_cq(struct ibv_context *context, int cqe, void *cq_context,
			     struct ibv_comp_channel *channel, int comp_vector)
{
	struct fv_cq *cq;

	if (cqe < 1 || cqe > FV_MAX_CQE || comp_vector < 0 ||
	    comp_vector >= context->num_comp_vectors) {
		errno = EINVAL;
		return NULL;
	}
	cq = calloc(1, sizeof(*cq));
	if (!cq) {
		errno = ENOMEM;
		return NULL;
	}
	cq->wc = calloc((size_t)cqe, sizeof(*cq->wc));
	cq->meta = calloc((size_t)cqe, sizeof(*cq->meta));
	if (!cq->wc || !cq->meta) {
		free(cq->wc);
		free(cq->meta);
		free(cq);
		errno = ENOMEM;
		return NULL;
	}
	cq->cap = (uint32_t)cqe;
	pthread_mutex_init(&cq->lock, NULL);
	cq->cq.context = context;
	cq->cq.cq_context = cq_context;
	cq->cq.cqe = cqe;
	cq->cq.channel = channel;
	if (channel)
		fv_channel_attach(channel);
	pthread_mutex_init(&cq->cq.mutex, NULL);
	pthread_cond_init(&cq->cq.cond, NULL);
	return &cq->cq;
}

int ibv_destroy_cq(struct ibv_cq *ibcq)
{
	struct fv_cq *cq = fv_cq_of(ibcq);

	if (atomic_load(&cq->users))
		return EBUSY;
	if (ibcq->channel)
		fv_channel_detach(ibcq->channel);
	pthread_mutex_destroy(&cq->lock);
	pthread_mutex_destroy(&ibcq->mutex);
	pthread_cond_destroy(&ibcq->cond);
	free(cq->wc);
	free(cq->meta);
	free(cq);
	return 0;
}

static void overrun(struct fv_cq *cq)
{
	struct ibv_async_event ev = { .event_type = IBV_EVENT_CQ_ERR };

	cq->overrun = true;
	ev.element.cq = &cq->cq;
	fv_event_post(fv_ctx(cq->cq.context), &ev);
	fv_log("CQ %p overrun: %u entries not polled", (void *)cq, cq->cap);
}

bool fv_cq_push(struct fv_cq *cq, const struct ibv_wc *wc, struct fv_qp *qp, uint64_t sq_index)
{
	bool ok = false;

	pthread_mutex_lock(&cq->lock);
	if (cq->overrun) {
		/* already in error: entries are lost */
	} else if (cq->count == cq->cap) {
		overrun(cq);
	} else {
		uint32_t i = (cq->head + cq->count) % cq->cap;

		cq->wc[i] = *wc;
		cq->meta[i].qp = qp;
		cq->meta[i].sq_index = sq_index;
		cq->count++;
		ok = true;
		if (cq->armed) {
			cq->armed = false;
			fv_channel_signal(cq->cq.channel, &cq->cq);
		}
	}
	pthread_mutex_unlock(&cq->lock);
	return ok;
}

void fv_cq_forget_qp(struct fv_cq *cq, struct fv_qp *qp)
{
	pthread_mutex_lock(&cq->lock);
	for (uint32_t n = 0; n < cq->count; n++) {
		uint32_t i = (cq->head + n) % cq->cap;

		if (cq->meta[i].qp == qp)
			cq->meta[i].qp = NULL;
	}
	pthread_mutex_unlock(&cq->lock);
}

/* Takes the oldest entry (cq locked). A polled send completion frees its SQ slot and those of
 * the unsignalled WRs before it, which is when hardware lets them be reused. */
static void pop_locked(struct fv_cq *cq, struct ibv_wc *wc)
{
	struct fv_cqe_meta *m = &cq->meta[cq->head];

	*wc = cq->wc[cq->head];
	if (m->qp) {
		uint64_t freed = atomic_load(&m->qp->sq_freed);

		if (m->sq_index + 1 > freed)
			atomic_store(&m->qp->sq_freed, m->sq_index + 1);
	}
	cq->head = (cq->head + 1) % cq->cap;
	cq->count--;
}

bool fv_cq_pop(struct fv_cq *cq, struct ibv_wc *wc)
{
	bool got = false;

	pthread_mutex_lock(&cq->lock);
	if (!cq->overrun && cq->count) {
		pop_locked(cq, wc);
		got = true;
	}
	pthread_mutex_unlock(&cq->lock);
	return got;
}

int fv_op_poll_cq(struct ibv_cq *ibcq, int n, struct ibv_wc *wc)
{
	struct fv_cq *cq = fv_cq_of(ibcq);
	int got = 0;

	if (n < 0)
		return -1;
	fv_nic_poll_hook();
	pthread_mutex_lock(&cq->lock);
	if (cq->overrun) {
		pthread_mutex_unlock(&cq->lock);
		return -1;
	}
	while (got < n && cq->count)
		pop_locked(cq, &wc[got++]);
	pthread_mutex_unlock(&cq->lock);
	return got;
}

/* A CQ grows or shrinks to cqe entries, keeping what it holds in order; fewer entries than it
 * holds is refused, as drivers refuse it. */
int ibv_resize_cq(struct ibv_cq *ibcq, int cqe)
{
	struct fv_cq *cq = fv_cq_of(ibcq);
	struct ibv_wc *wc;
	struct fv_cqe_meta *meta;
	int err = 0;

	if (cqe < 1 || cqe > FV_MAX_CQE)
		return EINVAL;
	wc = calloc((size_t)cqe, sizeof(*wc));
	meta = calloc((size_t)cqe, sizeof(*meta));
	pthread_mutex_lock(&cq->lock);
	if (!wc || !meta) {
		err = ENOMEM;
	} else if ((uint32_t)cqe < cq->count) {
		err = EINVAL;
	} else {
		for (uint32_t n = 0; n < cq->count; n++) {
			wc[n] = cq->wc[(cq->head + n) % cq->cap];
			meta[n] = cq->meta[(cq->head + n) % cq->cap];
		}
		free(cq->wc);
		free(cq->meta);
		cq->wc = wc;
		cq->meta = meta;
		cq->head = 0;
		cq->cap = (uint32_t)cqe;
		ibcq->cqe = cqe;
		wc = NULL;
		meta = NULL;
	}
	pthread_mutex_unlock(&cq->lock);
	free(wc);
	free(meta);
	return err;
}
