/*
 * One data stream of a connection and the helper thread that drives it with
 * blocking send()/recv(). The proxy thread hands it pieces through a
 * single-producer/single-consumer ring; the helper reports each moved piece on
 * the request's sink. Out of work, the helper lingers 20 us for the next piece
 * of the pipeline, then sleeps on its own condvar; the producer wakes it only
 * when it said it sleeps. Nothing is shared across connections, and a busy
 * pipeline costs no wake-up syscall.
 */
#ifndef FL_SOCK_STREAM_H
#define FL_SOCK_STREAM_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "sock_fault.h"

/* >= the most pieces one stream can have in flight: 256 requests x 1 piece each. */
#define SOCK_RING_SIZE 512

/* Where the pieces of one request report: count down, and the wire interval. */
struct sock_sink {
	_Atomic uint32_t pending;       /* pieces not yet moved */
	_Atomic uint64_t wire_start_ns; /* earliest first byte, 0 = none yet */
	_Atomic uint64_t wire_end_ns;   /* latest last byte */
	_Atomic uint64_t wire_bytes;    /* bytes whose moving the interval covers */
};

struct sock_task {
	uint8_t *buf;
	size_t len;
	struct sock_sink *sink;
};

struct fl_pacer;

struct sock_stream {
	int fd;
	int receiving;
	int started;
	unsigned index;
	struct sock_fault *fault;
	pthread_t thread;
	_Atomic uint32_t head; /* next slot the producer fills */
	_Atomic uint32_t tail; /* next slot the helper takes */
	_Atomic int sleeping;
	_Atomic int stop;
	struct fl_pacer *_Atomic pacer; /* NULL: full speed */
	pthread_mutex_t lock;
	pthread_cond_t wake;
	struct sock_task ring[SOCK_RING_SIZE];
};

static inline void sock_sink_reset(struct sock_sink *sink, uint32_t pieces)
{
	atomic_store_explicit(&sink->pending, pieces, memory_order_relaxed);
	atomic_store_explicit(&sink->wire_start_ns, 0, memory_order_relaxed);
	atomic_store_explicit(&sink->wire_end_ns, 0, memory_order_relaxed);
	atomic_store_explicit(&sink->wire_bytes, 0, memory_order_relaxed);
}

/* Widens the sink's wire interval to cover [start, end], in which `bytes` moved. */
void sock_sink_widen(struct sock_sink *sink, uint64_t start, uint64_t end, uint64_t bytes);

/* The sink's figures once every piece is in. */
static inline void sock_sink_times(const struct sock_sink *sink, uint64_t ready_ns,
				   struct fl_xfer_times *t)
{
	t->ready_ns = ready_ns;
	t->wire_start_ns = atomic_load_explicit(&sink->wire_start_ns, memory_order_relaxed);
	t->wire_end_ns = atomic_load_explicit(&sink->wire_end_ns, memory_order_relaxed);
	t->wire_bytes = atomic_load_explicit(&sink->wire_bytes, memory_order_relaxed);
}

/* Starts the helper on fd (blocking mode). fault collects a dead stream. */
int sock_stream_start(struct sock_stream *s, unsigned index, int fd, int receiving,
		      struct sock_fault *fault);
/* Proxy thread only. FL_ERR_INTERNAL if the ring is full (cannot happen within the pools). */
int sock_stream_post(struct sock_stream *s, uint8_t *buf, size_t len, struct sock_sink *sink);
/* Pieces taken after this obey the pacer (NULL: full speed again). */
void sock_stream_set_pacer(struct sock_stream *s, struct fl_pacer *pacer);
/* Stops and joins the helper; shutdown() unblocks it. Leaves the fd open. */
void sock_stream_stop(struct sock_stream *s);

#endif
