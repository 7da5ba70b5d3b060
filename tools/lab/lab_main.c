/* `fabriclab lab` options, the run folder and the order of a run. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "plugin/base/config.h"
#include "shim/shim.h"
#include "shim/shim_env.h"
#include "lab.h"
#include "lab_web.h"
#include "tools/common/tool_opts.h"
#include "tools/common/tool_path.h"

#define EXIT_FAILED 1
#define EXIT_USAGE 2
#define EXIT_INTERRUPTED 130
#define DEFAULT_LINK_RATE "400mbit"
#define MAX_GRAD (1UL << 30)

volatile sig_atomic_t lab_stop;

void lab_usage(FILE *out)
{
	fprintf(out,
		"usage: fabriclab lab [SCENARIO] [options]\n"
		"\n"
		"Runs a training-like job on local ranks node0..node<N-1> through the net plugin:\n"
		"each step computes (a sleep standing in for the GPU) then all-reduces the\n"
		"gradients. Every hop is paced to a nominal link rate, reported as the devices'\n"
		"speed. Prints each step's time, the median and the communication share, then\n"
		"the merged report: its verdict and the commands that would confirm it.\n"
		"\n"
		"scenarios (a FABRICLAB_FAULT rule on the target node, see docs/faults.md):\n"
		"  healthy       no fault (default)\n"
		"  halve-cable   the target's device at 50%% of the link rate, both ways\n"
		"  slow-node     the target is a straggler: compute 2x, each send held back (factor 3)\n"
		"  gdr-off       the target offers no GPUDirect RDMA (host memory only)\n"
		"  flaky-roce    the target's hops pause 40 ms of every 100 ms (a PFC storm)\n"
		"  slow-rail     with --rails: the leaf switch of one rail, i.e. NIC k of every\n"
		"                node at 50%% of the link rate, both ways (--rail K)\n"
		"\n"
		"  -n, --ranks N        local ranks, 1 to %d (default 8); with --rails, nodes\n"
		"      --rails K        K NICs per node (mlx5_0..mlx5_<K-1>, rail k = leaf switch\n"
		"                       k) and a rank on each: N x K ranks, rank k x N + n on\n"
		"                       node n's NIC k (--fabric roce or ib; over tcp with\n"
		"                       --netns: eth<k> on bridge br<k>; default 1)\n"
		"      --rail K         slow-rail's rail (default: a random one, printed)\n"
		"  -s, --steps K        training steps (default 8)\n"
		"  -g, --grad BYTES     gradients all-reduced each step (default 8M; K, M, G)\n"
		"  -c, --compute MS     compute per step in milliseconds, may be 0 (default 20)\n"
		"      --link-rate R    every hop's nominal rate, e.g. 1gbit (default %s)\n"
		"      --like P         hdr, ndr, xdr or roce400: a real fabric's rate and latency,\n"
		"                       both scaled by one factor (printed); the emulated NIC\n"
		"                       paces (docs/lab.md)\n"
		"      --channels C     with --like: connections (QPs) per hop (default 2)\n"
		"      --proto P        with --like: simple (512 KiB steps, default), ll128, ll\n"
		"      --hw-fault SPEC  with --like: a fault of the emulated fabric, unknown to\n"
		"                       the plugin: downgrade:node=nodeK[,nic=J],rate=50%%,\n"
		"                       pause:node=nodeK,every=100ms,for=40ms,\n"
		"                       latency:node=nodeK,add=20us, spine:spine=J,rate=50%%,\n"
		"                       uplink:leaf=I,spine=J,rate=50%% or\n"
		"                       leafport:node=nodeK[,nic=J],rate=50%% (switches also\n"
		"                       every=T,for=T or add=T; docs/lab.md)\n"
		"      --topology T     with --like: the switches: fat-tree:leaves=L,spines=S\n"
		"                       (nodes in order over the leaves, every leaf to every\n"
		"                       spine, ECMP by connection), rail (NIC k of every node\n"
		"                       on leaf k) or a description FILE (default: flat, no\n"
		"                       switches); the run folder keeps it as topology.json\n"
		"      --fabric F       tcp (the socket transport, default), roce or ib (the\n"
		"                       verbs transport on the emulated NIC, gradients in\n"
		"                       emulated GPU memory with GPUDirect RDMA)\n"
		"      --copy-rate R    roce/ib: the emulated host<->GPU copy rate that staging\n"
		"                       without GPUDirect pays (default 4x the link rate)\n"
		"      --scenario NAME  the scenario, as the first argument does\n"
		"      --fault SPEC     any FABRICLAB_FAULT value instead of a scenario\n"
		"      --target nodeK   the victim (default: a random node, printed)\n"
		"      --netns          each node in its own network namespace, on a bridge\n"
		"                       (root only; removed at exit, on error and on Ctrl-C)\n"
		"      --tc halve-cable with --netns: the kernel's tc (tbf on both ends of the\n"
		"                       target's veth) halves its cable instead of the plugin\n"
		"      --dir DIR        where run folders go (default ./fabriclab-lab)\n"
		"      --serve          the lab in the browser instead: a page to pick fabric,\n"
		"                       nodes, scenario and target, with live step times and\n"
		"                       the report (one run at a time)\n"
		"      --listen A:P     with --serve: where (default 127.0.0.1:8080, loopback)\n"
		"      --allow-remote   with --serve: allow a --listen address that is not\n"
		"                       loopback (anyone reaching it could start runs)\n"
		"      --transport T    FABRICLAB_TRANSPORT for every rank: socket, ib, auto, or\n"
		"                       ext:<plugin> to run the scenario over another net plugin\n"
		"  -h, --help           this text\n"
		"\n"
		"A run folder holds the ranks' reports (reports/), the merged report\n"
		"(report.json) and every rank's step timings (steps.tsv).\n"
		"Exit status: 0 done; 1 the run failed; 2 bad usage; 130 interrupted.\n",
		LAB_MAX_RANKS, DEFAULT_LINK_RATE);
}

static int bad(const char *opt, const char *value, const char *expected)
{
	return tool_bad_option("lab", opt, value, expected);
}

static int parse_target(const char *v, struct lab_opts *o)
{
	long k;

	char expected[32];

	snprintf(expected, sizeof(expected), "node0 to node%d", LAB_MAX_RANKS - 1);
	if (strncmp(v, "node", 4) || shim_parse_long(v + 4, &k) || k < 0 || k >= LAB_MAX_RANKS)
		return bad("--target", v, expected);
	o->target = (int)k;
	return 0;
}

static int parse_scenario(const char *opt, const char *v, struct lab_opts *o)
{
	if (lab_scenario_parse(v, &o->scenario))
		return bad(opt, v,
			   "healthy, halve-cable, slow-node, gdr-off, flaky-roce or slow-rail");
	return 0;
}

static int parse_ms(const char *opt, const char *v, double max, double *out)
{
	char expected[64], *end;

	errno = 0;
	*out = strtod(v, &end);
	snprintf(expected, sizeof(expected), "a number of milliseconds from 0 to %.0f", max);
	if (errno || end == v || *end || !(*out >= 0 && *out <= max))
		return bad(opt, v, expected);
	return 0;
}

static int parse_one(int c, const char *v, struct lab_opts *o)
{
	long n;

	switch (c) {
	case 'n':
		if (shim_parse_long(v, &n) || n < 1 || n > LAB_MAX_RANKS)
			return bad("--ranks", v, "an integer from 1 to " LAB_MAX_RANKS_TEXT);
		o->ranks = (int)n;
		return 0;
	case 's':
		if (shim_parse_long(v, &o->steps) || o->steps < 1 || o->steps > 100000)
			return bad("--steps", v, "an integer from 1 to 100000");
		return 0;
	case 'g':
		if (fl_parse_bytes(v, &o->grad_bytes) || o->grad_bytes < 4 ||
		    o->grad_bytes > MAX_GRAD)
			return bad("--grad", v, "a byte count from 4 to 1G, like 64K or 16M");
		return 0;
	case 'c': return parse_ms("--compute", v, 60000, &o->compute_ms);
	case 'L':
		o->link_rate = v;
		if (lab_parse_rate(v, &o->link_rate_bytes) || o->link_rate_bytes < 1e6)
			return bad("--link-rate", v,
				   "a rate of at least 8mbit, like 400mbit or 1gbit");
		return 0;
	case 'S': return parse_scenario("--scenario", v, o);
	case 'F':
		o->scenario = LAB_CUSTOM;
		o->fault = v;
		return 0;
	case 'T': return parse_target(v, o);
	case 'N': o->netns = true; return 0;
	case 'C':
		o->tc = true;
		if (strcmp(v, "halve-cable"))
			return bad("--tc", v, "halve-cable (the one cut tc makes here)");
		o->scenario = LAB_HALVE_CABLE;
		return 0;
	case 'D': o->dir = v; return 0;
	case 'R':
		if (shim_parse_long(v, &n) || n < 1 || n > 8)
			return bad("--rails", v, "an integer from 1 to 8");
		o->rails = (int)n;
		return 0;
	case 'K':
		if (shim_parse_long(v, &n) || n < 0 || n > 7)
			return bad("--rail", v, "a rail from 0 to 7");
		o->target_rail = (int)n;
		return 0;
	case 'B':
		if (lab_fabric_parse(v, &o->fabric))
			return bad("--fabric", v, "tcp, roce or ib");
		return 0;
	case 'P':
		if (lab_parse_rate(v, &o->copy_rate_bytes) || o->copy_rate_bytes < 1e6)
			return bad("--copy-rate", v, "a rate of at least 8mbit, like 2gbyte");
		return 0;
	case 'l': return lab_like_parse(v, o) ? EXIT_USAGE : 0;
	case 'p': return lab_proto_parse(v, o) ? EXIT_USAGE : 0;
	case 'H': o->hw_fault = v; return 0;
	case 'Y': o->topology = v; return 0;
	case 'A':
		if (shim_parse_long(v, &n) || n < 1 || n > 16)
			return bad("--channels", v, "an integer from 1 to 16");
		o->channels = (int)n;
		return 0;
	case 'X':
		if (strcmp(v, "socket") && strcmp(v, "ib") && strcmp(v, "auto") &&
		    (strncmp(v, "ext:", 4) || !v[4]))
			return bad("--transport", v, "socket, ib, auto or ext:<plugin>");
		o->transport = v;
		return 0;
	default: return EXIT_USAGE;
	}
}

/* --like and what only it makes sense with. */
static int check_like(struct lab_opts *o)
{
	if (!o->like && (o->hw_fault || o->channels || o->proto || o->topology)) {
		fprintf(stderr, "fabriclab lab: %s needs --like hdr|ndr|xdr|roce400 (the emulated "
			"fabric's physics)\n", o->hw_fault ? "--hw-fault" : o->channels ? "--channels"
			: o->proto ? "--proto" : "--topology");
		return EXIT_USAGE;
	}
	if (!o->like)
		return 0;
	if (o->fabric != LAB_TCP && o->fabric != o->like->fabric) {
		fprintf(stderr, "fabriclab lab: --like %s is a%s fabric: drop --fabric %s\n",
			o->like->name, o->like->fabric == LAB_IB ? "n InfiniBand" : " RoCE",
			lab_fabric_name(o->fabric));
		return EXIT_USAGE;
	}
	if (o->link_rate_bytes) {
		fprintf(stderr, "fabriclab lab: --like sets the rate (the preset's, scaled): drop "
			"--link-rate\n");
		return EXIT_USAGE;
	}
	lab_like_apply(o);
	lab_verdict_prior(o);
	return 0;
}

