/* The data path through the wrap layer: memory registration, isend/irecv/test, counting. */
#include <stdatomic.h>

#include "base/clock.h"
#include "base/error.h"
#include "fault/fault.h"
#include "trace/trace.h"
#include "wrap.h"
#include "wrap_internal.h"

static inline struct fl_wreq *req_get(struct fl_wcomm *c)
{
	struct fl_wreq *r;

	if (c->free_head < 0)
		return NULL;
	r = &c->reqs[c->free_head];
	c->free_head = r->next_free;
	r->comm = c;
	return r;
}

static void req_put(struct fl_wcomm *c, struct fl_wreq *r)
{
	r->next_free = c->free_head;
	c->free_head = (int)(r - c->reqs);
}

void fl_wrap_req_put(struct fl_wcomm *c, struct fl_wreq *r)
{
	req_put(c, r);
}

int fl_wrap_reg_mr(void *comm, void *data, size_t size, int type, void **mhandle)
{
	struct fl_wcomm *c = comm;
	int rc;

	*mhandle = NULL;
	if (!c)
		return FL_ERR_INTERNAL;
	rc = c->tp->reg_mr(c->tcomm, data, size, type, mhandle);
	if (rc)
		return fl_wrap_report_error(c, "regMr", rc);
	atomic_fetch_or_explicit(&c->stats.mem_types, type, memory_order_relaxed);
	return FL_OK;
}

int fl_wrap_reg_mr_dmabuf(void *comm, void *data, size_t size, int type, uint64_t offset, int fd,
			  void **mhandle)
{
	struct fl_wcomm *c = comm;
	int rc;

	*mhandle = NULL;
	if (!c)
		return FL_ERR_INTERNAL;
	if (!c->tp->reg_mr_dmabuf)
		return fl_wrap_report_error(c, "regMrDmaBuf",
					    fl_fail(FL_ERR_INTERNAL, "%s transport has no dma-buf",
						    c->tp->name));
	rc = c->tp->reg_mr_dmabuf(c->tcomm, data, size, type, offset, fd, mhandle);
	if (rc)
		return fl_wrap_report_error(c, "regMrDmaBuf", rc);
	atomic_fetch_or_explicit(&c->stats.mem_types, type | FL_PTR_DMABUF, memory_order_relaxed);
	return FL_OK;
}

int fl_wrap_dereg_mr(void *comm, void *mhandle)
{
	struct fl_wcomm *c = comm;

	if (!c)
		return FL_ERR_INTERNAL;
	return c->tp->dereg_mr(c->tcomm, mhandle);
}

/* Built with -DFABRICLAB_NO_COUNTING only so `make bench` can measure what counting costs. */
#ifdef FABRICLAB_NO_COUNTING
#define COUNTING 0
#else
#define COUNTING 1
#endif

/*
 * A pooled request is taken, and its post time stamped, before the transport
 * sees the request: a transport may move bytes inside isend, and nothing it
 * reports may start before the post time (the report's watermark relies on it).
 * NULL when all of the comm's requests are out: NCCL posts again later.
 */
static inline __attribute__((always_inline)) struct fl_wreq *stamp(struct fl_wcomm *c, int n)
{
	struct fl_wreq *r = req_get(c);

	if (!r)
		return NULL;
	r->n = n;
	if (COUNTING && n)
		fl_stats_post(&c->stats, (unsigned)(r - c->reqs), fl_clock_ns());
	return r;
}

/* NULL from the transport means "retry later": the pooled request goes back. */
static int post(struct fl_wcomm *c, struct fl_wreq *r, void **request, int rc, void *treq,
		const char *op)
{
	if (rc || !treq) {
		if (COUNTING && r->n)
			fl_stats_unpost(&c->stats, (unsigned)(r - c->reqs));
		req_put(c, r);
		return rc ? fl_wrap_report_error(c, op, rc) : FL_OK;
	}
	r->treq = treq;
	*request = r;
	return FL_OK;
}

int fl_wrap_isend(void *send_comm, void *data, size_t size, int tag, void *mhandle, void *phandle,
		  void **request)
{
	struct fl_wcomm *c = send_comm;
	struct fl_wreq *r;
	void *treq = NULL;
	int rc;

	*request = NULL;
	if (!c)
		return FL_ERR_INTERNAL;
	if (c->peer_later)
		fl_wrap_join_late(c);
	/* slow: the send is held back before the wire; NCCL posts it again */
	if (FL_FAULTS && c->fault && fl_fault_hold_post(c->fault, size, fl_clock_ns()))
		return FL_OK;
	if (COUNTING)
		fl_stats_note_tag(&c->stats, tag); /* NCCL's tag: this process's rank */
	r = stamp(c, 1);
	if (!r)
		return FL_OK;
	if (c->tp->isend_ph)
		rc = c->tp->isend_ph(c->tcomm, data, size, tag, mhandle, phandle, &treq);
	else
		rc = c->tp->isend(c->tcomm, data, size, tag, mhandle, &treq);
	if (FL_FAULTS && c->fault && !rc && treq)
		fl_fault_post_taken(c->fault);
	if (!rc && treq)
		fl_trace_posted(&c->trace, (unsigned)(r - c->reqs), 1, &size, &tag);
	return post(c, r, request, rc, treq, "isend");
}

