/*
 * What the wrap layer adds per request: isend+test pairs through fl_wrap_* over
 * a transport that does nothing, against the same transport called directly.
 * Rounds alternate between the two so machine noise hits both alike.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugin/base/clock.h"
#include "plugin/wrap/wrap.h"
#include "null_transport.h"

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
