/*
 * `fabriclab report` at fleet scale, on generated reports in a temporary folder:
 *   report_scale fleet [NODES [DIR]]  NODES (16384) x 8 devices, one report per device on its
 *                               rail's ring: 131 072 reports read, joined and judged in < 10 s
 *                               and < 1 GiB; one slow rail of one node must be named. With DIR
 *                               the reports are kept there (written when it has none yet): a
 *                               profiler then sees the reading alone.
 *   report_scale ports [NODES [DIR]]
 *                               the fleet again, each report with its node's 8 RoCE ports: a
 *                               congestion counter rising on every one (each port a suspect,
 *                               listed once per node however many reports carry it) and one
 *                               node's PFC off on one of them, which must be named: < 10 s,
 *                               < 1 GiB (every port looked up by name, not by a scan).
 *   report_scale hops [N]       one report of N (10^6) distinct hops, < 30 s.
 *   report_scale repeat [N]     one report of N (500 000) identical hops: refused as repeated
 *                               views, not summed into one (< 30 s).
 *   report_scale formats TOOL [NODES [DIR]]
 *                               the fleet's reports (kept in DIR, as for fleet) through the
 *                               command, `TOOL report DIR` in each output format: text, --json,
 *                               --prom FILE, --svg FILE, each in a process of its own, side by
 *                               side: < 10 s and < 1 GiB each (issue 48).
 *   report_scale hop-formats TOOL [N]
 *                               the same for one report of N (10^6) distinct hops: < 10 s each.
 * Prints wall and process CPU time and the peak RSS (getrusage): on a shared machine the CPU
 * time is what the goal is held to, the wall clock shown beside it (with the load average).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "plugin/base/error.h"
#include "tools/report/report.h"

#define DEVS 8
#define SLOW_DEV 5
#define FLEET_GOAL_S 10.0
#define FLEET_GOAL_MIB 1024.0
#define HOPS_GOAL_S 30.0
#define FORMATS_GOAL_S 10.0 /* each output format, fleet or 10^6 hops (issue 48) */

