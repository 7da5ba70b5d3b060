/* `fabriclab sweep` options, and the choice between one rank and N local ranks. */
#include "sweep.h"

#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "plugin/base/config.h"
#include "shim/shim.h"
#include "shim/shim_env.h"
#include "tools/common/tool_opts.h"
#include "tools/common/tool_path.h"
#include "tools/common/tool_text.h"

#define MAX_BYTES_LIMIT (16ULL << 30)

void sweep_usage(FILE *out)
{
	fprintf(out,
		"usage: fabriclab sweep [options]\n"
		"       fabriclab sweep --gate --node NODE --peers A,B,C [--baseline FILE]\n"
		"\n"
		"Measures the bandwidth of every node pair through the net plugin, one rank per\n"
		"node, each direction on its own, in rounds of disjoint pairs (N-1 rounds for N\n"
		"nodes). Prints the node x node matrix and judges it with the diagnosis model\n"
		"`fabriclab report` uses (each direction a hop): the culprit it names (a link,\n"
		"a node, a rail) or not-enough-evidence, with its confidence and runner-up, the\n"
		"directions it slows and the commands that would confirm it on the machines.\n"
		"\n"
		"  -b, --minbytes N      smallest size (default 64M; suffix K, M, G)\n"
		"  -e, --maxbytes N      largest size, the one judged (default 64M)\n"
		"  -f, --stepfactor N    multiply the size by N (default 2)\n"
		"  -w, --warmup_iters N  untimed transfers first (default 1)\n"
		"  -t, --time S          seconds timed per pair, direction and size (default 1)\n"
		"      --threshold PCT   the smallest effect named against the other pairs: a\n"
		"                        culprit runs below PCT%% of them (default 80)\n"
		"      --save FILE       keep this sweep as a baseline\n"
		"      --baseline FILE   also judge the pairs beside the baseline's\n"
		"      --baseline-min PCT  ... a culprit below PCT%% of them (default 90)\n"
		"      --json            print JSON instead of text\n"
		"      --svg FILE        also draw the matrix as a heatmap\n"
		"      --mem host|cuda   buffers in host memory (default) or on the rank's GPU\n"
		"                        (LOCAL_RANK picks it); GPUDirect RDMA when the plugin\n"
		"                        registers CUDA memory, else staged through host memory\n"
		"      --ranks N         run N ranks here (node0...); without it this process is\n"
		"                        one rank of a job described by RANK, WORLD_SIZE,\n"
		"                        MASTER_ADDR and MASTER_PORT (torchrun style)\n"
		"  -h, --help            this text\n"
		"\n"
		"Rejoin gate: --gate --node NODE --peers A,B,C tests NODE against each peer\n"
		"(both directions), judged beside the baseline's pairs, else beside the fleet\n"
		"(the peers among themselves, measured too when there is no baseline); it\n"
		"passes only where the model calls them healthy.\n"
		"\n"
		"Units as nccl-tests: algbw = size / time (GB/s, 10^9 bytes/s); sendrecv busbw =\n"
		"algbw. time = the slower end's mean transfer time.\n"
		"Exit status: 0 healthy; 1 a culprit named, or not enough evidence to call it\n"
		"healthy (gate: the node must not rejoin);\n"
		"2 bad usage or baseline; 3 the sweep could not run or bytes arrived wrong.\n"
		"The status is the same on every rank.\n"
		"\n"
		"environment: NCCL_NET_PLUGIN (default fabriclab), FABRICLAB_NODE_NAME (else the\n"
		"host name), FABRICLAB_SHIM_DEV (the device, i.e. the rail), FABRICLAB_SHIM_STEP,\n"
		"FABRICLAB_SHIM_TIMEOUT, FABRICLAB_LINK_RATE, FABRICLAB_FAULT, FABRICLAB_SHIM_MEM\n"
		"(what --mem sets), FABRICLAB_CUDART_LIB\n");
}

static int bad(const char *opt, const char *value, const char *expected)
{
	return tool_bad_option("sweep", opt, value, expected);
}

static int parse_bytes_opt(const char *opt, const char *v, size_t *out)
{
	if (fl_parse_bytes(v, out) || !*out || *out > MAX_BYTES_LIMIT)
		return bad(opt, v, "a byte count from 1 to 16G, like 64K, 128M or 1G");
	return 0;
}

static int parse_long_opt(const char *opt, const char *v, long min, long max, long *out)
{
	return tool_long_option("sweep", opt, v, min, max, out);
}

static int parse_number(const char *opt, const char *v, double min, double max, double *out)
{
	char *end;

	*out = strtod(v, &end);
	if (end == v || *end || !isfinite(*out) || *out < min || *out > max) {
		char expected[64];

		snprintf(expected, sizeof(expected), "a number from %g to %g", min, max);
		return bad(opt, v, expected);
	}
	return 0;
}

