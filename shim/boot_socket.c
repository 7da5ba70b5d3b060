#include "boot_socket.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "plugin/base/fl_types.h"
#include "shim_error.h"

#define RETRY_SLEEP_MS 100

uint64_t shim_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

uint64_t shim_deadline_ms(int timeout_ms)
{
	return shim_now_ns() + (uint64_t)timeout_ms * 1000000ULL;
}

static int ms_left(uint64_t deadline_ns)
{
	uint64_t now = shim_now_ns();

	if (now >= deadline_ns)
		return 0;
	return (int)((deadline_ns - now + 999999) / 1000000);
}

/* Waits until fd is ready for `events`; FL_ERR_SYSTEM with "timed out" past the deadline. */
static int wait_ready(int fd, short events, uint64_t deadline_ns)
{
	struct pollfd p = { .fd = fd, .events = events };

	for (;;) {
		int left = ms_left(deadline_ns);
		int n;

		if (!left)
			return shim_fail(FL_ERR_SYSTEM, "timed out");
		n = poll(&p, 1, left);
		if (n > 0)
			return FL_OK;
		if (n < 0 && errno != EINTR)
			return shim_fail(FL_ERR_SYSTEM, "poll: %s", strerror(errno));
	}
}

static int resolve(const char *addr, const char *port, int passive, struct addrinfo **res)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM };
	int rc;

	hints.ai_flags = passive ? AI_PASSIVE : 0;
	rc = getaddrinfo(addr, port, &hints, res);
	if (rc)
		return shim_fail(FL_ERR_USAGE, "cannot resolve %s:%s: %s", addr ? addr : "*", port,
				 gai_strerror(rc));
	return FL_OK;
}

static void tune(int fd)
{
	int one = 1;

	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

int shim_sock_listen(const char *addr, const char *port, int *fd)
{
	struct addrinfo *res;
	int one = 1, s, rc;

	rc = resolve(addr, port, 1, &res);
	if (rc)
		return rc;
	s = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0) {
		freeaddrinfo(res);
		return shim_fail(FL_ERR_SYSTEM, "socket: %s", strerror(errno));
	}
	setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(s, res->ai_addr, res->ai_addrlen) || listen(s, 1024)) {
		rc = shim_fail(FL_ERR_SYSTEM, "cannot listen on %s:%s: %s", addr ? addr : "*", port,
			       strerror(errno));
		close(s);
		freeaddrinfo(res);
		return rc;
	}
	freeaddrinfo(res);
	fcntl(s, F_SETFL, fcntl(s, F_GETFL) | O_NONBLOCK);
	*fd = s;
	return FL_OK;
}

int shim_sock_port(int fd, int *port)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	if (getsockname(fd, (struct sockaddr *)&ss, &len))
		return shim_fail(FL_ERR_SYSTEM, "getsockname: %s", strerror(errno));
	if (ss.ss_family == AF_INET6)
		*port = ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
	else
		*port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
	return FL_OK;
}

/* One non-blocking connect attempt; errno-style result (0 = connected). */
static int try_connect(const struct addrinfo *ai, uint64_t deadline_ns, int *fd)
{
	int s = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	int err = 0;
	socklen_t len = sizeof(err);

	if (s < 0)
		return errno;
	if (connect(s, ai->ai_addr, ai->ai_addrlen) && errno != EINPROGRESS) {
		err = errno;
	} else if (wait_ready(s, POLLOUT, deadline_ns)) {
		err = ETIMEDOUT;
	} else if (getsockopt(s, SOL_SOCKET, SO_ERROR, &err, &len)) {
		err = errno;
	}
	if (err) {
		close(s);
		return err;
	}
	tune(s);
	*fd = s;
	return 0;
}

static int retryable(int err)
{
	return err == ECONNREFUSED || err == ETIMEDOUT || err == EHOSTUNREACH ||
	       err == ENETUNREACH || err == EAGAIN || err == ECONNRESET || err == EINTR;
}

int shim_sock_connect(const char *addr, const char *port, uint64_t deadline_ns, int *fd)
{
	struct timespec pause = { 0, RETRY_SLEEP_MS * 1000000L };
	struct addrinfo *res;
	int rc, err;

	rc = resolve(addr, port, 0, &res);
	if (rc)
		return rc;
	for (;;) {
		err = try_connect(res, deadline_ns, fd);
		if (!err || !retryable(err) || !ms_left(deadline_ns))
			break;
		nanosleep(&pause, NULL);
	}
	freeaddrinfo(res);
	if (err)
		return shim_fail(FL_ERR_SYSTEM, "cannot connect to %s:%s: %s", addr, port,
				 strerror(err));
	return FL_OK;
}

int shim_sock_accept(int listen_fd, uint64_t deadline_ns, int *fd)
{
	for (;;) {
		int s, rc;

		rc = wait_ready(listen_fd, POLLIN, deadline_ns);
		if (rc)
			return rc;
		s = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC);
		if (s >= 0) {
			tune(s);
			*fd = s;
			return FL_OK;
		}
		if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED)
			return shim_fail(FL_ERR_SYSTEM, "accept: %s", strerror(errno));
	}
}

int shim_sock_send(int fd, const void *buf, size_t len, uint64_t deadline_ns)
{
	const char *p = buf;

	while (len) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);

		if (n > 0) {
			p += n;
			len -= (size_t)n;
			continue;
		}
		if (errno == EAGAIN || errno == EINTR) {
			int rc = wait_ready(fd, POLLOUT, deadline_ns);

			if (rc)
				return rc;
			continue;
		}
		return shim_fail(FL_ERR_SYSTEM, "send: %s", strerror(errno));
	}
	return FL_OK;
}

int shim_sock_recv(int fd, void *buf, size_t len, uint64_t deadline_ns)
{
	char *p = buf;

	while (len) {
		ssize_t n = recv(fd, p, len, 0);

		if (n > 0) {
			p += n;
			len -= (size_t)n;
			continue;
		}
		if (n == 0)
			return shim_fail(FL_ERR_REMOTE, "connection closed by the peer");
		if (errno == EAGAIN || errno == EINTR) {
			int rc = wait_ready(fd, POLLIN, deadline_ns);

			if (rc)
				return rc;
			continue;
		}
		return shim_fail(FL_ERR_SYSTEM, "recv: %s", strerror(errno));
	}
	return FL_OK;
}
