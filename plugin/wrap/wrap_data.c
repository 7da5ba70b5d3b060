/* The data path through the wrap layer: memory registration, isend/irecv/test, counting. */
#include <limits.h>
#include <stdatomic.h>

#include "base/clock.h"
#include "base/error.h"
#include "base/log.h"
#include "fault/fault.h"
#include "trace/trace.h"
#include "wrap.h"
#include "wrap_internal.h"

/*
 * A slot never handed out before: its first use also tells the stats how far readers must
 * scan posted[] (before its post time is stored). Off the fast path: at most once per slot.
 */
static __attribute__((noinline)) struct fl_wreq *req_fresh(struct fl_wcomm *c)
{
	struct fl_wreq *r;

	if (c->fresh >= FL_WRAP_POOL)
		return NULL;
	r = &c->reqs[c->fresh++];
	if (COUNTING)
		fl_stats_slots_used(&c->stats, r->slot + 1);
	r->comm = c;
	return r;
}

static inline struct fl_wreq *req_get(struct fl_wcomm *c)
{
	struct fl_wreq *r;

	if (__builtin_expect(c->free_head < 0, 0))
		return req_fresh(c);
	r = &c->reqs[c->free_head];
	c->free_head = r->next_free;
	r->comm = c;
	return r;
}

static void req_put(struct fl_wcomm *c, struct fl_wreq *r)
{
	r->next_free = c->free_head;
	c->free_head = (int)r->slot;
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
	r->via = FL_VIA_TRANSPORT;
	if (COUNTING && n)
		fl_stats_post_listed(&c->stats, r->slot, fl_clock_ns()); /* req_fresh listed it */
	return r;
}

/* An error of the plugin behind a direct request, in the words its transport would use. */
static int transport_error(struct fl_wcomm *c, const struct fl_wreq *r, const char *op, int rc)
{
	if (r->via == FL_VIA_DIRECT)
		rc = c->direct.fail(c->tcomm, op, rc);
	return fl_wrap_report_error(c, op, rc);
}

/* NULL from the transport means "retry later": the pooled request goes back. */
static int post(struct fl_wcomm *c, struct fl_wreq *r, void **request, int rc, void *treq,
		const char *op)
{
	if (rc || !treq) {
		if (COUNTING && r->n)
			fl_stats_unpost(&c->stats, r->slot);
		if (rc)
			rc = transport_error(c, r, op, rc);
		req_put(c, r);
		return rc;
	}
	r->treq = treq;
	*request = r;
	return FL_OK;
}

/*
 * What the first isend/irecv (or test) of a comm must do: join once the peer is known, note
 * NCCL's first tag (tags == NULL: none this time).
 */
static __attribute__((noinline)) void post_late(struct fl_wcomm *c, const int *tags)
{
	if (c->late & FL_LATE_PEER)
		fl_wrap_join_late(c);
	if (COUNTING && (c->late & FL_LATE_TAG) && tags) {
		fl_stats_note_tag(&c->stats, tags[0]);
		if (fl_stats_tag_known(&c->stats))
			c->late &= ~(unsigned)FL_LATE_TAG;
	}
	if (c->late & FL_LATE_DIRECT)
		fl_wrap_ask_direct(c);
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
	if (c->late) /* NCCL's tag: this process's rank */
		post_late(c, &tag);
	/* slow: the send is held back before the wire; NCCL posts it again */
	if (FL_FAULTS && c->fault && fl_fault_hold_post(c->fault, size, fl_clock_ns()))
		return FL_OK;
	r = stamp(c, 1);
	if (!r)
		return FL_OK;
	r->posted_bytes = size;
	if (c->direct.comm) {
		r->via = FL_VIA_DIRECT;
		/* an NCCL before v10 passes no profiler handle: the plugin gets one it may use */
		rc = c->direct.isend(c->direct.comm, data, size, tag, mhandle,
				     phandle ? phandle : c->direct.no_phandle, &treq);
	} else if (c->fwd) {
		r->via = FL_VIA_FORWARD;
		rc = c->fwd->isend(c->tcomm, data, size, tag, mhandle, phandle, &r->fwd, &treq);
	} else
		rc = c->tp->isend(c->tcomm, data, size, tag, mhandle, &treq);
	if (FL_FAULTS && c->fault && !rc && treq)
		fl_fault_post_taken(c->fault);
	if (!rc && treq)
		fl_trace_posted(&c->trace, r->slot, 1, &size, &tag);
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
	if (c->late) /* NCCL's tags: the sender's rank */
		post_late(c, tags);
	/* slow: the receive is held back too, as a slow GPU frees its buffers late */
	if (FL_FAULTS && c->fault &&
	    fl_fault_hold_post(c->fault, total_size(n, sizes), fl_clock_ns()))
		return FL_OK;
	r = stamp(c, n);
	if (!r)
		return FL_OK;
	r->posted_bytes = total_size(n, sizes);
	/* NCCL v10+ always passes an array of handles (2.28.9 src/transport/net.cc:1426, 1482) */
	if (c->direct.comm && n == 1 && phandles) {
		r->via = FL_VIA_DIRECT;
		r->fwd.hinted = treq == FL_OPTIONAL_RECV_COMPLETION;
		rc = c->direct.irecv(c->direct.comm, n, data, sizes, tags, mhandles, phandles,
				     &treq);
	} else if (c->fwd) {
		r->via = FL_VIA_FORWARD;
		rc = c->fwd->irecv(c->tcomm, n, data, sizes, tags, mhandles, phandles, &r->fwd,
				   &treq);
	} else
		rc = c->tp->irecv(c->tcomm, n, data, sizes, tags, mhandles, &treq);
	if (FL_FAULTS && c->fault && !rc && treq)
		fl_fault_post_taken(c->fault);
	if (!rc && treq)
		fl_trace_posted(&c->trace, r->slot, n, sizes, tags);
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
	if (c->fwd) {
		r->via = FL_VIA_FORWARD;
		rc = c->fwd->iflush(c->tcomm, n, data, sizes, mhandles, &r->fwd, &treq);
	} else
		rc = c->tp->iflush(c->tcomm, n, data, sizes, mhandles, &treq);
	return post(c, r, request, rc, treq, "iflush");
}

