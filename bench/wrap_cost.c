/*
 * What the wrap layer adds per request: isend+test pairs through fl_wrap_* over
 * a transport that does nothing, against the same transport called directly.
 * Rounds alternate between the two so machine noise hits both alike.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../plugin/clock.h"
#include "../plugin/wrap.h"

static int null_req;

static int n_init(void) { return FL_OK; }
static int n_devices(int *n) { *n = 1; return FL_OK; }
static int n_props(int dev, struct fl_props *p) { (void)dev; memset(p, 0, sizeof(*p)); p->name = "null"; return FL_OK; }
static int n_listen(int dev, const struct fl_endpoint *s, void *h, void **lc) { (void)dev, (void)s, (void)h; *lc = &null_req; return FL_OK; }
static int n_connect(int dev, const struct fl_endpoint *s, void *h, void **sc) { (void)dev, (void)s, (void)h; *sc = &null_req; return FL_OK; }
static int n_accept(void *lc, void **rc) { *rc = lc; return FL_OK; }
static int n_peer(void *c, struct fl_endpoint *p) { (void)c; memset(p, 0, sizeof(*p)); return FL_OK; }
static int n_reg(void *c, void *d, size_t s, int t, void **mh) { (void)c, (void)d, (void)s, (void)t; *mh = NULL; return FL_OK; }
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

/* The direct path is called through a volatile table so the compiler cannot inline it away. */
static const struct fl_transport *volatile direct = &null_transport;

static double direct_ns_per_pair(long pairs)
{
	uint64_t t0 = fl_clock_mono_ns();
	int done, size;
	void *req;

	for (long i = 0; i < pairs; i++) {
		direct->isend(&null_req, NULL, 4096, 0, NULL, &req);
		direct->test(req, &done, &size, NULL);
	}
	return (double)(fl_clock_mono_ns() - t0) / (double)pairs;
}

static double wrapped_ns_per_pair(void *send_comm, long pairs)
{
	uint64_t t0 = fl_clock_mono_ns();
	int done, size;
	void *req;

	for (long i = 0; i < pairs; i++) {
		fl_wrap_isend(send_comm, NULL, 4096, 0, NULL, NULL, &req);
		fl_wrap_test(req, &done, &size);
	}
	return (double)(fl_clock_mono_ns() - t0) / (double)pairs;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	long pairs = argc > 1 ? atol(argv[1]) : 2000000;
	enum { ROUNDS = 9 };
	double direct_ns[ROUNDS], wrapped_ns[ROUNDS];
	char handle[FL_HANDLE_SIZE];
	void *ctx, *send_comm = NULL;

	fl_wrap_use_transport(&null_transport);
	if (fl_wrap_init(&ctx, 1, -1, NULL) || fl_wrap_connect(ctx, 0, handle, &send_comm) ||
	    !send_comm) {
		fprintf(stderr, "wrap_cost: could not set up the null transport\n");
		return 1;
	}
	for (int r = 0; r < ROUNDS; r++) {
		direct_ns[r] = direct_ns_per_pair(pairs);
		wrapped_ns[r] = wrapped_ns_per_pair(send_comm, pairs);
	}
	qsort(direct_ns, ROUNDS, sizeof(double), cmp_double);
	qsort(wrapped_ns, ROUNDS, sizeof(double), cmp_double);
	printf("wrap cost: isend+test pair direct %.1f ns, through wrap %.1f ns, added %.1f ns "
	       "(median of %d rounds of %ld pairs; goal <= 50 ns)\n",
	       direct_ns[ROUNDS / 2], wrapped_ns[ROUNDS / 2],
	       wrapped_ns[ROUNDS / 2] - direct_ns[ROUNDS / 2], ROUNDS, pairs);
	fl_wrap_close_send(send_comm);
	fl_wrap_finalize(ctx);
	return 0;
}
