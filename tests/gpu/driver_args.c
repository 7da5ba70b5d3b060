/* The real-NCCL driver's command line: nccl-tests' size options (-b -e -f -n -w) plus ours. */
#include "driver_args.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SIZES 64

void drv_usage(FILE *f)
{
	fprintf(f,
		"usage: nccl_driver [--ranks N] [-b BYTES] [-e BYTES] [-f FACTOR] [-n ITERS] [-w WARMUP]\n"
		"                   [-o all_reduce|sendrecv|all] [--device D] [--timeout S]\n"
		"                   [--id-file PATH] [--id-timeout S] [--rank R] [--hostid PREFIX]\n"
		"                   [--rank-env NAME=VALUE]... [--dry-run] [--version] [-h]\n"
		"Real NCCL on one GPU: N processes (forked here), each with its own NCCL_HOSTID so that\n"
		"NCCL takes them for N hosts and every connection goes over its NET transport (the\n"
		"net plugin NCCL_NET/NCCL_NET_PLUGIN choose). Rank 0 gets NCCL's unique id and\n"
		"publishes it in a file the others read. ncclAllReduce (sum, out of place) and\n"
		"ncclSend/ncclRecv to the next rank over each size, every element checked; rank 0\n"
		"prints nccl-tests' columns.\n"
		"  --ranks N        processes, 1-%d (default 2)\n"
		"  -b, -e BYTES     smallest and largest size (default 1M, 256M; K/M/G = 1024^n)\n"
		"  -f FACTOR        size step factor, >= 2 (default 4)\n"
		"  -n ITERS         timed calls per size (default 10); -w WARMUP untimed (default 2)\n"
		"  -o OPS           all_reduce, sendrecv or all (default all); comma list allowed\n"
		"  --device D       CUDA device of every rank (default 0)\n"
		"  --timeout S      whole run, every rank killed past it (default 300)\n"
		"  --id-file PATH   where rank 0 writes the unique id (default: a fresh folder);\n"
		"                   it must not exist yet\n"
		"  --id-timeout S   how long ranks > 0 wait for it (default 60)\n"
		"  --rank R         run only rank R in this process (other hosts run the others with\n"
		"                   the same --id-file); NCCL_HOSTID is then left as it is\n"
		"  --hostid PREFIX  NCCL_HOSTID of rank r = PREFIX<r> (default fabriclab-gpu-host-)\n"
		"  --rank-env N=V   set N to V in each rank, %%r replaced by the rank (up to %d)\n"
		"  --dry-run        print the plan and exit; no GPU, CUDA or NCCL call\n"
		"Exit: 0 all right, 1 wrong elements, 2 usage, 3 no GPU, 4 CUDA/NCCL failure or timeout.\n",
		DRV_MAX_RANKS, DRV_MAX_RANK_ENV);
}

static int fail(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
	return -1;
}

int drv_parse_bytes(const char *s, size_t *out)
{
	char *end;
	unsigned long long v, mult = 1;

	if (!s || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -1;
	switch (*end) {
	case 'K': case 'k': mult = 1ULL << 10; end++; break;
	case 'M': case 'm': mult = 1ULL << 20; end++; break;
	case 'G': case 'g': mult = 1ULL << 30; end++; break;
	default: break;
	}
	if (*end || v > UINT64_MAX / mult || v * mult > SIZE_MAX)
		return -1;
	*out = (size_t)(v * mult);
	return 0;
}

static int parse_int(const char *s, long lo, long hi, int *out)
{
	char *end;
	long v;

	if (!s || !*s)
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < lo || v > hi)
		return -1;
	*out = (int)v;
	return 0;
}

static int parse_seconds(const char *s, double *out)
{
	char *end;
	double v;

	if (!s || !*s)
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (errno || *end || !(v > 0 && v <= 86400))
		return -1;
	*out = v;
	return 0;
}

const char *drv_op_name(enum drv_op op)
{
	return op == DRV_OP_ALL_REDUCE ? "all_reduce" : op == DRV_OP_SENDRECV ? "sendrecv" : "?";
}

static int parse_ops(const char *s, unsigned *ops)
{
	char buf[64], *save = NULL;

	if (!s || strlen(s) >= sizeof(buf))
		return -1;
	strcpy(buf, s);
	*ops = 0;
	for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		if (!strcmp(t, "all_reduce") || !strcmp(t, "allreduce"))
			*ops |= DRV_OP_ALL_REDUCE;
		else if (!strcmp(t, "sendrecv"))
			*ops |= DRV_OP_SENDRECV;
		else if (!strcmp(t, "all"))
			*ops |= DRV_OP_ALL_REDUCE | DRV_OP_SENDRECV;
		else
			return -1;
	}
	return *ops ? 0 : -1;
}

