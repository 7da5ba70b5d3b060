/* Connection setup and teardown in the wrap layer; each connection joins its hop. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "fault/fault.h"
#include "stats/hop.h"
#include "stats/hop_names.h"
#include "base/identity.h"
#include "trace/trace.h"
#include "wrap.h"
#include "wrap_internal.h"

static _Atomic uint32_t next_conn_id;

int fl_wrap_report_error(struct fl_wcomm *c, const char *op, int err)
{
	fl_trace_error(c ? &c->trace : NULL, op, err, fl_error_text());
	if (c && c->failed)
		return err;
	if (c) {
		c->failed = 1;
		FL_WARN("%s on connection %u (%s/%s -> %s/%s) failed: %s", op, c->id,
			c->kind == FL_COMM_SEND ? c->self.node : c->peer.node,
			c->kind == FL_COMM_SEND ? c->self.dev_name : c->peer.dev_name,
			c->kind == FL_COMM_SEND ? c->peer.node : c->self.node,
			c->kind == FL_COMM_SEND ? c->peer.dev_name : c->self.dev_name,
			fl_error_text());
	} else {
		FL_WARN("%s failed: %s", op, fl_error_text());
	}
	return err;
}

static void local_endpoint(const struct fl_transport *tp, void *ctx, int dev,
			   struct fl_endpoint *self)
{
	const struct fl_wrap_ctx *c = ctx;
	struct fl_props props = { 0 };

	if (tp->get_properties(dev, &props) != FL_OK)
		props.name = "";
	fl_identity_local(self, dev, props.name, c ? c->comm_id : 0);
	/* The communicator's own rank where the profiler role knows it: several per process. */
	if (c && !c->process_wide) {
		int rank = fl_names_rank_of(c);

		if (rank >= 0)
			self->rank = rank;
	}
}

/* The process-wide ctx (v6-v10 NCCL) has no transport state of its own. */
static void *transport_ctx(void *ctx)
{
	const struct fl_wrap_ctx *c = ctx;

	return c ? c->tctx : NULL;
}

int fl_wrap_listen(void *ctx, int dev, void *handle, void **listen_comm)
{
	const struct fl_transport *tp = fl_wrap_transport();
	struct fl_wlisten *l;
	int rc;

	*listen_comm = NULL;
	if (!tp)
		return FL_ERR_INTERNAL;
	l = calloc(1, sizeof(*l));
	if (!l)
		return FL_ERR_SYSTEM;
	l->tp = tp;
	local_endpoint(tp, ctx, dev, &l->self);
	if (tp->forward && tp->forward->listen_ctx)
		rc = tp->forward->listen_ctx(transport_ctx(ctx), dev, &l->self, handle, &l->tcomm);
	else
		rc = tp->listen(dev, &l->self, handle, &l->tcomm);
	if (rc) {
		free(l);
		return fl_wrap_report_error(NULL, "listen", rc);
	}
	*listen_comm = l;
	return FL_OK;
}

/* Send comms see their hop as its sender, receive comms as its receiver. */
static void join_hop(struct fl_wcomm *c)
{
	int send = c->kind == FL_COMM_SEND;
	struct fl_hop_key key;

	fl_hop_key_make(&key, send ? FL_HOP_SEND : FL_HOP_RECV, &c->self, &c->peer);
	fl_hop_attach(&c->stats, &key, c->self.dev, send ? c->self.rank : c->peer.rank,
		      send ? c->peer.rank : c->self.rank);
}

static struct fl_wcomm *new_wcomm(void)
{
	struct fl_wcomm *c = aligned_alloc(_Alignof(struct fl_wcomm), sizeof(struct fl_wcomm));

	if (!c)
		return NULL;
	memset(c, 0, sizeof(*c));
	fl_stats_init(&c->stats);
	for (int i = 0; i < FL_WRAP_POOL; i++)
		c->reqs[i].slot = (unsigned)i;
	c->free_head = -1; /* slots come fresh first (fl_wrap_req_fresh) */
	c->late = COUNTING ? FL_LATE_TAG : 0;
	return c;
}

