/* Asynchronous events: queued per context, announced by a byte on context->async_fd. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fv_internal.h"

static pthread_mutex_t contexts_lock = PTHREAD_MUTEX_INITIALIZER;
static struct fv_context *contexts;

void fv_contexts_add(struct fv_context *ctx)
{
	pthread_mutex_lock(&contexts_lock);
	ctx->next_open = contexts;
	contexts = ctx;
	pthread_mutex_unlock(&contexts_lock);
}

void fv_contexts_remove(struct fv_context *ctx)
{
	pthread_mutex_lock(&contexts_lock);
	for (struct fv_context **p = &contexts; *p; p = &(*p)->next_open) {
		if (*p == ctx) {
			*p = ctx->next_open;
			break;
		}
	}
	pthread_mutex_unlock(&contexts_lock);
}

void fv_event_post(struct fv_context *ctx, const struct ibv_async_event *ev)
{
	struct fv_event *e = calloc(1, sizeof(*e));
	char byte = 1;

	if (!e)
		return;
	e->ev = *ev;
	pthread_mutex_lock(&ctx->ev_lock);
	if (ctx->ev_tail)
		ctx->ev_tail->next = e;
	else
		ctx->ev_head = e;
	ctx->ev_tail = e;
	pthread_mutex_unlock(&ctx->ev_lock);
	if (write(ctx->async_wr, &byte, 1) != 1)
		fv_log("async event pipe full: event %d stays queued", ev->event_type);
}

void fv_event_port(struct fv_device *dev, int port_num, enum ibv_event_type type)
{
	struct ibv_async_event ev = { .event_type = type };

	ev.element.port_num = port_num;
	pthread_mutex_lock(&contexts_lock);
	for (struct fv_context *c = contexts; c; c = c->next_open)
		if (c->dev == dev)
			fv_event_post(c, &ev);
	pthread_mutex_unlock(&contexts_lock);
}

int ibv_get_async_event(struct ibv_context *context, struct ibv_async_event *event)
{
	struct fv_context *c = fv_ctx(context);
	struct fv_event *e;
	char byte;

	for (;;) {
		ssize_t n = read(c->async_rd, &byte, 1);

		if (n < 0 && errno == EINTR)
			continue;
		if (n != 1)
			return -1;	/* errno from read: EAGAIN when the fd is non-blocking */
		pthread_mutex_lock(&c->ev_lock);
		e = c->ev_head;
		if (e) {
			c->ev_head = e->next;
			if (!c->ev_head)
				c->ev_tail = NULL;
		}
		pthread_mutex_unlock(&c->ev_lock);
		if (e)
			break;
	}
	*event = e->ev;
	free(e);
	return 0;
}

void ibv_ack_async_event(struct ibv_async_event *event)
{
	(void)event;
}

const char *ibv_event_type_str(enum ibv_event_type event)
{
	static const char *const names[] = {
		[IBV_EVENT_CQ_ERR] = "CQ error",
		[IBV_EVENT_QP_FATAL] = "local work queue catastrophic error",
		[IBV_EVENT_QP_REQ_ERR] = "invalid request local work queue error",
		[IBV_EVENT_QP_ACCESS_ERR] = "local access violation work queue error",
		[IBV_EVENT_COMM_EST] = "communication established",
		[IBV_EVENT_SQ_DRAINED] = "send queue drained",
		[IBV_EVENT_PATH_MIG] = "path migrated",
		[IBV_EVENT_PATH_MIG_ERR] = "path migration request error",
		[IBV_EVENT_DEVICE_FATAL] = "local catastrophic error",
		[IBV_EVENT_PORT_ACTIVE] = "port active",
		[IBV_EVENT_PORT_ERR] = "port error",
		[IBV_EVENT_LID_CHANGE] = "LID change",
		[IBV_EVENT_PKEY_CHANGE] = "P_Key change",
		[IBV_EVENT_SM_CHANGE] = "SM change",
		[IBV_EVENT_SRQ_ERR] = "SRQ catastrophic error",
		[IBV_EVENT_SRQ_LIMIT_REACHED] = "SRQ limit reached",
		[IBV_EVENT_QP_LAST_WQE_REACHED] = "last WQE reached",
		[IBV_EVENT_CLIENT_REREGISTER] = "client reregistration",
		[IBV_EVENT_GID_CHANGE] = "GID table change",
		[IBV_EVENT_WQ_FATAL] = "WQ fatal",
	};

	if ((unsigned)event < sizeof(names) / sizeof(names[0]) && names[event])
		return names[event];
	return "unknown";
}

const char *ibv_wc_status_str(enum ibv_wc_status status)
{
	static const char *const names[] = {
		[IBV_WC_SUCCESS] = "success",
		[IBV_WC_LOC_LEN_ERR] = "local length error",
		[IBV_WC_LOC_QP_OP_ERR] = "local QP operation error",
		[IBV_WC_LOC_EEC_OP_ERR] = "local EE context operation error",
		[IBV_WC_LOC_PROT_ERR] = "local protection error",
		[IBV_WC_WR_FLUSH_ERR] = "Work Request Flushed Error",
		[IBV_WC_MW_BIND_ERR] = "memory management operation error",
		[IBV_WC_BAD_RESP_ERR] = "bad response error",
		[IBV_WC_LOC_ACCESS_ERR] = "local access error",
		[IBV_WC_REM_INV_REQ_ERR] = "remote invalid request error",
		[IBV_WC_REM_ACCESS_ERR] = "remote access error",
		[IBV_WC_REM_OP_ERR] = "remote operation error",
		[IBV_WC_RETRY_EXC_ERR] = "transport retry counter exceeded",
		[IBV_WC_RNR_RETRY_EXC_ERR] = "RNR retry counter exceeded",
		[IBV_WC_LOC_RDD_VIOL_ERR] = "local RDD violation error",
		[IBV_WC_REM_INV_RD_REQ_ERR] = "remote invalid RD request",
		[IBV_WC_REM_ABORT_ERR] = "aborted error",
		[IBV_WC_INV_EECN_ERR] = "invalid EE context number",
		[IBV_WC_INV_EEC_STATE_ERR] = "invalid EE context state",
		[IBV_WC_FATAL_ERR] = "fatal error",
		[IBV_WC_RESP_TIMEOUT_ERR] = "response timeout error",
		[IBV_WC_GENERAL_ERR] = "general error",
		[IBV_WC_TM_ERR] = "TM error",
		[IBV_WC_TM_RNDV_INCOMPLETE] = "TM software rendezvous",
	};

	if ((unsigned)status < sizeof(names) / sizeof(names[0]) && names[status])
		return names[status];
	return "unknown";
}
