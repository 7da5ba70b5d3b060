/*
 * `fabriclab report` at cluster scale: 1024 nodes x 8 devices, one process per
 * device, each on its rail's ring (sending to the next node, receiving from the
 * previous one), written as full per-process reports into a temporary folder.
 * Times reading, joining and judging them in-process; goal < 2 s. One rail of
 * one node is made slow, and the verdict must name it.
 * Usage: report_merge [FOLDER]: writes into FOLDER (which must exist) and keeps
 * the reports there, to look at them with `fabriclab report`.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "plugin/base/error.h"
#include "plugin/base/version.h"
#include "tools/report/report.h"

#define NODES 1024
#define DEVS 8
#define SLOW_NODE 517
#define SLOW_DEV 3
#define GOAL_SECONDS 2.0

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* The hop src -> src+1 on rail dev: slow when it touches the bad device. */
static double hop_rate(int src, int dev)
{
	int dst = (src + 1) % NODES;
	bool bad = dev == SLOW_DEV && (src == SLOW_NODE || dst == SLOW_NODE);

	return bad ? 18.0 : 44.0 + (double)((src * 7 + dev * 3) % 9) * 0.5;
}

static void write_hop(FILE *f, const char *view, int src, int dst, int dev, double gbs, bool last)
{
	const double bytes = 8.0 * (1 << 30);
	/* each of its 512 KiB messages takes its time at the hop's rate (the verdict asks) */
	const double msg_us = 524288.0 / (gbs * 1e3);

	fprintf(f,
		"  {\"src_node\": \"node%04d\", \"src_dev\": \"mlx5_%d\", "
		"\"dst_node\": \"node%04d\", \"dst_dev\": \"mlx5_%d\", \"src_rank\": %d, "
		"\"dst_rank\": %d, \"view\": \"%s\", "
		"\"transport\": \"ib\", \"line_rate_gbs\": 50.0, \"connections\": 4, "
		"\"bytes\": %.0f, \"messages\": 16384, \"wire_seconds\": %.9f, \"wire_gbs\": %.6f, "
		"\"pct_line_rate\": %.3f, \"active_seconds\": %.9f, \"peer_wait_seconds\": %.9f, "
		"\"outstanding_seconds\": %.9f, "
		"\"wire_time_us\": {\"p50\": %.1f, \"p99\": %.1f, \"max\": %.1f}, "
		"\"size_histogram\": [[524288, 16384]], \"memory\": [\"cuda\"], \"gdr\": true}%s\n",
		src, dev, dst, dev, src * DEVS + dev, dst * DEVS + dev, view, bytes,
		bytes / (gbs * 1e9), gbs, 2.0 * gbs, 1.3 * bytes / (gbs * 1e9),
		0.35 * bytes / (gbs * 1e9), 1.3 * bytes / (gbs * 1e9), msg_us, 1.2 * msg_us, 2.6 * msg_us, last ? "" : ",");
}

static int write_process(const char *dir, int node, int dev)
{
	int next = (node + 1) % NODES, prev = (node + NODES - 1) % NODES;
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/node%04d-%d.json", dir, node, 10000 + dev);
	f = fopen(path, "w");
	if (!f)
		return -1;
	fprintf(f,
		"{\"schema\": \"fabriclab-report\", \"schema_version\": 1, \"fabriclab_version\": "
		"\"%s\", \"node\": \"node%04d\", \"pid\": %d, \"rank\": %d, \"final\": true, "
		"\"started_unix\": 1700000000.0, \"written_unix\": 1700000600.0, "
		"\"transport\": \"ib\", \"devices\": [{\"dev\": %d, \"name\": \"mlx5_%d\", "
		"\"speed_mbps\": 400000, \"line_rate_gbs\": 50.0, \"pci_path\": "
		"\"/sys/devices/pci0000:%02x/0000:%02x:00.0\", \"ptr_support\": [\"host\", "
		"\"cuda\", \"dmabuf\"]}], \"injected\": [], \"hops\": [\n",
		fl_version(), node, 10000 + dev, node * DEVS + dev, dev, dev, dev, dev);
	write_hop(f, "send", node, next, dev, hop_rate(node, dev) * 1.02, false);
	write_hop(f, "recv", prev, node, dev, hop_rate(prev, dev), true);
	fprintf(f, "], \"verdict\": {\"kind\": \"none\", \"hop\": null, \"node\": \"\", "
		   "\"dev\": \"\", \"ratio\": 1.0, \"median_gbs\": 45.0, \"culprit_gbs\": 0.0, "
		   "\"speedup\": 1.0, \"judged_hops\": 2, \"reason\": \"\", \"commands\": []}}\n");
	return fclose(f);
}

static int generate(const char *dir)
{
	for (int node = 0; node < NODES; node++) {
		for (int dev = 0; dev < DEVS; dev++) {
			if (write_process(dir, node, dev))
				return -1;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	char tmp[] = "/tmp/fabriclab-bench-report.XXXXXX", cmd[128];
	const char *dir = argc > 1 ? argv[1] : mkdtemp(tmp);
	struct fl_verdict_params params;
	struct report_set set;
	double t0, t1, t2;
	int err;

	if (!dir || generate(dir)) {
		fprintf(stderr, "report_merge: cannot write the synthetic reports into %s\n",
			dir ? dir : tmp);
		return 1;
	}
	memset(&set, 0, sizeof(set));
	fl_verdict_default_params(&params);
	t0 = now();
	err = report_add_path(&set, dir);
	t1 = now();
	err = err ? err : report_merge(&set, &params);
	t2 = now();
	if (err)
		fprintf(stderr, "report_merge: %s\n", fl_error_text());
	else
		printf("report merge: %zu files (%d nodes x %d devices), %zu hops: read %.2f s + "
		       "join and verdict %.2f s = %.2f s (goal < %.0f s); verdict %s %s/%s\n",
		       set.nfiles, NODES, DEVS, set.nhops, t1 - t0, t2 - t1, t2 - t0, GOAL_SECONDS,
		       fl_verdict_kind_name(set.verdict.kind), set.verdict.node, set.verdict.dev);
	if (!err && (set.verdict.kind != FL_VERDICT_DEVICE ||
		     strcmp(set.verdict.node, "node0517") || strcmp(set.verdict.dev, "mlx5_3"))) {
		fprintf(stderr, "report_merge: wrong verdict: %s\n", set.verdict.reason);
		err = 1;
	}
	report_free(&set);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (argc < 2 && system(cmd))
		fprintf(stderr, "report_merge: could not remove %s\n", dir);
	return err ? 1 : 0;
}
