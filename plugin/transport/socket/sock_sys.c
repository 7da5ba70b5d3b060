#include "sock_sys.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>

#include "base/clock.h"
#include "base/error.h"
#include "base/fl_types.h"

uint64_t sock_random_u64(void)
{
	static _Atomic uint64_t counter;
	uint64_t x;

	if (getrandom(&x, sizeof(x), GRND_NONBLOCK) == (ssize_t)sizeof(x))
		return x;
	/* splitmix64 over time and a counter: unique enough to tell connections apart */
	x = fl_clock_mono_ns() + (atomic_fetch_add(&counter, 1) + 1) * 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

int sock_tune(int fd, size_t bufsize)
{
	int one = 1, size = (int)bufsize;

	if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)))
		return fl_fail(FL_ERR_SYSTEM, "setsockopt(TCP_NODELAY): %s", strerror(errno));
	if (!bufsize)
		return FL_OK;
	if (setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, sizeof(size)) ||
	    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size)))
		return fl_fail(FL_ERR_SYSTEM, "setsockopt(SO_SNDBUF/SO_RCVBUF %d): %s", size,
			       strerror(errno));
	return FL_OK;
}

int sock_set_nonblocking(int fd, int nonblocking)
{
	int flags = fcntl(fd, F_GETFL);

	if (flags < 0)
		return fl_fail(FL_ERR_SYSTEM, "fcntl(F_GETFL): %s", strerror(errno));
	flags = nonblocking ? flags | O_NONBLOCK : flags & ~O_NONBLOCK;
	if (fcntl(fd, F_SETFL, flags))
		return fl_fail(FL_ERR_SYSTEM, "fcntl(F_SETFL): %s", strerror(errno));
	return FL_OK;
}

int sock_connect_start(const struct sockaddr_storage *addr, socklen_t addrlen, size_t bufsize,
		       const char *peer, int *fd, int *connected)
{
	*connected = 0;
	*fd = socket(addr->ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (*fd < 0)
		return fl_fail(FL_ERR_SYSTEM, "socket: %s", strerror(errno));
	if (sock_tune(*fd, bufsize))
		return FL_ERR_SYSTEM;
	if (!connect(*fd, (const struct sockaddr *)addr, addrlen))
		*connected = 1;
	else if (errno != EINPROGRESS && errno != EINTR)
		return fl_fail(FL_ERR_SYSTEM, "connect to %s: %s", peer, strerror(errno));
	return FL_OK;
}

int sock_connect_check(int fd, const char *peer, int *connected)
{
	struct pollfd pfd = { .fd = fd, .events = POLLOUT };
	int err = 0;
	socklen_t len = sizeof(err);

	*connected = 0;
	if (poll(&pfd, 1, 0) <= 0 || !pfd.revents)
		return FL_OK;
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len))
		err = errno;
	if (err)
		return fl_fail(FL_ERR_SYSTEM, "connect to %s: %s", peer, strerror(err));
	*connected = 1;
	return FL_OK;
}

void sock_addr_format(const struct sockaddr *sa, char *out, size_t len)
{
	char host[INET6_ADDRSTRLEN] = "?";

	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)sa;

		inet_ntop(AF_INET, &in->sin_addr, host, sizeof(host));
		snprintf(out, len, "%s:%u", host, ntohs(in->sin_port));
	} else if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;

		inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof(host));
		snprintf(out, len, "[%s]:%u", host, ntohs(in6->sin6_port));
	} else {
		snprintf(out, len, "?");
	}
}

void sock_peer_format(int fd, char *out, size_t len)
{
	struct sockaddr_storage ss;
	socklen_t sslen = sizeof(ss);

	if (getpeername(fd, (struct sockaddr *)&ss, &sslen))
		snprintf(out, len, "?");
	else
		sock_addr_format((struct sockaddr *)&ss, out, len);
}