/* A node name as the ranks keep theirs: escaped, and short enough so. */
static bool escape_name(char *dst, const char *name, size_t len)
{
	char raw[SWEEP_NAME_LEN];

	if (!len || len >= SWEEP_NAME_LEN)
		return false;
	snprintf(raw, sizeof(raw), "%.*s", (int)len, name);
	return tool_text_escape(dst, SWEEP_NAME_LEN, raw) < SWEEP_NAME_LEN;
}

static int parse_peers(const char *v, struct sweep_opts *o)
{
	const char *p = v;

	o->npeers = 0;
	while (*p) {
		size_t len = strcspn(p, ",");

		if (o->npeers == SWEEP_MAX_PEERS || !escape_name(o->gate_peers[o->npeers++], p, len))
			return bad("--peers", v, "node names separated by commas, at most 64");
		p += len + (p[len] == ',');
	}
	return o->npeers ? 0 : bad("--peers", v, "one node name or more");
}

enum { OPT_RANKS = 256, OPT_THRESHOLD, OPT_SAVE, OPT_BASELINE, OPT_BASELINE_MIN, OPT_JSON,
       OPT_SVG, OPT_GATE, OPT_NODE, OPT_PEERS, OPT_MEM };

static int parse_one(int c, const char *arg, struct sweep_opts *o)
{
	double pct;
	long value;
	int rc;

	switch (c) {
	case 'b': return parse_bytes_opt("-b", arg, &o->min_bytes);
	case 'e': return parse_bytes_opt("-e", arg, &o->max_bytes);
	case 'f': return parse_long_opt("-f", arg, 2, 1 << 20, &o->factor);
	case 'w': return parse_long_opt("-w", arg, 0, 1000, &o->warmup);
	case 't': return parse_number("--time", arg, 0.001, 3600, &o->seconds);
	case OPT_THRESHOLD:
		rc = parse_number("--threshold", arg, 1, 100, &pct);
		o->threshold = pct / 100;
		return rc;
	case OPT_BASELINE_MIN:
		rc = parse_number("--baseline-min", arg, 1, 100, &pct);
		o->baseline_min = pct / 100;
		return rc;
	case OPT_RANKS:
		rc = parse_long_opt("--ranks", arg, 2, 256, &value);
		o->ranks = (int)value;
		return rc;
	case OPT_SAVE: o->save = arg; return 0;
	case OPT_BASELINE: o->baseline = arg; return 0;
	case OPT_JSON: o->json = true; return 0;
	case OPT_SVG: o->svg = arg; return 0;
	case OPT_GATE: o->gate = true; return 0;
	case OPT_NODE:
		if (!escape_name(o->gate_node, arg, strlen(arg)))
			return bad("--node", arg, "a node name of 1 to 63 characters");
		return 0;
	case OPT_PEERS: return parse_peers(arg, o);
	case OPT_MEM:
		if (strcmp(arg, "host") && strcmp(arg, "cuda"))
			return bad("--mem", arg, "host or cuda");
		o->mem = arg;
		return 0;
	default: return SWEEP_EXIT_USAGE;
	}
}

static int check_args(const struct sweep_opts *o)
{
	const char *why = NULL;

	if (o->min_bytes > o->max_bytes)
		why = "-b is larger than -e";
	else if (o->gate && (!o->gate_node[0] || !o->npeers))
		why = "--gate needs --node NODE and --peers A,B,...";
	else if (!o->gate && (o->gate_node[0] || o->npeers))
		why = "--node and --peers go with --gate";
	if (why)
		fprintf(stderr, "fabriclab sweep: %s (see `fabriclab sweep --help`)\n", why);
	return why ? SWEEP_EXIT_USAGE : 0;
}

/* 0 = run, 1 = help printed, SWEEP_EXIT_USAGE = bad command line (already said why). */
static int parse_args(int argc, char **argv, struct sweep_opts *o)
{
	static const struct option longs[] = {
		{ "minbytes", required_argument, NULL, 'b' },
		{ "maxbytes", required_argument, NULL, 'e' },
		{ "stepfactor", required_argument, NULL, 'f' },
		{ "warmup_iters", required_argument, NULL, 'w' },
		{ "time", required_argument, NULL, 't' },
		{ "threshold", required_argument, NULL, OPT_THRESHOLD },
		{ "save", required_argument, NULL, OPT_SAVE },
		{ "baseline", required_argument, NULL, OPT_BASELINE },
		{ "baseline-min", required_argument, NULL, OPT_BASELINE_MIN },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "svg", required_argument, NULL, OPT_SVG },
		{ "ranks", required_argument, NULL, OPT_RANKS },
		{ "gate", no_argument, NULL, OPT_GATE },
		{ "node", required_argument, NULL, OPT_NODE },
		{ "peers", required_argument, NULL, OPT_PEERS },
		{ "mem", required_argument, NULL, OPT_MEM },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":b:e:f:w:t:h", longs, NULL)) != -1) {
		if (c == 'h') {
			sweep_usage(stdout);
			return 1;
		}
		if (c == '?' || c == ':') {
			fprintf(stderr, "fabriclab sweep: %s ",
				c == '?' ? "unknown option" : "missing value for");
			tool_text_put(stderr, argv[optind - 1]);
			fputs(" (see `fabriclab sweep --help`)\n", stderr);
			return SWEEP_EXIT_USAGE;
		}
		if (parse_one(c, optarg, o))
			return SWEEP_EXIT_USAGE;
	}
	if (optind < argc) {
		fputs("fabriclab sweep: unexpected argument \"", stderr);
		tool_text_put(stderr, argv[optind]);
		fputs("\"\n", stderr);
		return SWEEP_EXIT_USAGE;
	}
	return check_args(o);
}