static int check_opts(struct lab_opts *o)
{
	o->nodes = o->ranks;
	/* first: --like implies the fabric the rails are checked against */
	if (check_like(o))
		return EXIT_USAGE;
	if (lab_rails_check(o))
		return EXIT_USAGE;
	o->ranks = o->nodes * o->rails;
	if (o->hw_fault && lab_hw_parse(o->hw_fault, o, &o->hw))
		return EXIT_USAGE;
	if (o->fabric != LAB_TCP && lab_topology_build(o))
		return EXIT_USAGE;
	if (o->target >= o->nodes) {
		fprintf(stderr,
			"fabriclab lab: --target node%d: there are %d %s (node0..node%d)\n",
			o->target, o->nodes, o->rails > 1 ? "nodes" : "ranks", o->nodes - 1);
		return EXIT_USAGE;
	}
	if (o->scenario == LAB_FLAKY_ROCE && o->fabric == LAB_IB) {
		fprintf(stderr, "fabriclab lab: flaky-roce is a PFC pause storm, an Ethernet "
			"fault: use --fabric roce (or tcp)\n");
		return EXIT_USAGE;
	}
	if (o->tc && o->fabric != LAB_TCP) {
		fprintf(stderr, "fabriclab lab: --tc shapes TCP on the veths: it needs --fabric "
			"tcp\n");
		return EXIT_USAGE;
	}
	if (o->tc && o->scenario != LAB_HALVE_CABLE) {
		fprintf(stderr, "fabriclab lab: --tc halve-cable is the scenario: drop \"%s\"\n",
			lab_scenario_name(o->scenario));
		return EXIT_USAGE;
	}
	if (o->tc && !o->netns) {
		fprintf(stderr, "fabriclab lab: --tc needs --netns: tc shapes the ranks' veths\n");
		return EXIT_USAGE;
	}
	if (o->netns && geteuid() != 0) {
		fprintf(stderr, "fabriclab lab: --netns needs root (it creates network "
			"namespaces, veth pairs and a bridge)\n");
		return EXIT_USAGE;
	}
	if (o->grad_bytes / sizeof(float) < (size_t)o->ranks)
		fprintf(stderr, "fabriclab lab: note: --grad %zu is less than a float per rank\n",
			o->grad_bytes);
	return 0;
}

