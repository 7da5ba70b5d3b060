/*
 * The diagnosis: given every hop's figures, name what slows the ring. Pure
 * computation, no I/O, so the plugin (one process's view) and `fabriclab
 * report` (the merged cluster view) reach their verdicts with the same code.
 */
#ifndef FL_VERDICT_H
#define FL_VERDICT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/fl_types.h"

enum fl_verdict_kind {
	FL_VERDICT_NONE,
	FL_VERDICT_LINK,      /* one hop below comparable hops */
	FL_VERDICT_DEVICE,    /* every hop through one NIC low, both directions */
	FL_VERDICT_NODE,      /* wire rates normal; one node waits least, others wait on it */
	FL_VERDICT_GDR,       /* GPUDirect unused where the device supports it, or uneven */
	FL_VERDICT_TRANSPORT, /* TCP carries traffic while an RDMA port is active */
	FL_VERDICT_RAIL,      /* one device name slow on most nodes: its leaf switch (dev) */
	FL_VERDICT_SWITCH,    /* the hops through one shared element of a topology (node: its name) */
	/*
	 * Some hops look off but no explanation is likely enough to name (the
	 * model's confidence below FL_VERDICT_NAME_CONFIDENCE): never read as
	 * "healthy". The reason says which hops, by how much, and how much more
	 * traffic would settle it.
	 */
	FL_VERDICT_UNSURE,
};

/* The culprit names fit in this many bytes ("n1/eth0 -> n2/eth0", "rail mlx5_2"). */
#define FL_CULPRIT_LEN (2 * (FL_NODE_NAME_LEN + FL_DEV_NAME_LEN) + 8)

/* The explanation the model ranked second: what a reader checks if the first is wrong. */
struct fl_runner_up {
	enum fl_verdict_kind kind;      /* FL_VERDICT_NONE: healthy was the runner-up */
	char culprit[FL_CULPRIT_LEN];   /* as fl_finding_culprit writes it; "" for none */
	double confidence;              /* its posterior probability, 0..1 */
};

/* One directed hop as the verdict sees it (after both views are joined). */
struct fl_hop_figures {
	char src_node[FL_NODE_NAME_LEN];
	char src_dev[FL_DEV_NAME_LEN];
	char dst_node[FL_NODE_NAME_LEN];
	char dst_dev[FL_DEV_NAME_LEN];
	char transport[16];       /* "socket", "ib", "ext" */
	char link_layer[FL_LINK_LAYER_LEN]; /* verbs: FL_LINK_ETHERNET (RoCE) or _INFINIBAND; "" unknown */
	double line_rate_gbs;     /* nominal device speed, GB/s (1e9 bytes/s); 0 unknown */
	uint64_t bytes;
	uint64_t messages;
	uint64_t typical_request; /* size carrying the median byte (fl_size_median_byte); 0 unknown */
	double wire_gbs;          /* bytes / union of wire intervals; 0 when no sample */
	double wire_seconds;
	uint64_t wire_runs;       /* disjoint busy stretches of those seconds; 0 unknown */
	double wire_p50_us;       /* median wire time of one message (same view); 0 unknown */
	double wire_p99_us;       /* its 99th percentile; 0 unknown */
	/*
	 * The same messages split (fl_wire_split): those that found their connection's wire
	 * idle pay the round trip, those queued behind the one before only their bytes' time.
	 * Counts and medians (us); all 0 unknown.
	 */
	uint64_t wire_alone, wire_queued;
	double alone_p50_us, queued_p50_us;
	double peer_wait_seconds; /* posted -> ready, summed over requests, receiver side */
	double outstanding_seconds; /* posted -> done, summed likewise; 0 unknown */
	double active_seconds;    /* union of posted -> done, receiver side */
	/*
	 * The sender's side of the same, summed over its requests: posted -> ready
	 * (waiting for the receiver to post, where the transport has the receiver
	 * say so, as verbs does) and posted -> done. 0 when the sender did not report.
	 */
	double send_wait_seconds;
	double send_outstanding_seconds;
	int mem_types;            /* FL_PTR_* NCCL registered on this hop */
	/* the same per end, where both ends reported (a merged report); 0 unknown */
	int src_mem_types, dst_mem_types;
	int gdr_capable;          /* the device advertised CUDA or dma-buf pointers */
	int rdma_port_active;     /* an active verbs port exists on the source node */
	char rdma_node[FL_NODE_NAME_LEN]; /* the node that has it, "" unknown */
	char rdma_port[48];       /* and which port ("mlx5_0/1"), "" unknown */
};

