/*
 * One rank of `fabriclab bench`: for each size, warm up, check once into a
 * poisoned buffer, time the iterations, and send (mean time, wrong count) to
 * rank 0, which prints the nccl-tests-style line.
 */
#include "bench.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "shim/shim.h"
#include "shim/shim_env.h"

struct bench_run {
	const struct bench_opts *o;
	struct shim_world w;
	void *send_mem; /* in the world's memory: host, or the GPU with --mem cuda */
	void *recv_mem;
	void *host;     /* with GPU buffers: what is filled, poisoned and checked here */
	size_t cap;
	struct shim_buf send;
	struct shim_buf recv;
	size_t wrong;
	double busbw_sum;
	int lines;
};

struct rank_id {
	int32_t pid;
	char node[FL_NODE_NAME_LEN];
};

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static const char *op_name(enum bench_op op)
{
	return op == BENCH_ALL_REDUCE ? "all_reduce" : "sendrecv";
}

static int run_once(struct bench_run *r, size_t count)
{
	if (r->o->op == BENCH_ALL_REDUCE)
		return shim_all_reduce_sum(&r->w, &r->send, &r->recv, count);
	return shim_sendrecv(&r->w, &r->send, &r->recv, count);
}

/* The receive buffer as the host sees it (a copy when it is GPU memory). */
static const void *recv_seen(struct bench_run *r, size_t bytes)
{
	if (!r->host)
		return r->recv_mem;
	return shim_mem_download(&r->w, r->host, r->recv_mem, bytes) ? NULL : r->host;
}

static size_t wrong_now(struct bench_run *r, size_t count)
{
	size_t bytes = r->o->op == BENCH_ALL_REDUCE ? count * sizeof(float) : count;
	const void *seen = recv_seen(r, bytes);

	return seen ? bench_count_wrong(r->o->op, r->w.rank, r->w.nranks, seen, count) : count;
}

static int poison(struct bench_run *r, size_t bytes)
{
	bench_poison(r->o->op, r->w.rank, r->w.nranks, r->host ? r->host : r->recv_mem, bytes);
	return r->host ? shim_mem_upload(&r->w, r->recv_mem, r->host, bytes) : FL_OK;
}

/* Mean microseconds per iteration on this rank, and elements found wrong. */
static int measure(struct bench_run *r, size_t count, size_t bytes, double *mean_us,
		   size_t *wrong)
{
	int rc = shim_boot_barrier(&r->w.boot);
	double start;

	for (long i = 0; !rc && i < r->o->warmup; i++)
		rc = run_once(r, count);
	*wrong = 0;
	if (!rc && r->o->check) {
		rc = poison(r, bytes);
		if (!rc)
			rc = run_once(r, count);
		*wrong = wrong_now(r, count);
	}
	if (!rc)
		rc = shim_boot_barrier(&r->w.boot);
	SHIM_INFO(SHIM_LOG_COLL, "bench: %s %zu bytes: timing %ld iterations", op_name(r->o->op),
		  bytes, r->o->iters);
	/* So the check below sees what the timed iterations wrote, not the check run's result. */
	if (!rc && r->o->check)
		rc = poison(r, bytes);
	start = now_us();
	for (long i = 0; !rc && i < r->o->iters; i++)
		rc = run_once(r, count);
	*mean_us = (now_us() - start) / (double)r->o->iters;
	if (!rc && r->o->check)
		*wrong += wrong_now(r, count);
	return rc;
}

static void print_ranks(struct bench_run *r, const struct rank_id *ids)
{
	const struct shim_world *w = &r->w;

	printf("# fabriclab bench: %s, %d rank%s, minBytes %zu maxBytes %zu step: %ld(factor) "
	       "warmup iters: %ld iters: %ld validation: %d\n#\n# Using devices\n",
	       op_name(r->o->op), w->nranks, w->nranks == 1 ? "" : "s", r->o->min_bytes,
	       r->o->max_bytes, r->o->factor, r->o->warmup, r->o->iters, r->o->check);
	for (int i = 0; i < w->nranks; i++)
		printf("#  Rank %2d Pid %7d on %10s net %s (v%d) device %d [%s]\n", i,
		       (int)ids[i].pid, ids[i].node, w->net.name, w->net.version, w->dev,
		       w->props.name ? w->props.name : "?");
}

static int print_header(struct bench_run *r)
{
	struct rank_id mine = { .pid = (int32_t)getpid() }, *ids;
	const char *node = shim_env("FABRICLAB_NODE_NAME");
	int rc;

	if (node)
		snprintf(mine.node, sizeof(mine.node), "%s", node);
	else if (gethostname(mine.node, sizeof(mine.node) - 1))
		strcpy(mine.node, "?");
	ids = calloc((size_t)r->w.nranks, sizeof(*ids));
	if (!ids)
		return shim_fail(FL_ERR_SYSTEM, "out of memory");
	rc = shim_boot_allgather(&r->w.boot, &mine, ids, sizeof(mine));
	if (!rc && r->w.rank == 0) {
		print_ranks(r, ids);
		if (r->o->op == BENCH_ALL_REDUCE && r->o->min_bytes % sizeof(float))
			printf("#\n# all_reduce moves floats: sizes round down to a multiple of 4 "
			       "bytes (nccl-tests convention)\n");
		printf("#\n# %10s %12s %8s %6s %12s %12s %12s %8s\n", "size", "count", "type",
		       "redop", "time(us)", "algbw(GB/s)", "busbw(GB/s)", "#wrong");
		fflush(stdout);
	}
	free(ids);
	return rc;
}