/* 0 = run, 1 = help printed, EXIT_USAGE = bad command line (already said why). */
static int parse_args(int argc, char **argv, struct lab_opts *o)
{
	static const struct option longs[] = {
		{ "ranks", required_argument, NULL, 'n' },
		{ "steps", required_argument, NULL, 's' },
		{ "grad", required_argument, NULL, 'g' },
		{ "compute", required_argument, NULL, 'c' },
		{ "link-rate", required_argument, NULL, 'L' },
		{ "scenario", required_argument, NULL, 'S' },
		{ "fault", required_argument, NULL, 'F' },
		{ "target", required_argument, NULL, 'T' },
		{ "netns", no_argument, NULL, 'N' },
		{ "tc", required_argument, NULL, 'C' },
		{ "dir", required_argument, NULL, 'D' },
		{ "rails", required_argument, NULL, 'R' },
		{ "rail", required_argument, NULL, 'K' },
		{ "fabric", required_argument, NULL, 'B' },
		{ "copy-rate", required_argument, NULL, 'P' },
		{ "transport", required_argument, NULL, 'X' },
		{ "like", required_argument, NULL, 'l' },
		{ "proto", required_argument, NULL, 'p' },
		{ "hw-fault", required_argument, NULL, 'H' },
		{ "topology", required_argument, NULL, 'Y' },
		{ "channels", required_argument, NULL, 'A' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":n:s:g:c:h", longs, NULL)) != -1) {
		if (c == 'h') {
			lab_usage(stdout);
			return 1;
		}
		if (c == '?' || c == ':') {
			fprintf(stderr, "fabriclab lab: %s \"%s\" (see `fabriclab lab --help`)\n",
				c == '?' ? "unknown option" : "missing value for",
				argv[optind - 1]);
			return EXIT_USAGE;
		}
		if (parse_one(c, optarg, o))
			return EXIT_USAGE;
	}
	if (optind < argc && parse_scenario("scenario", argv[optind++], o))
		return EXIT_USAGE;
	if (optind < argc) {
		fprintf(stderr, "fabriclab lab: unexpected argument \"%s\" (see `fabriclab lab "
			"--help`)\n", argv[optind]);
		return EXIT_USAGE;
	}
	return check_opts(o);
}

