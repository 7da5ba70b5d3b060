#include "steps.h"

#include <sched.h>
#include <stdio.h>
#include <time.h>

#include "boot_socket.h"
#include "watchdog.h"

/* Looking at the clock every pass would cost more than the passes themselves. */
#define IDLE_PASSES_PER_CLOCK 64
/* With FABRICLAB_SHIM_IDLE_US, passes that only yield before the first sleep. */
#define IDLE_PASSES_BEFORE_SLEEP 16

void shim_fifo_init(struct shim_fifo *f, struct shim_link *link, const char *op, int send)
{
	*f = (struct shim_fifo){ .link = link, .op = op, .send = send, .depth = SHIM_STEPS,
				 .proto = SHIM_PROTO_SIMPLE };
}

static int peer_of(const struct shim_fifo *f)
{
	return f->send ? f->link->send_peer : f->link->recv_peer;
}

static int fail_call(struct shim_world *w, struct shim_fifo *f, const char *call, int rc)
{
	w->broken = 1;
	return shim_fail(rc ? rc : FL_ERR_INTERNAL, "%s: %s() on the %s rank %d failed: %s (%d)",
			 f->op, call, f->send ? "send to" : "receive from",
			 peer_of(f), shim_result_name(rc), rc);
}

/* Keeps what a posted transfer needs later, in its slot. */
static void keep(struct shim_fifo *f, unsigned slot, void *req, int n, void **data,
		 const size_t *bytes, const size_t *expect, void *mhandle)
{
	f->req[slot] = req;
	f->parts[slot] = n;
	for (int i = 0; i < n; i++) {
		f->bytes[slot][i] = bytes[i];
		f->expect[slot][i] = expect ? expect[i] : bytes[i];
		f->got[slot][i] = 0;
		f->data[slot][i] = data[i];
	}
	f->mh[slot] = mhandle;
	f->posted++;
}

/* The slot's profiler handles, one per part, as NCCL passes &sub->pHandles[...]. */
static void handles(struct shim_fifo *f, unsigned slot, int n, void **out)
{
	for (int i = 0; i < n; i++) {
		f->ph[slot][i] = (struct shim_phandle){ .mark = &shim_phandle_mark };
		out[i] = &f->ph[slot][i];
	}
}

void shim_fifo_restart(struct shim_fifo *f, int part)
{
	f->ph[f->posted % SHIM_STEPS][part] = (struct shim_phandle){ .mark = &shim_phandle_mark };
	f->restarts++;
}

int shim_fifo_send(struct shim_world *w, struct shim_fifo *f, void *data, size_t bytes, int tag,
		   void *mhandle)
{
	unsigned slot = f->posted % SHIM_STEPS;
	void *req = NULL, *ph;
	int rc;

	handles(f, slot, 1, &ph);
	rc = SHIM_WATCHED(w, "isend() to", f->link->send_peer,
			  shim_net_isend_ph(&w->net, f->link->send_comm, data, bytes, tag, mhandle,
					    ph, &req));
	if (rc)
		return fail_call(w, f, "isend", rc);
	if (req)
		keep(f, slot, req, 1, &data, &bytes, NULL, mhandle);
	return FL_OK;
}

int shim_fifo_recv(struct shim_world *w, struct shim_fifo *f, int n, void **data,
		   const size_t *bytes, const size_t *expect, const int *tags, void *mhandle)
{
	unsigned slot = f->posted % SHIM_STEPS;
	size_t sizes[FL_MAX_RECVS];
	void *mhs[FL_MAX_RECVS], *phs[FL_MAX_RECVS], *req = NULL;
	int rc, tag[FL_MAX_RECVS];

	for (int i = 0; i < n; i++) {
		sizes[i] = bytes[i];
		tag[i] = tags[i];
		mhs[i] = mhandle;
	}
	handles(f, slot, n, phs);
	if (shim_rules_recv_hint(&w->rules, f->proto, n))
		req = FL_OPTIONAL_RECV_COMPLETION;
	rc = SHIM_WATCHED(w, "irecv() from", f->link->recv_peer,
			  shim_net_irecv_ph(&w->net, f->link->recv_comm, n, data, sizes, tag, mhs,
					    phs, &req));
	if (rc)
		return fail_call(w, f, "irecv", rc);
	if (req)
		keep(f, slot, req, n, data, bytes, expect, mhandle);
	return FL_OK;
}

/*
 * iflush of a received step, with the sizes test reported (2.30.7 src/transport/net.cc:1684;
 * the request takes the receive's slot and is tested on later passes, :1694-1700);
 * *req NULL: nothing to wait for (:1698-1701).
 */
