#include "sock_fault.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void sock_fault_init(struct sock_fault *f, const char *node, const char *addr)
{
	atomic_init(&f->failed, 0);
	f->code = FL_OK;
	pthread_mutex_init(&f->lock, NULL);
	snprintf(f->peer, sizeof(f->peer), "%s (%s)", node[0] ? node : "?", addr);
	f->text[0] = '\0';
}

void sock_fault_destroy(struct sock_fault *f)
{
	pthread_mutex_destroy(&f->lock);
}

void sock_fault_set(struct sock_fault *f, int code, const char *fmt, ...)
{
	va_list ap;
	int n;

	pthread_mutex_lock(&f->lock);
	if (!atomic_load_explicit(&f->failed, memory_order_relaxed)) {
		f->code = code;
		n = snprintf(f->text, sizeof(f->text), "socket connection with %s: ", f->peer);
		if (n >= 0 && (size_t)n < sizeof(f->text)) {
			va_start(ap, fmt);
			vsnprintf(f->text + n, sizeof(f->text) - (size_t)n, fmt, ap);
			va_end(ap);
		}
		atomic_store_explicit(&f->failed, 1, memory_order_release);
	}
	pthread_mutex_unlock(&f->lock);
}

void sock_fault_errno(struct sock_fault *f, const char *what, int err)
{
	if (!err)
		sock_fault_set(f, FL_ERR_SYSTEM, "%s: peer closed the connection", what);
	else
		sock_fault_set(f, FL_ERR_SYSTEM, "%s: %s", what, strerror(err));
}

int sock_fault_report(struct sock_fault *f)
{
	int code;

	pthread_mutex_lock(&f->lock);
	code = fl_fail(f->code, "%s", f->text);
	pthread_mutex_unlock(&f->lock);
	return code;
}
