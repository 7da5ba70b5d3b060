/*
 * The fabriclab command: a dispatcher. Each subcommand lives in its own files
 * and adds one line to the table below.
 */
#include <stdio.h>
#include <string.h>

#include "plugin/base/version.h"
#include "tools/bench/bench.h"
#include "tools/doctor/doctor.h"
#include "tools/lab/lab.h"
#include "tools/nccllog/nccllog.h"
#include "tools/report/report.h"
#include "tools/sweep/sweep.h"
#include "tools/trace/trace.h"

struct command {
	const char *name;
	const char *summary;
	int (*run)(int argc, char **argv);
	void (*usage)(FILE *out);
};

static const struct command commands[] = {
	{ "bench", "nccl-tests-style all_reduce/sendrecv bandwidth through the net plugin",
	  bench_main, bench_usage },
	{ "sweep", "bandwidth of every node pair, both directions; baseline, rejoin gate",
	  sweep_main, sweep_usage },
	{ "report", "merge per-process reports: cluster verdict, hop table, --json/--svg/--prom",
	  report_main, report_usage },
	{ "trace", "read an LTTng trace: per-hop wire bandwidth over time, the same verdict",
	  trace_main, trace_usage },
	{ "doctor", "check this node's fabric: ports, rates, counters, GPUDirect, PCI placement",
	  doctor_main, doctor_usage },
	{ "nccl-log", "NCCL_DEBUG=INFO logs of every rank: network, GPUDirect RDMA, versions",
	  nccllog_main, nccllog_usage },
	{ "lab", "a training-like job on local ranks with a fault from the field, and its report",
	  lab_main, lab_usage },
};

#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

static void usage(FILE *out)
{
	fprintf(out, "usage: fabriclab <command> [options]\n\ncommands:\n");
	for (size_t i = 0; i < NCOMMANDS; i++)
		fprintf(out, "  %-9s %s\n", commands[i].name, commands[i].summary);
	fprintf(out, "  %-9s %s\n", "help",
		"this text; `fabriclab help <command>` for one command");
	fprintf(out, "  %-8s %s\n", "version", "the version (also --version)");
}

static const struct command *find(const char *name)
{
	for (size_t i = 0; i < NCOMMANDS; i++) {
		if (!strcmp(commands[i].name, name))
			return &commands[i];
	}
	return NULL;
}

static int help(int argc, char **argv)
{
	const struct command *cmd;

	if (argc < 3) {
		usage(stdout);
		return 0;
	}
	cmd = find(argv[2]);
	if (!cmd) {
		fprintf(stderr, "fabriclab: no command \"%s\" (try `fabriclab help`)\n", argv[2]);
		return 2;
	}
	cmd->usage(stdout);
	return 0;
}

int main(int argc, char **argv)
{
	const struct command *cmd;

	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "help") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))
		return help(argc, argv);
	if (!strcmp(argv[1], "version") || !strcmp(argv[1], "--version")) {
		printf("fabriclab %s\n", fl_version());
		return 0;
	}
	cmd = find(argv[1]);
	if (!cmd) {
		fprintf(stderr, "fabriclab: unknown command \"%s\" (try `fabriclab help`)\n",
			argv[1]);
		return 2;
	}
	return cmd->run(argc - 1, argv + 1);
}