static int flush_recv(struct shim_world *w, struct shim_fifo *f, unsigned slot, void **req)
{
	int n = f->parts[slot], rc;
	void *mhs[FL_MAX_RECVS];

	for (int i = 0; i < n; i++)
		mhs[i] = f->mh[slot];
	*req = NULL;
	rc = SHIM_WATCHED(w, "iflush() of a receive from", peer_of(f),
			  shim_net_iflush(&w->net, f->link->recv_comm, n, f->data[slot],
					  f->got[slot], mhs, req));
	return rc ? fail_call(w, f, "iflush", rc) : FL_OK;
}

/*
 * Sizes as NCCL reads them: never a send's (2.30.7 src/transport/net.cc:1434-1436, an
 * uninitialised int), zero-filled for a receive's parts (:1619-1620), where 0 is "unwritten"
 * (fastsocket never writes them). A receive posts its whole slot, more than the sender sends
 * (:1566-1572), so a written size is what arrived, and anything but what our peer sent means
 * bytes went missing or came from elsewhere. NCCL goes on whatever the size (it only records
 * it, :1632): so does the shim, which fails the op once it ended (shim_op_end), naming the
 * first such size. *total: the bytes the plugin said it received.
 */
static void check_sizes(struct shim_world *w, struct shim_fifo *f, unsigned slot,
			const int *sizes, size_t *total)
{
	*total = 0;
	for (int i = 0; !f->send && i < f->parts[slot]; i++) {
		if (sizes[i] && (sizes[i] < 0 || (size_t)sizes[i] != f->expect[slot][i]) &&
		    !w->size_error[0])
			snprintf(w->size_error, sizeof(w->size_error), "%s: test() on the receive "
				 "from rank %d reported %d bytes for part %d of %d, %zu were sent "
				 "(%zu posted)", f->op, peer_of(f), sizes[i], i + 1, f->parts[slot],
				 f->expect[slot][i], f->bytes[slot][i]);
		f->got[slot][i] = sizes[i] > 0 ? sizes[i] : 0;
		*total += (size_t)f->got[slot][i];
	}
}

int shim_op_end(struct shim_world *w, int rc)
{
	if (rc || !w->size_error[0])
		return rc;
	w->broken = 1;
	return shim_fail(FL_ERR_INTERNAL, "%s", w->size_error);
}

/* The oldest transfer not yet tested done: a send completes, a receive may need a flush. */
static int test_transfer(struct shim_world *w, struct shim_fifo *f)
{
	unsigned slot = f->received % SHIM_STEPS;
	int done = 0, sizes[FL_MAX_RECVS] = { 0 }, rc;
	size_t got;

	rc = SHIM_WATCHED(w, f->send ? "test() of a send to" : "test() of a receive from",
			  peer_of(f), shim_net_test(&w->net, f->req[slot], &done, sizes));
	if (rc)
		return fail_call(w, f, "test", rc);
	if (!done)
		return FL_OK;
	check_sizes(w, f, slot, sizes, &got);
	f->recv_req[slot] = f->req[slot];
	f->req[slot] = NULL;
	f->received++;
	if (f->send) {
		f->landed = f->done = f->received;
		return FL_OK;
	}
	return shim_rules_flush_step(f->proto, f->gdr_flush, got) ?
		flush_recv(w, f, slot, &f->req[slot]) : FL_OK;
}

/* The oldest received transfer lands once its flush (if any) completed. */
static int test_flushed(struct shim_world *w, struct shim_fifo *f)
{
	unsigned slot = f->landed % SHIM_STEPS;
	int done = 1, rc;

	if (f->req[slot]) {
		rc = SHIM_WATCHED(w, "test() of a flush from", peer_of(f),
				  shim_net_test(&w->net, f->req[slot], &done, NULL));
		if (rc)
			return fail_call(w, f, "test of iflush", rc);
	}
	if (!done)
		return FL_OK;
	f->req[slot] = NULL;
	f->landed++;
	return FL_OK;
}

int shim_fifo_test(struct shim_world *w, struct shim_fifo *f)
{
	int rc = FL_OK;

	if (f->posted > f->received)
		rc = test_transfer(w, f);
	if (!rc && f->received > f->landed)
		rc = test_flushed(w, f);
	return rc;
}

/*
 * The step is out of our buffer: a plugin with irecvConsumed may now reuse what it held, called
 * with the receive's own request once the GPU consumed the step (2.30.7
 * src/transport/net.cc:1735-1741).
 */
