/* RC queue pairs: creation, the RESET -> INIT -> RTR -> RTS state machine with the attribute
 * masks each transition requires, and the move to ERROR. */
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

static bool caps_valid(const struct ibv_qp_cap *c)
{
	return c->max_send_wr <= FV_MAX_QP_WR && c->max_recv_wr <= FV_MAX_QP_WR &&
	       c->max_send_sge <= FV_MAX_SGE && c->max_recv_sge <= FV_MAX_SGE &&
	       c->max_inline_data <= FV_MAX_INLINE;
}

struct ibv_qp *ibv_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr)
{
	struct fv_qp *qp;
	int err;

	if (!attr->send_cq || !attr->recv_cq || !caps_valid(&attr->cap) ||
	    (attr->srq && attr->srq->context != pd->context) ||
	    attr->send_cq->context != pd->context || attr->recv_cq->context != pd->context) {
		errno = EINVAL;
		return NULL;
	}
	if (attr->qp_type != IBV_QPT_RC) {
		errno = EOPNOTSUPP;	/* only reliable connected QPs are emulated */
		return NULL;
	}
	qp = calloc(1, sizeof(*qp));
	if (!qp) {
		errno = ENOMEM;
		return NULL;
	}
	qp->cap = attr->cap;
	/* drivers may allocate more than asked (a ConnectX rounds up) and say so in attr->cap */
	if (fv_config_get() && fv_config_get()->sq_alloc > qp->cap.max_send_wr)
		qp->cap.max_send_wr = fv_config_get()->sq_alloc;
	attr->cap = qp->cap;
	qp->sq_size = pow2_at_least(qp->cap.max_send_wr ? qp->cap.max_send_wr : 1);
	qp->rq_size = pow2_at_least(attr->cap.max_recv_wr ? attr->cap.max_recv_wr : 1);
	qp->sq = calloc(qp->sq_size, sizeof(*qp->sq));
	qp->rq = calloc(qp->rq_size, sizeof(*qp->rq));
	err = qp->sq && qp->rq ? fv_reg_alloc_qpn(&qp->qp.qp_num, &qp->slot) : ENOMEM;
	if (err) {
		free(qp->sq);
		free(qp->rq);
		free(qp);
		errno = err;
		return NULL;
	}
	pthread_mutex_init(&qp->lock, NULL);
	qp->sq_sig_all = attr->sq_sig_all;
	qp->qp.context = pd->context;
	qp->qp.qp_context = attr->qp_context;
	qp->qp.pd = pd;
	qp->qp.send_cq = attr->send_cq;
	qp->qp.recv_cq = attr->recv_cq;
	qp->qp.handle = qp->qp.qp_num;
	qp->state = IBV_QPS_RESET;
	qp->qp.state = IBV_QPS_RESET;
	qp->qp.qp_type = IBV_QPT_RC;
	pthread_mutex_init(&qp->qp.mutex, NULL);
	pthread_cond_init(&qp->qp.cond, NULL);
	atomic_store(&qp->refs, 1);
	atomic_fetch_add(&fv_pd_of(pd)->users, 1);
	atomic_fetch_add(&fv_cq_of(attr->send_cq)->users, 1);
	atomic_fetch_add(&fv_cq_of(attr->recv_cq)->users, 1);
	if (attr->srq) {
		qp->srq = fv_srq_of(attr->srq);
		qp->qp.srq = attr->srq;
		atomic_fetch_add(&qp->srq->users, 1);
	}
	fv_nic_register_qp(qp);
	return &qp->qp;
}

