/*
 * `fabriclab sweep`: the bandwidth of every node pair, each direction on its
 * own, through the net plugin; one rank per node. Pairs run in rounds of
 * disjoint pairs (a round-robin tournament), so N nodes take N-1 rounds.
 * Rank 0 gathers the figures, judges them against the median and against a
 * stored baseline, and writes the matrix; `--gate` tests one node against
 * chosen peers and its exit status says whether the node may rejoin.
 */
#ifndef FABRICLAB_SWEEP_H
#define FABRICLAB_SWEEP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define SWEEP_NAME_LEN 64
#define SWEEP_DEV_LEN 32
#define SWEEP_MAX_RANKS 1024
#define SWEEP_MAX_PEERS 64

/* Exit status of `fabriclab sweep`. */
enum sweep_exit {
	SWEEP_EXIT_OK = 0,
	SWEEP_EXIT_SLOW = 1,  /* a pair below the median threshold or its baseline */
	SWEEP_EXIT_USAGE = 2,
	SWEEP_EXIT_FAILED = 3, /* the sweep could not run: a rank failed, a node is missing */
};

struct sweep_opts {
	size_t min_bytes;
	size_t max_bytes;
	long factor;
	long warmup;
	double seconds;        /* timed per pair, direction and size */
	double threshold;      /* a pair below this fraction of the median is slow */
	double baseline_min;   /* ... or below this fraction of its own baseline */
	int ranks;             /* 0: one rank of a job the environment describes */
	bool json;
	const char *svg;
	const char *save;
	const char *baseline;
	bool gate;
	/* escaped (\xNN) like the ranks' own names: compared with them, shown as they are */
	char gate_node[SWEEP_NAME_LEN]; /* "" without --node */
	char gate_peers[SWEEP_MAX_PEERS][SWEEP_NAME_LEN];
	int npeers;
	const char *tool_dir;
	const char *mem;       /* --mem host|cuda; NULL: FABRICLAB_SHIM_MEM as it is */
};

/* Who a rank is: what the baseline keeps of the fabric's identity. */
struct sweep_node {
	char name[SWEEP_NAME_LEN];
	char dev[SWEEP_DEV_LEN];
	int32_t dev_index;
	int32_t speed_mbps;
	int32_t net_version;
	int32_t pid;
};

/* One measured size: the time of each directed pair, [src * n + dst]; < 0 not measured. */
struct sweep_size {
	size_t bytes;
	double *time_us;
};

struct sweep_result {
	int n;
	struct sweep_node *nodes;
	struct sweep_size *sizes;
	size_t nsizes;
	uint64_t wrong;
};

/* Rounds of disjoint pairs: peer[round * n + rank], -1 when the rank sits the round out. */
struct sweep_plan {
	int n;
	int nrounds;
	int *peer;
};

/* A stored run to compare with (sweep_baseline.c). */
struct sweep_base_pair {
	char src[SWEEP_NAME_LEN];
	char dst[SWEEP_NAME_LEN];
	double gbs;
	size_t index; /* in the file's pairs[] */
};

struct sweep_baseline {
	size_t bytes;
	char created[32];
	char version[32];
	struct sweep_base_pair *pairs;
	size_t npairs;
	double median_gbs;
};

/* One directed pair as judged (sweep_judge.c). */
enum sweep_flag { SWEEP_FINE, SWEEP_BELOW_MEDIAN, SWEEP_BELOW_BASELINE, SWEEP_BELOW_BOTH };

struct sweep_entry {
	int src, dst;
	double gbs;
	double base_gbs; /* 0: no baseline for it */
	enum sweep_flag flag;
};

enum sweep_kind { SWEEP_NONE, SWEEP_LINK, SWEEP_NODE, SWEEP_RAIL, SWEEP_SCATTERED };

struct sweep_verdict {
	double median_gbs;
	double reference_gbs;   /* what "slow" is measured against */
	struct sweep_entry *entries;
	size_t nentries;
	size_t nslow;
	enum sweep_kind kind;
	int node;               /* SWEEP_NODE: the node; SWEEP_LINK: one end */
	int other;              /* SWEEP_LINK: the other end */
	char rail[SWEEP_DEV_LEN];
	char reason[512];
};

int sweep_main(int argc, char **argv);
void sweep_usage(FILE *out);

/* sweep_plan.c */
int sweep_plan_tournament(struct sweep_plan *p, int n);
/* The gate: node against each peer, then (reference) the peers among themselves. */
int sweep_plan_gate(struct sweep_plan *p, int n, int node, const int *peers, int npeers,
		    bool peers_too);
void sweep_plan_free(struct sweep_plan *p);

/* sweep_rank.c: one rank's run; its exit status (enum sweep_exit), the same on every rank. */
int sweep_rank(const struct sweep_opts *o);
void sweep_result_free(struct sweep_result *res);
/* Rank 0, after the last round: judges, prints and saves; the job's exit status. */
int sweep_conclude(const struct sweep_result *res, const struct sweep_opts *o);

/* nccl-tests units: GB/s (10^9 bytes/s) of `bytes` in `time_us`; sendrecv busbw = algbw. */
double sweep_gbs(size_t bytes, double time_us);

/* sweep_judge.c */
int sweep_judge(const struct sweep_result *res, const struct sweep_opts *o,
		const struct sweep_baseline *base, struct sweep_verdict *v);
void sweep_verdict_free(struct sweep_verdict *v);
const char *sweep_kind_name(enum sweep_kind k);
double sweep_median(double *values, size_t n);

/* sweep_baseline.c */
int sweep_baseline_save(const struct sweep_result *res, const char *path);
/* --save's path can take the baseline (not a directory, its folder writable): checked first. */
int sweep_baseline_check_save(const char *path);
int sweep_baseline_load(const char *path, struct sweep_baseline *base);
void sweep_baseline_free(struct sweep_baseline *base);
/* The pair's stored GB/s, 0 when the baseline has none (pairs sorted as the loader leaves them). */
double sweep_baseline_find(const struct sweep_baseline *base, const char *src, const char *dst);

/* sweep_commands.c: what to run on the machines to confirm the finding. */
#define SWEEP_MAX_COMMANDS 12
struct sweep_commands {
	char line[SWEEP_MAX_COMMANDS][320];
	int count;
};
void sweep_commands(const struct sweep_result *res, const struct sweep_verdict *v,
		    const struct sweep_opts *o, struct sweep_commands *c);

/* sweep_out.c */
/* "fabriclab sweep: TEXT" on stderr, TEXT escaped: errors name nodes and files. */
void sweep_print_error(const char *text);
void sweep_print_text(const struct sweep_result *res, const struct sweep_verdict *v,
		      const struct sweep_opts *o, FILE *out);
int sweep_print_json(const struct sweep_result *res, const struct sweep_verdict *v,
		     const struct sweep_opts *o, FILE *out);

/* sweep_svg.c */
int sweep_write_svg(const struct sweep_result *res, const struct sweep_verdict *v,
		    const char *path);

#endif
