/*
 * `fabriclab lab`: a training-like job (compute, then an all-reduce of the
 * gradients, K steps) on N local ranks through the plugin and the shim, with
 * a fault from the field injected on one node, then the merged report.
 */
#ifndef FABRICLAB_LAB_H
#define FABRICLAB_LAB_H

#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "fabric/topo/topo.h"

#define LAB_MAX_RANKS 16
#define LAB_MAX_RANKS_TEXT "16" /* for messages, kept beside the number */
#define LAB_SPEC_LEN 512
#define LAB_ID_LEN 32

enum lab_scenario {
	LAB_HEALTHY,
	LAB_HALVE_CABLE,
	LAB_SLOW_NODE,
	LAB_GDR_OFF,
	LAB_FLAKY_ROCE,
	LAB_SLOW_RAIL, /* the leaf switch of one rail: that NIC of every node at 50% */
	LAB_CUSTOM, /* --fault SPEC */
};

/* What the hops run over: the socket transport, or the verbs transport on the fake NIC. */
enum lab_fabric { LAB_TCP, LAB_ROCE, LAB_IB };

/* --like: a real fabric the lab scales down (lab_like.c). */
struct lab_preset {
	const char *name;
	enum lab_fabric fabric;
	double gbps;        /* the real port's rate */
	double one_way_us;  /* a small RDMA write, one way */
	double msg_cost_us; /* per message, on the NIC */
	const char *port;   /* the emulated port its NICs report (the description's "port") */
	int rate_div;       /* it moves bytes this many times slower than it says */
	int channels;       /* NCCL's channels per NIC: connections per hop */
};

enum lab_hw_kind { LAB_HW_DOWNGRADE, LAB_HW_PAUSE, LAB_HW_LATENCY, LAB_HW_SPINE, LAB_HW_UPLINK,
		   LAB_HW_LEAFPORT };

/* --hw-fault: a fault of the emulated fabric's hardware (lab_hw.c). */
struct lab_hw {
	enum lab_hw_kind kind;
	int node, nic;      /* NIC kinds and leafport; nic -1: every NIC of the node */
	int leaf, spine;    /* uplink: leafI-spineJ; spine: spineJ; -1 unset */
	int rate_pct;       /* the effect: one of rate, every and for, add */
	double every_ns, for_ns, add_ns;
};

struct lab_opts {
	int ranks;                 /* nodes x rails */
	int nodes;
	int rails;                 /* NICs per node, one rank on each (lab_rails.c) */
	int target_rail;           /* slow-rail's rail; -1 until chosen */
	long steps;
	size_t grad_bytes;
	double compute_ms;
	const char *link_rate;     /* as given, e.g. "400mbit" */
	double link_rate_bytes;    /* the same in bytes per second */
	enum lab_scenario scenario;
	enum lab_fabric fabric;
	double copy_rate_bytes;    /* roce/ib: the emulated host<->GPU copy rate (PCIe) */
	const char *fault;         /* --fault SPEC */
	int target;                /* the victim's rank; -1 until chosen */
	bool target_random;
	double target_compute;     /* the target's compute time, in multiples of the others' */
	bool netns;
	bool tc;                   /* the cable is cut by the kernel's tc, not the plugin */
	const char *dir;           /* where run folders go */
	const char *transport;     /* FABRICLAB_TRANSPORT for the ranks; NULL = as inherited */
	const char *tool_dir;      /* where the plugin is looked for */
	char run_id[LAB_ID_LEN];
	char run_dir[PATH_MAX];
	char spec[LAB_SPEC_LEN];   /* FABRICLAB_FAULT for the ranks; "" = none */
	const struct lab_preset *like; /* --like; NULL: the plugin paces to link_rate */
	int channels;              /* --channels: connections per hop (QPs); 0 = preset's */
	int proto;                 /* --proto: 0 simple, 1 ll128, 2 ll */
	const char *hw_fault;      /* --hw-fault SPEC as given */
	struct lab_hw hw;
	const char *topology;      /* --topology SPEC or FILE as given; NULL: flat */
	struct ft_topo topo;       /* the emulated fabric's description (lab_topology.c) */
};

/* Set by SIGINT, SIGTERM or SIGHUP: the run stops and cleans up. */
extern volatile sig_atomic_t lab_stop;

int lab_main(int argc, char **argv);
void lab_usage(FILE *out);

/* Scenarios (lab_scenario.c). */
const char *lab_scenario_name(enum lab_scenario s);
/* 0, or -1 when name is no scenario. */
int lab_scenario_parse(const char *name, enum lab_scenario *out);
/* Picks the target when none was given and fills o->spec; 0 or -1 with a message on stderr. */
int lab_scenario_prepare(struct lab_opts *o);
/* Bytes per second of a rate in the fault grammar's units ("400mbit"); -1 when malformed. */
int lab_parse_rate(const char *text, double *bytes_per_s);

