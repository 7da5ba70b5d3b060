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
#include <stdint.h>
#include <stdio.h>

#define NL_NAME_LEN 64 /* the longest key or host name kept */
#define NL_MAX_DEVS 16
#define NL_WHY_LEN 512

struct nl_dev {
	char name[32];
	int port;
	char link[8]; /* IB or RoCE */
};

/*
 * What a rank's lines said. Strings live in the log's arena (NULL: never
 * seen), so a rank costs about its text: a 16 k-GPU job's logs hold up to a
 * million processes, most of them with only a few fields.
 */
struct nl_rank {
	const char *key;        /* "[3]" prefix or host:pid */
	const char *host;
	const char *version;
	const char *network;    /* "IB", "Socket" or the plugin's name */
	const char *plugin;     /* a net plugin NCCL loaded */
	const char *socket_if;
	const char *first_warn;
	const char *why;        /* what the judgement found; NULL fine */
	const struct nl_dev *ib; /* nib of them */
	long pid;
	long rank;              /* from the comm line; -1 unknown */
	long nranks;
	int nib;
	int net_conns;          /* "via NET/..." channel lines */
	int gdr_conns;          /* ... of which /GDRDMA */
	int gdr_disabled;       /* "GPU Direct RDMA Disabled" lines */
};

/* Where the ranks' strings live: blocks freed all at once with the log. */
struct nl_arena {
	struct nl_block *blocks;
	size_t used, cap; /* in the first block */
};

struct nl_log {
	struct nl_rank *ranks;
	size_t n;
	size_t cap;
	uint32_t *slots; /* hash of the keys: rank index + 1, 0 empty */
	size_t nslots;
	struct nl_arena arena;
	size_t lines;
	size_t nccl_lines;
};

/* A rank's string field, "" when it was never seen. */
static inline const char *nl_str(const char *s)
{
	return s ? s : "";
}

int nccllog_main(int argc, char **argv);
void nccllog_usage(FILE *out);

/* nccllog_parse.c: one line of a file; `last` carries the process across prefix-less lines. */
int nl_parse_line(struct nl_log *log, const char *line, struct nl_rank **last);
void nl_log_free(struct nl_log *log);
/* nccllog_store.c: the rank of this key, added when new; NULL when out of memory. */
struct nl_rank *nl_find_or_add(struct nl_log *log, const char *key);
/* A copy of n bytes of s, NUL-terminated, in the log's arena; NULL when out of memory. */
const char *nl_keep(struct nl_log *log, const char *s, size_t n);

/* nccllog_judge.c: fills each rank's `why` and the number of ranks flagged; FL_OK or an error. */
int nl_judge(struct nl_log *log, size_t *flagged);

/* nccllog_out.c */
void nl_print_text(const struct nl_log *log, size_t flagged, FILE *out);
int nl_print_json(const struct nl_log *log, size_t flagged, FILE *out);

#endif
