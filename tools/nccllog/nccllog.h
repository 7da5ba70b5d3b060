/*
 * `fabriclab nccl-log`: reads NCCL_DEBUG=INFO output of every rank and says,
 * per rank, which network NCCL chose (NET/IB, the NET/Socket fallback or a
 * plugin), whether each NET connection uses GPUDirect RDMA, the IB devices
 * and ports, and the NCCL version; then flags the ranks that differ from the
 * rest or fell back. Lines are grouped by process (host:pid of NCCL's own
 * prefix) or by a leading [rank] prefix, so one file per rank and one
 * interleaved stream both work.
 */
#ifndef FABRICLAB_NCCLLOG_H
#define FABRICLAB_NCCLLOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#define NL_NAME_LEN 64
#define NL_MAX_DEVS 16
#define NL_WHY_LEN 512

struct nl_dev {
	char name[32];
	int port;
	char link[8]; /* IB or RoCE */
};

struct nl_rank {
	char key[NL_NAME_LEN];  /* "[3]" prefix or host:pid */
	char host[NL_NAME_LEN];
	long pid;
	long rank;              /* from the comm line; -1 unknown */
	long nranks;
	char version[48];
	char network[32];       /* "IB", "Socket" or the plugin's name; "" none seen */
	char plugin[48];        /* a net plugin NCCL loaded */
	struct nl_dev ib[NL_MAX_DEVS];
	int nib;
	char socket_if[96];
	int net_conns;          /* "via NET/..." channel lines */
	int gdr_conns;          /* ... of which /GDRDMA */
	int gdr_disabled;       /* "GPU Direct RDMA Disabled" lines */
	char first_warn[160];
	char why[NL_WHY_LEN];   /* what the judgement found; "" fine */
};

struct nl_log {
	struct nl_rank *ranks;
	size_t n;
	size_t cap;
	size_t lines;
	size_t nccl_lines;
};

int nccllog_main(int argc, char **argv);
void nccllog_usage(FILE *out);

/* nccllog_parse.c: one line of a file; `last` carries the process across prefix-less lines. */
int nl_parse_line(struct nl_log *log, const char *line, struct nl_rank **last);
void nl_log_free(struct nl_log *log);

/* nccllog_judge.c: fills each rank's `why`; the number of ranks flagged. */
size_t nl_judge(struct nl_log *log);

/* nccllog_out.c */
void nl_print_text(const struct nl_log *log, size_t flagged, FILE *out);
int nl_print_json(const struct nl_log *log, size_t flagged, FILE *out);

#endif
