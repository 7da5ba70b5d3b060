/*
 * What the profiler role costs NCCL's proxy thread per callback, through the
 * exported ncclProfiler_v5 table as NCCL calls it: one send ProxyOp of 8 steps,
 * each step started, given its three send states (SendGPUWait, SendPeerWait,
 * SendWait with its bytes) and stopped; the op stopped. Per callback kind,
 * against the same calls into a table that does nothing (what any profiler
 * plugin costs at least), rounds alternating so noise hits both alike.
 * With EVICT_KB, that much memory is written between the phases of an op (untimed), as NCCL's
 * proxy thread does other work between the callbacks: the callbacks then find their lines out
 * of the caches, an upper bound on what they cost "all in" rather than in a hot loop.
 * Usage: profiler_cost [OPS_PER_ROUND [EVICT_KB]]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "plugin/abi/profiler_abi.h"
#include "plugin/entry/profiler_tables.h"
#include "plugin/base/clock.h"
#include "plugin/stats/hop.h"
#include "bench_evict.h"

#define STEPS 8
#define ROUNDS 7

static int null_init(void **ctx, uint64_t id, int *mask, const char *name, int nnodes,
		     int nranks, int rank, fl_abi_logger_fn log)
{
	(void)id, (void)name, (void)nnodes, (void)nranks, (void)rank, (void)log;
	*ctx = ctx;
	*mask = 0;
	return 0;
}

static int null_start(void *ctx, void **h, struct fl_prof_abi_descr_v5 *d)
{
	*h = d->type == FL_PROF_EV_PROXY_OP ? ctx : NULL;
	return 0;
}

static int null_stop(void *h)
{
	(void)h;
	return 0;
}

static int null_record(void *h, int state, fl_prof_abi_state_args_v5 *a)
{
	(void)h, (void)state, (void)a;
	return 0;
}

static int null_finalize(void *ctx)
{
	(void)ctx;
	return 0;
}

static const struct fl_abi_profiler_v5 null_table = {
	"null", null_init, null_start, null_stop, null_record, null_finalize,
};

struct costs {
	double start, record, stop; /* ns per callback */
};

static struct bench_evict ev;

/* The table is read through a volatile pointer so no call is inlined away. */
static void play(const struct fl_abi_profiler_v5 *volatile t, void *ctx, long ops,
		 struct costs *c)
{
	struct fl_prof_abi_descr_v5 op_d, step_d;
	fl_prof_abi_state_args_v5 args = { .proxy_step = { 512 * 1024 } };
	uint64_t t_start = 0, t_record = 0, t_stop = 0, t0;
	void *op, *steps[STEPS];

	memset(&op_d, 0, sizeof(op_d));
	op_d.type = FL_PROF_EV_PROXY_OP;
	op_d.proxy_op.pid = getpid();
	op_d.proxy_op.peer = 1;
	op_d.proxy_op.nsteps = STEPS;
	op_d.proxy_op.is_send = 1;
	memset(&step_d, 0, sizeof(step_d));
	step_d.type = FL_PROF_EV_PROXY_STEP;
	for (long i = 0; i < ops; i++) {
		t0 = fl_clock_ns();
		t->start_event(ctx, &op, &op_d);
		step_d.parent_obj = op;
		for (int s = 0; s < STEPS; s++) {
			step_d.proxy_step.step = s;
			t->start_event(ctx, &steps[s], &step_d);
		}
		t_start += fl_clock_ns() - t0;
		bench_evict(&ev);
		t0 = fl_clock_ns();
		for (int s = 0; s < STEPS; s++) {
			t->record_event_state(steps[s], FL_PROF_ST_STEP_SEND_GPU_WAIT, &args);
			t->record_event_state(steps[s], FL_PROF_ST_STEP_SEND_PEER_WAIT_V4, &args);
			t->record_event_state(steps[s], FL_PROF_ST_STEP_SEND_WAIT, &args);
		}
		t_record += fl_clock_ns() - t0;
		bench_evict(&ev);
		t0 = fl_clock_ns();
		for (int s = 0; s < STEPS; s++)
			t->stop_event(steps[s]);
		t->stop_event(op);
		t_stop += fl_clock_ns() - t0;
		bench_evict(&ev);
		/* The report thread's work (off in benchmarks), outside the timed calls. */
		if (i % 64 == 63)
			fl_hops_drain();
	}
	c->start = (double)t_start / (double)(ops * (STEPS + 1));
	c->record = (double)t_record / (double)(ops * STEPS * 3);
	c->stop = (double)t_stop / (double)(ops * (STEPS + 1));
}

/* One timestamp, the least each start, record and stop must take. */
static double clock_ns(long n)
{
	uint64_t t0 = fl_clock_mono_ns(), sink = 0;

	for (long i = 0; i < n; i++)
		sink += fl_clock_ns();
	return (double)(fl_clock_mono_ns() - t0 + (sink & 1)) / (double)n;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return v[n / 2];
}

int main(int argc, char **argv)
{
	long ops = argc > 1 ? atol(argv[1]) : 20000;
	long evict_kb = argc > 2 ? atol(argv[2]) : 0;
	double ours[3][ROUNDS], none[3][ROUNDS], added[3];
	void *ctx = NULL, *null_ctx = NULL;
	int mask = 0;

	fl_clock_init();
	if (bench_evict_init(&ev, evict_kb))
		return 1;
	if (ops <= 0 || ncclProfiler_v5.init(&ctx, 0x42, &mask, "bench", 2, 2, 0, NULL) || !ctx)
		return 1;
	null_table.init(&null_ctx, 0x42, &mask, "bench", 2, 2, 0, NULL);
	for (int r = 0; r < ROUNDS; r++) {
		struct costs a, b;

		play(&ncclProfiler_v5, ctx, ops, &a);
		play(&null_table, null_ctx, ops, &b);
		ours[0][r] = a.start, ours[1][r] = a.record, ours[2][r] = a.stop;
		none[0][r] = b.start, none[1][r] = b.record, none[2][r] = b.stop;
	}
	printf("ns per callback, median of %d rounds of %ld ops x %d steps (send states)%s\n",
	       ROUNDS, ops, STEPS, ev.len ? ", caches evicted between the phases" : "");
	printf("%-8s %10s %10s %10s\n", "", "fabriclab", "no-op", "added");
	for (int k = 0; k < 3; k++) {
		static const char *const names[] = { "start", "record", "stop" };
		double a = median(ours[k], ROUNDS), b = median(none[k], ROUNDS);

		printf("%-8s %10.1f %10.1f %10.1f\n", names[k], a, b, a - b);
		added[k] = a - b;
	}
	/* an op's events: STEPS + 1 starts and stops, 3 states a step */
	printf("added per event over an op (%d starts, %d records, %d stops): %.1f ns\n",
	       STEPS + 1, 3 * STEPS, STEPS + 1,
	       ((STEPS + 1) * (added[0] + added[2]) + 3 * STEPS * added[1]) /
		       (double)(2 * (STEPS + 1) + 3 * STEPS));
	printf("(one fl_clock_ns timestamp alone: %.1f ns on this machine now)\n",
	       clock_ns(ops * STEPS));
	ncclProfiler_v5.finalize(ctx);
	return 0;
}
