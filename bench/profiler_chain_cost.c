/*
 * What a profiler costs NCCL's proxy thread, four ways side by side, through
 * ncclProfiler_v6 as 2.30 calls it: (a) no profiler (NCCL makes no call: the
 * event loop alone), (b) fabriclab alone, (c) fabriclab chaining a minimal
 * profiler (FABRICLAB_PROFILER_NEXT, tests/profnext/count_profiler.c), (d) that
 * minimal profiler alone. The events are the player's (tests/player): one
 * rank's ring all-reduce ops over 8 channels, each step started, given its
 * states (send: GPUWait, PeerWait twice, SendWait; receive: RecvWait, FlushWait,
 * GPUWait) and stopped, the ops with their KernelCh events when the mask asks
 * for them, each call made only when NCCL would make it for that mask (player_mask.c).
 * (b) and (c) are two copies of the plugin loaded side by side (each chooses
 * its next at its first init); rounds rotate the order so load hits all alike.
 * From the medians: ns per callback, ns per ProxyStep (a step's callbacks and
 * its share of its op's) and the share of one proxy thread that one 400 Gb/s
 * NIC's steps take, both directions on it, 1 MiB per step (Simple all-reduce:
 * 2 slices of 512 KiB, 2.30.7 src/include/collectives.h:19-20) and 128 KiB
 * (point to point, src/init.cc:818).
 * Usage: profiler_chain_cost FABRICLAB_SO MINIMAL_SO [ROUNDS [ONLY]]
 * ONLY (a, b, c or d): that mode alone, one pass (bench/profiler_chain_count.sh counts its
 * instructions under callgrind, whatever the machine's load).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "plugin/abi/profiler_abi.h"
#include "plugin/base/clock.h"
#include "tests/player/player_internal.h"

#define MODES 4
#define MAX_ROUNDS 31
#define OPS 64
#define PASSES 10 /* the stream played this many times a round: rounds of ~10 ms, not ~1 */

struct mode {
	const char *name, *lib;
	void *ctx;
	int mask;
	uint64_t calls;           /* callbacks made in one round */
	double ns[MAX_ROUNDS];    /* one round's time */
};

struct stream {
	struct player_scenario s;
	struct player_thread th;
	uint64_t steps;
	void *op[PLAYER_MAX_LINKS][OPS], *step[PLAYER_MAX_LINKS][OPS][16], *kch[PLAYER_MAX_LINKS][OPS];
};

static uint64_t calls;

static int emits(const struct mode *m, uint64_t type)
{
	return m->lib && player_emits(m->mask, type);
}

static void stop_held(const struct player_driver *d, void **h)
{
	if (*h) {
		d->stop(*h);
		calls++;
	}
	*h = NULL;
}

static void kernel(const struct player_driver *d, const struct mode *m, struct stream *st,
		   const struct player_event *e)
{
	struct player_descr pd = { .type = FL_PROF_EV_KERNEL_CH, .p_timer = e->t };
	void **h = &st->kch[e->link][e->op];

	if (e->kind == EV_KCH_START) {
		if (emits(m, FL_PROF_EV_KERNEL_CH)) {
			d->start(m->ctx, h, &pd);
			calls++;
		}
		return;
	}
	if (*h) {
		d->record_arg(*h, FL_PROF_ST_KERNEL_CH_STOP, e->t);
		calls++;
	}
	stop_held(d, h);
}

static void one_event(const struct player_driver *d, const struct mode *m, struct stream *st,
		      const struct player_event *e)
{
	const struct player_link *l = &st->th.links[e->link];
	void **op = &st->op[e->link][e->op], **step = &st->step[e->link][e->op][e->step];

	switch (e->kind) {
	case EV_START_OP:
		if (emits(m, FL_PROF_EV_PROXY_OP) && (calls++, 1))
			d->start_op(m->ctx, op, NULL, l, st->s.nsteps, (int)st->s.chunk);
		break;
	case EV_START_STEP:
		if (emits(m, FL_PROF_EV_PROXY_STEP) && (calls++, 1))
			d->start_step(m->ctx, step, *op, l->rank, e->step);
		break;
	case EV_STATE:
		if (*op && *step && (calls++, 1))
			d->record(*step, e->state, e->size, e->state == 9 || e->state == 11);
		break;
	case EV_STOP_STEP:
		stop_held(d, step);
		break;
	case EV_STOP_OP:
		stop_held(d, op);
		break;
	default:
		kernel(d, m, st, e);
	}
}

