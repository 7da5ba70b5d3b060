/*
 * `fabriclab sweep`: the bandwidth of every node pair, each direction on its
 * own, through the net plugin; one rank per node. Pairs run in rounds of
 * disjoint pairs (a round-robin tournament), so N nodes take N-1 rounds.
 * Rank 0 gathers the figures and judges them with the diagnosis model the
 * report and the live warnings use (plugin/verdict): each directed pair is a
 * hop, compared with the sweep's other pairs and with a stored baseline's;
 * it writes the matrix; `--gate` tests one node against chosen peers and its
 * exit status says whether the node may rejoin.
 */
#ifndef FABRICLAB_SWEEP_H
#define FABRICLAB_SWEEP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "plugin/verdict/verdict.h"

#define SWEEP_NAME_LEN 64
#define SWEEP_DEV_LEN 32
#define SWEEP_MAX_RANKS 1024
#define SWEEP_MAX_PEERS 64

/* Exit status of `fabriclab sweep`. */
enum sweep_exit {
	SWEEP_EXIT_OK = 0,
	SWEEP_EXIT_SLOW = 1,  /* a culprit named, or not enough evidence to call it healthy */
	SWEEP_EXIT_USAGE = 2,
	SWEEP_EXIT_FAILED = 3, /* the sweep could not run: a rank failed, a node is missing */
};

struct sweep_opts {
	size_t min_bytes;
	size_t max_bytes;
	long factor;
	long warmup;
	double seconds;        /* timed per pair, direction and size */
	/*
	 * The smallest effect named (the model's min_ratio): against the sweep's
	 * other pairs, and against the baseline's.
	 */
	double threshold;
	double baseline_min;
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
	char link_layer[16];   /* the device's (FL_LINK_*), "" for sockets */
};

/*
 * One measured size, per directed pair [src * n + dst]: the slower end's mean
 * transfer time (< 0 not measured) and that end's median and 99th percentile
 * transfer time and transfers timed (NULL or 0: unknown). The spread is the
 * pair's own sampling error in the model.
 */
struct sweep_size {
	size_t bytes;
	double *time_us;
	double *p50_us;
	double *p99_us;
	double *iters;
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
	char src_dev[SWEEP_DEV_LEN]; /* "" when the file does not say */
	char dst_dev[SWEEP_DEV_LEN];
	double gbs;
	double iters;  /* transfers timed; 0 unknown (files of before the model) */
	double p50_us; /* their median and 99th percentile time; 0 unknown */
	double p99_us;
	size_t index; /* in the file's pairs[] */
};

struct sweep_baseline {
	size_t bytes;
	char created[32];
	char version[32];
	struct sweep_base_pair *pairs;
	size_t npairs;
};

/* The sweep's pairs as the model's hops (sweep_figures.c). */
struct sweep_hops {
	struct fl_hop_figures *figs;
	size_t n;      /* the sweep's directed pairs first, then any baseline's */
	size_t nsweep; /* figs[0 .. nsweep): the sweep's, in the order of the verdict's entries */
	int *src, *dst; /* the sweep's node index of each end of the sweep's hops */
	/* the names the hops give the sweep's nodes and devices, per node index */
	char (*node)[FL_NODE_NAME_LEN];
	char (*dev)[FL_DEV_NAME_LEN];
	int nnodes;
};

/* One directed pair as judged (sweep_judge.c). */
enum sweep_flag { SWEEP_FINE, SWEEP_BELOW_MEDIAN, SWEEP_BELOW_BASELINE, SWEEP_BELOW_BOTH };

struct sweep_entry {
	int src, dst;
	double gbs;
	double base_gbs; /* 0: no baseline for it */
	enum sweep_flag flag; /* a culprit the model named slows it, and against what */
};

/*
 * What the sweep calls the model's verdicts: link -> the pair; device (a
 * node's NIC) and node (a straggler) -> node; rail -> rail; not enough
 * evidence -> unsure ("not-enough-evidence").
 */
enum sweep_kind { SWEEP_NONE, SWEEP_LINK, SWEEP_NODE, SWEEP_RAIL, SWEEP_UNSURE };

/* One culprit the model named, as the sweep names it. */
struct sweep_culprit {
	enum sweep_kind kind;
	enum fl_verdict_kind model; /* the model's kind (device and straggler are both node) */
	int finding;                /* index into the model's findings[] */
	/* as the hops spell them: node = the node or the link's sender, other = its receiver */
	char node[FL_NODE_NAME_LEN];
	char other[FL_NODE_NAME_LEN];
	char rail[FL_DEV_NAME_LEN];
	char culprit[FL_CULPRIT_LEN]; /* the model's name of it (fl_finding_culprit) */
	double confidence;            /* the finding's: the model's probability it is real */
};

