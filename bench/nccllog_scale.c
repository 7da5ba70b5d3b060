/*
 * `fabriclab nccl-log` on the logs of a large job: N (10^6) lines, each from a
 * process of its own (host:pid), parsed, judged and printed as text and as
 * JSON (to /dev/null). Goal: < 10 s of CPU in all; prints the peak RSS beside
 * the log's size. One rank on NET/Socket must be the one flagged.
 * Usage: nccllog_scale [N]
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

#include "tools/nccllog/nccllog.h"

#define GOAL_S 10.0

static double cpu_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000000;
	struct nl_log log = { 0 };
	struct nl_rank *last = NULL;
	FILE *devnull = fopen("/dev/null", "w");
	double bytes = 0, t0 = cpu_s(), t1;
	size_t flagged = 0;
	struct rusage ru;
	char line[128];
	int rc = 0;

	for (long i = 0; !rc && i < n; i++) {
		int len = snprintf(line, sizeof(line),
				   "host%07ld:%ld:%ld [0] NCCL INFO Using network %s\n", i,
				   1000 + i, 1000 + i, i == n / 2 ? "Socket" : "IB");

		bytes += len;
		rc = nl_parse_line(&log, line, &last);
	}
	rc = rc ? rc : nl_judge(&log, &flagged);
	if (!rc && devnull) {
		nl_print_text(&log, flagged, devnull);
		rc = nl_print_json(&log, flagged, devnull);
	}
	t1 = cpu_s() - t0;
	getrusage(RUSAGE_SELF, &ru);
	printf("nccl-log: %ld lines (%.0f MiB of log), %zu ranks, %zu flagged: parse + judge + "
	       "text + JSON %.2f s CPU (goal < %.0f s), peak RSS %.0f MiB\n", n,
	       bytes / (1 << 20), log.n, flagged, t1, GOAL_S, (double)ru.ru_maxrss / 1024.0);
	rc = rc || !devnull || (size_t)n != log.n || flagged != 1 || t1 >= GOAL_S;
	nl_log_free(&log);
	if (devnull)
		fclose(devnull);
	return rc ? 1 : 0;
}