int shim_fifo_consume(struct shim_world *w, struct shim_fifo *f)
{
	unsigned slot = f->done % SHIM_STEPS;
	int rc;

	if (f->send || f->landed <= f->done)
		return FL_OK;
	rc = shim_net_irecv_consumed(&w->net, f->link->recv_comm, f->parts[slot],
				     f->recv_req[slot]);
	if (rc)
		return fail_call(w, f, "irecvConsumed", rc);
	f->recv_req[slot] = NULL;
	f->done++;
	return FL_OK;
}

void shim_watch_init(struct shim_watch *watch)
{
	*watch = (struct shim_watch){ .since_ns = shim_now_ns() };
}

static uint64_t moves_of(const struct shim_fifo *sends, const struct shim_fifo *recvs)
{
	return sends->posted + sends->done + recvs->posted + recvs->received + recvs->landed +
	       recvs->done;
}

static int no_progress(struct shim_world *w, const struct shim_fifo *sends,
		       const struct shim_fifo *recvs)
{
	w->broken = 1;
	return shim_fail(FL_ERR_SYSTEM, "%s: no progress for %d s: sends to rank %d: %llu posted, "
			 "%llu done; receives from rank %d: %llu posted, %llu done", sends->op,
			 w->timeout_ms / 1000, sends->link->send_peer,
			 (unsigned long long)sends->posted, (unsigned long long)sends->done,
			 recvs->link->recv_peer, (unsigned long long)recvs->posted,
			 (unsigned long long)recvs->done);
}

/* Counts a pass with nothing moved: yields or sleeps; 1 once the world's timeout ran out. */
static int idle_timed_out(struct shim_world *w, struct shim_watch *watch, uint64_t moves)
{
	uint64_t now;

	if (moves != watch->moves) {
		watch->moves = moves;
		watch->idle = 0;
		watch->since_ns = 0; /* stale: refreshed at the next look at the clock */
		return 0;
	}
	/* Several ranks may share a core: let the one with work run (NCCL's proxy does too). */
	if (w->idle_ns && watch->idle >= IDLE_PASSES_BEFORE_SLEEP) {
		struct timespec pause = { 0, w->idle_ns };

		nanosleep(&pause, NULL);
	} else {
		sched_yield();
	}
	if (++watch->idle % IDLE_PASSES_PER_CLOCK)
		return 0;
	now = shim_now_ns();
	if (!watch->since_ns)
		watch->since_ns = now;
	return now - watch->since_ns >= (uint64_t)w->timeout_ms * 1000000ULL;
}

int shim_watch_pass_pairs(struct shim_world *w, struct shim_watch *watch,
			  const struct shim_fifo *const *sends, const struct shim_fifo *const *recvs,
			  int n)
{
	uint64_t moves = 0;
	int stuck = 0;

	for (int i = 0; i < n; i++)
		moves += moves_of(sends[i], recvs[i]);
	if (!idle_timed_out(w, watch, moves))
		return FL_OK;
	while (stuck < n - 1 && !shim_fifo_busy(sends[stuck]) && !shim_fifo_busy(recvs[stuck]))
		stuck++;
	return no_progress(w, sends[stuck], recvs[stuck]);
}

int shim_watch_pass_fifos(struct shim_world *w, struct shim_watch *watch,
			  const struct shim_fifo *const *fifos, int n)
{
	const struct shim_fifo *stuck = NULL;
	uint64_t moves = 0;

	for (int i = 0; i < n; i++)
		if (fifos[i])
			moves += fifos[i]->posted + fifos[i]->received + fifos[i]->landed +
				 fifos[i]->done;
	if (!idle_timed_out(w, watch, moves))
		return FL_OK;
	for (int i = 0; i < n; i++)
		if (fifos[i] && (!stuck || (!shim_fifo_busy(stuck) && shim_fifo_busy(fifos[i]))))
			stuck = fifos[i];
	w->broken = 1;
	return shim_fail(FL_ERR_SYSTEM, "%s: no progress for %d s: %s rank %d: %llu posted, "
			 "%llu done", stuck ? stuck->op : "?", w->timeout_ms / 1000,
			 stuck && stuck->send ? "sends to" : "receives from",
			 stuck ? stuck->send ? stuck->link->send_peer : stuck->link->recv_peer : -1,
			 stuck ? (unsigned long long)stuck->posted : 0ULL,
			 stuck ? (unsigned long long)stuck->done : 0ULL);
}

int shim_watch_pass(struct shim_world *w, struct shim_watch *watch, const struct shim_fifo *sends,
		    const struct shim_fifo *recvs)
{
	return shim_watch_pass_pairs(w, watch, &sends, &recvs, 1);
}