static int make_dirs(char *path)
{
	for (char *p = path + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(path, 0755) && errno != EEXIST) {
			*p = '/';
			return -1;
		}
		*p = '/';
	}
	return mkdir(path, 0755) && errno != EEXIST ? -1 : 0;
}

static int make_run_dir(struct lab_opts *o)
{
	char stamp[32];
	time_t now = time(NULL);
	struct tm tm;

	snprintf(o->run_id, sizeof(o->run_id), "%d", (int)getpid());
	strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", localtime_r(&now, &tm));
	snprintf(o->run_dir, sizeof(o->run_dir), "%s/%s-%s-%s", o->dir, stamp,
		 o->tc ? "tc-halve-cable" : lab_scenario_name(o->scenario), o->run_id);
	if (make_dirs(o->run_dir)) {
		fprintf(stderr, "fabriclab lab: cannot create %s: %s\n", o->run_dir,
			strerror(errno));
		return -1;
	}
	return 0;
}

/* The ranks' environment: what a chaos run would set on every pod, and nothing stale. */
static void rank_env(const struct lab_opts *o)
{
	char reports[PATH_MAX + 16];

	snprintf(reports, sizeof(reports), "%s/reports", o->run_dir);
	setenv("FABRICLAB_REPORT_DIR", reports, 1);
	setenv("FABRICLAB_REPORT_INTERVAL", "0", 1);
	if (o->like)
		unsetenv("FABRICLAB_LINK_RATE"); /* the emulated NIC paces */
	else
		setenv("FABRICLAB_LINK_RATE", o->link_rate, 1);
	setenv("FABRICLAB_SOCKET_IFNAME", o->netns ? "eth0" : "lo", 1);
	/*
	 * A data stream per connection: a helper thread blocked in recv() times the
	 * receiver's wire. Without it (the plugin's default) only senders time
	 * it, and the kernel's socket buffers hide a receiver paced slower.
	 */
	setenv("FABRICLAB_SOCKET_NSTREAMS", "1", 0);
	/*
	 * Up to 16 ranks share a few cores: an idle rank sleeps 100 us between polls
	 * instead of spinning, so the CPU goes to the ranks with bytes to move (a
	 * 512 KiB step takes 10 ms at 400 mbit/s: the added latency is 1%).
	 */
	setenv("FABRICLAB_SHIM_IDLE_US", "100", 0);
	if (o->transport)
		setenv("FABRICLAB_TRANSPORT", o->transport, 1);
	if (o->spec[0])
		setenv("FABRICLAB_FAULT", o->spec, 1);
	else
		unsetenv("FABRICLAB_FAULT");
	/* The spawner names each rank node<r>; a name or rank from our own shell would win. */
	unsetenv("FABRICLAB_NODE_NAME");
	unsetenv("NODE_NAME");
	unsetenv("FABRICLAB_RANK");
	unsetenv("NCCL_SOCKET_IFNAME");
}

