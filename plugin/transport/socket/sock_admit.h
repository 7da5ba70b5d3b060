/*
 * The door of a listening socket, shared by the socket transport and the ib
 * side channel. Streams waiting in the kernel's backlog are taken at each
 * poll, so a crowd of strangers cannot keep the real peer queued behind them;
 * unidentified streams wait in a bounded set (sized from RLIMIT_NOFILE) until
 * their opening record is in. When the set is full, the stranger that has
 * had the longest to speak is evicted, never the newcomer, but only once it
 * had a grace period to say its record: a peer that speaks at once is never
 * pushed out by a crowd arriving behind it, and while everyone held is that
 * young the rest waits in the backlog. A silent stream goes at its deadline.
 * Drops are counted and summed up in one WARN when the door closes.
 */
#ifndef FL_SOCK_ADMIT_H
#define FL_SOCK_ADMIT_H

#include <stddef.h>
#include <stdint.h>

#include "sock_sys.h"

#define SOCK_ADMIT_RECORD_MAX 256 /* longest opening record (ib: hello + metadata) */
#define SOCK_ADMIT_SLOTS_MAX 4096 /* unidentified streams held at once, at most */
#define SOCK_ADMIT_GRACE_NS (200ULL * 1000000ULL) /* to say the record before eviction */
#define SOCK_ADMIT_ADDRS 8        /* distinct stranger addresses named in the summary */

struct sock_newcomer {
	int fd; /* -1: free */
	uint64_t since_ns;
	uint64_t seq; /* order of arrival: the oldest is evicted first */
	size_t got;
	char addr[SOCK_ADDR_STRLEN];
	uint8_t record[SOCK_ADMIT_RECORD_MAX];
};

enum sock_drop_reason {
	SOCK_DROP_EVICTED,  /* the set was full and it had waited longest */
	SOCK_DROP_SILENT,   /* no whole record by the deadline */
	SOCK_DROP_CLOSED,   /* closed or reset before its record */
	SOCK_DROP_REJECTED, /* its record is not for this listener */
	SOCK_DROP_REASONS
};

struct sock_admit {
	int listen_fd; /* not owned */
	int epoll_fd;
	size_t want;
	uint64_t timeout_ns;
	unsigned cap;   /* most slots the set may grow to */
	unsigned nslots; /* slots allocated so far */
	unsigned used;
	uint64_t next_seq;
	struct sock_newcomer *slots;
	char name[96]; /* "socket listener on 1.2.3.4:5" */
	unsigned long drops[SOCK_DROP_REASONS];
	unsigned naddrs;
	char addrs[SOCK_ADMIT_ADDRS][SOCK_ADDR_STRLEN];
	int fd_limit_hit; /* accept ran out of descriptors at least once */
};

/*
 * Called with a newcomer whose whole record arrived. Return FL_OK with
 * *reject NULL to take the fd (set n->fd to -1), FL_OK with *reject naming why
 * the record is not for this listener (the door drops it), or an error, which
 * the poll returns (the door closes the fd).
 */
typedef int (*sock_arrival_fn)(void *ctx, struct sock_newcomer *n, const char **reject);

/* The set may grow to a quarter of RLIMIT_NOFILE (at most SOCK_ADMIT_SLOTS_MAX). */
int sock_admit_open(struct sock_admit *a, int listen_fd, size_t want, uint64_t timeout_ns,
		    const char *name);
/*
 * Takes every stream waiting in the backlog, reads what the ready ones sent,
 * hands whole records to arrived and drops strangers past their deadline.
 * Never fails for what strangers do (a full set, no descriptors left).
 */
int sock_admit_poll(struct sock_admit *a, uint64_t now, sock_arrival_fn arrived, void *ctx);
/* Counts a stream the caller turned away after taking it (the fd is closed). */
void sock_admit_reject(struct sock_admit *a, int fd, const char *addr, const char *why);
/* Closes every held stream and logs the drop summary once (WARN) if there were drops. */
void sock_admit_close(struct sock_admit *a);
/* Drops seen so far, all reasons together. */
unsigned long sock_admit_drops(const struct sock_admit *a);

#endif