/* One round through one mode's table: the time it took. */
static double play(struct mode *m, struct stream *st)
{
	const struct player_driver *d = player_driver(6);
	struct player_scenario s = st->s;
	uint64_t t0;

	s.profiler_lib = m->lib;
	if (m->lib && player_load(&s))
		exit(1);
	calls = 0;
	t0 = fl_clock_mono_ns();
	for (int p = 0; p < PASSES; p++)
		for (size_t i = 0; i < st->th.nev; i++)
			one_event(d, m, st, &st->th.ev[i]);
	t0 = fl_clock_mono_ns() - t0;
	m->calls = calls / PASSES;
	return (double)t0 / PASSES;
}

/* One pass of one mode, in a function of its own for callgrind's inclusive count. */
__attribute__((noinline)) static void play_once(struct mode *m, struct stream *st)
{
	const struct player_driver *d = player_driver(6);

	calls = 0;
	for (size_t i = 0; i < st->th.nev; i++)
		one_event(d, m, st, &st->th.ev[i]);
	m->calls = calls;
}

/* A copy of the plugin under a name of its own, so a second one loads with its own state. */
static char *copy_of(const char *so, const char *tag)
{
	static char paths[2][64];
	char *path = paths[tag[0] == 'c'];
	char cmd[1024];
	int fd;

	snprintf(path, 64, "/tmp/fl-chain-cost-%s.XXXXXX", tag);
	fd = mkstemp(path);
	if (fd < 0)
		return NULL;
	close(fd);
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", so, path);
	return system(cmd) ? NULL : path;
}