int ibv_destroy_qp(struct ibv_qp *ibqp)
{
	struct fv_qp *qp = fv_qp_of(ibqp);

	fv_nic_unregister_qp(qp);	/* waits until the NIC thread holds no reference */
	fv_reg_free(qp->slot);
	fv_cq_forget_qp(fv_cq_of(ibqp->send_cq), qp);
	fv_cq_forget_qp(fv_cq_of(ibqp->recv_cq), qp);
	atomic_fetch_sub(&fv_pd_of(ibqp->pd)->users, 1);
	atomic_fetch_sub(&fv_cq_of(ibqp->send_cq)->users, 1);
	atomic_fetch_sub(&fv_cq_of(ibqp->recv_cq)->users, 1);
	if (qp->srq)
		atomic_fetch_sub(&qp->srq->users, 1);
	fv_stash_free(qp);
	pthread_mutex_destroy(&qp->lock);
	pthread_mutex_destroy(&ibqp->mutex);
	pthread_cond_destroy(&ibqp->cond);
	free(qp->sq);
	free(qp->rq);
	free(qp);
	return 0;
}

struct transition {
	enum ibv_qp_state from, to;
	int required, optional;
};

/* The RC rows of the verbs specification's modify-QP table. */
static const struct transition transitions[] = {
	{ IBV_QPS_RESET, IBV_QPS_INIT, IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS, 0 },
	{ IBV_QPS_INIT, IBV_QPS_INIT, 0, IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS },
	{ IBV_QPS_INIT, IBV_QPS_RTR,
	  IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
		  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER,
	  IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS | IBV_QP_PKEY_INDEX },
	{ IBV_QPS_RTR, IBV_QPS_RTS,
	  IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
		  IBV_QP_MAX_QP_RD_ATOMIC,
	  IBV_QP_CUR_STATE | IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS | IBV_QP_MIN_RNR_TIMER |
		  IBV_QP_PATH_MIG_STATE },
	{ IBV_QPS_RTS, IBV_QPS_RTS, 0,
	  IBV_QP_CUR_STATE | IBV_QP_ACCESS_FLAGS | IBV_QP_ALT_PATH | IBV_QP_MIN_RNR_TIMER |
		  IBV_QP_PATH_MIG_STATE },
};

static const struct transition *find_transition(enum ibv_qp_state from, enum ibv_qp_state to)
{
	for (size_t i = 0; i < sizeof(transitions) / sizeof(transitions[0]); i++)
		if (transitions[i].from == from && transitions[i].to == to)
			return &transitions[i];
	return NULL;
}

static int check_av(struct fv_qp *qp, const struct ibv_ah_attr *ah)
{
	uint8_t port_num = ah->port_num ? ah->port_num : qp->port_num;
	struct fv_port *port = fv_port_of(qp->qp.context, port_num);

	if (!port)
		return EINVAL;
	if (port->link_layer == IBV_LINK_LAYER_ETHERNET && !ah->is_global)
		return EINVAL;	/* RoCE needs a GRH */
	if (ah->is_global &&
	    (ah->grh.sgid_index >= port->ngids || ah->grh.hop_limit == 0))
		return EINVAL;
	return 0;
}

static int check_values(struct fv_qp *qp, const struct ibv_qp_attr *a, int mask)
{
	struct fv_port *port;

	if (mask & IBV_QP_PORT) {
		port = fv_port_of(qp->qp.context, a->port_num);
		if (!port)
			return EINVAL;
	}
	if ((mask & IBV_QP_PKEY_INDEX) && a->pkey_index >= FV_PKEY_TBL_LEN)
		return EINVAL;
	if ((mask & IBV_QP_ACCESS_FLAGS) &&
	    (a->qp_access_flags & ~(unsigned)(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
					      IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)))
		return EINVAL;
	if ((mask & IBV_QP_PATH_MTU) && (a->path_mtu < IBV_MTU_256 || a->path_mtu > IBV_MTU_4096))
		return EINVAL;
	if ((mask & IBV_QP_AV) && check_av(qp, &a->ah_attr))
		return EINVAL;
	if ((mask & IBV_QP_MAX_DEST_RD_ATOMIC) && a->max_dest_rd_atomic > FV_MAX_RD_ATOM)
		return EINVAL;
	if ((mask & IBV_QP_MAX_QP_RD_ATOMIC) && a->max_rd_atomic > FV_MAX_RD_ATOM)
		return EINVAL;
	if ((mask & IBV_QP_MIN_RNR_TIMER) && a->min_rnr_timer > 31)
		return EINVAL;
	if ((mask & IBV_QP_TIMEOUT) && a->timeout > 31)
		return EINVAL;
	if ((mask & IBV_QP_RETRY_CNT) && a->retry_cnt > 7)
		return EINVAL;
	if ((mask & IBV_QP_RNR_RETRY) && a->rnr_retry > 7)
		return EINVAL;
	if ((mask & IBV_QP_DEST_QPN) && a->dest_qp_num > 0xffffff)
		return EINVAL;
	return 0;
}