/*
 * The comm joins its hop, the names table, the trace and the fault rules once
 * both ends are known: at once, or (FL_PEER_LATER) at the first isend/irecv/test
 * after the transport learnt the peer. Requests before that are counted in the
 * comm's stats, which the hop reads once joined; faults apply from then on.
 */
static void join(struct fl_wcomm *c)
{
	int send = c->kind == FL_COMM_SEND;

	c->late &= ~(unsigned)FL_LATE_PEER;
	c->joined = 1;
	join_hop(c);
	fl_names_conn_up(c, send, &c->self, &c->peer);
	fl_trace_conn_up(&c->trace, fl_wrap_get_properties);
	FL_INFO("connection %u %s %s/%s %s %s/%s up", c->id, send ? "send" : "recv",
		c->self.node, c->self.dev_name, send ? "->" : "<-", c->peer.node,
		c->peer.dev_name);
	/* Faults are chosen once both ends are known, before the first request. */
	if (FL_FAULTS && fl_fault_attach(c->tp, c->tcomm, send, c->id, &c->self, &c->peer,
					 &c->fault))
		FL_WARN("connection %u: FABRICLAB_FAULT not applied: %s", c->id, fl_error_text());
}

/* FL_OK when the peer is known or never will be (joined, peer unnamed); 1 while it is due. */
static int ask_peer(struct fl_wcomm *c)
{
	int rc = c->tp->peer(c->tcomm, &c->peer);

	if (rc == FL_PEER_LATER)
		return 1;
	if (rc != FL_OK) {
		memset(&c->peer, 0, sizeof(c->peer));
		c->peer.rank = -1;
	}
	return FL_OK;
}

void fl_wrap_join_late(struct fl_wcomm *c)
{
	if (!ask_peer(c))
		join(c);
}

/* Only once joined: the fault rules, which need the transport (its pacer), are known then. */
void fl_wrap_ask_direct(struct fl_wcomm *c)
{
	int answer;

	if (!c->joined)
		return;
	answer = c->fault ? FL_DIRECT_NEVER : c->tp->forward->direct(c->tcomm, &c->direct);
	if (answer == FL_DIRECT_NOT_YET)
		return;
	c->late &= ~(unsigned)FL_LATE_DIRECT;
	if (answer == FL_DIRECT_ON)
		FL_INFO("connection %u: requests go straight to the %s transport's plugin", c->id,
			c->tp->name);
}

static int wrap_established(const struct fl_transport *tp, void *tcomm, enum fl_comm_kind kind,
			    const struct fl_endpoint *self, void **out)
{
	struct fl_wcomm *c = new_wcomm();

	if (!c) {
		if (kind == FL_COMM_SEND)
			tp->close_send(tcomm);
		else
			tp->close_recv(tcomm);
		return fl_fail(FL_ERR_SYSTEM, "out of memory for a connection");
	}
	c->tp = tp;
	c->fwd = tp->forward && tp->forward->test ? tp->forward : NULL;
	/* a forwarded request is timed posted -> done (fl_wrap_test): before any request or hop */
	c->stats.active_is_wire = c->fwd != NULL;
	c->tcomm = tcomm;
	c->kind = kind;
	c->hold_consumed = kind == FL_COMM_RECV && fl_wrap_holds_for_consumed();
	c->self = *self;
	c->id = atomic_fetch_add(&next_conn_id, 1) + 1;
	c->peer.rank = -1;
	c->trace = (struct fl_trace_conn){
		.id = c->id, .send = kind == FL_COMM_SEND, .transport = tp->name,
		.self = &c->self, .peer = &c->peer, .stats = &c->stats,
	};
	if (ask_peer(c))
		c->late |= FL_LATE_PEER;
	else
		join(c);
	if (tp->forward && tp->forward->direct)
		c->late |= FL_LATE_DIRECT;
	*out = c;
	return FL_OK;
}

int fl_wrap_connect(void *ctx, int dev, void *handle, void **send_comm)
{
	return fl_wrap_connect_dev(ctx, dev, handle, send_comm, NULL);
}

