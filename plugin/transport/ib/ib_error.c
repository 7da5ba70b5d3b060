/*
 * How a connection fails: the first failure is kept (a QP in error flushes
 * every later WR, and those completions say nothing new), logged once by the
 * wrap layer, and returned again by every later call.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "ib_comm.h"

int ib_link_fail(struct ib_link *l, int err)
{
	if (!l->failed) {
		l->failed = err;
		snprintf(l->failure, sizeof(l->failure), "%s", fl_error_text());
	}
	return ib_link_check(l);
}

int ib_link_qp_index(const struct ib_link *l, uint32_t qp_num)
{
	for (int i = 0; i < l->nqps; i++)
		if (l->qps[i]->qp_num == qp_num)
			return i;
	return -1;
}

int ib_link_wc_failed(struct ib_link *l, const struct ibv_wc *wc, const char *what)
{
	int q = ib_link_qp_index(l, wc->qp_num);

	/* a flushed WR says only that the QP is in error: the events may say why */
	if (wc->status == IBV_WC_WR_FLUSH_ERR)
		ib_async_poll(l->dev->hca);
	fl_fail(FL_ERR_SYSTEM, "%s on %s QP %d (connection %s %s/%s): %s (verbs status %d, "
		"vendor error 0x%x)%s", what, l->dev->dev_name, q,
		l->kind == IB_REQ_SEND ? "to" : "from", l->peer.node, l->peer.dev_name,
		ib_verbs->wc_status_str(wc->status), wc->status, wc->vendor_err,
		wc->status == IBV_WC_WR_FLUSH_ERR ? ": the QP went to the error state" : "");
	return ib_link_fail(l, FL_ERR_SYSTEM);
}

/* One non-blocking peek at the side channel: has the peer's end closed? */
static int peer_alive(struct ib_link *l)
{
	char b;
	ssize_t n;

	if (l->fd < 0)
		return FL_OK;
	n = recv(l->fd, &b, 1, MSG_PEEK | MSG_DONTWAIT);
	if (n == 0)
		return fl_fail(FL_ERR_REMOTE, "%s/%s closed the connection (its process ended?)",
			       l->peer.node, l->peer.dev_name);
	if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
		return fl_fail(FL_ERR_REMOTE, "connection to %s/%s: %s", l->peer.node,
			       l->peer.dev_name, strerror(errno));
	return FL_OK;
}

/*
 * Between completions: device marks are one relaxed load each; reading
 * async events and asking whether the peer is alive cost syscalls, so only
 * after IB_STALL_CHECK_NS without progress while something waits.
 */
int ib_link_watch(struct ib_link *l, int progressed, int waiting, uint64_t now)
{
	int rc = ib_device_check(l->dev);

	if (rc)
		return ib_link_fail(l, rc);
	if (progressed || !waiting || !l->idle_since_ns) {
		l->idle_since_ns = now;
		return FL_OK;
	}
	if (now - l->idle_since_ns < IB_STALL_CHECK_NS ||
	    now - l->last_check_ns < IB_STALL_CHECK_NS)
		return FL_OK;
	l->last_check_ns = now;
	ib_async_poll(l->dev->hca);
	rc = ib_device_check(l->dev);
	if (!rc)
		rc = peer_alive(l);
	return rc ? ib_link_fail(l, rc) : FL_OK;
}