/* The request goes back to the pool, but a receive NCCL ends with irecvConsumed. */
static inline void finish_slot(struct fl_wcomm *c, struct fl_wreq *r, int n)
{
	/* NCCL ends a receive with irecvConsumed when it can (device offload over ext) */
	if (!(n && c->kind == FL_COMM_RECV && c->hold_consumed))
		req_put(c, r);
}

/*
 * Physics: a completion that says it moved a negative number of bytes, or more than were
 * posted, cannot be true (an inner plugin's test wrote nonsense). It is counted and said,
 * once per connection, and left out of every figure: bytes, rates, histograms, intervals.
 * NCCL still gets the sizes as the transport gave them; fabriclab only measures.
 */
static __attribute__((noinline)) int impossible(struct fl_wcomm *c, struct fl_wreq *r, int n,
						int64_t claimed)
{
	struct fl_xfer_times none = { 0 }; /* the trace shows the request ended, timing nothing */

	if (COUNTING && !fl_stats_load(&c->stats.impossible))
		FL_WARN("connection %u: test reported %lld bytes for a request of %llu bytes "
			"posted: impossible, left out of the figures (and so is every such "
			"completion on it)", c->id, (long long)claimed,
			(unsigned long long)r->posted_bytes);
	fl_trace_done(&c->trace, r->slot, 0, &none);
	if (COUNTING)
		fl_stats_impossible(&c->stats, r->slot, claimed, r->posted_bytes);
	finish_slot(c, r, n);
	return FL_OK;
}

/*
 * A request test found done, with n buffers: its sizes, counts, trace event and pool slot.
 * A size the transport gives as FL_SIZE_UNWRITTEN (the plugin behind told none, for a receive)
 * reaches NCCL as 0, what NCCL reads unwrapped (it zero-fills: 2.30.7 src/transport/net.cc:
 * 1617-1619), never the posted slot, which NCCL sizes whole (:1566-1572) and would then take
 * as its transSize (:1632); fabriclab counts the request unsized: 0 bytes, its time kept (the
 * sender's count is the hop's, docs/report-format.md). An untimed one (times->untimed) is
 * counted and traced with no interval: done_ns 0 adds no wire, active or outstanding time.
 */
static inline __attribute__((always_inline)) int finish_with(struct fl_wcomm *c,
							     struct fl_wreq *r, int n,
							     int *sizes, const int *got,
							     struct fl_xfer_times *times)
{
	unsigned slot = r->slot;
	uint64_t bytes, done_ns = 0;
	int64_t claimed = 0;
	int negative = 0, unsized = 0;

	for (int i = 0; i < n; i++) {
		int size = got[i];

		if (__builtin_expect(size == FL_SIZE_UNWRITTEN, 0)) {
			unsized = 1;
			size = 0;
		}
		claimed += size;
		negative |= size < 0;
		if (sizes)
			sizes[i] = size;
	}
	bytes = (uint64_t)claimed;
	if (__builtin_expect(negative || bytes > r->posted_bytes, 0) && n)
		return impossible(c, r, n, claimed);
	if (COUNTING && n && !times->untimed) {
		done_ns = fl_clock_ns();
		if (times->whole_request) {
			times->wire_start_ns = fl_stats_posted_at(&c->stats, slot);
			times->wire_end_ns = done_ns;
		}
	}
	if (n) /* before the stats free the slot: the event reads its post time */
		fl_trace_done(&c->trace, slot, bytes, times);
	if (COUNTING && n && __builtin_expect(unsized, 0))
		fl_stats_add(&c->stats.unsized, 1);
	if (COUNTING && n)
		fl_stats_complete(&c->stats, slot, bytes, done_ns, times);
	if (FL_FAULTS && c->fault)
		fl_fault_moved(c->fault, bytes);
	finish_slot(c, r, n);
	return FL_OK;
}

