/*
 * Throttle accuracy: one socket connection over loopback paced by
 * `throttle:rate=P%` of FABRICLAB_LINK_RATE, P from 10 to 90, streamed for a
 * fixed time with 8 messages in flight, three times per level; prints the
 * achieved rate (payload bytes received / time until the last send and receive
 * completed) against the target: the
 * median of the three, and the lowest (a descheduled process falls short, it
 * never overshoots). Goal: the median within +-5%.
 * FABRICLAB_TRANSPORT=ext:<plugin> runs the same over the ext transport wrapping that plugin.
 * Usage: fault_rate [LINK_RATE [SECONDS_PER_RUN]]   (default 800mbit, 0.5)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugin/base/clock.h"
#include "plugin/base/error.h"
#include "plugin/fault/fault.h"
#include "plugin/transport/forward.h"
#include "plugin/transport/transport.h"

#define DEPTH 8
#define RUNS 3
#define MSG (512u << 10)

static const struct fl_transport *tp = &fl_socket_transport;
static const struct fl_endpoint here = { "bench-a", "lo", 0, 0, 0 };
static const struct fl_endpoint there = { "bench-b", "lo", 0, 1, 0 };

struct pair {
	void *listen, *send, *recv;
	struct fl_fault_conn *fault;
	unsigned char handle[FL_HANDLE_SIZE];
};

static void die(const char *what)
{
	fprintf(stderr, "fault_rate: %s: %s\n", what, fl_error_text());
	exit(1);
}

static void open_pair(struct pair *p)
{
	struct fl_endpoint peer;

	memset(p, 0, sizeof(*p));
	if (tp->listen(0, &there, p->handle, &p->listen))
		die("listen");
	while (!p->send || !p->recv) {
		if (!p->send && tp->connect(0, &here, p->handle, &p->send))
			die("connect");
		if (!p->recv && tp->accept(p->listen, &p->recv))
			die("accept");
	}
	if (tp->peer(p->send, &peer) || fl_fault_attach(tp, p->send, true, 1, &here, &peer,
							 &p->fault))
		die("attach");
}

static void close_pair(struct pair *p)
{
	tp->close_send(p->send);
	tp->close_recv(p->recv);
	tp->close_listen(p->listen);
	fl_fault_release(p->fault);
}

/* One connection's requests in flight, as NCCL's proxy thread keeps them. */
struct flow {
	struct pair *p;
	void *sreq[DEPTH], *rreq[DEPTH];
	struct fl_fwd_req sfwd[DEPTH], rfwd[DEPTH]; /* a forwarding transport's (ext) state */
	int owed; /* receives posted whose send has not gone yet (a transport may say "not now") */
	uint64_t bytes, t1;
};

/* Through the transport's own calls, or its forward data path (ext), as the wrap would. */
static int post_recv(struct flow *f, int i, void *buf, size_t *size, int *tag)
{
	const struct fl_forward *fwd = tp->forward;

	f->rreq[i] = NULL;
	if (fwd && fwd->irecv)
		return fwd->irecv(f->p->recv, 1, &buf, size, tag, NULL, NULL, &f->rfwd[i],
				  &f->rreq[i]);
	return tp->irecv(f->p->recv, 1, &buf, size, tag, NULL, &f->rreq[i]);
}

static int post_send(struct flow *f, int i, void *buf, int tag)
{
	const struct fl_forward *fwd = tp->forward;

	if (fwd && fwd->isend)
		return fwd->isend(f->p->send, buf, MSG, tag, NULL, NULL, &f->sfwd[i],
				  &f->sreq[i]);
	return tp->isend(f->p->send, buf, MSG, tag, NULL, &f->sreq[i]);
}

static int test_req(void *comm, void *req, struct fl_fwd_req *state, int *done, int *sizes)
{
	const struct fl_forward *fwd = tp->forward;

	if (fwd && fwd->test)
		return fwd->test(comm, req, 1, state, done, sizes);
	return tp->test(req, done, sizes, NULL);
}

/* Posts and tests one round of a flow's slots; returns how many are still open. */
static int drive(struct flow *f, unsigned char *bufs, uint64_t now, uint64_t stop)
{
	int open = 0;

	for (int i = 0; i < DEPTH; i++) {
		int done = 0, sizes[1] = { 0 }, tag = 7;
		void *buf = bufs + (size_t)i * MSG;
		size_t size = MSG;

		if (!f->rreq[i] && now < stop) {
			if (post_recv(f, i, buf, &size, &tag))
				die("irecv");
			f->owed += f->rreq[i] != NULL;
		}
		if (!f->sreq[i] && f->owed) {
			if (post_send(f, i, buf, tag))
				die("isend");
			f->owed -= f->sreq[i] != NULL;
		}
		if (f->sreq[i] && test_req(f->p->send, f->sreq[i], &f->sfwd[i], &done, sizes))
			die("test send");
		if (done) {
			f->sreq[i] = NULL;
			/* over ext, a paced send completes after its receive */
			f->t1 = fl_clock_ns();
		}
		done = 0;
		if (f->rreq[i] && test_req(f->p->recv, f->rreq[i], &f->rfwd[i], &done, sizes))
			die("test recv");
		if (done) {
			f->rreq[i] = NULL;
			f->bytes += (uint64_t)sizes[0];
			f->t1 = fl_clock_ns();
		}
		open += f->sreq[i] || f->rreq[i];
	}
	return open;
}

