/*
 * The data path over the inner plugin: each request is the inner's own, its state (for the
 * pacer and the sizes held behind it) in the caller's request object (struct fl_fwd_req), so a
 * request is one pooled object however many layers it crosses; the throttle as a hold of sends
 * ("not now", a NULL request NCCL retries) while the pacer says no plus a completion no earlier
 * than the paced bytes drain. What the inner's test wrote goes up as it wrote it: the caller
 * sizes and times the request by the rules of transport/forward.h.
 */
#include "base/clock.h"
#include "base/error.h"
#include "ext_internal.h"
#include "transport/pace.h"

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
static int accepted(int rc, const char *op)
{
	return rc ? fl_fail(rc, "ext: %s %s failed (error %d)", ext_plugin.name, op, rc) : FL_OK;
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

/* A request's state before the inner sees it: not paced, not done, no hint. */
static void fresh(struct fl_fwd_req *r)
{
	r->release_ns = 0;
	r->inner_done = 0;
	r->hinted = 0;
}

int ext_isend(void *send_comm, void *data, size_t size, int tag, void *mhandle, void *phandle,
	      struct fl_fwd_req *r, void **request)
{
	struct ext_comm *c = send_comm;
	uint64_t now = FL_PACING && c->pacer ? fl_clock_ns() : 0;
	int rc;

	*request = NULL;
	if (c->hello.buf && (rc = hello_first(c)) != FL_OK)
		return rc == NOT_NOW ? FL_OK : rc;
	if (FL_PACING && c->pacer && pace_holds(c->pacer, now))
		return FL_OK;
	fresh(r);
	rc = ext_inner_isend(&ext_plugin, c->inner, data, size, tag, mhandle,
			     phandle ? phandle : ext_no_phandle, request);
	if (!rc && *request && FL_PACING && c->pacer)
		r->release_ns = paced_release(c->pacer, now, size);
	return accepted(rc, "isend");
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
int ext_irecv(void *recv_comm, int n, void **data, size_t *sizes, int *tags, void **mhandles,
	      void **phandles, struct fl_fwd_req *r, void **request)
{
	struct ext_comm *c = recv_comm;
	uint64_t now = FL_PACING && c->pacer ? fl_clock_ns() : 0;
	void *hint = *request == FL_OPTIONAL_RECV_COMPLETION ? FL_OPTIONAL_RECV_COMPLETION : NULL;
	int rc;

	*request = NULL;
	if (c->hello.buf && (rc = hello_first(c)) != FL_OK)
		return rc == NOT_NOW ? FL_OK : rc;
	if (FL_PACING && c->pacer && pace_holds(c->pacer, now))
		return FL_OK;
	fresh(r);
	/* the inner sees NCCL's hint where NCCL leaves it; before v9 NCCL clears it too */
	*request = ext_plugin.version >= 9 ? hint : NULL;
	r->hinted = *request != NULL;
	rc = ext_inner_irecv(&ext_plugin, c->inner, n, data, sizes, tags, mhandles,
			     phandles ? phandles : ext_no_phandles, request);
	if (!rc && *request && FL_PACING && c->pacer)
		r->release_ns = paced_release(c->pacer, now, total(n, sizes));
	return accepted(rc, "irecv");
}

/* The caller's pool is as large as NCCL's budget: a flush always has a request to go in. */
int ext_iflush(void *recv_comm, int n, void **data, int *sizes, void **mhandles,
	       struct fl_fwd_req *r, void **request)
{
	struct ext_comm *c = recv_comm;

	*request = NULL;
	if (!ext_plugin.iflush)
		return fl_fail(FL_ERR_INTERNAL, "ext: %s has no iflush", ext_plugin.name);
	fresh(r);
	return accepted(ext_plugin.iflush(c->inner, n, data, sizes, mhandles, request), "iflush");
}

/*
 * A done request is the caller's again, but a receive NCCL cannot end with irecvConsumed: an
 * NCCL without it (v6) is done with a receive once test says so, and the inner is told here.
 */
static int finish(struct ext_comm *c, int n, void *request)
{
	int receive = n && !c->send, rc;

	if (!receive || ext_hold_for_consumed || !ext_plugin.irecv_consumed)
		return FL_OK; /* held: the inner's request lives on until the GPU consumed it */
	rc = ext_plugin.irecv_consumed(c->inner, n, request);
	return rc ? fl_fail(rc, "ext: %s irecvConsumed failed (error %d) on ext connection %u",
			    ext_plugin.name, rc, c->id) : FL_OK;
}

/* The inner said done, but the pacer holds the completion: what it wrote is kept till then. */
static void hold(struct fl_fwd_req *r, int n, const int *sizes)
{
	r->inner_done = 1;
	for (int i = 0; i < n; i++)
		r->sizes[i] = sizes[i];
}

/*
 * NCCL tests a connection's requests oldest first (2.28.9 src/transport/net.cc:
 * 1335-1339, 1503-1508) and some inners fail any other order (fastsocket,
 * net_fastsocket.cc:1432-1447), so no data request is tested before the hello.
 * A paced request completes no earlier than its bytes drain at the pacer's rate,
 * as on a slower cable, so its posted -> done interval shows the throttle.
 */
int ext_test(void *comm, void *request, int n, struct fl_fwd_req *r, int *done, int *sizes)
{
	struct ext_comm *c = comm;
	int rc, posted;

	*done = 0;
	if (c->hello.buf) { /* the hello ahead of this request, tested first */
		rc = ext_hello_drive(c, &posted);
		if (rc || c->hello.buf) /* still in flight: an inner may complete in order only */
			return rc;
	}
	if (!r->inner_done) {
		for (int i = 0; i < n; i++)
			sizes[i] = FL_SIZE_UNWRITTEN;
		rc = ext_plugin.test(request, done, sizes);
		if (rc)
			return fl_fail(rc, "ext: %s test failed (error %d) on ext connection %u",
				       ext_plugin.name, rc, c->id);
		if (!*done || !(FL_PACING && r->release_ns))
			return *done ? finish(c, n, request) : FL_OK;
		hold(r, n, sizes);
	}
	if (fl_clock_ns() < r->release_ns) {
		*done = 0;
		return FL_OK;
	}
	*done = 1;
	for (int i = 0; i < n; i++)
		sizes[i] = r->sizes[i];
	return finish(c, n, request);
}

static int direct_fail(void *comm, const char *op, int rc)
{
	struct ext_comm *c = comm;

	return fl_fail(rc, "ext: %s %s failed (error %d) on ext connection %u", ext_plugin.name,
		       op, rc, c->id);
}

/*
 * What ext adds to a request, once the hello moved and with no pacer, is only a profiler
 * handle where NCCL gave none, which the wrap passes itself on the direct path (forward.h);
 * the sizes and times are the wrap's on both paths. Not for a v6-v9 inner (its calls need
 * adapting), nor for receives of an inner with irecvConsumed (ext ends each one: finish()).
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
