/*
 * Admission of incoming streams (see sock_admit.h). A poll first reads what
 * the held streams sent, then drains the backlog in rounds, each followed by
 * another read, so the real peer, which sends its record at once, is
 * identified on the poll that accepts it or the next one. The slot table
 * grows on demand: a listener nobody attacks keeps a few slots only.
 */
#include "sock_admit.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/error.h"
#include "base/fl_types.h"
#include "base/log.h"

#define ADMIT_MIN_SLOTS 16
#define ADMIT_FD_SHARE 4      /* the set takes at most 1/4 of RLIMIT_NOFILE */
#define ADMIT_ROUND 64        /* accepts between two reads of the held streams */
#define ADMIT_MAX_ROUNDS 16   /* rounds per poll; the rest waits for the next poll */
#define ADMIT_INFO_LINES 16   /* drops logged one by one at INFO; the rest only summed */
#define ADMIT_EVENTS 64

static unsigned slots_for_fd_limit(void)
{
	struct rlimit rl;
	rlim_t share;

	if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur == RLIM_INFINITY)
		return SOCK_ADMIT_SLOTS_MAX;
	share = rl.rlim_cur / ADMIT_FD_SHARE;
	if (share < ADMIT_MIN_SLOTS)
		return ADMIT_MIN_SLOTS;
	return share < SOCK_ADMIT_SLOTS_MAX ? (unsigned)share : SOCK_ADMIT_SLOTS_MAX;
}

int sock_admit_open(struct sock_admit *a, int listen_fd, size_t want, uint64_t timeout_ns,
		    const char *name)
{
	memset(a, 0, sizeof(*a));
	a->listen_fd = listen_fd;
	a->want = want < SOCK_ADMIT_RECORD_MAX ? want : SOCK_ADMIT_RECORD_MAX;
	a->timeout_ns = timeout_ns;
	a->cap = slots_for_fd_limit();
	snprintf(a->name, sizeof(a->name), "%s", name);
	a->nslots = ADMIT_MIN_SLOTS;
	a->slots = calloc(a->nslots, sizeof(*a->slots));
	if (!a->slots)
		return fl_fail(FL_ERR_SYSTEM, "out of memory for %s", name);
	for (unsigned i = 0; i < a->nslots; i++)
		a->slots[i].fd = -1;
	a->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	if (a->epoll_fd < 0) {
		free(a->slots);
		a->slots = NULL;
		return fl_fail(FL_ERR_SYSTEM, "epoll_create1 for %s: %s", name, strerror(errno));
	}
	return FL_OK;
}

/* Remembers the stranger's address (host part) for the summary. */
static void note_address(struct sock_admit *a, const char *addr)
{
	const char *colon = strrchr(addr, ':');
	size_t len = colon ? (size_t)(colon - addr) : strlen(addr);

	if (len >= SOCK_ADDR_STRLEN)
		len = SOCK_ADDR_STRLEN - 1;
	for (unsigned i = 0; i < a->naddrs; i++)
		if (strlen(a->addrs[i]) == len && !strncmp(a->addrs[i], addr, len))
			return;
	if (a->naddrs == SOCK_ADMIT_ADDRS)
		return;
	memcpy(a->addrs[a->naddrs], addr, len);
	a->addrs[a->naddrs++][len] = '\0';
}

static void count_drop(struct sock_admit *a, const char *addr, enum sock_drop_reason reason,
		       const char *why)
{
	if (sock_admit_drops(a) < ADMIT_INFO_LINES)
		FL_INFO("%s: dropping stream from %s: %s", a->name, addr, why);
	a->drops[reason]++;
	note_address(a, addr);
}

static void drop(struct sock_admit *a, struct sock_newcomer *n, enum sock_drop_reason reason,
		 const char *why)
{
	count_drop(a, n->addr, reason, why);
	close(n->fd);
	n->fd = -1;
	a->used--;
}

void sock_admit_reject(struct sock_admit *a, int fd, const char *addr, const char *why)
{
	count_drop(a, addr, SOCK_DROP_REJECTED, why);
	close(fd);
}

