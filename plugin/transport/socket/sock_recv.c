/*
 * The receiving side of a socket connection: irecv, the control stream reader
 * (headers in send order claim the slots of the oldest open receive by tag),
 * and receive tests.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "base/clock.h"
#include "base/error.h"
#include "transport/pace.h"
#include "sock_comm.h"
#include "sock_sys.h"

int sock_recv_comm_create(int ctrl_fd, const int *data_fds, const struct sock_rules *rules,
			  const struct fl_endpoint *peer, const char *addr,
			  struct sock_recv_comm **out)
{
	struct sock_recv_comm *c = calloc(1, sizeof(*c));
	int rc;

	*out = NULL;
	if (!c) {
		sock_fds_close(ctrl_fd, data_fds, rules->nstreams);
		return fl_fail(FL_ERR_SYSTEM, "out of memory for a socket recv comm");
	}
	rc = sock_link_open(&c->link, SOCK_RECV, ctrl_fd, data_fds, rules, peer, addr);
	if (rc) {
		free(c);
		return rc;
	}
	for (int i = 0; i < SOCK_RECV_REQS; i++) {
		c->reqs[i].base.kind = SOCK_RECV;
		c->reqs[i].base.index = (uint16_t)i;
		c->reqs[i].base.comm = c;
		c->free[i] = (uint16_t)(SOCK_RECV_REQS - 1 - i);
	}
	c->nfree = SOCK_RECV_REQS;
	*out = c;
	return FL_OK;
}

/* What a non-blocking read on control returned: *got = 0 when nothing is there yet. */
static int read_result(struct sock_recv_comm *c, ssize_t n, size_t *got)
{
	*got = n > 0 ? (size_t)n : 0;
	if (n > 0 || (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)))
		return FL_OK;
	sock_fault_errno(&c->link.fault, "recv on control stream", n ? errno : 0);
	return sock_link_failed(&c->link);
}

/* Non-blocking read on control into iov; *got = 0 when nothing is there yet. */
static int recv_control_iov(struct sock_recv_comm *c, struct iovec *iov, size_t niov, size_t *got)
{
	struct msghdr msg = { .msg_iov = iov, .msg_iovlen = niov };
	ssize_t n;

	do
		n = sock_sys_recvmsg(c->link.ctrl_fd, &msg, MSG_DONTWAIT);
	while (n < 0 && errno == EINTR);
	return read_result(c, n, got);
}

/* The same into one buffer: recv() spares the kernel the msghdr and iovec import. */
static int recv_control_bytes(struct sock_recv_comm *c, uint8_t *buf, size_t len, size_t *got)
{
	ssize_t n;

	do
		n = sock_sys_recv(c->link.ctrl_fd, buf, len, MSG_DONTWAIT);
	while (n < 0 && errno == EINTR);
	return read_result(c, n, got);
}

/*
 * A paced receiver reads a payload slice by slice as its pacer allows: that
 * is the wire of a throttled hop, so the payload is timed from its first
 * slice read until the pacer has paid off its last, as a slower cable would.
 */
static void paced_read(struct sock_recv_comm *c, size_t got)
{
	uint64_t now = fl_clock_ns();

	fl_pace_take(c->link.pacer, now, got);
	if (c->payload_got + got < c->payload_len)
		fl_pace_backlog(c->link.pacer, now);
	if (!c->payload_got)
		c->link.paced_since = now;
	if (c->payload_got + got == c->payload_len)
		sock_sink_widen(&c->payload_req->base.sink, c->link.paced_since,
				now + fl_pace_wait_ns(c->link.pacer, now), c->payload_len);
}

/* Copies up to len staged bytes to dst; how many. */
static size_t take_staged(struct sock_recv_comm *c, uint8_t *dst, size_t len)
{
	size_t n = c->stage_len - c->stage_pos;

	n = n < len ? n : len;
	memcpy(dst, c->stage + c->stage_pos, n);
	c->stage_pos += n;
	return n;
}

/* Reads what the kernel has, up to a stageful; *drained when that was less. */
static int fill_stage(struct sock_recv_comm *c, int *drained)
{
	int rc = recv_control_bytes(c, c->stage, sizeof(c->stage), &c->stage_len);

	c->stage_pos = 0;
	*drained = c->stage_len < sizeof(c->stage);
	return rc;
}

/*
 * Staged bytes first. Unpaced, a small rest goes through the stage (so one
 * read can bring several small messages), a large one straight into the
 * buffer together with the next message's header: a header costs no syscall
 * of its own. *drained: the kernel had less than asked for, so asking again
 * now would only get EAGAIN.
 */