/* Out of line, so that the polls that find nothing done keep a small frame. */
static __attribute__((noinline)) int finish(struct fl_wcomm *c, struct fl_wreq *r, int *sizes,
					    const int *got, struct fl_xfer_times *times)
{
	return finish_with(c, r, r->n, sizes, got, times);
}

static inline int test_via_transport(struct fl_wcomm *c, struct fl_wreq *r, int *done,
				     int *sizes)
{
	struct fl_xfer_times times = { 0 };
	int got[FL_MAX_RECVS] = { 0 };
	int rc = c->tp->test(r->treq, done, got, &times);

	if (rc)
		return fl_wrap_report_error(c, "test", rc);
	if (!*done)
		return FL_OK;
	return finish(c, r, sizes, got, &times);
}

/*
 * The rules for a request of the plugin behind a forwarding transport, direct or forwarded,
 * in one place (transport/forward.h says why): a send's size the plugin left unwritten is what
 * it was given (a send moves all of it), a receive's stays unwritten (finish_with counts it
 * unsized); a receive the plugin got NCCL's optional-completion hint with that comes back
 * with 0 bytes is unsized and not timed; every other request is timed posted -> done.
 */
static inline __attribute__((always_inline)) int plugin_rules(struct fl_wcomm *c,
							      struct fl_wreq *r, int n,
							      int *sizes, int *got)
{
	struct fl_xfer_times times = { .whole_request = 1 };

	if (c->kind == FL_COMM_SEND) {
		if (n && got[0] == FL_SIZE_UNWRITTEN)
			got[0] = r->posted_bytes > INT_MAX ? INT_MAX : (int)r->posted_bytes;
	} else if (n && r->fwd.hinted && got[0] == 0) {
		got[0] = FL_SIZE_UNWRITTEN;
		times = (struct fl_xfer_times){ .untimed = 1 };
	}
	return finish_with(c, r, n, sizes, got, &times);
}

/* A direct request: one buffer, folded in by the compiler. */
static __attribute__((noinline)) int finish_direct(struct fl_wcomm *c, struct fl_wreq *r,
						   int *sizes, int *got)
{
	return plugin_rules(c, r, 1, sizes, got);
}

static __attribute__((noinline)) int finish_forwarded(struct fl_wcomm *c, struct fl_wreq *r,
						      int *sizes, int *got)
{
	return plugin_rules(c, r, r->n, sizes, got);
}

/*
 * Room for as many sizes as NCCL gives a receive's test (2.28.9 src/transport/net.cc:1508),
 * though a direct request has one buffer.
 */
static inline int test_direct(struct fl_wcomm *c, struct fl_wreq *r, int *done, int *sizes)
{
	int got[FL_MAX_RECVS];
	int rc;

	got[0] = FL_SIZE_UNWRITTEN;
	rc = c->direct.test(r->treq, done, got);
	if (rc)
		return transport_error(c, r, "test", rc);
	if (!*done)
		return FL_OK;
	return finish_direct(c, r, sizes, got);
}

/* Through the transport's forward data path, which holds the request's state in r->fwd. */
static int test_forwarded(struct fl_wcomm *c, struct fl_wreq *r, int *done, int *sizes)
{
	int got[FL_MAX_RECVS];
	int rc = c->fwd->test(c->tcomm, r->treq, r->n, &r->fwd, done, got);

	if (rc)
		return fl_wrap_report_error(c, "test", rc);
	if (!*done)
		return FL_OK;
	return finish_forwarded(c, r, sizes, got);
}

int fl_wrap_test(void *request, int *done, int *sizes)
{
	struct fl_wreq *r = request;
	struct fl_wcomm *c;
	int rc;

	*done = 0;
	if (!r || !r->comm)
		return FL_ERR_INTERNAL;
	c = r->comm;
	if (c->late & FL_LATE_PEER)
		fl_wrap_join_late(c);
	if (FL_FAULTS && c->fault) {
		rc = fl_fault_check_fail(c->fault, fl_clock_ns());
		if (rc)
			return fl_wrap_report_error(c, "test", rc);
	}
	if (r->via == FL_VIA_DIRECT)
		return test_direct(c, r, done, sizes);
	if (r->via == FL_VIA_FORWARD)
		return test_forwarded(c, r, done, sizes);
	return test_via_transport(c, r, done, sizes);
}
