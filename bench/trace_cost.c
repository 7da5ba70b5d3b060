/*
 * What tracing costs per request: isend+test pairs through the wrap layer over a
 * transport that does nothing, as run/trace_bench.sh runs it three times (provider
 * off, provider loaded without a session, inside a session recording fabriclab:*).
 * Each pair emits request_posted and request_done. Also the cost of one disabled
 * hook (the load and branch every call site pays) measured alone.
 * Times are this thread's CPU time, so a machine shared with other jobs inflates them
 * little (what the session daemon's consumer spends is not in them: it is another process).
 * Usage: trace_cost [PAIRS]; FABRICLAB_LTTNG_PROVIDER picks the provider ("off": none).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "plugin/base/clock.h"
#include "plugin/trace/trace.h"
#include "plugin/wrap/wrap.h"
#include "null_transport.h"

static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static double ns_per_pair(void *send_comm, long pairs)
{
	uint64_t t0 = cpu_ns();
	int done, size;
	void *req;

	for (long i = 0; i < pairs; i++) {
		fl_wrap_isend(send_comm, NULL, 4096, 0, NULL, NULL, &req);
		fl_wrap_test(req, &done, &size);
	}
	return (double)(cpu_ns() - t0) / (double)pairs;
}

#ifndef FABRICLAB_NO_TRACING
/* The check every hook makes first; volatile sink so the loop is not dropped. */
static double ns_per_disabled_check(long calls)
{
	volatile int sink = 0;
	uint64_t t0 = cpu_ns();

	for (long i = 0; i < calls; i++)
		if (fl_trace_on(FL_TP_REQUEST_DONE))
			sink++;
	(void)sink;
	return (double)(cpu_ns() - t0) / (double)calls;
}
#endif

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	long pairs = argc > 1 ? atol(argv[1]) : 200000;
	enum { ROUNDS = 7 };
	double ns[ROUNDS], check_ns[ROUNDS] = { 0 };
	char handle[FL_HANDLE_SIZE];
	void *ctx, *send_comm = NULL;

	fl_wrap_use_transport(&null_transport);
	if (fl_wrap_init(&ctx, 1, -1, NULL) || fl_wrap_connect(ctx, 0, handle, &send_comm) ||
	    !send_comm) {
		fprintf(stderr, "trace_cost: could not set up the null transport\n");
		return 1;
	}
	for (int r = 0; r < ROUNDS; r++) {
		ns[r] = ns_per_pair(send_comm, pairs);
#ifndef FABRICLAB_NO_TRACING
		check_ns[r] = ns_per_disabled_check(50 * pairs);
#endif
	}
	qsort(ns, ROUNDS, sizeof(double), cmp_double);
	qsort(check_ns, ROUNDS, sizeof(double), cmp_double);
	/* One line a script can read: pair ns, then the enable check's ns. */
	printf("trace_cost: isend+test pair %.1f ns; enable check %.3f ns (medians of %d rounds "
	       "of %ld pairs)\n", ns[ROUNDS / 2], check_ns[ROUNDS / 2], ROUNDS, pairs);
	fl_wrap_close_send(send_comm);
	fl_wrap_finalize(ctx);
	return 0;
}
