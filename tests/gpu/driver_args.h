/*
 * The real-NCCL driver's command line (tests/gpu/nccl_driver.c): what it runs, parsed without
 * CUDA or NCCL so that the parser is tested on machines with neither.
 */
#ifndef FL_GPU_DRIVER_ARGS_H
#define FL_GPU_DRIVER_ARGS_H

#include <limits.h>
#include <stddef.h>
#include <stdio.h>

/* Exit statuses of the driver (and of each rank process). */
enum drv_exit {
	DRV_EXIT_OK = 0,
	DRV_EXIT_WRONG = 1,  /* an element came back wrong */
	DRV_EXIT_USAGE = 2,  /* bad command line */
	DRV_EXIT_NO_GPU = 3, /* no CUDA device to run on */
	DRV_EXIT_FAILED = 4, /* a CUDA, NCCL or unique-id call failed, a rank died, or the timeout */
};

enum drv_op {
	DRV_OP_ALL_REDUCE = 1 << 0,
	DRV_OP_SENDRECV = 1 << 1,
};

#define DRV_MAX_RANKS 64
#define DRV_MAX_RANK_ENV 8
#define DRV_ELEM_BYTES 4 /* float32, the type nccl-tests defaults to */
#define DRV_MAX_BYTES (8ULL << 30)

struct drv_args {
	int ranks;            /* --ranks: processes in the communicator */
	int rank;             /* --rank: run only this rank here; -1 = fork all ranks */
	int device;           /* --device: the CUDA device every rank uses */
	size_t min_bytes;     /* -b */
	size_t max_bytes;     /* -e */
	unsigned step_factor; /* -f */
	int iters;            /* -n: timed calls per size */
	int warmup;           /* -w: untimed calls per size, checked too */
	unsigned ops;         /* -o: enum drv_op bits */
	double timeout_s;     /* --timeout: the whole run, every rank */
	double id_timeout_s;  /* --id-timeout: how long ranks > 0 wait for the unique id */
	char id_file[PATH_MAX];          /* --id-file; empty = a fresh folder per run */
	const char *hostid_prefix;       /* --hostid: NCCL_HOSTID = prefix + rank (fork mode) */
	const char *rank_env[DRV_MAX_RANK_ENV]; /* --rank-env NAME=VALUE, %r = the rank */
	int n_rank_env;
	int dry_run; /* --dry-run: print the plan, touch no GPU */
	int help;    /* -h/--help */
	int version; /* --version */
};

/* Fills *a from argv (defaults first); on a bad argument returns -1 with a message naming the
 * option and the accepted form in err. Keeps pointers into argv. */
int drv_args_parse(int argc, char **argv, struct drv_args *a, char *err, size_t errlen);

/* "1048576", "64K", "1M", "2G" (powers of 1024): 0 on success, -1 on anything else. */
int drv_parse_bytes(const char *s, size_t *out);

/* The sizes a run covers: min, min*f, ... up to max. Returns how many were written (<= cap). */
size_t drv_sizes(const struct drv_args *a, size_t *sizes, size_t cap);

/* NAME=VALUE with every "%r" replaced by rank: 0, or -1 when out is too small. */
int drv_expand_rank(const char *tmpl, int rank, char *out, size_t len);

const char *drv_op_name(enum drv_op op);

void drv_usage(FILE *f);

#endif