static void defaults(struct drv_args *a)
{
	memset(a, 0, sizeof(*a));
	a->ranks = 2;
	a->rank = -1;
	a->min_bytes = 1ULL << 20;
	a->max_bytes = 256ULL << 20;
	a->step_factor = 4;
	a->iters = 10;
	a->warmup = 2;
	a->ops = DRV_OP_ALL_REDUCE | DRV_OP_SENDRECV;
	a->timeout_s = 300;
	a->id_timeout_s = 60;
	a->hostid_prefix = "fabriclab-gpu-host-";
}

/* "--opt=value" or "--opt value": the value of option argv[*i], or NULL when it has none. */
static const char *value_of(int argc, char **argv, int *i, const char *name)
{
	const char *arg = argv[*i];
	size_t n = strlen(name);

	if (!strncmp(arg, name, n) && arg[n] == '=')
		return arg + n + 1;
	if (*i + 1 >= argc)
		return NULL;
	return argv[++*i];
}

static int is_opt(const char *arg, const char *a, const char *b)
{
	size_t n;

	if (a) {
		n = strlen(a);
		if (!strncmp(arg, a, n) && (arg[n] == '\0' || arg[n] == '='))
			return 1;
	}
	if (b) {
		n = strlen(b);
		if (!strncmp(arg, b, n) && (arg[n] == '\0' || arg[n] == '='))
			return 1;
	}
	return 0;
}

static int parse_rank_env(const char *v, struct drv_args *a, char *err, size_t len)
{
	const char *eq = v ? strchr(v, '=') : NULL;

	if (!eq || eq == v)
		return fail(err, len, "--rank-env: expected NAME=VALUE, got '%s'", v ? v : "");
	if (a->n_rank_env >= DRV_MAX_RANK_ENV)
		return fail(err, len, "--rank-env: at most %d of them", DRV_MAX_RANK_ENV);
	a->rank_env[a->n_rank_env++] = v;
	return 0;
}

/* One option at argv[*i]: 0, 1 when it is not one of ours, -1 on a bad value. */
static int parse_one(int argc, char **argv, int *i, struct drv_args *a, char *err, size_t len)
{
	const char *arg = argv[*i], *v;

#define VALUE(name) (v = value_of(argc, argv, i, name))
	if (is_opt(arg, "-h", "--help"))
		a->help = 1;
	else if (is_opt(arg, "--version", NULL))
		a->version = 1;
	else if (is_opt(arg, "--dry-run", NULL))
		a->dry_run = 1;
	else if (is_opt(arg, "--ranks", NULL)) {
		if (parse_int(VALUE("--ranks"), 1, DRV_MAX_RANKS, &a->ranks))
			return fail(err, len, "--ranks: expected 1-%d, got '%s'", DRV_MAX_RANKS,
				    v ? v : "");
	} else if (is_opt(arg, "--rank", NULL)) {
		if (parse_int(VALUE("--rank"), 0, DRV_MAX_RANKS - 1, &a->rank))
			return fail(err, len, "--rank: expected 0-%d, got '%s'", DRV_MAX_RANKS - 1,
				    v ? v : "");
	} else if (is_opt(arg, "--device", NULL)) {
		if (parse_int(VALUE("--device"), 0, 1023, &a->device))
			return fail(err, len, "--device: expected 0-1023, got '%s'", v ? v : "");
	} else if (is_opt(arg, "-b", "--minbytes")) {
		if (drv_parse_bytes(VALUE(arg[1] == '-' ? "--minbytes" : "-b"), &a->min_bytes))
			return fail(err, len, "-b: expected a size such as 1048576, 64K, 1M or 1G, got '%s'",
				    v ? v : "");
	} else if (is_opt(arg, "-e", "--maxbytes")) {
		if (drv_parse_bytes(VALUE(arg[1] == '-' ? "--maxbytes" : "-e"), &a->max_bytes))
			return fail(err, len, "-e: expected a size such as 1048576, 64K, 1M or 1G, got '%s'",
				    v ? v : "");
	} else if (is_opt(arg, "-f", "--stepfactor")) {
		int f;

		if (parse_int(VALUE(arg[1] == '-' ? "--stepfactor" : "-f"), 2, 1024, &f))
			return fail(err, len, "-f: expected a step factor 2-1024, got '%s'", v ? v : "");
		a->step_factor = (unsigned)f;
	} else if (is_opt(arg, "-n", "--iters")) {
		if (parse_int(VALUE(arg[1] == '-' ? "--iters" : "-n"), 1, 100000, &a->iters))
			return fail(err, len, "-n: expected 1-100000 timed calls, got '%s'", v ? v : "");
	} else if (is_opt(arg, "-w", "--warmup")) {
		if (parse_int(VALUE(arg[1] == '-' ? "--warmup" : "-w"), 0, 100000, &a->warmup))
			return fail(err, len, "-w: expected 0-100000 warm-up calls, got '%s'", v ? v : "");
	} else if (is_opt(arg, "-o", "--op")) {
		if (parse_ops(VALUE(arg[1] == '-' ? "--op" : "-o"), &a->ops))
			return fail(err, len, "-o: expected all_reduce, sendrecv or all, got '%s'",
				    v ? v : "");
	} else if (is_opt(arg, "--timeout", NULL)) {
		if (parse_seconds(VALUE("--timeout"), &a->timeout_s))
			return fail(err, len, "--timeout: expected seconds in (0, 86400], got '%s'",
				    v ? v : "");
	} else if (is_opt(arg, "--id-timeout", NULL)) {
		if (parse_seconds(VALUE("--id-timeout"), &a->id_timeout_s))
			return fail(err, len, "--id-timeout: expected seconds in (0, 86400], got '%s'",
				    v ? v : "");
	} else if (is_opt(arg, "--id-file", NULL)) {
		if (!VALUE("--id-file") || !*v || strlen(v) >= sizeof(a->id_file))
			return fail(err, len, "--id-file: expected a path shorter than %zu bytes",
				    sizeof(a->id_file));
		strcpy(a->id_file, v);
	} else if (is_opt(arg, "--hostid", NULL)) {
		if (!VALUE("--hostid") || !*v || strlen(v) > 200)
			return fail(err, len, "--hostid: expected a prefix of 1-200 characters");
		a->hostid_prefix = v;
	} else if (is_opt(arg, "--rank-env", NULL)) {
		return parse_rank_env(VALUE("--rank-env"), a, err, len);
	} else {
		return 1;
	}
#undef VALUE
	return 0;
}