/*
 * A wire rate above this fraction of the line rate is a measurement error (no
 * cable carries more than its rate): it is judged as the line rate, never more.
 */
#define FL_VERDICT_MAX_LINE_FRACTION 1.05

/*
 * Whether the wire, not latency, paced a hop's requests, so that bytes over
 * busy time is its wire's rate. Two ways a hop gets there:
 *  - its typical request spends FL_MIN_WIRE_BOUND_NS or more on the wire at
 *    line rate (one at a time, a round trip of up to 5 us leaves 0.6x or more);
 *  - or the other requests it kept in flight beside one ((in_flight - 1) x its
 *    wire time at line rate) cover FL_ROUND_TRIP_COVER_NS: while one request's
 *    round trip runs, the others keep the wire busy, and the rate is the
 *    wire's whatever the latency. NCCL's 512 KiB steps at 800 Gb/s are 5.2 us
 *    on the wire, but 4-8 of them go out per connection, 16 channels over 8
 *    NICs: 16-80 us of wire time in flight against a 2-5 us round trip.
 * The second holds from 10 Gb/s TCP to 800 Gb/s XDR: what it asks is in the
 * fabric's own terms (bytes in flight against a bandwidth-delay product), not
 * a request size. A request size or line rate unknown: judged, as before.
 */
#define FL_ROUND_TRIP_COVER_NS 5000.0
bool fl_wire_bound(uint64_t request, double line_gbs, double in_flight);
/*
 * Requests in flight on average while the hop was busy: time they were
 * outstanding (posted -> done) less the time they waited for the other end
 * to be ready, over the busy time (union of the same intervals, or of the wire
 * intervals). 0 when not measured.
 */
double fl_requests_in_flight(double outstanding_s, double wait_s, double busy_s);
/* The same for a hop's figures: the sender's view where it reported, else the receiver's. */
double fl_hop_in_flight(const struct fl_hop_figures *h);

struct fl_hop_elements;

struct fl_verdict_params {
	double min_ratio;      /* a hop is slow below min_ratio x median (default 0.95) */
	uint64_t min_bytes;    /* hops with less traffic are not judged (default 16 MiB) */
	uint64_t min_messages; /* ... or fewer messages (default 8) */
	/*
	 * Of healthy hops whose requests the wire paces, the share that run
	 * within 70-105% of their line (default 0.9; FABRICLAB_VERDICT_LINE_ODDS).
	 * The rest may run anywhere below: a NIC's cost per message, LL's flags, a
	 * busy host. The lab's emulated fabric sets its own (tools/lab).
	 */
	double line_odds;
	/*
	 * The shared elements of the fabric's topology and the hops that cross
	 * each (verdict_topology.h), indices into the hop array judged; NULL
	 * without a topology (the default: one process has none).
	 */
	const struct fl_hop_elements *elements;
};

#define FL_VERDICT_MAX_FINDINGS 8