/* The error names files and nodes: escaped, a terminal reads it. */
static void print_error(const char *what)
{
	fprintf(stderr, "fabriclab sweep: %s", what);
	tool_text_put(stderr, shim_error_text());
	fputc('\n', stderr);
}

/*
 * Rank 0 reads the baseline and checks where --save writes before anyone
 * measures, so a bad file or path costs no sweep.
 */
static int check_baseline(const struct sweep_opts *o)
{
	const char *rank = shim_env("RANK");
	struct sweep_baseline base;

	if (!o->ranks && rank && strcmp(rank, "0"))
		return 0;
	if (o->save && sweep_baseline_check_save(o->save)) {
		print_error("");
		return SWEEP_EXIT_USAGE;
	}
	if (!o->baseline)
		return 0;
	if (sweep_baseline_load(o->baseline, &base)) {
		print_error("--baseline ");
		return SWEEP_EXIT_USAGE;
	}
	if (base.bytes != o->max_bytes) {
		fprintf(stderr, "fabriclab sweep: --baseline %s was measured at %zu bytes; run "
			"with -e %zu to compare like with like\n", o->baseline, base.bytes,
			base.bytes);
		sweep_baseline_free(&base);
		return SWEEP_EXIT_USAGE;
	}
	sweep_baseline_free(&base);
	return 0;
}

/* Where rank 0 of a local run leaves the job's status for the launcher. */
static int *local_status;

/*
 * Local ranks exit 0 whenever they agreed on a status (rank 0 leaves it in
 * local_status): the launcher stops every rank as soon as one exits non-zero,
 * which could stop rank 0 before it said what the job found.
 */
static int run_local_rank(void *arg)
{
	int code = sweep_rank(arg);
	const char *rank = shim_env("RANK");

	if (rank && !strcmp(rank, "0"))
		*local_status = code;
	return code == SWEEP_EXIT_FAILED ? code : 0;
}

static int run_local(struct sweep_opts *o)
{
	int rc, status;

	local_status = mmap(NULL, sizeof(*local_status), PROT_READ | PROT_WRITE,
			    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (local_status == MAP_FAILED) {
		fprintf(stderr, "fabriclab sweep: cannot share the result between ranks\n");
		return SWEEP_EXIT_FAILED;
	}
	*local_status = SWEEP_EXIT_FAILED;
	/*
	 * As the lab does: ranks sharing a few cores sleep 100 us when idle instead
	 * of spinning, and each connection gets a data stream whose helper thread
	 * times the receiver's wire, so a receiver paced slower shows.
	 */
	setenv("FABRICLAB_SHIM_IDLE_US", "100", 0);
	setenv("FABRICLAB_SOCKET_NSTREAMS", "1", 0);
	rc = shim_spawn(o->ranks, run_local_rank, o);
	status = *local_status;
	munmap(local_status, sizeof(*local_status));
	if (!rc)
		return status;
	if (status != SWEEP_EXIT_USAGE)
		print_error("");
	return status == SWEEP_EXIT_USAGE ? status : SWEEP_EXIT_FAILED;
}

int sweep_main(int argc, char **argv)
{
	static char dir[PATH_MAX];
	static struct sweep_opts o = { .min_bytes = 64 << 20, .max_bytes = 64 << 20,
				       .factor = 2, .warmup = 1, .seconds = 1, .threshold = 0.8,
				       .baseline_min = 0.9 };
	int rc = parse_args(argc, argv, &o);

	if (rc)
		return rc == 1 ? 0 : rc;
	rc = check_baseline(&o);
	if (rc)
		return rc;
	if (!tool_dir(dir, sizeof(dir)))
		o.tool_dir = dir;
	if (!o.ranks && !shim_env("WORLD_SIZE")) {
		fprintf(stderr, "fabriclab sweep: no job in the environment (RANK, WORLD_SIZE, "
			"MASTER_ADDR, MASTER_PORT); use --ranks N to run N local ranks\n");
		return SWEEP_EXIT_USAGE;
	}
	/* The shim reads it in every rank, forked here or started by a launcher. */
	if (o.mem)
		setenv(SHIM_MEM_ENV, o.mem, 1);
	return o.ranks ? run_local(&o) : sweep_rank(&o);
}