static void apply(struct fv_qp *qp, const struct ibv_qp_attr *a, int mask)
{
	if (mask & IBV_QP_PORT)
		qp->port_num = a->port_num;
	if (mask & IBV_QP_PKEY_INDEX)
		qp->pkey_index = a->pkey_index;
	if (mask & IBV_QP_ACCESS_FLAGS)
		qp->access = a->qp_access_flags;
	if (mask & IBV_QP_PATH_MTU)
		qp->path_mtu = a->path_mtu;
	if (mask & IBV_QP_AV) {
		qp->ah = a->ah_attr;
		if (!qp->ah.port_num)
			qp->ah.port_num = qp->port_num;
	}
	if (mask & IBV_QP_DEST_QPN)
		qp->dest_qpn = a->dest_qp_num;
	if (mask & IBV_QP_RQ_PSN)
		qp->rq_psn = a->rq_psn;
	if (mask & IBV_QP_SQ_PSN)
		qp->sq_psn = a->sq_psn;
	if (mask & IBV_QP_MAX_DEST_RD_ATOMIC)
		qp->max_dest_rd_atomic = a->max_dest_rd_atomic;
	if (mask & IBV_QP_MAX_QP_RD_ATOMIC)
		qp->max_rd_atomic = a->max_rd_atomic;
	if (mask & IBV_QP_MIN_RNR_TIMER)
		qp->min_rnr_timer = a->min_rnr_timer;
	if (mask & IBV_QP_TIMEOUT)
		qp->timeout = a->timeout;
	if (mask & IBV_QP_RETRY_CNT)
		qp->retry_cnt = a->retry_cnt;
	if (mask & IBV_QP_RNR_RETRY)
		qp->rnr_retry = a->rnr_retry;
}

/* Publishes the port's addresses so that requesters can check they address this QP. */
static void publish_port(struct fv_qp *qp)
{
	struct fv_reg_entry *e = &fv_registry()->e[qp->slot];
	struct fv_port *port = fv_port_of(qp->qp.context, qp->port_num);

	/* its NIC before its link layer, which requesters take as "published" (fv_transmit.c) */
	e->nic = fv_ctx(qp->qp.context)->dev->nic;
	__atomic_store_n(&e->link_layer, port->link_layer, __ATOMIC_RELEASE);
	e->lid = port->lid;
	e->ngids = (uint8_t)port->ngids;
	memcpy(e->gid, port->gid, sizeof(e->gid));
	memcpy(e->gid_type, port->gid_type, sizeof(e->gid_type));
}

static void reset_queues(struct fv_qp *qp)
{
	qp->sq_head = qp->sq_sent = qp->sq_acked = 0;
	atomic_store(&qp->sq_freed, 0);
	qp->rq_head = qp->rq_tail = 0;
	qp->nakked_src = 0;
	fv_stash_free(qp);
	fv_cq_forget_qp(fv_cq_of(qp->qp.send_cq), qp);
	fv_reg_reset(qp->slot);
}

static void set_state(struct fv_qp *qp, enum ibv_qp_state s)
{
	qp->state = s;
}

