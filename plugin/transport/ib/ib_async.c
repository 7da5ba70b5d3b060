/*
 * Async events, polled. A port that goes down or an HCA that dies is marked
 * on its devices; every connection on them checks the mark (one relaxed load)
 * when it makes progress and fails with the reason. The events themselves are
 * read without blocking by a connection that has been waiting for a while
 * (ib_link_watch), never by a thread of ours: NCCL may unload the plugin at
 * any time, and a thread left running in unmapped code would crash the job.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>

#include "ib_device.h"
#include "base/log.h"

struct watch {
	struct ib_hca *hca;
	struct ib_device *ports;
	int nports;
	int usable;
	pthread_mutex_t lock;
};

static struct watch watches[IB_MAX_HCAS];
static int nwatches;

static const char *event_name(const struct fl_verbs *v, enum ibv_event_type t)
{
	return v->event_type_str ? v->event_type_str(t) : "async event";
}

static void mark_port(struct watch *w, int port, int down)
{
	for (int i = 0; i < w->nports; i++)
		if (w->ports[i].port == port)
			atomic_store(&w->ports[i].port_down, down);
}

static void handle(struct watch *w, const struct ibv_async_event *e)
{
	const char *what = event_name(ib_verbs, e->event_type);

	switch (e->event_type) {
	case IBV_EVENT_PORT_ERR:
		FL_WARN("ib: %s port %d: %s", w->hca->name, e->element.port_num, what);
		mark_port(w, e->element.port_num, 1);
		break;
	case IBV_EVENT_PORT_ACTIVE:
		FL_INFO("ib: %s port %d: %s", w->hca->name, e->element.port_num, what);
		mark_port(w, e->element.port_num, 0);
		break;
	case IBV_EVENT_DEVICE_FATAL:
		FL_WARN("ib: %s: %s", w->hca->name, what);
		atomic_store(&w->hca->fatal, 1);
		break;
	case IBV_EVENT_QP_FATAL:
	case IBV_EVENT_QP_REQ_ERR:
	case IBV_EVENT_QP_ACCESS_ERR:
	case IBV_EVENT_CQ_ERR:
	case IBV_EVENT_SRQ_ERR:
		/* The QP's work requests complete in error too; test reports them. */
		FL_WARN("ib: %s: %s", w->hca->name, what);
		break;
	default:
		FL_INFO("ib: %s: %s", w->hca->name, what);
		break;
	}
}

void ib_async_watch(struct ib_hca *hca, struct ib_device *ports, int nports)
{
	struct watch *w;
	int fd = hca->ctx->async_fd;

	if (nwatches == IB_MAX_HCAS)
		return;
	w = &watches[nwatches++];
	*w = (struct watch){ hca, ports, nports, 0, PTHREAD_MUTEX_INITIALIZER };
	w->usable = fd >= 0 && !fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	if (!w->usable)
		FL_INFO("ib: %s: async events not watched (no usable event fd)", hca->name);
}

void ib_async_poll(struct ib_hca *hca)
{
	struct ibv_async_event e;

	for (int i = 0; i < nwatches; i++) {
		struct watch *w = &watches[i];

		if (w->hca != hca || !w->usable || pthread_mutex_trylock(&w->lock))
			continue;
		while (!ib_verbs->get_async_event(hca->ctx, &e)) {
			handle(w, &e);
			ib_verbs->ack_async_event(&e);
		}
		pthread_mutex_unlock(&w->lock);
	}
}