static void print_line(struct bench_run *r, size_t count, size_t bytes, const double *all)
{
	int n = r->w.nranks, all_reduce = r->o->op == BENCH_ALL_REDUCE;
	double time_us = 0, algbw, busbw, wrong = 0;

	for (int i = 0; i < n; i++) {
		time_us = all[2 * i] > time_us ? all[2 * i] : time_us;
		wrong += all[2 * i + 1];
	}
	algbw = time_us > 0 ? (double)bytes / time_us / 1e3 : 0;
	busbw = all_reduce ? algbw * 2.0 * (n - 1) / n : algbw;
	r->busbw_sum += busbw;
	r->lines++;
	printf("  %10zu %12zu %8s %6s %12.2f %12.3f %12.3f ", bytes, count,
	       all_reduce ? "float" : "uint8", all_reduce ? "sum" : "none", time_us, algbw, busbw);
	if (r->o->check)
		printf("%8.0f\n", wrong);
	else
		printf("%8s\n", "N/A");
	fflush(stdout);
}

static int run_size(struct bench_run *r, size_t size)
{
	int all_reduce = r->o->op == BENCH_ALL_REDUCE;
	size_t count = all_reduce ? size / sizeof(float) : size;
	size_t bytes = all_reduce ? count * sizeof(float) : size;
	double mine[2], *all = NULL;
	size_t wrong;
	int rc;

	rc = measure(r, count, bytes, &mine[0], &wrong);
	if (rc)
		return rc;
	r->wrong += wrong;
	mine[1] = (double)wrong;
	if (r->w.rank == 0) {
		all = calloc((size_t)r->w.nranks * 2, sizeof(double));
		if (!all)
			return shim_fail(FL_ERR_SYSTEM, "out of memory");
	}
	rc = shim_boot_gather_doubles(&r->w.boot, mine, 2, all);
	if (!rc && all)
		print_line(r, count, bytes, all);
	free(all);
	return rc;
}

static int alloc_buffers(struct bench_run *r)
{
	size_t cap = (r->o->max_bytes + 3) / 4 * 4;
	int rc;

	r->cap = cap ? cap : 4;
	rc = shim_mem_alloc(&r->w, r->cap, &r->send_mem);
	if (!rc)
		rc = shim_mem_alloc(&r->w, r->cap, &r->recv_mem);
	if (!rc && r->w.mem.kind == SHIM_MEM_CUDA && !(r->host = calloc(1, r->cap)))
		rc = shim_fail(FL_ERR_SYSTEM, "cannot allocate %zu bytes", r->cap);
	if (rc)
		return rc;
	bench_fill(r->o->op, r->w.rank, r->host ? r->host : r->send_mem, r->cap);
	if (r->host)
		rc = shim_mem_upload(&r->w, r->send_mem, r->host, r->cap);
	else
		memset(r->recv_mem, 0, r->cap);
	if (!rc)
		rc = shim_buf_register(&r->w, &r->send, r->send_mem, r->cap);
	if (!rc)
		rc = shim_buf_register(&r->w, &r->recv, r->recv_mem, r->cap);
	return rc;
}

static int run_sizes(struct bench_run *r)
{
	int rc = FL_OK;

	for (size_t size = r->o->min_bytes; !rc && size <= r->o->max_bytes;) {
		rc = run_size(r, size);
		if (size > r->o->max_bytes / (size_t)r->o->factor)
			break;
		size *= (size_t)r->o->factor;
	}
	if (!rc && r->w.rank == 0) {
		printf("# Avg bus bandwidth : %g\n#\n", r->lines ? r->busbw_sum / r->lines : 0.0);
		fflush(stdout);
	}
	return rc;
}

/* Every rank learns the total, so every rank's exit status says whether results were right. */
static int agree_wrong(struct bench_run *r, uint64_t *total)
{
	uint64_t mine = r->wrong, *all = calloc((size_t)r->w.nranks, sizeof(*all));
	int rc;

	if (!all)
		return shim_fail(FL_ERR_SYSTEM, "out of memory");
	rc = shim_boot_allgather(&r->w.boot, &mine, all, sizeof(mine));
	*total = 0;
	for (int i = 0; !rc && i < r->w.nranks; i++)
		*total += all[i];
	free(all);
	return rc;
}

static void report_failure(void)
{
	const char *rank = shim_env("RANK");

	fprintf(stderr, "fabriclab bench: rank %s: %s\n", rank ? rank : "?", shim_error_text());
}

int bench_rank(const struct bench_opts *opts)
{
	struct bench_run r = { .o = opts };
	uint64_t wrong = 0;
	int rc;

	rc = shim_world_open(&r.w, opts->tool_dir);
	if (rc) {
		report_failure();
		return 1;
	}
	rc = alloc_buffers(&r);
	if (!rc)
		rc = print_header(&r);
	if (!rc)
		rc = run_sizes(&r);
	if (!rc)
		rc = agree_wrong(&r, &wrong);
	if (rc) {
		report_failure();
		r.w.broken = 1; /* the others may be gone: leave without waiting for them */
	} else if (wrong && r.w.rank == 0) {
		fprintf(stderr, "fabriclab bench: %llu wrong element%s\n",
			(unsigned long long)wrong, wrong == 1 ? "" : "s");
	}
	shim_buf_deregister(&r.w, &r.send);
	shim_buf_deregister(&r.w, &r.recv);
	/* After a failed transfer the plugin may still write into them; the exit frees them. */
	if (!r.w.broken) {
		shim_mem_free(&r.w, r.send_mem);
		shim_mem_free(&r.w, r.recv_mem);
	}
	free(r.host);
	shim_world_close(&r.w);
	return rc || wrong;
}