unsigned long sock_admit_drops(const struct sock_admit *a)
{
	unsigned long sum = 0;

	for (int r = 0; r < SOCK_DROP_REASONS; r++)
		sum += a->drops[r];
	return sum;
}

static struct sock_newcomer *oldest(struct sock_admit *a)
{
	struct sock_newcomer *best = NULL;

	for (unsigned i = 0; i < a->nslots; i++)
		if (a->slots[i].fd >= 0 && (!best || a->slots[i].seq < best->seq))
			best = &a->slots[i];
	return best;
}

/* Evicts the oldest stranger if it had its grace period; 0 when none had. */
static int evict_oldest(struct sock_admit *a, uint64_t now)
{
	struct sock_newcomer *victim = oldest(a);

	if (!victim || now - victim->since_ns < SOCK_ADMIT_GRACE_NS)
		return 0;
	drop(a, victim, SOCK_DROP_EVICTED, "evicted: too many streams without a hello");
	return 1;
}

/* Doubles the table up to cap; 0 when it cannot grow. */
static int grow(struct sock_admit *a)
{
	unsigned n = a->nslots * 2 < a->cap ? a->nslots * 2 : a->cap;
	struct sock_newcomer *more;

	if (n <= a->nslots)
		return 0;
	more = realloc(a->slots, n * sizeof(*more));
	if (!more)
		return 0;
	for (unsigned i = a->nslots; i < n; i++)
		more[i].fd = -1;
	a->slots = more;
	a->nslots = n;
	return 1;
}

static int backlog_waiting(const struct sock_admit *a)
{
	struct pollfd pfd = { .fd = a->listen_fd, .events = POLLIN };

	return poll(&pfd, 1, 0) == 1;
}

/* A slot for one more stream, evicting if the set is full; NULL: leave it in the backlog. */
static struct sock_newcomer *room(struct sock_admit *a, uint64_t now)
{
	if (a->used == a->nslots && !grow(a) &&
	    (!backlog_waiting(a) || !evict_oldest(a, now)))
		return NULL;
	for (unsigned i = 0; i < a->nslots; i++)
		if (a->slots[i].fd < 0)
			return &a->slots[i];
	return NULL;
}

static void hold(struct sock_admit *a, struct sock_newcomer *n, int fd, uint64_t now)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLRDHUP };

	n->fd = fd;
	n->since_ns = now;
	n->seq = a->next_seq++;
	n->got = 0;
	sock_peer_format(fd, n->addr, sizeof(n->addr));
	a->used++;
	ev.data.u32 = (uint32_t)(n - a->slots);
	if (sock_tune(fd, 0))
		drop(a, n, SOCK_DROP_CLOSED, fl_error_text());
	else if (epoll_ctl(a->epoll_fd, EPOLL_CTL_ADD, fd, &ev))
		drop(a, n, SOCK_DROP_CLOSED, strerror(errno));
}

/*
 * Accepts up to ADMIT_ROUND streams; returns how many, 0 when the backlog is
 * empty or the set has no room, or -1 with fl_fail on an error of the
 * listening socket itself. Out of descriptors, a stranger makes room; with
 * none to evict the rest waits in the backlog.
 */
static int take_round(struct sock_admit *a, uint64_t now)
{
	int taken = 0;

	while (taken < ADMIT_ROUND) {
		struct sock_newcomer *n = room(a, now);
		int fd;

		if (!n)
			break;
		fd = accept4(a->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd >= 0) {
			hold(a, n, fd, now);
			taken++;
			continue;
		}
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			break;
		if (errno == EINTR || errno == ECONNABORTED || errno == EPROTO)
			continue;
		if (errno == EMFILE || errno == ENFILE) {
			a->fd_limit_hit = 1;
			if (evict_oldest(a, now))
				continue;
			break;
		}
		if (errno == ENOBUFS || errno == ENOMEM)
			break;
		fl_fail(FL_ERR_SYSTEM, "accept on %s: %s", a->name, strerror(errno));
		return -1;
	}
	return taken;
}

