#include "sock_stream.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "base/clock.h"
#include "base/error.h"
#include "transport/pace.h"
#include "sock_arrival.h"

#define SOCK_HELPER_STACK (256 << 10)
#define SOCK_HELPER_LINGER_NS 20000 /* a pipelined step arrives well within this */
/* Longest nap while paced: a stop (close) is noticed within it. */
#define SOCK_PACE_NAP_MAX_NS 5000000u

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

void sock_sink_widen(struct sock_sink *sink, uint64_t start, uint64_t end, uint64_t bytes)
{
	atomic_fetch_add_explicit(&sink->wire_bytes, bytes, memory_order_relaxed);
	uint64_t cur = atomic_load_explicit(&sink->wire_start_ns, memory_order_relaxed);

	while ((!cur || start < cur) &&
	       !atomic_compare_exchange_weak_explicit(&sink->wire_start_ns, &cur, start,
						      memory_order_relaxed, memory_order_relaxed))
		;
	cur = atomic_load_explicit(&sink->wire_end_ns, memory_order_relaxed);
	while (end > cur &&
	       !atomic_compare_exchange_weak_explicit(&sink->wire_end_ns, &cur, end,
						      memory_order_relaxed, memory_order_relaxed))
		;
}

static bool stream_has_work(struct sock_stream *s)
{
	return atomic_load_explicit(&s->head, memory_order_acquire) !=
	       atomic_load_explicit(&s->tail, memory_order_relaxed);
}

/*
 * A helper thread may sleep: it waits here until the pacer lets `len` bytes
 * go. ECANCELED when the stream is being stopped.
 */
static int pace_slice(struct sock_stream *s, struct fl_pacer *p, size_t len, bool more)
{
	for (;;) {
		uint64_t now = fl_clock_ns(), wait;
		struct timespec nap;

		if (fl_pace_allows(p, now, len)) {
			/* more of this piece, or more pieces, wait behind it */
			if (more)
				fl_pace_backlog(p, now);
			return 0;
		}
		if (atomic_load_explicit(&s->stop, memory_order_relaxed))
			return ECANCELED;
		wait = fl_pace_wait_ns(p, now);
		if (wait > SOCK_PACE_NAP_MAX_NS)
			wait = SOCK_PACE_NAP_MAX_NS;
		nap.tv_sec = 0;
		nap.tv_nsec = (long)(wait ? wait : 1000);
		nanosleep(&nap, NULL);
	}
}

/* When the last paced byte has left the (slower) wire: once the pacer has paid it off. */
static uint64_t paid_off(const struct fl_pacer *p)
{
	uint64_t now = fl_clock_ns();

	return now + fl_pace_wait_ns(p, now);
}

