/* The sending side of a socket connection: isend, the control stream writer, send tests. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "base/clock.h"
#include "base/error.h"
#include "transport/pace.h"
#include "sock_comm.h"
#include "sock_sys.h"

#define SOCK_SEND_BATCH 16 /* requests gathered into one sendmsg */

int sock_send_comm_create(int ctrl_fd, const int *data_fds, const struct sock_rules *rules,
			  const struct fl_endpoint *peer, const char *addr,
			  struct sock_send_comm **out)
{
	struct sock_send_comm *c = calloc(1, sizeof(*c));
	int rc;

	*out = NULL;
	if (!c) {
		sock_fds_close(ctrl_fd, data_fds, rules->nstreams);
		return fl_fail(FL_ERR_SYSTEM, "out of memory for a socket send comm");
	}
	rc = sock_link_open(&c->link, SOCK_SEND, ctrl_fd, data_fds, rules, peer, addr);
	if (rc) {
		free(c);
		return rc;
	}
	for (int i = 0; i < SOCK_SEND_REQS; i++) {
		c->reqs[i].base.kind = SOCK_SEND;
		c->reqs[i].base.index = (uint16_t)i;
		c->reqs[i].base.comm = c;
		c->free[i] = (uint16_t)(SOCK_SEND_REQS - 1 - i);
	}
	c->nfree = SOCK_SEND_REQS;
	*out = c;
	return FL_OK;
}

static int gather(struct sock_send_comm *c, struct iovec *iov)
{
	int niov = 0;

	/* each request needs at most two entries: wire[] and an uncopied inline payload */
	for (uint32_t q = c->queue_head; q != c->queue_tail && niov + 2 <= 2 * SOCK_SEND_BATCH;
	     q++) {
		struct sock_send_req *r = c->queue[q % SOCK_SEND_REQS];
		size_t done = r->ctrl_done;

		if (done < r->wire_len)
			iov[niov++] = (struct iovec){ r->wire + done, r->wire_len - done };
		done = done < r->wire_len ? 0 : done - r->wire_len;
		if (r->ctrl_len > r->wire_len)
			iov[niov++] = (struct iovec){ r->data + done,
						      r->ctrl_len - r->wire_len - done };
	}
	return niov;
}

/*
 * An inline request has no pieces, so no helper thread touches its sink:
 * plain stores do (sock_sink_widen's atomic read-modify-writes are for sinks
 * that helpers share).
 */
static void widen_own(struct sock_sink *sink, uint64_t start, uint64_t end, uint64_t bytes)
{
	uint64_t cur = atomic_load_explicit(&sink->wire_start_ns, memory_order_relaxed);

	if (!cur || start < cur)
		atomic_store_explicit(&sink->wire_start_ns, start, memory_order_relaxed);
	if (end > atomic_load_explicit(&sink->wire_end_ns, memory_order_relaxed))
		atomic_store_explicit(&sink->wire_end_ns, end, memory_order_relaxed);
	atomic_store_explicit(&sink->wire_bytes,
			      atomic_load_explicit(&sink->wire_bytes, memory_order_relaxed) + bytes,
			      memory_order_relaxed);
}

/* Hands `moved` bytes back to the queued requests, in order. */
static void account(struct sock_send_comm *c, size_t moved, uint64_t t0, uint64_t t1)
{
	while (moved && c->queue_head != c->queue_tail) {
		struct sock_send_req *r = c->queue[c->queue_head % SOCK_SEND_REQS];
		size_t take = r->ctrl_len - r->ctrl_done;

		if (take > moved)
			take = moved;
		r->ctrl_done += take;
		moved -= take;
		/* inline payload: the kernel took some of it in this call */
		if (r->ctrl_done > SOCK_MSG_HEADER_SIZE) {
			size_t payload = r->ctrl_done - SOCK_MSG_HEADER_SIZE;

			widen_own(&r->base.sink, t0, t1, take < payload ? take : payload);
		}
		if (r->ctrl_done == r->ctrl_len)
			c->queue_head++;
	}
}

/* A paced write takes at most one slice: the pacer is asked again before the next. */
static size_t clip(struct iovec *iov, size_t niov, size_t max)
{
	size_t total = 0;

	for (size_t i = 0; i < niov; i++) {
		if (total + iov[i].iov_len >= max) {
			iov[i].iov_len = max - total;
			return i + 1;
		}
		total += iov[i].iov_len;
	}
	return niov;
}

/*
 * Paced: whether the control stream may write now. While it may not, the
 * wire time of the bytes waiting runs from the first refusal, as on a slower
 * cable; *start says from when.
 */
static bool pace_control(struct sock_link *l, uint64_t now, uint64_t *start)
{
	if (!fl_pace_try(l->pacer, now)) {
		if (!l->paced_since)
			l->paced_since = now;
		return false;
	}
	*start = l->paced_since ? l->paced_since : now;
	l->paced_since = 0;
	return true;
}

/* Paced bytes have left the (slower) wire once the pacer has paid them off. */
static uint64_t wire_end(struct sock_link *l)
{
	uint64_t now = fl_clock_ns();

	return FL_PACING && l->pacer ? now + fl_pace_wait_ns(l->pacer, now) : now;
}