static double clock_s(clockid_t id)
{
	struct timespec t;

	clock_gettime(id, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* User and system CPU seconds of this process so far. */
static void cpu_split(double *user, double *sys)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	*user = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6;
	*sys = (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
}

static double peak_mib(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_maxrss / 1024.0;
}

static void hop(FILE *f, const char *view, int src, int dst, int dev, double gbs)
{
	const double bytes = 8.0 * (1 << 30);

	fprintf(f,
		"{\"src_node\":\"node%05d\",\"src_dev\":\"mlx5_%d\",\"dst_node\":\"node%05d\","
		"\"dst_dev\":\"mlx5_%d\",\"src_rank\":%d,\"dst_rank\":%d,\"view\":\"%s\","
		"\"transport\":\"ib\",\"line_rate_gbs\":50.0,\"connections\":4,\"bytes\":%.0f,"
		"\"messages\":16384,\"wire_seconds\":%.9f,\"wire_gbs\":%.6f,\"active_seconds\":%.9f,"
		"\"peer_wait_seconds\":%.9f,\"wire_time_us\":{\"p50\":%.1f,\"p99\":%.1f,\"max\":%.1f},"
		"\"size_histogram\":[[524288,16384]],\"memory\":[\"cuda\"],\"gdr\":true}",
		src, dev, dst, dev, src * DEVS + dev, dst * DEVS + dev, view, bytes,
		bytes / (gbs * 1e9), gbs, 1.3 * bytes / (gbs * 1e9), 0.35 * bytes / (gbs * 1e9),
		524288.0 / (gbs * 1e3), 1.2 * 524288.0 / (gbs * 1e3), 2.6 * 524288.0 / (gbs * 1e3));
}

/* The hop src -> src+1 on rail dev: slow when it touches the slow node's bad device. */
static double rate(int src, int dev, int nodes, int slow)
{
	bool bad = dev == SLOW_DEV && (src == slow || (src + 1) % nodes == slow);

	return bad ? 18.0 : 44.0 + (double)((src * 7 + dev * 3) % 9) * 0.5;
}

/* The node's 8 RoCE ports as each of its reports lists them; node odd has PFC off on eth3. */
static void ports(FILE *f, int node, int odd)
{
	fputs(",\"ports\":[", f);
	for (int d = 0; d < DEVS; d++)
		fprintf(f,
			"%s{\"name\":\"mlx5_%d/1\",\"device\":\"mlx5_%d\",\"netdev\":\"eth%d\","
			"\"active\":true,\"active_gbps\":400.0,\"max_gbps\":400.0,"
			"\"delta_seconds\":600.0,\"qos\":{\"trust\":\"dscp\",\"pfc\":\"%s\","
			"\"ecn_np\":\"00010000\",\"ecn_rp\":\"00010000\"},\"rising\":[{\"counter\":"
			"\"hw_counters/np_cnp_sent\",\"delta\":%d,\"severity\":\"congestion\"}]}",
			d ? "," : "", d, d, d, node == odd && d == 3 ? "00000000" : "00010000",
			100 + node % 7);
	fputc(']', f);
}

static int write_fleet(const char *dir, int nodes, int slow, int odd)
{
	for (int n = 0; n < nodes; n++) {
		for (int d = 0; d < DEVS; d++) {
			int next = (n + 1) % nodes, prev = (n + nodes - 1) % nodes;
			char path[512];
			FILE *f;

			snprintf(path, sizeof(path), "%s/node%05d-%d.json", dir, n, 10000 + d);
			if (!(f = fopen(path, "w")))
				return -1;
			fprintf(f,
				"{\"schema\":\"fabriclab-report\",\"schema_version\":1,\"node\":"
				"\"node%05d\",\"pid\":%d,\"rank\":%d,\"world_size\":%d,\"final\":true,"
				"\"written_unix\":1700000600.0,\"transport\":\"ib\",\"devices\":"
				"[{\"name\":\"mlx5_%d\",\"ptr_support\":[\"host\",\"cuda\"]}],\"hops\":[",
				n, 10000 + d, n * DEVS + d, nodes * DEVS, d);
			hop(f, "send", n, next, d, rate(n, d, nodes, slow) * 1.02);
			fputc(',', f);
			hop(f, "recv", prev, n, d, rate(prev, d, nodes, slow));
			fputc(']', f);
			if (odd >= 0)
				ports(f, n, odd);
			fputs("}\n", f);
			if (fclose(f))
				return -1;
		}
	}
	return 0;
}

/* One report of n hops: node0's rail 0 to n distinct peers, or the same peer n times. */
static int write_hops(const char *path, long n, bool same)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -1;
	fputs("{\"schema\":\"fabriclab-report\",\"schema_version\":1,\"node\":\"node00000\","
	      "\"pid\":1,\"final\":true,\"transport\":\"ib\",\"hops\":[", f);
	for (long i = 0; i < n; i++) {
		long k = same ? 1 : i + 1;

		fprintf(f,
			"%s{\"src_node\":\"node00000\",\"src_dev\":\"mlx5_%ld\",\"dst_node\":"
			"\"node%05ld\",\"dst_dev\":\"mlx5_0\",\"view\":\"send\",\"bytes\":1000000000,"
			"\"messages\":1000,\"wire_seconds\":0.1,\"wire_gbs\":10.0,"
			"\"line_rate_gbs\":50.0,\"active_seconds\":0.2,\"peer_wait_seconds\":0.0,"
			"\"gdr\":true}",
			i ? "," : "", k % DEVS, k / DEVS);
	}
	fputs("]}\n", f);
	return fclose(f);
}

/* The ports mode's outcome: every port a suspect once, the odd node's PFC named. */
static int check_ports(const struct report_set *set, int odd)
{
	char node[32];
	bool bad;

	snprintf(node, sizeof(node), "node%05d", odd);
	bad = set->nsuspects != set->nfiles || set->nlossless != 1 ||
	      strcmp(set->lossless[0].node, node) || strcmp(set->lossless[0].netdev, "eth3");
	printf("  %zu suspect ports, %zu RoCE interfaces, %zu lossless difference(s): %s%s\n",
	       set->nsuspects, set->nroce, set->nlossless,
	       set->nlossless ? set->lossless[0].text : "none", bad ? " WRONG" : "");
	return bad;
}

static int run(const char *what, const char *path, double goal_s, double goal_mib,
	       const char *expect_error, int slow, int odd)
{
	struct fl_verdict_params params;
	struct report_set set;
	double w0, c0, w1, c1, u0, s0, u1, s1, read_s;
	char node[32];
	int err, bad = 0;

	memset(&set, 0, sizeof(set));
	fl_verdict_default_params(&params);
	w0 = clock_s(CLOCK_MONOTONIC);
	c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
	cpu_split(&u0, &s0);
	err = report_add_path(&set, path);
	read_s = clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
	err = err ? err : report_merge(&set, &params);
	w1 = clock_s(CLOCK_MONOTONIC) - w0;
	c1 = clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
	cpu_split(&u1, &s1);
	printf("%s: %zu files, %zu hops: %.2f s CPU (read %.2f + join and verdict %.2f; user "
	       "%.2f, system %.2f; %.2f s wall), peak RSS %.0f MiB (goal < %.0f s CPU%s)\n", what,
	       set.nfiles, set.nhops, c1, read_s, c1 - read_s, u1 - u0, s1 - s0, w1, peak_mib(),
	       goal_s, goal_mib > 0 ? ", < 1024 MiB" : "");
	snprintf(node, sizeof(node), "node%05d", slow);
	if (expect_error) {
		bad = !err || !strstr(fl_error_text(), expect_error);
		printf("  %s: %s\n", bad ? "WRONG, expected an error" : "refused as expected",
		       err ? fl_error_text() : "no error");
	} else if (err) {
		printf("  WRONG: %s\n", fl_error_text());
		bad = 1;
	} else if (slow >= 0) {
		bad = set.verdict.kind != FL_VERDICT_DEVICE || strcmp(set.verdict.node, node) ||
		      strcmp(set.verdict.dev, "mlx5_5");
		printf("  verdict %s %s/%s%s\n", fl_verdict_kind_name(set.verdict.kind),
		       set.verdict.node, set.verdict.dev, bad ? " WRONG" : "");
		bad |= odd >= 0 && check_ports(&set, odd);
	}
	bad |= c1 >= goal_s || (goal_mib > 0 && peak_mib() >= goal_mib);
	report_free(&set);
	return bad;
}

/* One `TOOL report` in a process of its own: its wall clock, CPU, peak RSS and what it wrote. */
struct tool_run {
	double wall, user, sys, peak_mib, written_mib;
	int status;
};

static double file_mib(const char *path)
{
	struct stat st;

	return stat(path, &st) ? 0.0 : (double)st.st_size / (1 << 20);
}

static void run_tool(const char *tool, const char *reports, const char *format,
		     const char *out_dir, struct tool_run *r)
{
	char out[600], file[600];
	char *argv[] = { (char *)tool, "report", (char *)reports, NULL, NULL, NULL };
	struct rusage ru;
	double w0 = clock_s(CLOCK_MONOTONIC);
	pid_t pid;

	snprintf(out, sizeof(out), "%s/stdout", out_dir);
	snprintf(file, sizeof(file), "%s/report.%s", out_dir, format);
	if (strcmp(format, "text")) {
		argv[3] = !strcmp(format, "json") ? "--json" : !strcmp(format, "prom") ? "--prom"
										    : "--svg";
		argv[4] = strcmp(format, "json") ? file : NULL;
	}
	memset(r, 0, sizeof(*r));
	r->status = -1;
	if ((pid = fork()) == 0) {
		int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		if (fd < 0 || dup2(fd, STDOUT_FILENO) < 0)
			_exit(126);
		close(fd);
		execv(tool, argv);
		_exit(127);
	}
	if (pid < 0 || wait4(pid, &r->status, 0, &ru) != pid)
		return;
	r->wall = clock_s(CLOCK_MONOTONIC) - w0;
	r->user = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6;
	r->sys = (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
	r->peak_mib = (double)ru.ru_maxrss / 1024.0;
	r->written_mib = file_mib(out) + file_mib(file);
	unlink(out);
	unlink(file);
}

static double load_average(void)
{
	double load = -1.0;
	FILE *f = fopen("/proc/loadavg", "r");

	if (f) {
		if (fscanf(f, "%lf", &load) != 1)
			load = -1.0;
		fclose(f);
	}
	return load;
}

/*
 * Every output format of `TOOL report reports`, side by side. A format is over
 * its goal when its CPU time or peak RSS is; the wall clock is shown, and said
 * when it alone is over (a loaded machine shares its cores).
 */
static int formats(const char *what, const char *tool, const char *reports, const char *out_dir)
{
	static const char *const names[] = { "text", "json", "prom", "svg" };
	static const char *const shown[] = { "text", "--json", "--prom F", "--svg F" };
	struct tool_run r[4];
	int bad = 0;

	printf("%s through `%s report`, each format in a process of its own (load average "
	       "%.1f):\n  %-9s %8s %8s %8s %8s %10s %12s\n", what, tool, load_average(),
	       "format", "wall s", "CPU s", "user s", "sys s", "peak MiB", "written MiB");
	for (size_t k = 0; k < 4; k++) {
		bool over;

		run_tool(tool, reports, names[k], out_dir, &r[k]);
		over = r[k].user + r[k].sys >= FORMATS_GOAL_S || r[k].peak_mib >= FLEET_GOAL_MIB;
		bad |= over || !WIFEXITED(r[k].status) || WEXITSTATUS(r[k].status);
		printf("  %-9s %8.2f %8.2f %8.2f %8.2f %10.0f %12.1f  %s%s\n", shown[k], r[k].wall,
		       r[k].user + r[k].sys, r[k].user, r[k].sys, r[k].peak_mib, r[k].written_mib,
		       !WIFEXITED(r[k].status) || WEXITSTATUS(r[k].status) ? "FAILED (exit status)"
		       : over ? "OVER GOAL" : "ok",
		       !over && r[k].wall >= FORMATS_GOAL_S ? " (wall clock over: machine loaded?)"
							    : "");
	}
	printf("  goal: < %.0f s CPU and < %.0f MiB each; peak over the text path: json %+.0f, "
	       "prom %+.0f, svg %+.0f MiB\n", FORMATS_GOAL_S, FLEET_GOAL_MIB,
	       r[1].peak_mib - r[0].peak_mib, r[2].peak_mib - r[0].peak_mib,
	       r[3].peak_mib - r[0].peak_mib);
	return bad;
}

/* The outputs go to a folder of their own: the reports' folder is read whole. */
static int fleet_formats(const char *what, const char *tool, const char *reports)
{
	char out[] = "/tmp/fabriclab-bench-out.XXXXXX";
	int rc;

	if (!mkdtemp(out)) {
		perror("report_scale: mkdtemp");
		return 1;
	}
	rc = formats(what, tool, reports, out);
	rmdir(out);
	return rc;
}

int main(int argc, char **argv)
{
	char tmp[] = "/tmp/fabriclab-bench-scale.XXXXXX", path[600], cmd[700];
	const char *mode = argc > 1 ? argv[1] : "fleet";
	bool tool_mode = !strcmp(mode, "formats") || !strcmp(mode, "hop-formats");
	const char *tool = tool_mode && argc > 2 ? argv[2] : NULL;
	int arg = tool_mode ? 3 : 2; /* where NODES or N is */
	bool with_ports = !strcmp(mode, "ports");
	bool fleet = !strcmp(mode, "fleet") || !strcmp(mode, "formats") || with_ports;
	const char *kept = argc > arg + 1 && fleet ? argv[arg + 1] : NULL;
	const char *dir = kept ? kept : tmp;
	long n = argc > arg ? atol(argv[arg]) : 0;
	int rc = 1;

	if (tool_mode && (!tool || access(tool, X_OK))) {
		fprintf(stderr, "report_scale: %s TOOL: the fabriclab command to run (got %s)\n",
			mode, tool ? tool : "none");
		return 2;
	}

	if (!kept && !mkdtemp(tmp)) {
		perror("report_scale: mkdtemp");
		return 1;
	}
	if (fleet) {
		int nodes = n > 1 ? (int)n : 16384, slow = nodes / 2 + 1;
		int odd = with_ports ? nodes / 3 : -1;
		char what[96];

		snprintf(path, sizeof(path), "%s/node00000-10000.json", dir);
		snprintf(what, sizeof(what), "fleet merge, %d reports (%d nodes x %d NICs)",
			 nodes * DEVS, nodes, DEVS);
		if ((kept && !access(path, R_OK)) || !write_fleet(dir, nodes, slow, odd))
			rc = tool ? fleet_formats(what, tool, dir)
				  : run(with_ports ? "fleet with ports" : "fleet", dir, FLEET_GOAL_S,
					FLEET_GOAL_MIB, NULL, slow, odd);
	} else if (!strcmp(mode, "hop-formats")) {
		char what[96];

		n = n > 0 ? n : 1000000;
		snprintf(path, sizeof(path), "%s/one.json", dir);
		snprintf(what, sizeof(what), "one report of %ld distinct hops", n);
		if (!write_hops(path, n, false))
			rc = formats(what, tool, path, dir);
	} else if (!strcmp(mode, "hops") || !strcmp(mode, "repeat")) {
		bool same = !strcmp(mode, "repeat");

		n = n > 0 ? n : same ? 500000 : 1000000;
		snprintf(path, sizeof(path), "%s/one.json", dir);
		if (!write_hops(path, n, same))
			rc = run(same ? "identical hops" : "distinct hops", path, HOPS_GOAL_S, 0,
				 same ? "repeats hops[0]" : NULL, -1, -1);
	} else {
		fprintf(stderr, "usage: report_scale fleet|ports|hops|repeat [N] | formats TOOL "
			"[NODES [DIR]] | hop-formats TOOL [N]\n");
	}
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (!kept && system(cmd))
		fprintf(stderr, "report_scale: could not remove %s\n", dir);
	return rc;
}