/* Streams n connections at once for `seconds`; rates[i] = payload bytes/s received on each. */
static void stream_n(struct pair *pairs, int n, unsigned char *bufs, double seconds, double *rates)
{
	struct flow flows[2] = { { 0 } };
	uint64_t t0 = fl_clock_ns(), stop = t0 + (uint64_t)(seconds * 1e9);

	for (int k = 0; k < n; k++) {
		flows[k].p = &pairs[k];
		flows[k].t1 = t0;
	}
	for (;;) {
		uint64_t now = fl_clock_ns();
		int open = 0;

		for (int k = 0; k < n; k++)
			open += drive(&flows[k], bufs + (size_t)k * DEPTH * MSG, now, stop);
		if (now >= stop && !open)
			break;
	}
	for (int k = 0; k < n; k++)
		rates[k] = (double)flows[k].bytes / ((double)(flows[k].t1 - t0) / 1e9);
}

static double stream(struct pair *p, unsigned char *bufs, double seconds)
{
	double rate;

	stream_n(p, 1, bufs, seconds, &rate);
	return rate;
}

/* A device-wide rule: two connections of one device share its bucket. */
static void device_share(unsigned char *bufs, double seconds)
{
	struct pair pairs[2];
	double rates[2], want;

	setenv(FL_FAULT_ENV, "throttle:dev=lo,rate=50%,dir=tx", 1);
	fl_fault_reset_for_tests();
	if (fl_fault_init(tp))
		die("fault init");
	want = (double)fl_fault_line_rate(tp, 0) / 2;
	open_pair(&pairs[0]);
	open_pair(&pairs[1]);
	stream_n(pairs, 2, bufs, seconds * 3, rates);
	close_pair(&pairs[0]);
	close_pair(&pairs[1]);
	printf("device-wide 50%%, two connections: %.2f + %.2f = %.2f MB/s of %.2f (ratio %.4f)\n",
	       rates[0] / 1e6, rates[1] / 1e6, (rates[0] + rates[1]) / 1e6, want / 1e6,
	       (rates[0] + rates[1]) / want);
}

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	const char *link = argc > 1 ? argv[1] : "800mbit";
	double seconds = argc > 2 ? atof(argv[2]) : 0.5, worst = 0;
	unsigned char *bufs = calloc(2 * DEPTH, MSG);
	int ndev = 0;

	setenv("FABRICLAB_SOCKET_IFNAME", getenv("FABRICLAB_SOCKET_IFNAME") ?: "lo", 1);
	setenv(FL_LINK_RATE_ENV, link, 1);
	fl_clock_init();
	if (getenv("FABRICLAB_TRANSPORT") && !strncmp(getenv("FABRICLAB_TRANSPORT"), "ext:", 4))
		tp = &fl_ext_transport;
	if (!bufs || tp->init() || tp->devices(&ndev) || ndev < 1)
		die(tp->name);
	printf("%s transport\n", tp->name);
	printf("link rate %s; %.1f s per level, %u KiB messages, %d in flight\n", link, seconds,
	       MSG >> 10, DEPTH);
	printf("%8s %12s %14s %8s %10s\n", "target", "target MB/s", "median MB/s", "ratio",
	       "lowest");
	for (int pct = 10; pct <= 90; pct += 10) {
		char rule[64];
		struct pair p;
		double got[RUNS], want, med;

		snprintf(rule, sizeof(rule), "throttle:rate=%d%%,dir=tx", pct);
		setenv(FL_FAULT_ENV, rule, 1);
		fl_fault_reset_for_tests();
		if (fl_fault_init(tp))
			die("fault init");
		want = (double)fl_fault_line_rate(tp, 0) * pct / 100;
		for (int run = 0; run < RUNS; run++) {
			open_pair(&p);
			got[run] = stream(&p, bufs, seconds) / want;
			close_pair(&p);
		}
		qsort(got, RUNS, sizeof(got[0]), by_value);
		med = got[RUNS / 2];
		printf("%7d%% %12.2f %14.2f %8.4f %10.4f\n", pct, want / 1e6, med * want / 1e6, med,
		       got[0]);
		if (med - 1 > worst || 1 - med > worst)
			worst = med > 1 ? med - 1 : 1 - med;
	}
	printf("worst deviation of a median %.1f%% (goal: within 5%%)\n", worst * 100);
	device_share(bufs, seconds);
	free(bufs);
	return 0;
}
