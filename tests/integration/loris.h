/*
 * A slow-loris attacker in its own process, for the listener tests: it opens
 * connections to one address, half of them silent and half stopping partway
 * through a hello, some before the real peer connects and some while it does,
 * and reopens any the listener closes so it keeps holding its count.
 */
#ifndef FL_TEST_LORIS_H
#define FL_TEST_LORIS_H

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "plugin/transport/socket/sock_handle.h"

#define LORIS_PARTIAL_BYTES 64 /* of a 128-byte hello: magic and version right, then silence */

struct loris {
	pid_t pid;
	int to_child, from_child;
};

struct loris_plan {
	struct sockaddr_storage addr;
	socklen_t addrlen;
	int before;      /* opened before the go */
	int during;      /* opened after the go, spread over spread_s */
	double spread_s;
	double hold_s;   /* from the go until the attacker lets go, unless killed before */
};

static double loris_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* One attacking stream; -1 when the connect did not finish within 200 ms. */
static int loris_open(const struct loris_plan *plan, int partial)
{
	struct sock_hello hello = { .kind = SOCK_STREAM_CONTROL, .nstreams = 0 };
	uint8_t buf[SOCK_HELLO_SIZE];
	int fd = socket(plan->addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK, 0);
	struct pollfd pfd = { .fd = fd, .events = POLLOUT };
	int err = 0;
	socklen_t len = sizeof(err);

	if (fd < 0)
		return -1;
	if (connect(fd, (const struct sockaddr *)&plan->addr, plan->addrlen) &&
	    errno != EINPROGRESS)
		goto fail;
	if (poll(&pfd, 1, 200) != 1 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) || err)
		goto fail;
	if (partial) {
		sock_hello_encode(&hello, buf);
		if (send(fd, buf, LORIS_PARTIAL_BYTES, MSG_NOSIGNAL) != LORIS_PARTIAL_BYTES)
			goto fail;
	}
	return fd;
fail:
	close(fd);
	return -1;
}

/* Reopens every stream the listener closed; waits up to ms for news. */
static void loris_keep(const struct loris_plan *plan, struct pollfd *fds, int n, int ms)
{
	char c[LORIS_PARTIAL_BYTES];

	if (poll(fds, (nfds_t)n, ms) <= 0)
		return;
	for (int i = 0; i < n; i++) {
		if (!fds[i].revents)
			continue;
		if (fds[i].fd >= 0 && recv(fds[i].fd, c, sizeof(c), MSG_DONTWAIT) > 0)
			continue;
		close(fds[i].fd);
		fds[i].fd = loris_open(plan, i & 1);
		fds[i].revents = 0;
	}
}

static void loris_child(const struct loris_plan *plan, int from_parent, int to_parent)
{
	int total = plan->before + plan->during, opened = 0;
	struct pollfd *fds = calloc((size_t)total, sizeof(*fds));
	struct rlimit rl;
	double go, end;
	char c = 0;

	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < (rlim_t)total + 64) {
		rl.rlim_cur = rl.rlim_max < (rlim_t)total + 64 ? rl.rlim_max : (rlim_t)total + 64;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	for (int i = 0; i < total; i++) {
		fds[i].fd = i < plan->before ? loris_open(plan, i & 1) : -1;
		fds[i].events = POLLIN | POLLRDHUP;
		opened += fds[i].fd >= 0;
	}
	if (write(to_parent, &opened, sizeof(opened)) != sizeof(opened) ||
	    read(from_parent, &c, 1) != 1)
		_exit(1);
	go = loris_now();
	end = go + plan->hold_s;
	for (int i = plan->before; i < total; i++) {
		double due = go + plan->spread_s * (i - plan->before + 1) / (plan->during + 1);

		while (loris_now() < due)
			loris_keep(plan, fds, i, 5);
		fds[i].fd = loris_open(plan, i & 1);
	}
	while (loris_now() < end)
		loris_keep(plan, fds, total, 50);
	_exit(0);
}

/* Forks the attacker; returns once its first `before` streams are open (how many did). */
static int loris_start(struct loris *lo, const struct loris_plan *plan)
{
	int down[2], up[2], opened = -1;

	if (pipe(down) || pipe(up))
		return -1;
	lo->pid = fork();
	if (lo->pid == 0) {
		close(down[1]);
		close(up[0]);
		loris_child(plan, down[0], up[1]);
	}
	close(down[0]);
	close(up[1]);
	lo->to_child = down[1];
	lo->from_child = up[0];
	if (read(lo->from_child, &opened, sizeof(opened)) != sizeof(opened))
		return -1;
	return opened;
}

static void loris_go(struct loris *lo)
{
	char c = 'g';

	if (write(lo->to_child, &c, 1) != 1)
		abort();
}

static void loris_stop(struct loris *lo)
{
	kill(lo->pid, SIGKILL);
	waitpid(lo->pid, NULL, 0);
	close(lo->to_child);
	close(lo->from_child);
}

#endif