static int read_payload(struct sock_recv_comm *c, int *drained)
{
	size_t want = c->payload_len - c->payload_got, got;
	struct iovec iov[2] = { { c->payload_buf + c->payload_got, want },
				{ c->header + c->header_got, SOCK_MSG_HEADER_SIZE - c->header_got } };
	size_t niov = 2;
	int rc = FL_OK;

	/* paced: the payload waits in the socket (TCP holds the sender back) for a later test */
	if (FL_PACING && c->link.pacer) {
		if (!fl_pace_try(c->link.pacer, fl_clock_ns()))
			return FL_OK;
		want = want < FL_PACE_SLICE ? want : FL_PACE_SLICE;
		iov[0].iov_len = want;
		niov = 1;
	}
	if (c->stage_pos == c->stage_len && niov > 1 && want <= SOCK_RECV_STAGE_VIA) {
		rc = fill_stage(c, drained);
		if (rc || c->stage_pos == c->stage_len)
			return rc;
	}
	if (c->stage_pos < c->stage_len) {
		got = take_staged(c, iov[0].iov_base, want);
	} else {
		rc = niov == 1 ? recv_control_bytes(c, iov[0].iov_base, iov[0].iov_len, &got)
			       : recv_control_iov(c, iov, niov, &got);
		*drained = got < iov[0].iov_len + (niov > 1 ? iov[1].iov_len : 0);
		if (got > want) {
			c->header_got += got - want;
			got = want;
		}
	}
	if (FL_PACING && c->link.pacer && !rc && got)
		paced_read(c, got);

	/*
	 * Not timed: the proxy thread reads the control stream between its other
	 * work, so when it reads says how busy it was, not when bytes arrived.
	 * Only a helper thread blocked in recv sees arrival; else the sender times.
	 * A paced read is the exception: the pacer, not arrival, sets its pace.
	 */
	if (rc || !got)
		return rc;
	c->payload_got += got;
	if (c->payload_got == c->payload_len) {
		c->payload_req->inline_open--;
		c->payload_req = NULL;
	}
	return FL_OK;
}

/*
 * Header bytes from the stage, else from the socket: unpaced through the
 * stage (whatever follows the header comes along), paced only the header (a
 * payload is read slice by slice as the pacer allows). *got = 0: nothing yet.
 */
static int read_header(struct sock_recv_comm *c, int *drained, size_t *got)
{
	size_t need = SOCK_MSG_HEADER_SIZE - c->header_got;
	int rc;

	*got = 0;
	if (c->stage_pos == c->stage_len) {
		if (FL_PACING && c->link.pacer) {
			rc = recv_control_bytes(c, c->header + c->header_got, need, got);
			c->header_got += *got;
			*drained = *got < need;
			return rc;
		}
		rc = fill_stage(c, drained);
		if (rc || c->stage_pos == c->stage_len) /* nothing there: the common poll */
			return rc;
	}
	*got = take_staged(c, c->header + c->header_got, need);
	c->header_got += *got;
	return FL_OK;
}