static size_t total_size(int n, const size_t *sizes)
{
	size_t total = 0;

	for (int i = 0; i < n; i++)
		total += sizes[i];
	return total;
}

int fl_wrap_irecv(void *recv_comm, int n, void **data, size_t *sizes, int *tags, void **mhandles,
		  void **phandles, void **request)
{
	struct fl_wcomm *c = recv_comm;
	struct fl_wreq *r;
	/* NCCL's hint reaches the transport as NCCL left it; our own transports clear it */
	void *treq = *request == FL_OPTIONAL_RECV_COMPLETION ? FL_OPTIONAL_RECV_COMPLETION : NULL;
	int rc;

	*request = NULL;
	if (!c)
		return FL_ERR_INTERNAL;
	if (n < 1 || n > FL_MAX_RECVS)
		return fl_wrap_report_error(c, "irecv",
					    fl_fail(FL_ERR_INTERNAL, "irecv of %d buffers (1..%d)",
						    n, FL_MAX_RECVS));
	if (c->peer_later)
		fl_wrap_join_late(c);
	/* slow: the receive is held back too, as a slow GPU frees its buffers late */
	if (FL_FAULTS && c->fault &&
	    fl_fault_hold_post(c->fault, total_size(n, sizes), fl_clock_ns()))
		return FL_OK;
	if (COUNTING && tags)
		fl_stats_note_tag(&c->stats, tags[0]); /* NCCL's tags: the sender's rank */
	r = stamp(c, n);
	if (!r)
		return FL_OK;
	if (c->tp->irecv_ph)
		rc = c->tp->irecv_ph(c->tcomm, n, data, sizes, tags, mhandles, phandles, &treq);
	else
		rc = c->tp->irecv(c->tcomm, n, data, sizes, tags, mhandles, &treq);
	if (FL_FAULTS && c->fault && !rc && treq)
		fl_fault_post_taken(c->fault);
	if (!rc && treq)
		fl_trace_posted(&c->trace, (unsigned)(r - c->reqs), n, sizes, tags);
	return post(c, r, request, rc, treq, "irecv");
}

int fl_wrap_iflush(void *recv_comm, int n, void **data, int *sizes, void **mhandles,
		   void **request)
{
	struct fl_wcomm *c = recv_comm;
	struct fl_wreq *r;
	void *treq = NULL;
	int rc;

	*request = NULL;
	if (!c)
		return FL_ERR_INTERNAL;
	/*
	 * A flush moves no payload: n = 0 keeps it out of the counts. NULL would tell
	 * NCCL "nothing to flush" (2.30.7 src/transport/net.cc:1684-1700: it tests only
	 * a non-NULL request and never posts the flush again), so an exhausted pool is an
	 * error, never a silent skip; NCCL keeps far fewer requests per comm than the pool.
	 */
	r = stamp(c, 0);
	if (!r)
		return fl_wrap_report_error(c, "iflush",
					    fl_fail(FL_ERR_INTERNAL, "iflush with all %d requests "
						    "of this comm in flight (NCCL keeps at most %d)",
						    FL_WRAP_POOL, FL_MAX_REQUESTS));
	rc = c->tp->iflush(c->tcomm, n, data, sizes, mhandles, &treq);
	return post(c, r, request, rc, treq, "iflush");
}

int fl_wrap_test(void *request, int *done, int *sizes)
{
	struct fl_wreq *r = request;
	struct fl_xfer_times times = { 0 };
	int got[FL_MAX_RECVS] = { 0 };
	struct fl_wcomm *c;
	uint64_t bytes = 0, done_ns = 0;
	unsigned slot;
	int rc;

	*done = 0;
	if (!r || !r->comm)
		return FL_ERR_INTERNAL;
	c = r->comm;
	if (c->peer_later)
		fl_wrap_join_late(c);
	slot = (unsigned)(r - c->reqs);
	if (FL_FAULTS && c->fault) {
		rc = fl_fault_check_fail(c->fault, fl_clock_ns());
		if (rc)
			return fl_wrap_report_error(c, "test", rc);
	}
	rc = c->tp->test(r->treq, done, got, &times);
	if (rc)
		return fl_wrap_report_error(c, "test", rc);
	if (!*done)
		return FL_OK;
	for (int i = 0; i < r->n; i++) {
		bytes += (uint64_t)got[i];
		if (sizes)
			sizes[i] = got[i];
	}
	if (COUNTING && r->n) {
		done_ns = fl_clock_ns();
		if (times.whole_request) {
			times.wire_start_ns = fl_stats_posted_at(&c->stats, slot);
			times.wire_end_ns = done_ns;
		}
	}
	if (r->n) /* before the stats free the slot: the event reads its post time */
		fl_trace_done(&c->trace, slot, bytes, &times);
	if (COUNTING && r->n)
		fl_stats_complete(&c->stats, slot, bytes, done_ns, &times);
	if (FL_FAULTS && c->fault)
		fl_fault_moved(c->fault, bytes);
	/* NCCL ends a receive with irecvConsumed when it can (device offload over ext) */
	if (!(r->n && c->kind == FL_COMM_RECV && c->hold_consumed))
		req_put(c, r);
	return FL_OK;
}
