/*
 * The data path over the inner plugin: one pooled request per inner request
 * (for the times and the sizes), the throttle as a hold of sends ("not now", a
 * NULL request NCCL retries) while the pacer says no plus a completion no
 * earlier than the paced bytes drain, and completion times from the only
 * calls the inner shows: accepted -> done.
 */
#include <limits.h>
#include <string.h>

#include "base/clock.h"
#include "base/error.h"
#include "ext_internal.h"
#include "transport/pace.h"

static struct ext_req *req_get(struct ext_comm *c)
{
	struct ext_req *r = c->free_head;

	if (r)
		c->free_head = r->next_free;
	return r;
}

static void req_put(struct ext_comm *c, struct ext_req *r)
{
	r->next_free = c->free_head;
	c->free_head = r;
}

void ext_req_release(struct ext_comm *c, struct ext_req *r)
{
	req_put(c, r);
}

int ext_reg_mr(void *comm, void *data, size_t size, int type, void **mhandle)
{
	struct ext_comm *c = comm;
	int rc = ext_inner_reg_mr(&ext_plugin, c->inner, data, size, type, mhandle);

	return rc ? fl_fail(rc, "ext: %s regMr of %zu bytes (type %d) failed (error %d)",
			    ext_plugin.name, size, type, rc) : FL_OK;
}

int ext_reg_mr_dmabuf(void *comm, void *data, size_t size, int type, uint64_t offset, int fd,
		      void **mhandle)
{
	struct ext_comm *c = comm;
	int rc;

	if (!ext_plugin.reg_mr_dmabuf)
		return fl_fail(FL_ERR_INTERNAL, "ext: %s has no regMrDmaBuf", ext_plugin.name);
	rc = ext_plugin.reg_mr_dmabuf(c->inner, data, size, type, offset, fd, mhandle);
	return rc ? fl_fail(rc, "ext: %s regMrDmaBuf failed (error %d)", ext_plugin.name, rc) :
		    FL_OK;
}

int ext_dereg_mr(void *comm, void *mhandle)
{
	struct ext_comm *c = comm;
	int rc = ext_plugin.dereg_mr(c->inner, mhandle);

	return rc ? fl_fail(rc, "ext: %s deregMr failed (error %d)", ext_plugin.name, rc) : FL_OK;
}

/* NULL request, FL_OK: the inner said "not now", or the pacer holds the bytes back. */
static int accepted(struct ext_comm *c, struct ext_req *r, int rc, void **request,
		    const char *op)
{
	if (rc || !r->inner) {
		req_put(c, r);
		return rc ? fl_fail(rc, "ext: %s %s failed (error %d)", ext_plugin.name, op, rc) :
			    FL_OK;
	}
	*request = r;
	return FL_OK;
}

/*
 * How far ahead of the pacer a request may be handed to the inner: its
 * completion still waits for the rate, but the inner, which has its own
 * latency, keeps a few messages in flight instead of one.
 */
#define EXT_PACE_AHEAD_NS 10000000u

/* "not now": the pacer is more than EXT_PACE_AHEAD_NS behind (or in a stall window). */
static int pace_holds(struct fl_pacer *p, uint64_t now)
{
	if (fl_pace_wait_ns(p, now) <= EXT_PACE_AHEAD_NS)
		return 0;
	fl_pace_backlog(p, now);
	return 1;
}

/* The bytes were taken from the pacer: they have drained when it would allow the next. */
static uint64_t paced_release(struct fl_pacer *p, uint64_t now, size_t bytes)
{
	fl_pace_take(p, now, bytes);
	return now + fl_pace_wait_ns(p, now);
}

#define NOT_NOW (-1)

/* The hello goes first on the inner's connection; data waits ("not now") until it is posted. */
static int hello_first(struct ext_comm *c)
{
	int posted = 0, rc = ext_hello_drive(c, &posted);

	return rc ? rc : posted ? FL_OK : NOT_NOW;
}

static struct ext_req *fresh_req(struct ext_comm *c, int n)
{
	struct ext_req *r = req_get(c);

	if (!r)
		return NULL;
	r->inner = NULL;
	r->n = n;
	r->release_ns = 0;
	r->inner_done = 0;
	r->hinted = 0;
	r->early = 0;
	return r;
}