static int fail(struct sock_recv_comm *c, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(struct sock_recv_comm *c, int code, const char *fmt, ...)
{
	char why[FL_ERROR_LEN];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	sock_fault_set(&c->link.fault, code, "%s", why);
	return sock_link_failed(&c->link);
}

static int find_slot(const struct sock_recv_req *r, int tag)
{
	for (int i = 0; i < r->n; i++)
		if (!r->taken[i] && r->tags[i] == tag)
			return i;
	return -1;
}

static int post_pieces(struct sock_recv_comm *c, struct sock_recv_req *r, uint8_t *buf,
		       size_t size, const struct sock_split *split)
{
	/* count first: a helper may finish a piece before the next is posted */
	atomic_fetch_add_explicit(&r->base.sink.pending, split->n, memory_order_relaxed);
	for (unsigned i = 0; i < split->n; i++) {
		struct sock_stream *s =
			&c->link.streams[sock_piece_stream(split, i, c->link.rules.nstreams)];
		int rc = sock_stream_post(s, buf + sock_piece_offset(split, i),
					  sock_piece_len(split, size, i), &r->base.sink);

		if (rc)
			return fail(c, rc, "%s", fl_error_text());
	}
	return FL_OK;
}

/*
 * The receive a message of `tag` lands in: the oldest open one with a free slot of that tag.
 * Sub-operations sharing a comm send on schedules of their own (NCCL shares one among subs
 * when maxRecvs > 1, 2.30.7 src/transport/net.cc:862, 1048, and each sub isends as its data
 * and depth allow, :1323-1426), so one tag may run a receive ahead of the others, and
 * receives of several groups may share the comm. NULL: none posted yet.
 */
static struct sock_recv_req *open_for(struct sock_recv_comm *c, int tag, int *slot,
				      uint32_t *at)
{
	for (*at = c->wait_head; *at != c->wait_tail; (*at)++) {
		struct sock_recv_req *r = c->waiting[*at % SOCK_RECV_REQS];

		*slot = find_slot(r, tag);
		if (*slot >= 0)
			return r;
	}
	return NULL;
}

/* A receive whose every slot is claimed leaves the waiting list, the others keep their order. */
static void unwait(struct sock_recv_comm *c, uint32_t at)
{
	if (at == c->wait_head) {
		c->wait_head++;
		return;
	}
	for (; at + 1 != c->wait_tail; at++)
		c->waiting[at % SOCK_RECV_REQS] = c->waiting[(at + 1) % SOCK_RECV_REQS];
	c->wait_tail--;
}

/*
 * A whole header arrived: it claims a slot of the oldest open receive that has one for its
 * tag, or (*later) waits, whole, for a receive to be posted; with every receive posted and
 * none for it, it never will.
 */
static int claim_message(struct sock_recv_comm *c, int *later)
{
	struct sock_recv_req *r;
	struct sock_msg_header h;
	struct sock_split split;
	uint32_t at;
	int slot;

	sock_msg_decode(c->header, &h);
	if (h.seq != c->link.seq)
		return fail(c, FL_ERR_SYSTEM,
			    "control stream out of step: message #%u where #%u was due", h.seq,
			    c->link.seq);
	r = open_for(c, h.tag, &slot, &at);
	*later = !r && c->nfree;
	if (*later)
		return FL_OK;
	if (!r)
		return fail(c, FL_ERR_USAGE,
			    "a message with tag %d fits no open slot of the %u receives posted",
			    h.tag, c->wait_tail - c->wait_head);
	c->header_got = 0;
	c->link.seq++;
	if (h.size > r->cap[slot])
		return fail(c, FL_ERR_USAGE,
			    "message of %llu bytes with tag %d is larger than its receive buffer "
			    "of %zu bytes",
			    (unsigned long long)h.size, h.tag, r->cap[slot]);
	r->taken[slot] = 1;
	r->got[slot] = h.size;
	if (!r->base.ready_ns)
		r->base.ready_ns = fl_clock_ns();
	if (++r->matched == r->n)
		unwait(c, at);
	sock_plan(&c->link.rules, h.size, &c->link.rotor, &split);
	if (split.n)
		return post_pieces(c, r, r->data[slot], h.size, &split);
	if (h.size) {
		r->inline_open++;
		c->payload_req = r;
		c->payload_buf = r->data[slot];
		c->payload_len = h.size;
		c->payload_got = 0;
	}
	return FL_OK;
}

/*
 * Moves control bytes while a receive waits for them. Never blocks. A header
 * that came in ahead of its receive waits, whole, for the receive.
 */
static int recv_control(struct sock_recv_comm *c)
{
	int drained = 0, later;
	size_t got;
	int rc;

	for (;;) {
		if (c->payload_req) {
			rc = read_payload(c, &drained);
			if (rc || c->payload_req)
				return rc;
		}
		if (c->header_got == SOCK_MSG_HEADER_SIZE) {
			if (c->wait_head == c->wait_tail)
				return FL_OK;
			rc = claim_message(c, &later);
			if (rc || later)
				return rc;
			continue;
		}
		if (c->stage_pos == c->stage_len && (drained || c->wait_head == c->wait_tail))
			return FL_OK;
		rc = read_header(c, &drained, &got);
		if (rc || !got)
			return rc;
	}
}

int sock_irecv(void *recv_comm, int n, void **data, size_t *sizes, int *tags, void **mhandles,
	       void **request)
{
	struct sock_recv_comm *c = recv_comm;
	struct sock_recv_req *r;
	int rc;

	(void)mhandles;
	*request = NULL;
	rc = sock_link_check(&c->link);
	if (rc)
		return rc;
	if (n < 1 || n > FL_MAX_RECVS)
		return fl_fail(FL_ERR_INTERNAL, "irecv of %d buffers (1..%d)", n, FL_MAX_RECVS);
	if (!c->nfree)
		return FL_OK;
	r = &c->reqs[c->free[--c->nfree]];
	r->n = n;
	r->matched = 0;
	r->inline_open = 0;
	r->base.ready_ns = 0;
	sock_sink_reset(&r->base.sink, 0);
	for (int i = 0; i < n; i++) {
		r->data[i] = data[i];
		r->cap[i] = sizes[i];
		r->tags[i] = tags[i];
		r->got[i] = 0;
		r->taken[i] = 0;
	}
	c->waiting[c->wait_tail++ % SOCK_RECV_REQS] = r;
	*request = r;
	return FL_OK;
}

int sock_test_recv(struct sock_recv_req *r, int *done, int *sizes, struct fl_xfer_times *times)
{
	struct sock_recv_comm *c = r->base.comm;
	int rc = sock_link_check(&c->link);

	if (!rc && (r->matched < r->n || r->inline_open))
		rc = recv_control(c);
	if (rc || r->matched < r->n || r->inline_open ||
	    atomic_load_explicit(&r->base.sink.pending, memory_order_acquire))
		return rc;
	*done = 1;
	for (int i = 0; sizes && i < r->n; i++)
		sizes[i] = r->got[i] > INT_MAX ? INT_MAX : (int)r->got[i];
	if (times)
		sock_sink_times(&r->base.sink, r->base.ready_ns, times);
	c->free[c->nfree++] = r->base.index;
	return FL_OK;
}

int sock_close_recv(void *recv_comm)
{
	struct sock_recv_comm *c = recv_comm;

	if (!c)
		return FL_OK;
	sock_link_close(&c->link);
	free(c);
	return FL_OK;
}
