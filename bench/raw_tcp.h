/*
 * The raw-TCP baseline of socket_vs_raw, driven the way NCCL's proxy drives a
 * plugin: one thread, non-blocking calls, each asking for at most the rest of
 * the current message, the core yielded only when no stream moved a byte.
 * Header-only: each benchmark is one .c file.
 */
#ifndef FL_BENCH_RAW_TCP_H
#define FL_BENCH_RAW_TCP_H

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "bench_cost.h"

#define RAW_TCP_MAX_STREAMS 16

static inline int raw_tcp_listen(uint16_t *port)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t alen = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) || listen(fd, 16) ||
	    getsockname(fd, (struct sockaddr *)&a, &alen))
		bench_die("raw listen");
	*port = ntohs(a.sin_port);
	return fd;
}

static inline void raw_tcp_connect(int *fds, int nstreams, int sending, int listen_fd,
				   uint16_t port)
{
	for (int i = 0; i < nstreams; i++) {
		int one = 1;

		if (sending) {
			struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };

			a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
			fds[i] = socket(AF_INET, SOCK_STREAM, 0);
			if (fds[i] < 0 || connect(fds[i], (struct sockaddr *)&a, sizeof(a)))
				bench_die("raw connect");
		} else if ((fds[i] = accept(listen_fd, NULL, NULL)) < 0) {
			bench_die("raw accept");
		}
		setsockopt(fds[i], IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	}
}

/* One non-blocking call on stream [pos, end) whose messages are `step` long from `start`. */
static inline int raw_tcp_move(int fd, int sending, char *buf, size_t start, size_t *pos,
			       size_t end, size_t step)
{
	size_t len = end - *pos;
	ssize_t n;

	if (step && step - (*pos - start) % step < len)
		len = step - (*pos - start) % step;
	n = sending ? send(fd, buf + *pos, len, MSG_DONTWAIT | MSG_NOSIGNAL)
		    : recv(fd, buf + *pos, len, MSG_DONTWAIT);
	if (n > 0) {
		*pos += (size_t)n;
		return 1;
	}
	if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR))
		bench_die("raw stream");
	return 0;
}

/* Moves `bytes` split evenly over the streams, in messages of `step` (0: one per stream). */
static inline void raw_tcp_transfer(const int *fds, int nstreams, int sending, char *buf,
				    size_t bytes, size_t step)
{
	size_t start[RAW_TCP_MAX_STREAMS], pos[RAW_TCP_MAX_STREAMS], end[RAW_TCP_MAX_STREAMS];
	size_t share = bytes / (size_t)nstreams, left = bytes;

	for (int i = 0; i < nstreams; i++) {
		start[i] = pos[i] = share * (size_t)i;
		end[i] = i == nstreams - 1 ? bytes : share * (size_t)(i + 1);
	}
	while (left) {
		int moved = 0;

		for (int i = 0; i < nstreams; i++) {
			size_t before = pos[i];

			if (pos[i] < end[i] &&
			    raw_tcp_move(fds[i], sending, buf, start[i], &pos[i], end[i], step)) {
				moved = 1;
				left -= pos[i] - before;
			}
		}
		if (!moved)
			sched_yield();
	}
}

#endif