static void print_header(const struct lab_opts *o, FILE *out)
{
	fprintf(out, "fabriclab lab: %d rank%s (node0..node%d), %ld steps: compute %.0f ms "
		"(a sleep standing in for the GPU), then all-reduce of %zu bytes of gradients\n",
		o->ranks, o->ranks == 1 ? "" : "s", o->nodes - 1, o->steps, o->compute_ms,
		o->grad_bytes / sizeof(float) * sizeof(float));
	if (o->rails > 1)
		fprintf(out, "rails: %d nodes x %d NICs (%s0..%s%d, NIC k of every node on "
			"leaf switch k%s), a rank per NIC: rank k x %d + n is node n's NIC k\n",
			o->nodes, o->rails, o->fabric == LAB_TCP ? "eth" : "mlx5_",
			o->fabric == LAB_TCP ? "eth" : "mlx5_", o->rails - 1,
			o->fabric == LAB_TCP ? ": bridge br<k>" : "", o->nodes);
	if (o->transport)
		fprintf(out, "transport: FABRICLAB_TRANSPORT=%s\n", o->transport);
	if (o->like) {
		lab_like_print(o, out);
		lab_topology_print(o, out);
	}
	else
		fprintf(out, "link rate: %s on every hop (%.1f MB/s), reported as each device's "
			"speed%s\n", o->link_rate, o->link_rate_bytes / 1e6,
			o->netns ? "; each rank in its own network namespace" : "");
	if (o->fabric == LAB_TCP)
		fprintf(out, "fabric: tcp (the socket transport; host memory, as NCCL over "
			"sockets)\n");
	else
		fprintf(out, "fabric: %s (the verbs transport on the emulated NIC; gradients in "
			"emulated GPU memory, GPUDirect RDMA; host<->GPU copies at %.1f MB/s)\n",
			o->fabric == LAB_IB ? "ib (InfiniBand, LIDs)" : "roce (RoCE v2 GIDs)",
			o->copy_rate_bytes / 1e6);
	if (o->scenario == LAB_GDR_OFF && o->fabric == LAB_TCP)
		fprintf(out, "note: over tcp no node uses GPUDirect RDMA, so gdr-off changes "
			"nothing measurable: try --fabric roce or ib\n");
	if (o->scenario == LAB_HEALTHY)
		fprintf(out, "scenario: healthy (no fault)\n");
	else if (o->scenario == LAB_CUSTOM)
		fprintf(out, "scenario: --fault\n");
	else if (o->scenario == LAB_SLOW_RAIL)
		fprintf(out, "scenario: slow-rail on rail %d (%s%d of every node)%s\n",
			o->target_rail, o->fabric == LAB_TCP ? "eth" : "mlx5_", o->target_rail,
			o->target_random ? " (chosen at random; --rail to choose)" : "");
	else
		fprintf(out, "scenario: %s on node%d%s\n", lab_scenario_name(o->scenario),
			o->target,
			o->target_random ? " (chosen at random; --target to choose)" : "");
	if (o->target_compute != 1.0)
		fprintf(out, "node%d's GPU at 1/%.0f speed: its compute takes %.0f ms, the "
			"others' %.0f ms\n", o->target, o->target_compute,
			o->compute_ms * o->target_compute, o->compute_ms);
	if (o->tc)
		fprintf(out, "fault: tc tbf at %.0f mbit on both ends of node%d's veth (the "
			"kernel, not the plugin)\n", o->link_rate_bytes * 8 / 2e6, o->target);
	else if (o->spec[0])
		fprintf(out, "fault: FABRICLAB_FAULT='%s' (the verdict is computed from "
			"measurements only)\n", o->spec);
	fprintf(out, "run folder: %s\n", o->run_dir);
	fflush(out);
}

