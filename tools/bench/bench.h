/* `fabriclab bench`: nccl-tests-style sizes, times and bandwidths through the shim. */
#ifndef FABRICLAB_BENCH_H
#define FABRICLAB_BENCH_H

#include <stddef.h>
#include <stdio.h>

enum bench_op { BENCH_ALL_REDUCE, BENCH_SENDRECV };

struct bench_opts {
	size_t min_bytes;
	size_t max_bytes;
	long factor;
	long iters;
	long warmup;
	enum bench_op op;
	int check;
	int ranks;            /* 0: this process is one rank of a job the environment describes */
	const char *mem;      /* --mem host|cuda; NULL: FABRICLAB_SHIM_MEM decides */
	const char *tool_dir; /* where to look for the plugin when its plain name does not load */
};

int bench_main(int argc, char **argv);
void bench_usage(FILE *out);

/* One rank's whole run; 0 when it ran and every result was right. */
int bench_rank(const struct bench_opts *opts);

/* Inputs depend on rank and index, so a misplaced or missing piece shows. */
void bench_fill(enum bench_op op, int rank, void *send, size_t bytes);
/* Makes every byte of recv differ from what a correct run leaves there. */
void bench_poison(enum bench_op op, int rank, int nranks, void *recv, size_t bytes);
/* Elements (floats, or bytes for sendrecv) of recv that differ from the exact result. */
size_t bench_count_wrong(enum bench_op op, int rank, int nranks, const void *recv, size_t count);

#endif