static int send_all(int fd, const uint8_t *buf, size_t len)
{
	size_t off = 0;

	while (off < len) {
		ssize_t n = send(fd, buf + off, len - off, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return errno;
		off += (size_t)n;
	}
	return 0;
}

/*
 * A paced piece: each slice waits for the pacer before it goes on the wire.
 * The wire interval starts before the first wait, so it stretches as a slower
 * cable's would.
 */
static int send_piece_paced(struct sock_stream *s, struct fl_pacer *p, const struct sock_task *t)
{
	uint64_t start = fl_clock_ns();
	int err = 0;

	for (size_t off = 0; !err && off < t->len; off += FL_PACE_SLICE) {
		size_t len = t->len - off < FL_PACE_SLICE ? t->len - off : FL_PACE_SLICE;

		err = pace_slice(s, p, len, off + len < t->len || stream_has_work(s));
		if (!err)
			err = send_all(s->fd, t->buf + off, len);
	}
	if (!err)
		sock_sink_widen(t->sink, start, paid_off(p), t->len);
	return err;
}

/* Returns 0, or the errno that ended the stream (-1 for EOF). */
static int send_piece(struct sock_stream *s, const struct sock_task *t)
{
	uint64_t start = fl_clock_ns();
	size_t off = 0;

	while (off < t->len) {
		ssize_t n = send(s->fd, t->buf + off, t->len - off, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return errno;
		off += (size_t)n;
	}
	sock_sink_widen(t->sink, start, fl_clock_ns(), t->len);
	return 0;
}

/*
 * The first recv returns as soon as bytes arrive: that is the wire start. What
 * it returns arrived before that, while nobody watched (a helper woken late
 * finds several slices waiting), so those bytes are not counted as timed:
 * counting them over the time after them read up to 118% of the paced rate.
 * The wire end is when the last bytes arrived, by the kernel's stamp: woken
 * for them, a helper on a loaded host runs late, and ending at its read made
 * healthy lab hops read 94-99% of their rate (16 ranks on 2 busy cores).
 * A piece that was already wholly buffered gives no wire time at all.
 */
static int recv_piece(struct sock_stream *s, const struct sock_task *t)
{
	size_t off = 0, got = 0, first = 0;
	uint64_t start = 0, end, ago = 0;
	int err;

	while (off < t->len) {
		err = sock_recv_arrival(s->fd, t->buf + off, t->len - off, off ? MSG_WAITALL : 0,
					&got, &ago);
		if (err)
			return err;
		if (!off) {
			start = fl_clock_ns();
			first = got;
		}
		off += got;
	}
	if (first < t->len) {
		end = fl_clock_ns();
		if (ago < end - start)
			end -= ago;
		sock_sink_widen(t->sink, start, end, t->len - first);
	}
	return 0;
}

/*
 * A paced receiver reads each slice only when its pacer allows: the bytes
 * wait in the socket, TCP's window closes, and the sender slows down too.
 * The wire interval runs from the first byte read to the last.
 */
static int recv_piece_paced(struct sock_stream *s, struct fl_pacer *p, const struct sock_task *t)
{
	size_t off = 0, got = 0;
	uint64_t start = 0, ago; /* the pacer, not arrival, ends a paced piece */
	int err;

	while (off < t->len) {
		size_t end = t->len - off < FL_PACE_SLICE ? t->len : off + FL_PACE_SLICE;

		err = pace_slice(s, p, end - off, end < t->len || stream_has_work(s));
		/* the whole slice was paid for: take it all before asking the pacer again */
		while (!err && off < end) {
			err = sock_recv_arrival(s->fd, t->buf + off, end - off,
						off ? MSG_WAITALL : 0, &got, &ago);
			if (!err && !off)
				start = fl_clock_ns();
			off += err ? 0 : got;
		}
		if (err)
			return err;
	}
	sock_sink_widen(t->sink, start, paid_off(p), t->len);
	return 0;
}

static int move_piece(struct sock_stream *s, const struct sock_task *t)
{
	struct fl_pacer *p = FL_PACING ? atomic_load_explicit(&s->pacer, memory_order_acquire)
				       : NULL;

	if (FL_PACING && p)
		return s->receiving ? recv_piece_paced(s, p, t) : send_piece_paced(s, p, t);
	return s->receiving ? recv_piece(s, t) : send_piece(s, t);
}

void sock_stream_set_pacer(struct sock_stream *s, struct fl_pacer *pacer)
{
	atomic_store_explicit(&s->pacer, pacer, memory_order_release);
}

/* Sleeps until the producer posts past tail or stop is set. */
static void wait_for_work(struct sock_stream *s, uint32_t tail)
{
	pthread_mutex_lock(&s->lock);
	atomic_store(&s->sleeping, 1);
	while (atomic_load(&s->head) == tail && !atomic_load(&s->stop))
		pthread_cond_wait(&s->wake, &s->lock);
	atomic_store(&s->sleeping, 0);
	pthread_mutex_unlock(&s->lock);
}

/*
 * NCCL keeps a connection's pipeline full, so the next piece usually comes
 * within microseconds: look for it a little before sleeping, which would cost
 * the producer a futex call to wake us.
 */
static void linger_for_work(struct sock_stream *s, uint32_t tail)
{
	uint64_t until = fl_clock_ns() + SOCK_HELPER_LINGER_NS;

	while (atomic_load_explicit(&s->head, memory_order_acquire) == tail &&
	       !atomic_load_explicit(&s->stop, memory_order_relaxed) && fl_clock_ns() < until)
		cpu_relax();
}

static int next_task(struct sock_stream *s, struct sock_task *t)
{
	int lingered = 0;

	for (;;) {
		uint32_t tail = atomic_load_explicit(&s->tail, memory_order_relaxed);

		if (atomic_load_explicit(&s->stop, memory_order_acquire))
			return 0;
		if (atomic_load_explicit(&s->head, memory_order_acquire) != tail) {
			*t = s->ring[tail % SOCK_RING_SIZE];
			/* free the slot before moving bytes: the ring then never holds done work */
			atomic_store_explicit(&s->tail, tail + 1, memory_order_release);
			return 1;
		}
		if (!lingered++) {
			linger_for_work(s, tail);
			continue;
		}
		lingered = 0;
		wait_for_work(s, tail);
	}
}

static void *stream_main(void *arg)
{
	struct sock_stream *s = arg;
	struct sock_task t;
	char what[32];

	while (next_task(s, &t)) {
		int err = move_piece(s, &t);

		if (!err) {
			atomic_fetch_sub_explicit(&t.sink->pending, 1, memory_order_release);
			continue;
		}
		if (!atomic_load(&s->stop)) {
			snprintf(what, sizeof(what), "%s on data stream %u",
				 s->receiving ? "recv" : "send", s->index);
			sock_fault_errno(s->fault, what, err < 0 ? 0 : err);
		}
		break;
	}
	return NULL;
}

int sock_stream_start(struct sock_stream *s, unsigned index, int fd, int receiving,
		      struct sock_fault *fault)
{
	pthread_attr_t attr;
	sigset_t all, old;
	char name[16];
	int err;

	memset(s, 0, sizeof(*s));
	s->fd = fd;
	s->index = index;
	s->receiving = receiving;
	if (receiving)
		sock_arrival_enable(fd); /* without stamps a piece ends at its read */
	s->fault = fault;
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->wake, NULL);
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, SOCK_HELPER_STACK);
	/* The job's signal handlers belong on its own threads, not on our helpers. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&s->thread, &attr, stream_main, s);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	if (err) {
		pthread_cond_destroy(&s->wake);
		pthread_mutex_destroy(&s->lock);
		return fl_fail(FL_ERR_SYSTEM, "starting a socket helper thread: %s", strerror(err));
	}
	snprintf(name, sizeof(name), "fl-sock-%c%u", receiving ? 'r' : 's', index);
	pthread_setname_np(s->thread, name);
	s->started = 1;
	return FL_OK;
}

int sock_stream_post(struct sock_stream *s, uint8_t *buf, size_t len, struct sock_sink *sink)
{
	uint32_t head = atomic_load_explicit(&s->head, memory_order_relaxed);

	if (head - atomic_load_explicit(&s->tail, memory_order_acquire) >= SOCK_RING_SIZE)
		return fl_fail(FL_ERR_INTERNAL, "socket data stream %u: task ring full", s->index);
	s->ring[head % SOCK_RING_SIZE] = (struct sock_task){ buf, len, sink };
	/* seq_cst pairs with the helper's store of sleeping: one of us sees the other */
	atomic_store(&s->head, head + 1);
	if (atomic_load(&s->sleeping)) {
		pthread_mutex_lock(&s->lock);
		pthread_cond_signal(&s->wake);
		pthread_mutex_unlock(&s->lock);
	}
	return FL_OK;
}

void sock_stream_stop(struct sock_stream *s)
{
	if (!s->started)
		return;
	atomic_store(&s->stop, 1);
	shutdown(s->fd, SHUT_RDWR);
	pthread_mutex_lock(&s->lock);
	pthread_cond_signal(&s->wake);
	pthread_mutex_unlock(&s->lock);
	pthread_join(s->thread, NULL);
	pthread_cond_destroy(&s->wake);
	pthread_mutex_destroy(&s->lock);
	s->started = 0;
}