/* One anomaly: what it is, who is to blame, the evidence and what it costs. */
struct fl_finding {
	enum fl_verdict_kind kind;
	int hop;                 /* index into the hop array, -1 when not about a hop */
	char node[FL_NODE_NAME_LEN]; /* the node or device's node named, "" if none */
	char dev[FL_DEV_NAME_LEN];
	double ratio;            /* culprit's figure / median of comparable hops */
	double median_gbs;       /* median wire rate of comparable hops */
	double culprit_gbs;
	double speedup;          /* how much faster the ring would run without the culprit */
	double cost;             /* share of the ring's time it costs: 1 - 1 / speedup */
	double line_share;       /* the culprit's hops' fitted rate as a share of their line rate
				  * (0.5 for a halved cable that the others run at line beside); 0 unknown */
	double confidence;       /* posterior probability that this culprit is real, 0..1 */
	char reason[256];        /* one sentence a person can read */
};

/*
 * The verdict is the costliest finding, its fields copied to the top so that
 * readers of one verdict keep working; findings[] lists every anomaly, the
 * costliest first.
 */
struct fl_verdict {
	enum fl_verdict_kind kind;
	int hop;                 /* index into the hop array, -1 when not about a hop */
	char node[FL_NODE_NAME_LEN]; /* the node or device's node named, "" if none */
	char dev[FL_DEV_NAME_LEN];
	double ratio;            /* culprit's figure / median of comparable hops */
	double median_gbs;       /* median wire rate of comparable hops */
	double culprit_gbs;
	double speedup;          /* how much faster the ring would run without the culprit */
	int judged_hops;         /* hops with enough sample to judge */
	double line_share;       /* as the finding's; 1 for none */
	/*
	 * The model's posterior probability of the explanation it gives (none
	 * included: how sure the fabric is healthy within FL_VERDICT_MIN_EFFECT),
	 * and the explanation it ranked next.
	 */
	double confidence;
	struct fl_runner_up runner_up;
	double healthy;          /* posterior probability of none, whatever is said */
	/* not-enough-evidence: the kind of the likeliest explanation (none where it is none) */
	enum fl_verdict_kind likeliest;
	double noise;            /* healthy hops' spread in the run, as a share of their rate */
	char reason[256];        /* one sentence a person can read */
	int nfindings;
	struct fl_finding findings[FL_VERDICT_MAX_FINDINGS];
};

void fl_verdict_default_params(struct fl_verdict_params *p);
/* Reads FABRICLAB_VERDICT_MIN_RATIO etc.; FL_ERR_USAGE with a message on bad values. */
int fl_verdict_params_from_env(struct fl_verdict_params *p);
void fl_verdict_compute(const struct fl_hop_figures *hops, size_t nhops,
			const struct fl_verdict_params *params, struct fl_verdict *out);
/*
 * The same, judging each group of hops (group[i] in 0..3: how hop i was
 * measured) on its own; the first group with a finding gives the verdict,
 * its hop index into the whole array.
 */
void fl_verdict_compute_groups(const struct fl_hop_figures *hops, const int *group,
			       size_t nhops, const struct fl_verdict_params *params,
			       struct fl_verdict *out);
/* Whether the hop starts or ends at node (and, when dev is not NULL, at that device). */
bool fl_verdict_touches(const struct fl_hop_figures *h, const char *node, const char *dev);
const char *fl_verdict_kind_name(enum fl_verdict_kind kind);
/*
 * The finding's culprit for people: "node3/eth0", "n1/eth0 -> n2/eth0",
 * "node3", "rail mlx5_2".
 */
void fl_finding_culprit(const struct fl_finding *f, const struct fl_hop_figures *hops,
			char *buf, size_t len);
/* The rate a hop is judged at: its wire rate, but never above its line rate. */
double fl_verdict_rate(const struct fl_hop_figures *h);
/*
 * Says in the reason that a wire verdict rests on senders' timings, which
 * include any back-pressure from a slow receiver: a caveat, not a change of kind.
 */
void fl_verdict_note_sender_view(struct fl_verdict *v);
/*
 * The commands that would confirm the verdict on real hardware, filled with
 * the real names, one per line into buf. Returns the number of lines.
 */
int fl_verdict_commands(const struct fl_verdict *v, const struct fl_hop_figures *hops,
			size_t nhops, char *buf, size_t len);

#endif
