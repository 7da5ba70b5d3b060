#include "steps.h"

#include <sched.h>
#include <time.h>

#include "boot_socket.h"
#include "watchdog.h"

/* Looking at the clock every pass would cost more than the passes themselves. */
#define IDLE_PASSES_PER_CLOCK 64
/* With FABRICLAB_SHIM_IDLE_US, passes that only yield before the first sleep. */
#define IDLE_PASSES_BEFORE_SLEEP 16

void shim_fifo_init(struct shim_fifo *f, struct shim_link *link, const char *op, int send)
{
	*f = (struct shim_fifo){ .link = link, .op = op, .send = send };
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

int shim_fifo_post_parts(struct shim_world *w, struct shim_fifo *f, int n, void **data,
			 const size_t *bytes, const int *tags, void *mhandle)
{
	struct shim_link *link = f->link;
	unsigned slot = f->posted % SHIM_STEPS;
	size_t sizes[FL_MAX_RECVS];
	void *mhs[FL_MAX_RECVS], *req = NULL;
	int rc, tag[FL_MAX_RECVS];

	for (int i = 0; i < n; i++) {
		sizes[i] = bytes[i];
		tag[i] = tags[i];
		mhs[i] = mhandle;
	}
	if (f->send)
		rc = SHIM_WATCHED(w, "isend() to", link->send_peer,
				  shim_net_isend(&w->net, link->send_comm, data[0], bytes[0],
						 tags[0], mhandle, &req));
	else
		rc = SHIM_WATCHED(w, "irecv() from", link->recv_peer,
				  shim_net_irecv(&w->net, link->recv_comm, n, data, sizes, tag,
						 mhs, &req));
	if (rc)
		return fail_call(w, f, f->send ? "isend" : "irecv", rc);
	if (!req)
		return FL_OK;
	f->req[slot] = req;
	f->parts[slot] = n;
	for (int i = 0; i < n; i++) {
		f->bytes[slot][i] = bytes[i];
		f->data[slot][i] = data[i];
	}
	f->mh[slot] = mhandle;
	f->posted++;
	return FL_OK;
}

int shim_fifo_post(struct shim_world *w, struct shim_fifo *f, void *data, size_t bytes,
		   void *mhandle)
{
	/* NCCL's convention: a sender tags with its own rank, a receiver with its peer's. */
	int tag = f->send ? w->rank : f->link->recv_peer;

	return shim_fifo_post_parts(w, f, 1, &data, &bytes, &tag, mhandle);
}

/*
 * NCCL's rule: data a NIC wrote into GPU memory is flushed before the GPU reads
 * it. The flush request takes the receive's slot and is tested on later passes
 * (2.28.9 src/transport/net.cc:1563 posts it into requests[step], :1572-1580
 * tests it before the step is handed on); *req NULL: nothing to wait for.
 */
static int flush_recv(struct shim_world *w, struct shim_fifo *f, unsigned slot, void **req)
{
	int n = f->parts[slot], sizes[FL_MAX_RECVS], rc;
	void *mhs[FL_MAX_RECVS];

	for (int i = 0; i < n; i++) {
		sizes[i] = (int)f->bytes[slot][i];
		mhs[i] = f->mh[slot];
	}
	*req = NULL;
	rc = SHIM_WATCHED(w, "iflush() of a receive from", peer_of(f),
			  shim_net_iflush(&w->net, f->link->recv_comm, n, f->data[slot], sizes,
					  mhs, req));
	return rc ? fail_call(w, f, "iflush", rc) : FL_OK;
}

/*
 * Sizes as NCCL reads them: never a send's (2.28.9 src/transport/net.cc:1336-1339,
 * an uninitialised int), zero-filled for a receive's parts (:1505-1508), where 0
 * is "unwritten" (fastsocket never writes them). A written size that is not what
 * our peer sent means bytes went missing. *total: the bytes the plugin said it
 * received (0: none said).
 */
static int check_sizes(struct shim_world *w, struct shim_fifo *f, unsigned slot,
		       const int *sizes, size_t *total)
{
	*total = 0;
	for (int i = 0; !f->send && i < f->parts[slot]; i++) {
		if (sizes[i] && (sizes[i] < 0 || (size_t)sizes[i] != f->bytes[slot][i])) {
			w->broken = 1;
			return shim_fail(FL_ERR_INTERNAL, "%s: test() on the receive from rank %d "
					 "reported %d bytes for part %d of %d, %zu were sent",
					 f->op, peer_of(f), sizes[i], i + 1, f->parts[slot],
					 f->bytes[slot][i]);
		}
		*total += (size_t)sizes[i];
	}
	return FL_OK;
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
	rc = check_sizes(w, f, slot, sizes, &got);
	if (rc)
		return rc;
	f->recv_req[slot] = f->req[slot];
	f->req[slot] = NULL;
	/* as NCCL: no flush when the plugin reported no bytes (2.28.9 net.cc:1530) */
	if (!f->send && shim_mem_net_type(w) == FL_PTR_CUDA && got > 0) {
		rc = flush_recv(w, f, slot, &f->req[slot]);
		if (rc)
			return rc;
	}
	f->received++;
	return FL_OK;
}

/* The oldest received transfer: done once its flush (if any) completed. */
static int test_flushed(struct shim_world *w, struct shim_fifo *f)
{
	unsigned slot = f->done % SHIM_STEPS;
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
	/* the step is in our buffer: a plugin with irecvConsumed may now reuse what it held
	 * (2.28.9 net.cc:1614-1615, with the receive's request) */
	rc = f->send ? FL_OK : shim_net_irecv_consumed(&w->net, f->link->recv_comm,
						       f->parts[slot], f->recv_req[slot]);
	if (rc)
		return fail_call(w, f, "irecvConsumed", rc);
	f->done++;
	return FL_OK;
}

int shim_fifo_test(struct shim_world *w, struct shim_fifo *f)
{
	int rc = FL_OK;

	if (f->posted > f->received)
		rc = test_transfer(w, f);
	if (!rc && f->received > f->done)
		rc = test_flushed(w, f);
	return rc;
}

void shim_watch_init(struct shim_watch *watch)
{
	*watch = (struct shim_watch){ .since_ns = shim_now_ns() };
}

static uint64_t moves_of(const struct shim_fifo *sends, const struct shim_fifo *recvs)
{
	return sends->posted + sends->done + recvs->posted + recvs->received + recvs->done;
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

int shim_watch_pass_pairs(struct shim_world *w, struct shim_watch *watch,
			  const struct shim_fifo *const *sends, const struct shim_fifo *const *recvs,
			  int n)
{
	uint64_t moves = 0, now;
	int stuck = 0;

	for (int i = 0; i < n; i++)
		moves += moves_of(sends[i], recvs[i]);
	if (moves != watch->moves) {
		watch->moves = moves;
		watch->idle = 0;
		watch->since_ns = 0; /* stale: refreshed at the next look at the clock */
		return FL_OK;
	}
	/* Several ranks may share a core: let the one with work run (NCCL's proxy does too). */
	if (w->idle_ns && watch->idle >= IDLE_PASSES_BEFORE_SLEEP) {
		struct timespec pause = { 0, w->idle_ns };

		nanosleep(&pause, NULL);
	} else {
		sched_yield();
	}
	if (++watch->idle % IDLE_PASSES_PER_CLOCK)
		return FL_OK;
	now = shim_now_ns();
	if (!watch->since_ns)
		watch->since_ns = now;
	if (now - watch->since_ns < (uint64_t)w->timeout_ms * 1000000ULL)
		return FL_OK;
	while (stuck < n - 1 && !shim_fifo_busy(sends[stuck]) && !shim_fifo_busy(recvs[stuck]))
		stuck++;
	return no_progress(w, sends[stuck], recvs[stuck]);
}

int shim_watch_pass(struct shim_world *w, struct shim_watch *watch, const struct shim_fifo *sends,
		    const struct shim_fifo *recvs)
{
	return shim_watch_pass_pairs(w, watch, &sends, &recvs, 1);
}
