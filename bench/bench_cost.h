/*
 * What one benchmark turn cost a process: CPU time of all its threads (the
 * task-clock `perf stat` reports), syscalls entered by the calling thread
 * (the raw_syscalls:sys_enter tracepoint, where the kernel lets us count it)
 * and voluntary context switches (sleeps). Printed as min / median / max over
 * rounds, and as ratios paired round by round. Header-only: each benchmark is
 * one .c file.
 */
#ifndef FL_BENCH_COST_H
#define FL_BENCH_COST_H

#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

struct bench_cost {
	uint64_t cpu_ns;
	int64_t syscalls; /* -1: not countable here */
	int64_t sleeps;
};

struct bench_sample {
	double gbs;          /* 10^9 bytes per second of wall time */
	double cpu_s_per_gb; /* both processes */
	double send_sys_per_msg, recv_sys_per_msg; /* negative: not counted */
	double sleeps_per_msg; /* both processes */
};

static inline void bench_die(const char *what)
{
	perror(what);
	exit(1);
}

/* A counter of the syscalls this thread enters, or -1 when tracepoints are closed to us. */
static inline int bench_syscall_counter_open(void)
{
	static const char *const ids[] = { "/sys/kernel/tracing/events/raw_syscalls/sys_enter/id",
					   "/sys/kernel/debug/tracing/events/raw_syscalls/sys_enter/id" };
	struct perf_event_attr a;
	unsigned long long id = 0;

	for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]) && !id; i++) {
		FILE *f = fopen(ids[i], "r");

		if (f && fscanf(f, "%llu", &id) != 1)
			id = 0;
		if (f)
			fclose(f);
	}
	if (!id)
		return -1;
	memset(&a, 0, sizeof(a));
	a.type = PERF_TYPE_TRACEPOINT;
	a.size = sizeof(a);
	a.config = id;
	a.sample_period = 0;
	return (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
}

static inline int64_t bench_syscalls(int counter)
{
	uint64_t v;

	return counter >= 0 && read(counter, &v, sizeof(v)) == (ssize_t)sizeof(v) ? (int64_t)v : -1;
}

static inline uint64_t bench_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static inline int64_t bench_sleeps(void)
{
	struct rusage ru;

	return getrusage(RUSAGE_SELF, &ru) ? 0 : ru.ru_nvcsw;
}

/* The counter is read last on the way in and first on the way out: only the turn counts. */
static inline void bench_cost_start(struct bench_cost *c, int counter)
{
	c->sleeps = bench_sleeps();
	c->cpu_ns = bench_cpu_ns();
	c->syscalls = bench_syscalls(counter);
}

static inline void bench_cost_stop(struct bench_cost *c, int counter)
{
	int64_t sys = bench_syscalls(counter);

	/* the closing read is itself a syscall the turn did not need */
	c->syscalls = c->syscalls < 0 || sys < 0 ? -1 : sys - c->syscalls - 1;
	c->cpu_ns = bench_cpu_ns() - c->cpu_ns;
	c->sleeps = bench_sleeps() - c->sleeps;
}

static inline void bench_sample_fill(struct bench_sample *s, const struct bench_cost *send,
				     const struct bench_cost *recv, size_t bytes, size_t msgs)
{
	s->cpu_s_per_gb = (double)(send->cpu_ns + recv->cpu_ns) / (double)bytes;
	s->send_sys_per_msg = send->syscalls < 0 ? -1 : (double)send->syscalls / (double)msgs;
	s->recv_sys_per_msg = recv->syscalls < 0 ? -1 : (double)recv->syscalls / (double)msgs;
	s->sleeps_per_msg = (double)(send->sleeps + recv->sleeps) / (double)msgs;
}

static int bench_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

struct bench_spread {
	double min, median, max;
};

static inline struct bench_spread bench_spread_of(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(double), bench_cmp_double);
	return (struct bench_spread){ v[0], n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2,
				      v[n - 1] };
}

enum bench_field { BENCH_GBS, BENCH_CPU, BENCH_SEND_SYS, BENCH_RECV_SYS, BENCH_SLEEPS };

static inline double bench_field_of(const struct bench_sample *s, enum bench_field f)
{
	switch (f) {
	case BENCH_GBS:
		return s->gbs;
	case BENCH_CPU:
		return s->cpu_s_per_gb;
	case BENCH_SEND_SYS:
		return s->send_sys_per_msg;
	case BENCH_RECV_SYS:
		return s->recv_sys_per_msg;
	default:
		return s->sleeps_per_msg;
	}
}

static inline struct bench_spread bench_field_spread(const struct bench_sample *s, int n,
						     enum bench_field f)
{
	double v[64];

	for (int i = 0; i < n; i++)
		v[i] = bench_field_of(&s[i], f);
	return bench_spread_of(v, n);
}

static inline void bench_print_samples(const char *label, const struct bench_sample *s, int n)
{
	struct bench_spread g = bench_field_spread(s, n, BENCH_GBS);
	struct bench_spread c = bench_field_spread(s, n, BENCH_CPU);
	struct bench_spread ss = bench_field_spread(s, n, BENCH_SEND_SYS);
	struct bench_spread rs = bench_field_spread(s, n, BENCH_RECV_SYS);
	struct bench_spread sl = bench_field_spread(s, n, BENCH_SLEEPS);

	printf("  %-18s GB/s %6.2f / %6.2f / %6.2f   CPU s/GB %.3f / %.3f / %.3f\n", label, g.min,
	       g.median, g.max, c.min, c.median, c.max);
	if (ss.median >= 0 && rs.median >= 0)
		printf("  %-18s per message, medians: syscalls send %.1f recv %.1f, sleeps %.2f\n",
		       "", ss.median, rs.median, sl.median);
	else
		printf("  %-18s per message, median: sleeps %.2f (syscalls not countable here)\n",
		       "", sl.median);
}

/* Ratios of a's figures to b's, paired within each round (both saw the same machine). */
static inline void bench_print_ratio(const char *a_label, const struct bench_sample *a,
				     const char *b_label, const struct bench_sample *b, int n,
				     double goal)
{
	double speed[64], cpu[64];
	struct bench_spread sp, cp;

	for (int i = 0; i < n; i++) {
		speed[i] = a[i].gbs / b[i].gbs;
		cpu[i] = a[i].cpu_s_per_gb / b[i].cpu_s_per_gb;
	}
	sp = bench_spread_of(speed, n);
	cp = bench_spread_of(cpu, n);
	printf("  %s / %s: GB/s ratio %.3f / %.3f / %.3f (goal >= %.2f), CPU s/GB ratio %.3f / "
	       "%.3f / %.3f (goal <= 1.00)\n",
	       a_label, b_label, sp.min, sp.median, sp.max, goal, cp.min, cp.median, cp.max);
}

#endif