int ibv_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr, int mask)
{
	struct fv_qp *qp = fv_qp_of(ibqp);
	enum ibv_qp_state cur, to;
	const struct transition *t;
	int err = 0;

	pthread_mutex_lock(&qp->lock);
	cur = qp->state;
	to = (mask & IBV_QP_STATE) ? attr->qp_state : cur;
	if ((mask & IBV_QP_CUR_STATE) && attr->cur_qp_state != cur) {
		err = EINVAL;
	} else if (to == IBV_QPS_RESET && (mask & IBV_QP_STATE)) {
		reset_queues(qp);
		set_state(qp, IBV_QPS_RESET);
	} else if (to == IBV_QPS_ERR && (mask & IBV_QP_STATE)) {
		fv_qp_to_error(qp, -1);
	} else if (!(t = find_transition(cur, to))) {
		err = EINVAL;
	} else if ((mask & t->required) != t->required ||
		   (mask & ~(t->required | t->optional | IBV_QP_STATE))) {
		err = EINVAL;
	} else if ((err = check_values(qp, attr, mask)) == 0) {
		apply(qp, attr, mask);
		if (to == IBV_QPS_INIT)
			publish_port(qp);
		set_state(qp, to);
	}
	if (!err)
		ibqp->state = qp->state;
	pthread_mutex_unlock(&qp->lock);
	if (err)
		fv_log("modify_qp %u: %d -> %d with mask 0x%x refused", ibqp->qp_num, cur, to,
		       mask);
	else
		fv_nic_wake();	/* requests may wait for this QP to become ready */
	return err;
}

int ibv_query_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *a, int mask,
		 struct ibv_qp_init_attr *init)
{
	struct fv_qp *qp = fv_qp_of(ibqp);

	(void)mask;	/* every attribute is returned, as drivers do */
	memset(a, 0, sizeof(*a));
	memset(init, 0, sizeof(*init));
	pthread_mutex_lock(&qp->lock);
	a->qp_state = a->cur_qp_state = qp->state;
	ibqp->state = qp->state;
	a->path_mtu = qp->path_mtu;
	a->rq_psn = qp->rq_psn;
	a->sq_psn = qp->sq_psn;
	a->dest_qp_num = qp->dest_qpn;
	a->qp_access_flags = qp->access;
	a->cap = qp->cap;
	a->ah_attr = qp->ah;
	a->pkey_index = qp->pkey_index;
	a->max_rd_atomic = qp->max_rd_atomic;
	a->max_dest_rd_atomic = qp->max_dest_rd_atomic;
	a->min_rnr_timer = qp->min_rnr_timer;
	a->port_num = qp->port_num;
	a->timeout = qp->timeout;
	a->retry_cnt = qp->retry_cnt;
	a->rnr_retry = qp->rnr_retry;
	pthread_mutex_unlock(&qp->lock);
	init->qp_context = ibqp->qp_context;
	init->send_cq = ibqp->send_cq;
	init->recv_cq = ibqp->recv_cq;
	init->cap = qp->cap;
	init->srq = ibqp->srq;
	init->qp_type = IBV_QPT_RC;
	init->sq_sig_all = qp->sq_sig_all;
	return 0;
}

void fv_qp_flush_rq(struct fv_qp *qp)
{
	struct fv_cq *cq = fv_cq_of(qp->qp.recv_cq);

	while (qp->rq_tail < qp->rq_head) {
		struct fv_rwr *r = &qp->rq[qp->rq_tail % qp->rq_size];
		struct ibv_wc wc = { .wr_id = r->wr_id, .status = IBV_WC_WR_FLUSH_ERR,
				     .opcode = IBV_WC_RECV, .qp_num = qp->qp.qp_num };

		qp->rq_tail++;
		fv_cq_push(cq, &wc, NULL, 0);
	}
}

void fv_qp_to_error(struct fv_qp *qp, int event)
{
	if (qp->state == IBV_QPS_ERR)
		return;
	set_state(qp, IBV_QPS_ERR);
	if (event >= 0) {
		struct ibv_async_event ev = { .event_type = (enum ibv_event_type)event };

		ev.element.qp = &qp->qp;
		fv_event_post(fv_ctx(qp->qp.context), &ev);
	}
	fv_sq_flush(qp);
	fv_qp_flush_rq(qp);
	fv_stash_free(qp);
}
