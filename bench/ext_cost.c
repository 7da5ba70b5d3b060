/*
 * What the ext transport adds per request: isend+test pairs on a null NCCL net
 * plugin (build/inner/libnccl-net-null.so) called directly through its table,
 * through fl_ext_transport alone, and through the wrap layer over ext (all that
 * fabriclab adds when it wraps a plugin). Rounds alternate so noise hits all alike.
 * With EVICT_KB, that much memory is written after each isend and each test (untimed), as
 * NCCL's proxy thread does other work between its calls: the calls then find their code and
 * data out of the caches, an upper bound on a request's cost "all in", not a hot loop's.
 * Usage: ext_cost PATH_TO_NULL_PLUGIN [PAIRS [EVICT_KB]]
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#include "plugin/abi/nccl_abi.h"
#include "plugin/base/clock.h"
#include "plugin/transport/forward.h"
#include "plugin/wrap/wrap.h"
#include "bench_evict.h"

static const struct fl_abi_net_v12 *volatile inner;
static struct bench_evict ev;

/* Evicts; returns the time it took, to be taken off. */
static __attribute__((noinline)) uint64_t evict(void)
{
	uint64_t t0 = fl_clock_mono_ns();

	bench_evict(&ev);
	return fl_clock_mono_ns() - t0;
}

static double direct_ns(void *comm, long pairs)
{
	uint64_t t0 = fl_clock_mono_ns(), off = 0;
	int done, size;
	void *req;

	for (long i = 0; i < pairs; i++) {
		inner->isend(comm, NULL, 4096, 0, NULL, NULL, &req);
		if (ev.len)
			off += evict();
		inner->test(req, &done, &size);
		if (ev.len)
			off += evict();
	}
	return (double)(fl_clock_mono_ns() - t0 - off) / (double)pairs;
}

static const struct fl_transport *volatile ext = &fl_ext_transport;

/* ext's own calls; the request's state is the caller's, as it is the wrap's (forward.h). */
static double ext_ns(void *comm, long pairs)
{
	const struct fl_forward *fwd = ext->forward;
	struct fl_fwd_req state;
	uint64_t t0 = fl_clock_mono_ns(), off = 0;
	int done, size;
	void *req;

	for (long i = 0; i < pairs; i++) {
		fwd->isend(comm, NULL, 4096, 0, NULL, NULL, &state, &req);
		if (ev.len)
			off += evict();
		fwd->test(comm, req, 1, &state, &done, &size);
		if (ev.len)
			off += evict();
	}
	return (double)(fl_clock_mono_ns() - t0 - off) / (double)pairs;
}

static double wrapped_ns(void *comm, long pairs)
{
	uint64_t t0 = fl_clock_mono_ns(), off = 0;
	int done, size;
	void *req;

	for (long i = 0; i < pairs; i++) {
		fl_wrap_isend(comm, NULL, 4096, 0, NULL, NULL, &req);
		if (ev.len)
			off += evict();
		fl_wrap_test(req, &done, &size);
		if (ev.len)
			off += evict();
	}
	return (double)(fl_clock_mono_ns() - t0 - off) / (double)pairs;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static int setup(const char *path, void **inner_comm, void **ext_comm, void **wrap_comm)
{
	static char spec[4200];
	char handle[FL_HANDLE_SIZE] = { 0 };
	struct fl_endpoint self = { .node = "bench", .rank = 0 };
	void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL), *ctx;

	inner = lib ? dlsym(lib, "ncclNetPlugin_v12") : NULL;
	if (!inner)
		return -1;
	snprintf(spec, sizeof(spec), "FABRICLAB_TRANSPORT=ext:%s", path);
	putenv(spec);
	setenv("FABRICLAB_EXT_HELLO", "0", 1); /* setup only; a null plugin moves no hello */
	setenv("FABRICLAB_REPORT", "off", 1);
	if (inner->connect(NULL, 0, handle, inner_comm, NULL) ||
	    fl_wrap_init(&ctx, 1, -1, NULL) || fl_wrap_connect(ctx, 0, handle, wrap_comm) ||
	    !*wrap_comm)
		return -1;
	return ext->connect(0, &self, handle, ext_comm) || !*ext_comm ? -1 : 0;
}

int main(int argc, char **argv)
{
	long pairs = argc > 2 ? atol(argv[2]) : 2000000;
	long evict_kb = argc > 3 ? atol(argv[3]) : 0;
	enum { ROUNDS = 9 };
	double d[ROUNDS], e[ROUNDS], w[ROUNDS];
	void *inner_comm = NULL, *ext_comm = NULL, *wrap_comm = NULL;

	if (bench_evict_init(&ev, evict_kb))
		return 1;
	if (argc < 2 || setup(argv[1], &inner_comm, &ext_comm, &wrap_comm)) {
		fprintf(stderr, "ext_cost: cannot set up over %s\n", argc > 1 ? argv[1] : "(none)");
		return 1;
	}
	for (int r = 0; r < ROUNDS; r++) {
		d[r] = direct_ns(inner_comm, pairs);
		e[r] = ext_ns(ext_comm, pairs);
		w[r] = wrapped_ns(wrap_comm, pairs);
	}
	qsort(d, ROUNDS, sizeof(double), cmp_double);
	qsort(e, ROUNDS, sizeof(double), cmp_double);
	qsort(w, ROUNDS, sizeof(double), cmp_double);
	printf("ext cost: isend+test pair on the null plugin direct %.1f ns (spread %.1f-%.1f), "
	       "through ext %.1f ns (%.1f-%.1f), through wrap+ext %.1f ns (%.1f-%.1f); ext adds "
	       "%.1f ns (goal <= 50 ns), fabriclab in all %.1f ns (median of %d rounds of %ld "
	       "pairs%s)\n", d[ROUNDS / 2], d[0], d[ROUNDS - 1], e[ROUNDS / 2], e[0],
	       e[ROUNDS - 1], w[ROUNDS / 2], w[0], w[ROUNDS - 1], e[ROUNDS / 2] - d[ROUNDS / 2],
	       w[ROUNDS / 2] - d[ROUNDS / 2], ROUNDS, pairs,
	       ev.len ? ", caches evicted after each call" : "");
	return 0;
}