/* Writes queued control bytes until the kernel pushes back. Never blocks. */
static int send_control(struct sock_send_comm *c)
{
	struct iovec iov[2 * SOCK_SEND_BATCH];
	struct msghdr msg = { .msg_iov = iov };

	while (c->queue_head != c->queue_tail) {
		size_t want = 0;
		uint64_t t0, wire_t0;
		ssize_t n;

		msg.msg_iovlen = (size_t)gather(c, iov);
		t0 = fl_clock_ns();
		wire_t0 = t0;
		if (FL_PACING && c->link.pacer) {
			/* not now: the request stays queued and a later test writes it */
			if (!pace_control(&c->link, t0, &wire_t0))
				return FL_OK;
			msg.msg_iovlen = clip(iov, msg.msg_iovlen, FL_PACE_SLICE);
		}
		for (size_t i = 0; i < msg.msg_iovlen; i++)
			want += iov[i].iov_len;
		/* one buffer (a lone small message): send() spares the kernel the iovec import */
		n = msg.msg_iovlen == 1
			    ? sock_sys_send(c->link.ctrl_fd, iov[0].iov_base, iov[0].iov_len,
					    MSG_DONTWAIT | MSG_NOSIGNAL)
			    : sock_sys_sendmsg(c->link.ctrl_fd, &msg, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return FL_OK;
			sock_fault_errno(&c->link.fault, "send on control stream", errno);
			return sock_link_failed(&c->link);
		}
		if (FL_PACING && c->link.pacer)
			fl_pace_take(c->link.pacer, t0, (size_t)n);
		account(c, (size_t)n, wire_t0, wire_end(&c->link));
		if (FL_PACING && c->link.pacer && c->queue_head != c->queue_tail) {
			/*
			 * What is still queued waits on the paced wire from now, also
			 * while this thread is descheduled: its wire time starts here.
			 */
			fl_pace_backlog(c->link.pacer, t0);
			c->link.paced_since = fl_clock_ns();
		}
		if ((size_t)n < want)
			return FL_OK; /* the socket buffer is full; more would only get EAGAIN */
	}
	return FL_OK;
}

static int post_pieces(struct sock_send_comm *c, struct sock_send_req *r,
		       const struct sock_split *split)
{
	for (unsigned i = 0; i < split->n; i++) {
		struct sock_stream *s =
			&c->link.streams[sock_piece_stream(split, i, c->link.rules.nstreams)];
		int rc = sock_stream_post(s, r->data + sock_piece_offset(split, i),
					  sock_piece_len(split, r->size, i), &r->base.sink);

		if (rc) {
			sock_fault_set(&c->link.fault, rc, "%s", fl_error_text());
			return sock_link_failed(&c->link);
		}
	}
	return FL_OK;
}

int sock_isend(void *send_comm, void *data, size_t size, int tag, void *mhandle, void **request)
{
	struct sock_send_comm *c = send_comm;
	struct sock_msg_header h = { size, tag, 0 };
	struct sock_split split;
	struct sock_send_req *r;
	int rc;

	(void)mhandle;
	*request = NULL;
	rc = sock_link_check(&c->link);
	if (rc || !c->nfree)
		return rc;
	r = &c->reqs[c->free[--c->nfree]];
	r->base.ready_ns = fl_clock_ns();
	r->data = data;
	r->size = size;
	h.seq = c->link.seq++;
	sock_msg_encode(&h, r->wire);
	sock_plan(&c->link.rules, size, &c->link.rotor, &split);
	r->ctrl_len = SOCK_MSG_HEADER_SIZE + (split.n ? 0 : size);
	r->wire_len = SOCK_MSG_HEADER_SIZE;
	if (!split.n && size <= SOCK_SEND_COPY_MAX) {
		if (size) /* a 0-byte send may come with a NULL buffer: memcpy must not see it */
			memcpy(r->wire + SOCK_MSG_HEADER_SIZE, data, size);
		r->wire_len = r->ctrl_len;
	}
	r->ctrl_done = 0;
	sock_sink_reset(&r->base.sink, split.n);
	rc = post_pieces(c, r, &split);
	if (rc)
		return rc;
	c->queue[c->queue_tail++ % SOCK_SEND_REQS] = r;
	rc = send_control(c);
	if (rc)
		return rc;
	*request = r;
	return FL_OK;
}

int sock_test_send(struct sock_send_req *r, int *done, int *sizes, struct fl_xfer_times *times)
{
	struct sock_send_comm *c = r->base.comm;
	int rc = sock_link_check(&c->link);

	if (!rc && r->ctrl_done < r->ctrl_len)
		rc = send_control(c);
	if (rc || r->ctrl_done < r->ctrl_len ||
	    atomic_load_explicit(&r->base.sink.pending, memory_order_acquire))
		return rc;
	*done = 1;
	if (sizes)
		sizes[0] = r->size > INT_MAX ? INT_MAX : (int)r->size;
	if (times)
		sock_sink_times(&r->base.sink, r->base.ready_ns, times);
	c->free[c->nfree++] = r->base.index;
	return FL_OK;
}

int sock_close_send(void *send_comm)
{
	struct sock_send_comm *c = send_comm;

	if (!c)
		return FL_OK;
	sock_link_close(&c->link);
	free(c);
	return FL_OK;
}