/* What no single option can judge: the sizes and the rank against the rank count. */
static int check_whole(const struct drv_args *a, char *err, size_t len)
{
	if (a->min_bytes < DRV_ELEM_BYTES || a->min_bytes > a->max_bytes)
		return fail(err, len, "-b/-e: expected %d <= -b <= -e, got -b %zu -e %zu",
			    DRV_ELEM_BYTES, a->min_bytes, a->max_bytes);
	if (a->max_bytes > DRV_MAX_BYTES)
		return fail(err, len, "-e: at most %lluG, got %zu", DRV_MAX_BYTES >> 30,
			    a->max_bytes);
	if (a->rank >= a->ranks)
		return fail(err, len, "--rank: expected 0-%d for --ranks %d, got %d", a->ranks - 1,
			    a->ranks, a->rank);
	if (a->rank >= 0 && !a->id_file[0])
		return fail(err, len, "--rank %d: needs --id-file, where rank 0 publishes the id",
			    a->rank);
	return 0;
}

int drv_args_parse(int argc, char **argv, struct drv_args *a, char *err, size_t errlen)
{
	defaults(a);
	for (int i = 1; i < argc; i++) {
		int rc = parse_one(argc, argv, &i, a, err, errlen);

		if (rc < 0)
			return -1;
		if (rc > 0)
			return fail(err, errlen, "unknown argument '%s' (--help lists the options)",
				    argv[i]);
	}
	if (a->help || a->version)
		return 0;
	return check_whole(a, err, errlen);
}

size_t drv_sizes(const struct drv_args *a, size_t *sizes, size_t cap)
{
	size_t n = 0;

	/* Whole elements only, as nccl-tests rounds; the loop ends at max or at cap. */
	for (size_t s = a->min_bytes; s <= a->max_bytes && n < cap && n < MAX_SIZES;) {
		sizes[n++] = s / DRV_ELEM_BYTES * DRV_ELEM_BYTES;
		if (s > a->max_bytes / a->step_factor)
			break;
		s *= a->step_factor;
	}
	return n;
}

int drv_expand_rank(const char *tmpl, int rank, char *out, size_t len)
{
	size_t o = 0;

	for (const char *p = tmpl; *p; p++) {
		int w;

		if (p[0] == '%' && p[1] == 'r') {
			w = snprintf(out + o, len - o, "%d", rank);
			p++;
		} else {
			w = snprintf(out + o, len - o, "%c", *p);
		}
		if (w < 0 || (size_t)w >= len - o)
			return -1;
		o += (size_t)w;
	}
	if (o >= len)
		return -1;
	out[o] = '\0';
	return 0;
}
