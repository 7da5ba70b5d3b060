/*
 * One rank of the lab's job: per step, the GPU's compute, then the all-reduce
 * of the gradients through the plugin. The compute is a sleep, not a busy
 * loop: a GPU's kernels do not use the host's CPU (the host thread waits), and
 * on a small machine shared by many ranks a busy stand-in would steal the CPU
 * the transport needs and make step times depend on the machine's load.
 *
 * Rank 0 collects every rank's timings and writes them to steps.tsv in the
 * run folder for the launcher to print.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "shim/shim.h"
#include "tools/bench/bench.h"
#include "lab.h"
#include "lab_web.h"

#define NFIGURES 2 /* per step: compute ms, all-reduce ms */

struct lab_job {
	const struct lab_opts *o;
	struct shim_world w;
	void *grad, *sum; /* host memory, or GPU memory on roce/ib */
	void *host;       /* with GPU memory: the gradients as filled and checked here */
	struct shim_buf grad_buf, sum_buf;
	size_t count;
	double *mine; /* NFIGURES per step */
	size_t wrong;
};

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void compute(double ms)
{
	struct timespec until;
	uint64_t ns = (uint64_t)(ms * 1e6);
	long nsec;

	if (ns == 0)
		return;
	clock_gettime(CLOCK_MONOTONIC, &until);
	nsec = until.tv_nsec + (long)(ns % 1000000000u);
	until.tv_sec += (time_t)(ns / 1000000000u) + nsec / 1000000000L;
	until.tv_nsec = nsec % 1000000000L;
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, NULL) == EINTR)
		;
}

static int setup(struct lab_job *j)
{
	size_t bytes;
	int rc;

	j->count = j->o->grad_bytes / sizeof(float);
	bytes = j->count * sizeof(float);
	j->mine = calloc((size_t)j->o->steps * NFIGURES, sizeof(double));
	j->host = calloc(1, bytes ? bytes : 1);
	if (!j->mine || !j->host)
		return shim_fail(FL_ERR_SYSTEM, "out of memory");
	rc = shim_mem_alloc(&j->w, bytes, &j->grad);
	if (!rc)
		rc = shim_mem_alloc(&j->w, bytes, &j->sum);
	if (rc)
		return rc;
	/* The bench's inputs: exact sums, so the last step's result can be checked. */
	bench_fill(BENCH_ALL_REDUCE, j->w.rank, j->host, bytes);
	rc = shim_mem_upload(&j->w, j->grad, j->host, bytes);
	if (!rc)
		rc = shim_buf_register(&j->w, &j->grad_buf, j->grad, bytes);
	if (!rc)
		rc = shim_buf_register(&j->w, &j->sum_buf, j->sum, bytes);
	return rc;
}

/* Rank 0 says each step's time as it ends, for a watcher (the web lab) to stream. */
static FILE *open_progress(const struct lab_job *j)
{
	const char *path = getenv(LAB_PROGRESS_ENV);

	return j->w.rank == 0 && path && *path ? fopen(path, "a") : NULL;
}

static void say_step(FILE *progress, long step, double ms)
{
	if (!progress)
		return;
	fprintf(progress, "%ld\t%.3f\n", step, ms);
	fflush(progress);
}

static int train(struct lab_job *j)
{
	int rc = shim_boot_barrier(&j->w.boot);
	FILE *progress = open_progress(j);

	for (long s = 0; !rc && s < j->o->steps; s++) {
		double start = now_ms(), reduce;

		compute(j->o->compute_ms * (lab_rank_node(j->o, j->w.rank) == j->o->target
						     ? j->o->target_compute : 1.0));
		reduce = now_ms();
		rc = shim_all_reduce_sum(&j->w, &j->grad_buf, &j->sum_buf, j->count);
		j->mine[s * NFIGURES] = reduce - start;
		j->mine[s * NFIGURES + 1] = now_ms() - reduce;
		say_step(progress, s + 1, now_ms() - start);
	}
	if (progress)
		fclose(progress);
	if (!rc)
		rc = shim_mem_download(&j->w, j->host, j->sum, j->count * sizeof(float));
	if (!rc)
		j->wrong = bench_count_wrong(BENCH_ALL_REDUCE, j->w.rank, j->w.nranks, j->host,
					     j->count);
	return rc;
}

static int write_steps(const struct lab_job *j, const double *all, const double *wrong)
{
	char path[PATH_MAX + 16];
	FILE *f;

	snprintf(path, sizeof(path), "%s/steps.tsv", j->o->run_dir);
	f = fopen(path, "w");
	if (!f)
		return shim_fail(FL_ERR_SYSTEM, "%s: %s", path, strerror(errno));
	fprintf(f, "# rank\tstep\tcompute_ms\tallreduce_ms\twrong\n");
	for (int r = 0; r < j->w.nranks; r++) {
		const double *row = all + (size_t)r * ((size_t)j->o->steps * NFIGURES + 1);

		for (long s = 0; s < j->o->steps; s++)
			fprintf(f, "%d\t%ld\t%.3f\t%.3f\t%.0f\n", r, s + 1, row[s * NFIGURES],
				row[s * NFIGURES + 1], wrong[r]);
	}
	return fclose(f) ? shim_fail(FL_ERR_SYSTEM, "%s: %s", path, strerror(errno)) : FL_OK;
}

/* Everything to rank 0: each rank's figures, then its count of wrong elements. */
static int collect(struct lab_job *j)
{
	size_t per_rank = (size_t)j->o->steps * NFIGURES + 1;
	double *mine = malloc(per_rank * sizeof(double)), *all = NULL, *wrong = NULL;
	int rc = FL_OK;

	if (j->w.rank == 0) {
		all = calloc(per_rank * (size_t)j->w.nranks, sizeof(double));
		wrong = calloc((size_t)j->w.nranks, sizeof(double));
	}
	if (!mine || (j->w.rank == 0 && (!all || !wrong)))
		rc = shim_fail(FL_ERR_SYSTEM, "out of memory");
	if (!rc) {
		memcpy(mine, j->mine, (per_rank - 1) * sizeof(double));
		mine[per_rank - 1] = (double)j->wrong;
		rc = shim_boot_gather_doubles(&j->w.boot, mine, per_rank, all);
	}
	if (!rc && all) {
		for (int r = 0; r < j->w.nranks; r++)
			wrong[r] = all[(size_t)r * per_rank + per_rank - 1];
		rc = write_steps(j, all, wrong);
	}
	free(mine);
	free(all);
	free(wrong);
	return rc;
}

int lab_rank(void *opts)
{
	struct lab_job j = { .o = opts };
	int rc = shim_world_open(&j.w, j.o->tool_dir);

	if (rc) {
		fprintf(stderr, "fabriclab lab: rank %s: %s\n",
			getenv("RANK") ? getenv("RANK") : "?", shim_error_text());
		return 1;
	}
	rc = setup(&j);
	if (!rc)
		rc = train(&j);
	if (!rc)
		rc = collect(&j);
	if (rc) {
		fprintf(stderr, "fabriclab lab: rank %d: %s\n", j.w.rank, shim_error_text());
		j.w.broken = 1; /* the others may be gone: leave without waiting for them */
	}
	shim_buf_deregister(&j.w, &j.grad_buf);
	shim_buf_deregister(&j.w, &j.sum_buf);
	/* After a failed transfer the plugin may still write into them: the exit frees them. */
	if (!j.w.broken) {
		shim_mem_free(&j.w, j.grad);
		shim_mem_free(&j.w, j.sum);
	}
	shim_world_close(&j.w);
	free(j.mine);
	free(j.host);
	return rc ? 1 : 0;
}