static pid_t lab_pid; /* the launcher's: a forked rank runs this handler until it resets it */

/*
 * The launcher stops its ranks and cleans up. A rank is forked with this
 * handler and resets SIGTERM only once it runs (shim/spawn.c, run_child): a
 * stop sent in between used to set the rank's own copy of lab_stop and be
 * lost, and the rank ran on until the spawner's SIGKILL 5 s later. In a rank,
 * the signal acts as the default it is about to get: it ends the rank.
 */
static void on_signal(int sig)
{
	if (getpid() != lab_pid) {
		signal(sig, SIG_DFL);
		raise(sig); /* delivered when this handler returns */
		return;
	}
	lab_stop = sig;
}

static void catch_signals(void)
{
	struct sigaction sa = { .sa_handler = on_signal };

	lab_pid = getpid();
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

/* In each rank: its messages (the plugin's included) go to the run folder's ranks.log. */
static int enter_rank(int rank, void *opts)
{
	const struct lab_opts *o = opts;
	char path[PATH_MAX + 16];
	int fd;

	snprintf(path, sizeof(path), "%s/ranks.log", o->run_dir);
	fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (fd < 0 || dup2(fd, STDERR_FILENO) < 0)
		return shim_fail(FL_ERR_SYSTEM, "%s: %s", path, strerror(errno));
	close(fd);
	lab_fabric_enter(o, rank);
	return o->netns ? lab_netns_enter(rank, opts) : FL_OK;
}

/* The last lines of the ranks' log, where a failed rank said why. */
static void show_log(const struct lab_opts *o)
{
	char path[PATH_MAX + 16], tail[2048];
	size_t n = 0, start = 0;
	struct stat st;
	int lines = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/ranks.log", o->run_dir);
	f = fopen(path, "r");
	if (!f)
		return;
	/* The file's end: a short log is read whole. */
	if (!fstat(fileno(f), &st) && st.st_size > (off_t)(sizeof(tail) - 1))
		fseek(f, -(long)(sizeof(tail) - 1), SEEK_END);
	n = fread(tail, 1, sizeof(tail) - 1, f);
	fclose(f);
	tail[n] = '\0';
	for (size_t i = n; i-- > 0 && lines <= 12;) {
		if (tail[i] == '\n' && ++lines > 12)
			start = i + 1;
	}
	fprintf(stderr, "fabriclab lab: the ranks' messages are in %s; the last ones:\n%s", path,
		tail + start);
}

static int prepare_netns(struct lab_opts *o, struct shim_spawn_opts *spawn, char *addr,
			 size_t addr_len)
{
	char why[1024];

	if (lab_netns_remove_stale(stdout) < 0)
		return -1;
	if (lab_netns_create(o, why, sizeof(why)) || (o->tc && lab_tc_halve(o, why, sizeof(why))) ||
	    lab_netns_listen(o, &spawn->listen_fd, addr, addr_len, why, sizeof(why))) {
		fprintf(stderr, "fabriclab lab: network namespaces: %s\n", why);
		return -1;
	}
	spawn->master_addr = addr;
	return 0;
}

static int run_ranks(struct lab_opts *o)
{
	struct shim_spawn_opts spawn = { .listen_fd = -1, .enter = enter_rank, .ctx = o,
					 .stop = &lab_stop };
	char addr[32];
	int rc = 0;

	if (o->netns)
		rc = prepare_netns(o, &spawn, addr, sizeof(addr));
	if (!rc && !lab_stop) {
		rc = shim_spawn_ex(o->ranks, lab_rank, o, &spawn);
		if (rc && !lab_stop) {
			fprintf(stderr, "fabriclab lab: %s\n", shim_error_text());
			show_log(o);
		}
	}
	if (spawn.listen_fd >= 0)
		close(spawn.listen_fd);
	if (o->netns)
		lab_netns_destroy(o);
	return rc ? -1 : 0;
}

static void print_epilogue(const struct lab_opts *o, FILE *out)
{
	fprintf(out, "\nagain, or as pictures: fabriclab report %s/reports [--svg FILE]\n",
		o->run_dir);
}

static bool wants_serve(int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--serve"))
			return true;
	return false;
}

/* One run; what it builds in o (the fabric's description) the caller frees. */
static int lab_run(int argc, char **argv, struct lab_opts *o)
{
	static char dir[PATH_MAX];
	int rc;

	rc = parse_args(argc, argv, o);
	if (rc)
		return rc == 1 ? 0 : rc;
	if (!o->link_rate_bytes && lab_parse_rate(o->link_rate, &o->link_rate_bytes))
		return EXIT_USAGE;
	if (lab_scenario_prepare(o))
		return EXIT_USAGE;
	if (!tool_plugin_dir(dir, sizeof(dir)))
		o->tool_dir = dir;
	if (make_run_dir(o))
		return EXIT_FAILED;
	if (!o->copy_rate_bytes)
		o->copy_rate_bytes = 4 * o->link_rate_bytes;
	if (lab_fabric_env(o))
		return EXIT_FAILED;
	print_header(o, stdout);
	rank_env(o);
	catch_signals();
	rc = run_ranks(o);
	if (lab_stop) {
		fprintf(stderr, "fabriclab lab: interrupted (signal %d); cleaned up\n",
			(int)lab_stop);
		return EXIT_INTERRUPTED;
	}
	if (!rc)
		rc = lab_print_steps(o, stdout);
	if (!rc)
		lab_like_print_schedule(o, stdout);
	if (!rc)
		rc = lab_print_report(o, stdout);
	if (!rc)
		print_epilogue(o, stdout);
	return rc ? EXIT_FAILED : 0;
}

int lab_main(int argc, char **argv)
{
	struct lab_opts o = { .ranks = 8, .rails = 1, .target_rail = -1, .steps = 8, .grad_bytes = 8 << 20, .compute_ms = 20,
			      .link_rate = DEFAULT_LINK_RATE, .scenario = LAB_HEALTHY,
			      .target = -1, .target_compute = 1.0, .dir = "fabriclab-lab" };
	int rc;

	if (wants_serve(argc, argv))
		return lab_serve_main(argc, argv);
	rc = lab_run(argc, argv, &o);
	ft_free(&o.topo);
	return rc;
}
