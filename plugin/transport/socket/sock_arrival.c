/* Kernel arrival stamps of received bytes: see sock_arrival.h. */
#include "sock_arrival.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>

int sock_arrival_enable(int fd)
{
	int on = 1;

	return setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &on, sizeof(on)) == 0;
}

static uint64_t ns_of(const struct timespec *ts)
{
	return (uint64_t)ts->tv_sec * 1000000000ULL + (uint64_t)ts->tv_nsec;
}

/*
 * The stamp is wall-clock time; so is `now`, taken as the call returns, and
 * only their difference is kept. A clock step between the two gives nonsense,
 * so a stamp in the future, or one more than a second old, counts as none.
 */
static uint64_t stamp_age(struct msghdr *msg)
{
	struct timespec stamp, now;
	uint64_t at, t;

	for (struct cmsghdr *c = CMSG_FIRSTHDR(msg); c; c = CMSG_NXTHDR(msg, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_TIMESTAMPNS)
			continue;
		memcpy(&stamp, CMSG_DATA(c), sizeof(stamp));
		clock_gettime(CLOCK_REALTIME, &now);
		at = ns_of(&stamp);
		t = ns_of(&now);
		return at && at <= t && t - at < 1000000000ULL ? t - at : 0;
	}
	return 0;
}

int sock_recv_arrival(int fd, uint8_t *buf, size_t len, int flags, size_t *got,
		      uint64_t *ago_ns)
{
	union {
		char buf[CMSG_SPACE(sizeof(struct timespec))];
		struct cmsghdr align;
	} control;
	struct iovec iov = { buf, len };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };

	*ago_ns = 0;
	for (;;) {
		ssize_t n;

		msg.msg_control = control.buf;
		msg.msg_controllen = sizeof(control.buf);
		n = recvmsg(fd, &msg, flags);
		if (n > 0) {
			*got = (size_t)n;
			*ago_ns = stamp_age(&msg);
			return 0;
		}
		if (n == 0)
			return -1;
		if (errno != EINTR)
			return errno;
	}
}