int ext_isend_ph(void *send_comm, void *data, size_t size, int tag, void *mhandle,
		 void *phandle, void **request)
{
	struct ext_comm *c = send_comm;
	uint64_t now = FL_PACING && c->pacer ? fl_clock_ns() : 0;
	struct ext_req *r;
	int rc;

	*request = NULL;
	if (c->hello.buf && (rc = hello_first(c)) != FL_OK)
		return rc == NOT_NOW ? FL_OK : rc;
	if (FL_PACING && c->pacer && pace_holds(c->pacer, now))
		return FL_OK;
	r = fresh_req(c, 1);
	if (!r)
		return FL_OK;
	rc = ext_inner_isend(&ext_plugin, c->inner, data, size, tag, mhandle,
			     phandle ? phandle : ext_no_phandle, &r->inner);
	if (!rc && r->inner) {
		r->sizes[0] = size > INT_MAX ? INT_MAX : (int)size;
		if (FL_PACING && c->pacer)
			r->release_ns = paced_release(c->pacer, now, size);
	}
	return accepted(c, r, rc, request, "isend");
}

int ext_isend(void *send_comm, void *data, size_t size, int tag, void *mhandle, void **request)
{
	return ext_isend_ph(send_comm, data, size, tag, mhandle, NULL, request);
}

static size_t total(int n, const size_t *sizes)
{
	size_t sum = 0;

	for (int i = 0; i < n; i++)
		sum += sizes[i];
	return sum;
}

/*
 * A receive-side throttle holds the posting of buffers ("not now") until the
 * pacer allows their size: the sender can fill them only at that rate, as
 * behind a slower cable, and a receiver-driven inner makes the sender wait.
 */
int ext_irecv_ph(void *recv_comm, int n, void **data, size_t *sizes, int *tags, void **mhandles,
		 void **phandles, void **request)
{
	struct ext_comm *c = recv_comm;
	uint64_t now = FL_PACING && c->pacer ? fl_clock_ns() : 0;
	void *hint = *request == FL_OPTIONAL_RECV_COMPLETION ? FL_OPTIONAL_RECV_COMPLETION : NULL;
	struct ext_req *r;
	int rc;

	*request = NULL;
	if (c->hello.buf && (rc = hello_first(c)) != FL_OK)
		return rc == NOT_NOW ? FL_OK : rc;
	if (FL_PACING && c->pacer && pace_holds(c->pacer, now))
		return FL_OK;
	r = fresh_req(c, n);
	if (!r)
		return FL_OK;
	/* the inner sees NCCL's hint where NCCL leaves it; before v9 NCCL clears it too */
	r->inner = ext_plugin.version >= 9 ? hint : NULL;
	r->hinted = r->inner != NULL;
	rc = ext_inner_irecv(&ext_plugin, c->inner, n, data, sizes, tags, mhandles,
			     phandles ? phandles : ext_no_phandles, &r->inner);
	if (!rc && r->inner && FL_PACING && c->pacer)
		r->release_ns = paced_release(c->pacer, now, total(n, sizes));
	return accepted(c, r, rc, request, "irecv");
}

int ext_irecv(void *recv_comm, int n, void **data, size_t *sizes, int *tags, void **mhandles,
	      void **request)
{
	return ext_irecv_ph(recv_comm, n, data, sizes, tags, mhandles, NULL, request);
}

int ext_iflush(void *recv_comm, int n, void **data, int *sizes, void **mhandles, void **request)
{
	struct ext_comm *c = recv_comm;
	struct ext_req *r;
	int rc;

	*request = NULL;
	if (!ext_plugin.iflush)
		return fl_fail(FL_ERR_INTERNAL, "ext: %s has no iflush", ext_plugin.name);
	r = fresh_req(c, 0);
	if (!r) /* NULL would mean "nothing to flush" to NCCL (fl_wrap_iflush says why) */
		return fl_fail(FL_ERR_INTERNAL, "ext: iflush with all %d requests of ext "
			       "connection %u in flight", EXT_POOL, c->id);
	rc = ext_plugin.iflush(c->inner, n, data, sizes, mhandles, &r->inner);
	return accepted(c, r, rc, request, "iflush");
}

/*
 * Some inners never write sizes (fastsocket's test leaves them alone:
 * net_fastsocket.cc:1432-1475 at b3ff1c6; NCCL zero-fills them, 2.30.7
 * src/transport/net.cc:1617-1619, and takes what test wrote as the step's
 * transSize, :1632). A send moved what it was given: its posted size stands. A
 * receive's posted size is not what arrived (NCCL posts whole slots,
 * stepSize * sliceSteps, :1566-1572, larger than a partial Simple step or an LL
 * step): it stays FL_SIZE_UNWRITTEN, and the wrap counts it unsized.
 * A receive the optional-completion hint went with, back with 0 bytes written,
 * may be done before its data landed (aws-ofi-nccl v1.21.1
 * src/nccl_ofi_rdma.cpp:3562-3564, 3427: done on its control message, the 0
 * that message added written as its size, 494, 2234-2299): unsized and untimed.
 * (An LL or LL128 step, the only ones NCCL hints, never carries 0 bytes.)
 */