/* dev_comm: NCCL's own pointer (v7+), for a transport that forwards it (ext); else untouched. */
int fl_wrap_connect_dev(void *ctx, int dev, void *handle, void **send_comm, void **dev_comm)
{
	const struct fl_transport *tp = fl_wrap_transport();
	struct fl_endpoint self;
	void *tcomm = NULL;
	int rc;

	*send_comm = NULL;
	if (!tp)
		return FL_ERR_INTERNAL;
	local_endpoint(tp, ctx, dev, &self);
	if (tp->forward && tp->forward->connect_ctx)
		rc = tp->forward->connect_ctx(transport_ctx(ctx), dev, &self, handle, &tcomm,
					      dev_comm);
	else
		rc = tp->connect(dev, &self, handle, &tcomm);
	if (!rc && tcomm)
		rc = wrap_established(tp, tcomm, FL_COMM_SEND, &self, send_comm);
	return rc ? fl_wrap_report_error(NULL, "connect", rc) : FL_OK;
}

int fl_wrap_accept(void *listen_comm, void **recv_comm)
{
	return fl_wrap_accept_dev(listen_comm, recv_comm, NULL);
}

int fl_wrap_accept_dev(void *listen_comm, void **recv_comm, void **dev_comm)
{
	struct fl_wlisten *l = listen_comm;
	void *tcomm = NULL;
	int rc;

	*recv_comm = NULL;
	if (!l)
		return FL_ERR_INTERNAL;
	if (l->tp->forward && l->tp->forward->accept_dev)
		rc = l->tp->forward->accept_dev(l->tcomm, &tcomm, dev_comm);
	else
		rc = l->tp->accept(l->tcomm, &tcomm);
	if (!rc && tcomm)
		rc = wrap_established(l->tp, tcomm, FL_COMM_RECV, &l->self, recv_comm);
	return rc ? fl_wrap_report_error(NULL, "accept", rc) : FL_OK;
}

/* The hop's report has the rates; the log keeps what this one connection did. */
void fl_wrap_log_summary(const struct fl_wcomm *c)
{
	const struct fl_conn_stats *s = &c->stats;

	FL_INFO("connection %u %s %s/%s %s %s/%s: %llu bytes in %llu messages, longest on the "
		"wire %.1f us, %.3f s waiting for the peer",
		c->id, c->kind == FL_COMM_SEND ? "send" : "recv", c->self.node, c->self.dev_name,
		c->kind == FL_COMM_SEND ? "->" : "<-", c->peer.node, c->peer.dev_name,
		(unsigned long long)fl_stats_load(&s->bytes),
		(unsigned long long)fl_stats_messages(s),
		(double)fl_stats_load(&s->wire_max_ns) / 1e3,
		(double)fl_stats_load(&s->peer_wait_ns) / 1e9);
}

static int close_comm(struct fl_wcomm *c)
{
	int rc;

	if (!c)
		return FL_OK;
	if (c->joined) { /* a comm closed before its peer was known carried nothing */
		fl_trace_conn_down(&c->trace);
		fl_names_conn_down(c);
		fl_hop_detach(&c->stats);
		fl_wrap_log_summary(c);
	}
	rc = c->kind == FL_COMM_SEND ? c->tp->close_send(c->tcomm) : c->tp->close_recv(c->tcomm);
	if (rc)
		fl_wrap_report_error(c, "close", rc);
	if (FL_FAULTS)
		fl_fault_release(c->fault); /* the transport's threads are gone: its pacer may go */
	free(c);
	return rc;
}

int fl_wrap_close_send(void *send_comm)
{
	return close_comm(send_comm);
}

int fl_wrap_close_recv(void *recv_comm)
{
	return close_comm(recv_comm);
}

int fl_wrap_close_listen(void *listen_comm)
{
	struct fl_wlisten *l = listen_comm;
	int rc;

	if (!l)
		return FL_OK;
	rc = l->tp->close_listen(l->tcomm);
	free(l);
	return rc;
}
