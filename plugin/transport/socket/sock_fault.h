/*
 * Why a connection died, recorded once by whichever thread saw it first (the
 * proxy on the control stream, a helper on a data stream) and reported by
 * every later call on that connection. The hot path only reads one atomic.
 */
#ifndef FL_SOCK_FAULT_H
#define FL_SOCK_FAULT_H

#include <pthread.h>
#include <stdatomic.h>

#include "base/error.h"
#include "base/fl_types.h"

struct sock_fault {
	_Atomic int failed;
	int code;
	pthread_mutex_t lock;
	char peer[FL_NODE_NAME_LEN + 80]; /* "node (address)" */
	char text[FL_ERROR_LEN];
};

void sock_fault_init(struct sock_fault *f, const char *node, const char *addr);
void sock_fault_destroy(struct sock_fault *f);
/* Records the first failure only; the text is prefixed with the peer. */
void sock_fault_set(struct sock_fault *f, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* A failed socket call: err 0 means the peer closed the stream. */
void sock_fault_errno(struct sock_fault *f, const char *what, int err);
/* fl_fail()s with the recorded failure and returns its code. */
int sock_fault_report(struct sock_fault *f);

#endif