static int init_mode(struct mode *m, const struct player_scenario *base, const char *next)
{
	struct player_scenario s = *base;
	const struct player_driver *d = player_driver(6);

	if (!m->lib)
		return 0;
	if (next)
		setenv("FABRICLAB_PROFILER_NEXT", next, 1);
	else
		unsetenv("FABRICLAB_PROFILER_NEXT");
	s.profiler_lib = m->lib;
	if (player_load(&s) || d->init_mask(&m->ctx, &s, s.comm_hash, 0, &m->mask))
		return -1;
	unsetenv("FABRICLAB_PROFILER_NEXT");
	return d->proxy_ctrl(m->ctx); /* this thread's own context, as a proxy thread's */
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The q-quantile (0.5: the median) of n values, by rank. */
static double quantile(const double *v, int n, double q)
{
	double tmp[MAX_ROUNDS];

	memcpy(tmp, v, sizeof(double) * (size_t)n);
	qsort(tmp, (size_t)n, sizeof(double), cmp_double);
	return tmp[(int)(q * (n - 1) + 0.5)];
}

static double median(const double *v, int n)
{
	return quantile(v, n, 0.5);
}

static void report(struct mode *modes, int rounds, const struct stream *st)
{
	double base = median(modes[0].ns, rounds), per_step[MODES];
	/* 400 Gb/s one way is 50e9 B/s; both directions' steps on the one proxy thread */
	const double steps_1m = 2 * 50e9 / (1 << 20), steps_128k = 2 * 50e9 / (128 << 10);

	printf("%-34s %9s %12s %10s %9s %12s %12s\n", "mode", "callbacks", "ns/callback",
	       "ns/step", "IQR", "400G 1MiB", "400G 128KiB");
	for (int i = 0; i < MODES; i++) {
		double med = median(modes[i].ns, rounds), added = i ? med - base : med;
		double iqr = quantile(modes[i].ns, rounds, 0.75) - quantile(modes[i].ns, rounds, 0.25);

		per_step[i] = added / (double)st->steps;
		printf("%-34s %9llu %12.1f %10.1f %8.0f%% %11.2f%% %11.2f%%\n", modes[i].name,
		       (unsigned long long)modes[i].calls,
		       modes[i].calls ? added / (double)modes[i].calls : 0.0, per_step[i],
		       100.0 * iqr / med, i ? per_step[i] * steps_1m / 1e7 : 0.0,
		       i ? per_step[i] * steps_128k / 1e7 : 0.0);
	}
	printf("(a) is the loop alone, in ns per step; the others are what they add to it; IQR: "
	       "the rounds' interquartile range over their median. Shares: of one proxy thread's "
	       "second at one 400 Gb/s NIC's step rate, both ways.\n");
	printf("ratios per step: (c)/(d) %.2f, (c)/(b) %.2f, (c)/((b)+(d)) %.2f; chaining adds "
	       "%.1f ns per step over the two alone\n", per_step[2] / per_step[3],
	       per_step[2] / per_step[1], per_step[2] / (per_step[1] + per_step[3]),
	       per_step[2] - per_step[1] - per_step[3]);
}

int main(int argc, char **argv)
{
	int rounds = argc > 3 ? atoi(argv[3]) : 15;
	int only = argc > 4 ? argv[4][0] - 'a' : -1;
	struct stream *st = calloc(1, sizeof(*st));
	char *b = argc > 2 ? copy_of(argv[1], "b") : NULL, *c = b ? copy_of(argv[1], "c") : NULL;
	struct mode modes[MODES] = {
		{ "(a) no profiler", NULL, NULL, 0, 0, { 0 } },
		{ "(b) fabriclab alone", b, NULL, 0, 0, { 0 } },
		{ "(c) fabriclab -> minimal profiler", c, NULL, 0, 0, { 0 } },
		{ "(d) minimal profiler alone", argc > 2 ? argv[2] : NULL, NULL, 0, 0, { 0 } },
	};

	if (!st || !c || rounds < 1 || rounds > MAX_ROUNDS) {
		fprintf(stderr, "usage: %s FABRICLAB_SO MINIMAL_SO [ROUNDS <= %d]\n", argv[0],
			MAX_ROUNDS);
		return 2;
	}
	fl_clock_init();
	player_defaults(&st->s, 6, 2);
	st->s.nchannels = 8;
	st->s.ops = OPS;
	if (player_generate(&st->s, &st->th, 1000000000ULL))
		return 1;
	for (int l = 0; l < st->th.nlinks; l++)
		st->steps += (uint64_t)st->s.ops * (uint64_t)st->s.nsteps;
	if (init_mode(&modes[1], &st->s, NULL) || init_mode(&modes[2], &st->s, argv[2]) ||
	    init_mode(&modes[3], &st->s, NULL))
		return 1;
	if (only >= 0 && only < MODES) {
		play(&modes[only], st); /* warm-up: pools and links grown */
		play_once(&modes[only], st);
		printf("mode %c: %llu callbacks, %llu steps\n", 'a' + only,
		       (unsigned long long)modes[only].calls, (unsigned long long)st->steps);
		return 0;
	}
	for (int r = -1; r < rounds; r++) /* a warm-up round, then the timed ones */
		for (int k = 0; k < MODES; k++) {
			int i = (k + (r < 0 ? 0 : r)) % MODES;
			double t = play(&modes[i], st);

			if (r >= 0)
				modes[i].ns[r] = t;
		}
	printf("ns per callback and per ProxyStep, median of %d rounds of %d x %llu steps (one rank, "
	       "%d channels, %d ops a link, 8 steps an op), through ncclProfiler_v6\n", rounds,
	       PASSES, (unsigned long long)st->steps, st->th.nlinks / 2, st->s.ops);
	report(modes, rounds, st);
	unlink(b);
	unlink(c);
	return 0;
}