/* The model's verdict on a set of hops and the culprits it names, as the sweep names them. */
struct sweep_model {
	struct fl_verdict v;
	enum sweep_kind kind;      /* of the verdict: its first culprit's, none or unsure */
	int nculprits;
	struct sweep_culprit culprits[FL_VERDICT_MAX_FINDINGS];
};

struct sweep_finding {
	enum sweep_kind kind;
	int node;              /* SWEEP_NODE: the node; SWEEP_LINK: the sender */
	int other;             /* SWEEP_LINK: the receiver */
	char rail[SWEEP_DEV_LEN];
	const struct sweep_culprit *c; /* NULL for none and unsure */
	const struct sweep_model *m;   /* the judgement that named it */
};

struct sweep_verdict {
	double median_gbs;      /* the median direction of the sweep */
	double reference_gbs;   /* the healthy level the model fitted (the verdict judged) */
	struct sweep_entry *entries;
	size_t nentries;
	size_t nslow;           /* directions a named culprit slows */
	enum sweep_kind kind;   /* the first finding's, or none, or unsure */
	int node;               /* SWEEP_NODE: the node; SWEEP_LINK: the sender */
	int other;              /* SWEEP_LINK: the receiver */
	char rail[SWEEP_DEV_LEN];
	/* The judgement given: the model's verdict (confidence, runner-up, reason). */
	const struct sweep_model *model;
	bool against_baseline;  /* that judgement held the sweep to the baseline's pairs */
	int nfindings;          /* every culprit named by either judgement, the given one's first */
	struct sweep_finding findings[2 * FL_VERDICT_MAX_FINDINGS];
	/* Against the sweep's other pairs (unless a gate holds them to a baseline), the baseline's. */
	struct sweep_model *among, *baseline;
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
static inline double sweep_gbs(size_t bytes, double time_us)
{
	return time_us > 0 ? (double)bytes / time_us / 1e3 : 0;
}

/* sweep_figures.c */
/*
 * Every measured directed pair at the largest size as a hop (bytes, time,
 * transfers as messages, their median and 99th percentile time, the nodes'
 * devices and line rate), in the order of the verdict's entries.
 */
int sweep_hops_build(const struct sweep_result *res, struct sweep_hops *h);
/*
 * The same pairs, each relative to its own baseline (at the scale of the
 * baseline's median), then every baseline pair at that scale as a hop of
 * nodes of its own ("node0@baseline"): the model holds the sweep to its past.
 */
int sweep_hops_against(const struct sweep_result *res, const struct sweep_baseline *base,
		       struct sweep_hops *h);
void sweep_hops_free(struct sweep_hops *h);
/* The sweep's node index whose hops' name is `name`, -1 when none (a baseline's node). */
int sweep_hops_node(const struct sweep_hops *h, const char *name);
/* Whether the model's finding f slows (or makes wait) hop i of hops. */
bool sweep_finding_has(const struct fl_finding *f, const struct fl_hop_figures *hops, size_t i);

/* sweep_judge.c */
/*
 * The model's verdict on hops (fl_verdict_compute, min_ratio the smallest
 * effect named) and the culprits it names, as the sweep names them: the
 * sweep's verdict on any hop figures, the same the report gives on them.
 */
void sweep_judge_hops(const struct fl_hop_figures *hops, size_t n, double min_ratio,
		      struct sweep_model *m);
int sweep_judge(const struct sweep_result *res, const struct sweep_opts *o,
		const struct sweep_baseline *base, struct sweep_verdict *v);
void sweep_verdict_free(struct sweep_verdict *v);
const char *sweep_kind_name(enum sweep_kind k);
/* A slow NIC (device) and a straggler are both the sweep's node; a set-up fault names a node. */
enum sweep_kind sweep_kind_of(enum fl_verdict_kind k);
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
/* "confidence 0.97; next: link n2/lo -> n3/lo, 0.02": how sure, and what else it could be. */
void sweep_say_confidence(const struct sweep_verdict *v, char *buf, size_t len);
void sweep_print_text(const struct sweep_result *res, const struct sweep_verdict *v,
		      const struct sweep_opts *o, FILE *out);
int sweep_print_json(const struct sweep_result *res, const struct sweep_verdict *v,
		     const struct sweep_opts *o, FILE *out);

/* sweep_svg.c */
int sweep_write_svg(const struct sweep_result *res, const struct sweep_verdict *v,
		    const char *path);

#endif