/* Presets (lab_like.c); parsers say why on stderr and return -1. */
int lab_like_parse(const char *name, struct lab_opts *o);
int lab_proto_parse(const char *name, struct lab_opts *o);
double lab_like_scale(const struct lab_preset *p);
void lab_like_apply(struct lab_opts *o);   /* fabric, link rate, channels from the preset */
/* How often the emulated fabric's healthy hops run near line, for the diagnosis. */
void lab_verdict_prior(const struct lab_opts *o);
void lab_like_env(const struct lab_opts *o); /* what the plugin and shim are told */
void lab_like_physics(const struct lab_opts *o, struct ft_topo *t); /* the description's */
const char *lab_like_port(const struct lab_opts *o); /* NULL without a preset */
void lab_like_print(const struct lab_opts *o, FILE *out);
/* The emulated NICs' schedules summed (lab_schedule.c). */
void lab_like_print_schedule(const struct lab_opts *o, FILE *out);

/* Hardware faults (lab_hw.c): the parser says why on stderr and returns -1. */
int lab_hw_parse(const char *spec, const struct lab_opts *o, struct lab_hw *hw);
bool lab_hw_on_switch(const struct lab_hw *hw); /* a spine's or an uplink's */

/* The emulated fabric's description (lab_topology.c); each says why on stderr and returns -1. */
int lab_topology_build(struct lab_opts *o);  /* into o->topo: nodes, --topology, faults */
int lab_topology_write(struct lab_opts *o, char *path, size_t len); /* <run>/topology.json */
void lab_topology_print(const struct lab_opts *o, FILE *out);

/* Fabrics (lab_fabric.c). */
const char *lab_fabric_name(enum lab_fabric f);
/* 0, or -1 when name is no fabric. */
int lab_fabric_parse(const char *name, enum lab_fabric *out);
/* The ranks' environment for o->fabric (the fake NIC, GPU memory); 0 or -1 with a message. */
int lab_fabric_env(const struct lab_opts *o);
/* In a rank's child: which node of the fabric's description it is. */
void lab_fabric_enter(const struct lab_opts *o, int rank);

/* The run projected to the field guide's job (lab_project.c). */
void lab_print_projection(const struct lab_opts *o, double reduce_ms, double ideal_ms,
			  FILE *out);

/* Rails (lab_rails.c): which node and rail a rank is, and its environment. */
int lab_rank_node(const struct lab_opts *o, int rank);
int lab_rank_rail(const struct lab_opts *o, int rank);
void lab_rail_dev(int rail, char *buf, size_t len); /* "mlx5_<rail>" */
/* Rail k's device on o's fabric: "mlx5_<k>", or "eth<k>" over tcp. */
void lab_rail_dev_of(const struct lab_opts *o, int rail, char *buf, size_t len);
/* In a rank's child: its node's name and its rail's device index. */
void lab_rails_enter(const struct lab_opts *o, int rank);
/* 0, or -1 with a message when --rails does not fit the other options. */
int lab_rails_check(const struct lab_opts *o);

/* One rank's job (lab_rank.c): its exit status. */
int lab_rank(void *opts);

/* The step times rank 0 wrote (lab_steps.c): prints them; 0, or -1 with a message. */
int lab_print_steps(const struct lab_opts *o, FILE *out);
/* The merged report of the run (lab_report.c); 0, or -1 with a message. */
int lab_print_report(const struct lab_opts *o, FILE *out);

/* Outside commands such as ip and tc (lab_cmd.c). */
/* Runs argv (searched in PATH) with `input` on its stdin; 0 when it exited 0, else -1 and why. */
int lab_cmd(const char *const argv[], const char *input, char *why, size_t why_len);

/* Network namespaces (lab_netns.c): one per rank, joined by a bridge. */
int lab_netns_remove_stale(FILE *out);
int lab_netns_create(const struct lab_opts *o, char *why, size_t why_len);
void lab_netns_destroy(const struct lab_opts *o);
/* In a rank's child: move into its namespace, with a /sys that shows it. */
int lab_netns_enter(int rank, void *opts);
/* A bootstrap socket listening inside rank 0's namespace, and its address. */
int lab_netns_listen(const struct lab_opts *o, int *fd, char *addr, size_t addr_len, char *why,
		     size_t why_len);
/* Halves the target's cable with tbf on both ends of its veth (lab_tc.c). */
int lab_tc_halve(const struct lab_opts *o, char *why, size_t why_len);

/* Names (lab_netns.c). */
void lab_netns_name(const struct lab_opts *o, int rank, char *buf, size_t len); /* -1: hub */
void lab_netns_addr(int rank, char *buf, size_t len);

#endif
