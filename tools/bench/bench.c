/* `fabriclab bench` options, and the choice between one rank and N local ranks. */
#include "bench.h"

#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "plugin/base/config.h"
#include "shim/shim.h"
#include "shim/shim_env.h"
#include "tools/common/tool_opts.h"
#include "tools/common/tool_path.h"

#define MAX_BYTES_LIMIT (16ULL << 30)
#define MAX_LOCAL_RANKS 256
#define EXIT_USAGE 2

void bench_usage(FILE *out)
{
	fprintf(out,
		"usage: fabriclab bench [options]\n"
		"\n"
		"Runs all_reduce (float sum, ring) or sendrecv (to rank+1, from rank-1)\n"
		"through the net plugin, the way NCCL drives it, and prints nccl-tests-style\n"
		"lines. Every result is checked exactly; the exit status is non-zero if any\n"
		"element is wrong.\n"
		"\n"
		"  -b, --minbytes N      smallest size (default 8; suffix K, M, G)\n"
		"  -e, --maxbytes N      largest size (default 128M)\n"
		"  -f, --stepfactor N    multiply the size by N each line (default 2)\n"
		"  -n, --iters N         timed iterations per size (default 20)\n"
		"  -w, --warmup_iters N  untimed iterations first (default 5)\n"
		"  -o, --op OP           all_reduce (default) or sendrecv\n"
		"  -c, --check 0|1       check results (default 1)\n"
		"      --ranks N         run N ranks here, as forked processes; without it this\n"
		"                        process is one rank of a job described by RANK,\n"
		"                        WORLD_SIZE, MASTER_ADDR and MASTER_PORT (torchrun style)\n"
		"      --mem host|cuda   buffers in host memory (default) or on the rank's GPU\n"
		"                        (LOCAL_RANK picks it; the CUDA runtime is loaded now,\n"
		"                        FABRICLAB_CUDART_LIB names it); GPUDirect RDMA when the\n"
		"                        plugin registers CUDA memory, else staged through host\n"
		"  -h, --help            this text\n"
		"\n"
		"time = the slowest rank's mean iteration time; algbw = size / time;\n"
		"busbw = algbw * 2(n-1)/n for all_reduce, = algbw for sendrecv.\n"
		"all_reduce moves floats: a size that is not a multiple of 4 rounds down.\n"
		"\n"
		"environment: NCCL_NET_PLUGIN (default fabriclab, also looked for next to this\n"
		"binary or in ../lib beside it; a comma list: the first to init wins), NCCL_DEBUG,\n"
		"NCCL_DEBUG_SUBSYS, FABRICLAB_SHIM_NCCL (the release whose proxy the shim plays,\n"
		"2.30.7), FABRICLAB_SHIM_NET_VERSION, FABRICLAB_SHIM_NET_MAX_VERSION (the release's:\n"
		"12; 11 binds as NCCL 2.28/2.29), FABRICLAB_SHIM_TRAFFIC_CLASS (-1: undefined),\n"
		"FABRICLAB_SHIM_DEV, FABRICLAB_SHIM_STEP (512K: Simple's step, slices of 2),\n"
		"FABRICLAB_SHIM_PROTO (simple, ll, ll128), NCCL_P2P_NET_CHUNKSIZE (128K),\n"
		"FABRICLAB_SHIM_TIMEOUT (120 s), FABRICLAB_SHIM_PIDFILE (with --ranks:\n"
		"\"rank pid\" lines)\n");
}

static int bad(const char *opt, const char *value, const char *expected)
{
	return tool_bad_option("bench", opt, value, expected);
}

static int parse_bytes_opt(const char *opt, const char *v, size_t *out)
{
	if (fl_parse_bytes(v, out) || *out > MAX_BYTES_LIMIT)
		return bad(opt, v, "a byte count up to 16G, like 8, 64K, 128M or 1G");
	return 0;
}

static int parse_long_opt(const char *opt, const char *v, long min, long max, long *out)
{
	return tool_long_option("bench", opt, v, min, max, out);
}

static int parse_op(const char *v, enum bench_op *op)
{
	if (!strcmp(v, "all_reduce") || !strcmp(v, "allreduce"))
		*op = BENCH_ALL_REDUCE;
	else if (!strcmp(v, "sendrecv"))
		*op = BENCH_SENDRECV;
	else
		return bad("-o", v, "all_reduce or sendrecv");
	return 0;
}