static int read_one(struct sock_admit *a, struct sock_newcomer *n, sock_arrival_fn arrived,
		    void *ctx)
{
	ssize_t got = recv(n->fd, n->record + n->got, a->want - n->got, MSG_DONTWAIT);
	const char *reject = NULL;
	int rc;

	if (got == 0) {
		drop(a, n, SOCK_DROP_CLOSED, "closed before its hello");
		return FL_OK;
	}
	if (got < 0) {
		if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
			drop(a, n, SOCK_DROP_CLOSED, strerror(errno));
		return FL_OK;
	}
	n->got += (size_t)got;
	if (n->got < a->want)
		return FL_OK;
	/* the fd leaves the set before the caller may keep it */
	epoll_ctl(a->epoll_fd, EPOLL_CTL_DEL, n->fd, NULL);
	rc = arrived(ctx, n, &reject);
	if (n->fd < 0) {
		a->used--;
		return rc;
	}
	if (rc) {
		close(n->fd);
		n->fd = -1;
		a->used--;
		return rc;
	}
	drop(a, n, SOCK_DROP_REJECTED, reject ? reject : "not taken");
	return FL_OK;
}

static int read_ready(struct sock_admit *a, sock_arrival_fn arrived, void *ctx)
{
	struct epoll_event evs[ADMIT_EVENTS];
	int n;

	do {
		n = epoll_wait(a->epoll_fd, evs, ADMIT_EVENTS, 0);
		for (int i = 0; i < n; i++) {
			struct sock_newcomer *c = &a->slots[evs[i].data.u32];
			int rc = c->fd >= 0 ? read_one(a, c, arrived, ctx) : FL_OK;

			if (rc)
				return rc;
		}
	} while (n == ADMIT_EVENTS);
	return FL_OK;
}

static void expire(struct sock_admit *a, uint64_t now)
{
	for (unsigned i = 0; i < a->nslots; i++) {
		struct sock_newcomer *n = &a->slots[i];

		if (n->fd >= 0 && now - n->since_ns > a->timeout_ns)
			drop(a, n, SOCK_DROP_SILENT,
			     "no hello within FABRICLAB_SOCKET_HELLO_TIMEOUT_MS");
	}
}

int sock_admit_poll(struct sock_admit *a, uint64_t now, sock_arrival_fn arrived, void *ctx)
{
	int rc = read_ready(a, arrived, ctx);

	for (int round = 0; !rc && round < ADMIT_MAX_ROUNDS; round++) {
		int taken = take_round(a, now);

		if (taken < 0)
			return FL_ERR_SYSTEM;
		if (!taken)
			break;
		rc = read_ready(a, arrived, ctx);
	}
	if (rc)
		return rc;
	if (a->used)
		expire(a, now);
	return FL_OK;
}

static void log_summary(const struct sock_admit *a)
{
	char addrs[SOCK_ADMIT_ADDRS * (SOCK_ADDR_STRLEN + 2)] = "";
	size_t off = 0;

	for (unsigned i = 0; i < a->naddrs && off < sizeof(addrs); i++)
		off += (size_t)snprintf(addrs + off, sizeof(addrs) - off, "%s%s", i ? ", " : "",
					a->addrs[i]);
	FL_WARN("%s: dropped %lu streams that were not its peers (%lu evicted to make room, "
		"%lu silent past their deadline, %lu closed early, %lu with a record not for it)"
		"%s; from %s%s",
		a->name, sock_admit_drops(a), a->drops[SOCK_DROP_EVICTED],
		a->drops[SOCK_DROP_SILENT], a->drops[SOCK_DROP_CLOSED],
		a->drops[SOCK_DROP_REJECTED],
		a->fd_limit_hit ? "; ran out of file descriptors (RLIMIT_NOFILE)" : "", addrs,
		a->naddrs == SOCK_ADMIT_ADDRS ? " and maybe more" : "");
}

void sock_admit_close(struct sock_admit *a)
{
	if (!a->slots)
		return;
	for (unsigned i = 0; i < a->nslots; i++)
		if (a->slots[i].fd >= 0)
			close(a->slots[i].fd);
	if (sock_admit_drops(a))
		log_summary(a);
	close(a->epoll_fd);
	free(a->slots);
	a->slots = NULL;
}
