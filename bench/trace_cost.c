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

#include "../plugin/clock.h"
#include "../plugin/trace.h"
#include "../plugin/wrap.h"

static int null_req;

static int n_init(void) { return FL_OK; }
static int n_devices(int *n) { *n = 1; return FL_OK; }
static int n_props(int dev, struct fl_props *p)
{
	(void)dev;
	memset(p, 0, sizeof(*p));
	p->name = "null";
	return FL_OK;
}

static int n_listen(int dev, const struct fl_endpoint *s, void *h, void **lc)
{
	(void)dev, (void)s, (void)h;
	*lc = &null_req;
	return FL_OK;
}

static int n_connect(int dev, const struct fl_endpoint *s, void *h, void **sc)
{
	(void)dev, (void)s, (void)h;
	*sc = &null_req;
	return FL_OK;
}

static int n_accept(void *lc, void **rc) { *rc = lc; return FL_OK; }
static int n_peer(void *c, struct fl_endpoint *p)
{
	(void)c;
	memset(p, 0, sizeof(*p));
	return FL_OK;
}

static int n_reg(void *c, void *d, size_t s, int t, void **mh)
{
	(void)c, (void)d, (void)s, (void)t;
	*mh = NULL;
	return FL_OK;
}

static int n_dereg(void *c, void *mh) { (void)c, (void)mh; return FL_OK; }
static int n_close(void *c) { (void)c; return FL_OK; }

static int n_isend(void *sc, void *data, size_t size, int tag, void *mh, void **req)
{
	(void)sc, (void)data, (void)tag, (void)mh;
	null_req = (int)size;
	*req = &null_req;
	return FL_OK;
}

static int n_irecv(void *rc, int n, void **d, size_t *s, int *t, void **mh, void **req)
{
	(void)rc, (void)n, (void)d, (void)s, (void)t, (void)mh;
	*req = &null_req;
	return FL_OK;
}

static int n_iflush(void *rc, int n, void **d, int *s, void **mh, void **req)
{
	(void)rc, (void)n, (void)d, (void)s, (void)mh;
	*req = &null_req;
	return FL_OK;
}

static int n_test(void *req, int *done, int *sizes, struct fl_xfer_times *t)
{
	(void)t;
	*done = 1;
	sizes[0] = *(int *)req;
	return FL_OK;
}

static const struct fl_transport null_transport = {
	.name = "null", .init = n_init, .devices = n_devices, .get_properties = n_props,
	.listen = n_listen, .connect = n_connect, .accept = n_accept, .peer = n_peer,
	.reg_mr = n_reg, .dereg_mr = n_dereg, .isend = n_isend, .irecv = n_irecv,
	.iflush = n_iflush, .test = n_test, .close_send = n_close, .close_recv = n_close,
	.close_listen = n_close,
};

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