static int parse_one(int c, const char *arg, struct bench_opts *o)
{
	long value;
	int rc;

	switch (c) {
	case 'b': return parse_bytes_opt("-b", arg, &o->min_bytes);
	case 'e': return parse_bytes_opt("-e", arg, &o->max_bytes);
	case 'f': return parse_long_opt("-f", arg, 2, 1 << 20, &o->factor);
	case 'n': return parse_long_opt("-n", arg, 1, LONG_MAX / 2, &o->iters);
	case 'w': return parse_long_opt("-w", arg, 0, LONG_MAX / 2, &o->warmup);
	case 'o': return parse_op(arg, &o->op);
	case 'c':
		rc = parse_long_opt("-c", arg, 0, 1, &value);
		o->check = (int)value;
		return rc;
	case 'R':
		rc = parse_long_opt("--ranks", arg, 1, MAX_LOCAL_RANKS, &value);
		o->ranks = (int)value;
		return rc;
	case 'M':
		if (strcmp(arg, "host") && strcmp(arg, "cuda"))
			return bad("--mem", arg, "host or cuda");
		o->mem = arg;
		return 0;
	default: return EXIT_USAGE;
	}
}

/* 0 = run, 1 = help printed, EXIT_USAGE = bad command line (already said why). */
static int parse_args(int argc, char **argv, struct bench_opts *o)
{
	static const struct option longs[] = {
		{ "minbytes", required_argument, NULL, 'b' },
		{ "maxbytes", required_argument, NULL, 'e' },
		{ "stepfactor", required_argument, NULL, 'f' },
		{ "iters", required_argument, NULL, 'n' },
		{ "warmup_iters", required_argument, NULL, 'w' },
		{ "op", required_argument, NULL, 'o' },
		{ "check", required_argument, NULL, 'c' },
		{ "ranks", required_argument, NULL, 'R' },
		{ "mem", required_argument, NULL, 'M' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":b:e:f:n:w:o:c:h", longs, NULL)) != -1) {
		if (c == 'h') {
			bench_usage(stdout);
			return 1;
		}
		if (c == '?' || c == ':') {
			char name[64];

			if (c == '?' && optopt)
				snprintf(name, sizeof(name), "-%c", optopt);
			else
				snprintf(name, sizeof(name), "%s", argv[optind - 1]);
			fprintf(stderr, "fabriclab bench: %s %s (see `fabriclab bench --help`)\n",
				c == '?' ? "unknown option" : "missing value for", name);
			return EXIT_USAGE;
		}
		if (parse_one(c, optarg, o))
			return EXIT_USAGE;
	}
	if (optind < argc) {
		fprintf(stderr, "fabriclab bench: unexpected argument \"%s\" (see `fabriclab bench "
			"--help`)\n", argv[optind]);
		return EXIT_USAGE;
	}
	if (!o->min_bytes) {
		fprintf(stderr, "fabriclab bench: -b 0: the smallest size is 1 byte\n");
		return EXIT_USAGE;
	}
	if (o->min_bytes > o->max_bytes) {
		fprintf(stderr, "fabriclab bench: -b %zu is larger than -e %zu\n", o->min_bytes,
			o->max_bytes);
		return EXIT_USAGE;
	}
	return 0;
}

static int run_rank(void *arg)
{
	return bench_rank(arg);
}

int bench_main(int argc, char **argv)
{
	static char dir[PATH_MAX];
	struct bench_opts o = { .min_bytes = 8, .max_bytes = 128 << 20, .factor = 2, .iters = 20,
				.warmup = 5, .op = BENCH_ALL_REDUCE, .check = 1 };
	int rc = parse_args(argc, argv, &o);

	if (rc)
		return rc == 1 ? 0 : rc;
	if (!tool_plugin_dir(dir, sizeof(dir)))
		o.tool_dir = dir;
	if (!o.ranks && !shim_env("WORLD_SIZE")) {
		fprintf(stderr, "fabriclab bench: no job in the environment (RANK, WORLD_SIZE, "
			"MASTER_ADDR, MASTER_PORT); use --ranks N to run N local ranks\n");
		return EXIT_USAGE;
	}
	/* The shim reads it in every rank, forked here or started by a launcher. */
	if (o.mem)
		setenv(SHIM_MEM_ENV, o.mem, 1);
	if (!o.ranks)
		return bench_rank(&o) ? 1 : 0;
	rc = shim_spawn(o.ranks, run_rank, &o);
	if (rc) {
		fprintf(stderr, "fabriclab bench: %s\n", shim_error_text());
		return 1;
	}
	return 0;
}