/* The inner said done: keep what it says moved. */
static void inner_done(struct ext_comm *c, struct ext_req *r, const int *sizes)
{
	r->inner_done = 1;
	for (int i = 0; i < r->n; i++)
		if (sizes[i] != FL_SIZE_UNWRITTEN || !c->send)
			r->sizes[i] = sizes[i];
	if (r->hinted && r->sizes[0] == 0) {
		r->sizes[0] = FL_SIZE_UNWRITTEN;
		r->early = 1;
	}
}

/* A done request goes back to the pool, but a receive NCCL will end with irecvConsumed. */
static int finish(struct ext_comm *c, struct ext_req *r)
{
	int receive = r->n && !c->send, rc = FL_OK;

	if (receive && ext_hold_for_consumed)
		return FL_OK; /* the inner's request lives on until the GPU consumed it */
	/* an NCCL without irecvConsumed (v6) is done with a receive once test says so */
	if (receive && ext_plugin.irecv_consumed)
		rc = ext_plugin.irecv_consumed(c->inner, r->n, r->inner);
	req_put(c, r);
	return rc ? fl_fail(rc, "ext: %s irecvConsumed failed (error %d) on ext connection %u",
			    ext_plugin.name, rc, c->id) : FL_OK;
}

/*
 * NCCL tests a connection's requests oldest first (2.28.9 src/transport/net.cc:
 * 1335-1339, 1503-1508) and some inners fail any other order (fastsocket,
 * net_fastsocket.cc:1432-1447), so no data request is tested before the hello.
 * The inner shows only accepted -> done: that is the wire interval reported
 * (the best estimate these calls allow; docs/report-format.md says which view
 * is judged), with no ready time, so peer wait is not separated from it. A
 * paced request completes no earlier than its bytes drain at the pacer's rate,
 * as on a slower cable, so its wire interval shows the throttle.
 */
int ext_test(void *request, int *done, int *sizes, struct fl_xfer_times *times)
{
	struct ext_req *r = request;
	struct ext_comm *c = r->comm;
	int rc, posted;

	if (c->hello.buf) { /* the hello ahead of this request, tested first */
		rc = ext_hello_drive(c, &posted);
		if (rc || c->hello.buf) { /* still in flight: an inner may complete in order only */
			*done = 0;
			return rc;
		}
	}
	if (!r->inner_done) {
		for (int i = 0; i < r->n; i++)
			sizes[i] = FL_SIZE_UNWRITTEN;
		rc = ext_plugin.test(r->inner, done, sizes);
		if (rc)
			return fl_fail(rc, "ext: %s test failed (error %d) on ext connection %u",
				       ext_plugin.name, rc, c->id);
		if (!*done)
			return FL_OK;
		inner_done(c, r, sizes);
	}
	if (FL_PACING && r->release_ns && fl_clock_ns() < r->release_ns) {
		*done = 0;
		return FL_OK;
	}
	*done = 1;
	for (int i = 0; i < r->n; i++)
		sizes[i] = r->sizes[i];
	if (times) { /* the wrap dates it: accepted (posted) -> done, unless done came early */
		times->untimed = r->early;
		times->whole_request = !times->untimed;
	}
	return finish(c, r);
}

static int direct_fail(void *comm, const char *op, int rc)
{
	struct ext_comm *c = comm;

	return fl_fail(rc, "ext: %s %s failed (error %d) on ext connection %u", ext_plugin.name,
		       op, rc, c->id);
}

/*
 * What ext adds to a request, once the hello moved and with no pacer, is only what it makes
 * of sizes an inner leaves unwritten or of a receive done early, the whole-request timing and
 * a profiler handle where NCCL gave none, which the wrap does itself on the direct path
 * (transport.h). Not for a v6-v9 inner (its calls need adapting), nor for receives of an
 * inner with irecvConsumed (ext ends each one: finish()).
 */
int ext_direct(void *comm, struct fl_direct *d)
{
	struct ext_comm *c = comm;

	if (c->hello.buf)
		return FL_DIRECT_NOT_YET;
	if (!ext_direct_on || c->pacer || !ext_plugin.isend10 || !ext_plugin.irecv10 ||
	    (!c->send && ext_plugin.irecv_consumed))
		return FL_DIRECT_NEVER;
	*d = (struct fl_direct){
		.comm = c->inner, .isend = ext_plugin.isend10, .irecv = ext_plugin.irecv10,
		.test = ext_plugin.test, .fail = direct_fail, .no_phandle = ext_no_phandle,
	};
	return FL_DIRECT_ON;
}

void ext_set_pacer(void *comm, struct fl_pacer *pacer)
{
	struct ext_comm *c = comm;

	if (c)
		c->pacer = pacer;
}
