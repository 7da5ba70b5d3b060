/* Shared receive queues: one pool of receive WRs that several RC QPs consume from, in posting
 * order. Only the NIC consumes (one thread at a time, fv_nic.c), posting may race with it, so
 * the queue has its own lock. The limit event fires once when the queue drops below the armed
 * limit, as IBV_SRQ_LIMIT arms it. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fv_internal.h"

static uint32_t pow2_at_least(uint32_t n)
{
	uint32_t p = 1;

	while (p < n)
		p <<= 1;
	return p;
}

struct ibv_srq *ibv_create_srq(struct ibv_pd *pd, struct ibv_srq_init_attr *attr)
{
	struct fv_srq *s;

	if (!pd || attr->attr.max_wr < 1 || attr->attr.max_wr > FV_MAX_QP_WR ||
	    attr->attr.max_sge > FV_MAX_SGE) {
		errno = EINVAL;
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (s)
		s->rq = calloc(pow2_at_least(attr->attr.max_wr), sizeof(*s->rq));
	if (!s || !s->rq) {
		free(s);
		errno = ENOMEM;
		return NULL;
	}
	s->size = pow2_at_least(attr->attr.max_wr);
	s->max_wr = attr->attr.max_wr;
	s->max_sge = attr->attr.max_sge ? attr->attr.max_sge : 1;
	attr->attr.max_sge = s->max_sge;	/* what was allocated, as drivers report it */
	pthread_mutex_init(&s->lock, NULL);
	s->srq.context = pd->context;
	s->srq.srq_context = attr->srq_context;
	s->srq.pd = pd;
	pthread_mutex_init(&s->srq.mutex, NULL);
	pthread_cond_init(&s->srq.cond, NULL);
	atomic_fetch_add(&fv_pd_of(pd)->users, 1);
	return &s->srq;
}

int ibv_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr, int mask)
{
	struct fv_srq *s = fv_srq_of(srq);
	int err = 0;

	if (mask & ~(IBV_SRQ_MAX_WR | IBV_SRQ_LIMIT))
		return EINVAL;
	pthread_mutex_lock(&s->lock);
	if ((mask & IBV_SRQ_MAX_WR) && attr->max_wr != s->max_wr)
		err = EINVAL;	/* no resizing, as mlx5 */
	else if ((mask & IBV_SRQ_LIMIT) && attr->srq_limit > s->max_wr)
		err = EINVAL;
	else if (mask & IBV_SRQ_LIMIT)
		s->limit = attr->srq_limit;	/* 0 disarms */
	pthread_mutex_unlock(&s->lock);
	return err;
}

int ibv_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr)
{
	struct fv_srq *s = fv_srq_of(srq);

	pthread_mutex_lock(&s->lock);
	attr->max_wr = s->max_wr;
	attr->max_sge = s->max_sge;
	attr->srq_limit = s->limit;
	pthread_mutex_unlock(&s->lock);
	return 0;
}

int ibv_destroy_srq(struct ibv_srq *srq)
{
	struct fv_srq *s = fv_srq_of(srq);

	if (atomic_load(&s->users))
		return EBUSY;	/* QPs still receive through it */
	atomic_fetch_sub(&fv_pd_of(srq->pd)->users, 1);
	pthread_mutex_destroy(&s->lock);
	pthread_mutex_destroy(&srq->mutex);
	pthread_cond_destroy(&srq->cond);
	free(s->rq);
	free(s);
	return 0;
}

int fv_op_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	struct fv_srq *s = fv_srq_of(srq);
	int err = 0;

	pthread_mutex_lock(&s->lock);
	for (; wr; wr = wr->next) {
		struct fv_rwr *r;

		if (wr->num_sge < 0 || (uint32_t)wr->num_sge > s->max_sge)
			err = EINVAL;
		else if (s->head - s->tail >= s->max_wr)
			err = ENOMEM;
		if (err) {
			*bad = wr;
			break;
		}
		r = &s->rq[s->head % s->size];
		r->wr_id = wr->wr_id;
		r->nsge = wr->num_sge;
		if (wr->num_sge)
			memcpy(r->sge, wr->sg_list, sizeof(r->sge[0]) * (size_t)wr->num_sge);
		s->head++;
	}
	pthread_mutex_unlock(&s->lock);
	fv_nic_wake();	/* a request may be waiting for a receive */
	return err;
}

bool fv_srq_empty(struct fv_srq *s)
{
	bool empty;

	pthread_mutex_lock(&s->lock);
	empty = s->head == s->tail;
	pthread_mutex_unlock(&s->lock);
	return empty;
}

/* The oldest receive WR (the queue must not be empty). */
void fv_srq_take(struct fv_srq *s, struct fv_rwr *out)
{
	bool limit_hit;

	pthread_mutex_lock(&s->lock);
	*out = s->rq[s->tail++ % s->size];
	limit_hit = s->limit && s->head - s->tail < s->limit;
	if (limit_hit)
		s->limit = 0;	/* one event per arming */
	pthread_mutex_unlock(&s->lock);
	if (limit_hit) {
		struct ibv_async_event ev = { .event_type = IBV_EVENT_SRQ_LIMIT_REACHED };

		ev.element.srq = &s->srq;
		fv_event_post(fv_ctx(s->srq.context), &ev);
	}
}
