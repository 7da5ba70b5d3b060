/*
 * FABRICLAB_FAULT: the fault-injection rules, parsed and validated once at init.
 * The same value is set on every node of a job; each rule carries selectors
 * saying where it applies, and fl_fault_rule_matches() decides that per site.
 * Grammar and examples: docs/faults.md.
 */
#ifndef FL_FAULT_SPEC_H
#define FL_FAULT_SPEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/fl_types.h"

#define FL_FAULT_ENV "FABRICLAB_FAULT"
#define FL_FAULT_MAX_RULES 32
/* Longest value of any key: a node name that fits an endpoint. */
#define FL_FAULT_VALUE_MAX (FL_NODE_NAME_LEN - 1)
/* Room for fl_fault_describe() of any rule. */
#define FL_FAULT_DESCRIBE_LEN 256

enum fl_fault_action {
	FL_FAULT_THROTTLE,
	FL_FAULT_SLOW,
	FL_FAULT_NOGDR,
	FL_FAULT_STALL,
	FL_FAULT_FAIL,
};

/* A bit mask: both directions are FL_FAULT_TX | FL_FAULT_RX. */
enum fl_fault_dir {
	FL_FAULT_TX = 1,
	FL_FAULT_RX = 2,
	FL_FAULT_BOTH = FL_FAULT_TX | FL_FAULT_RX,
};

enum fl_fault_rate_kind {
	FL_FAULT_RATE_FRACTION, /* of the device's line rate, known only at run time */
	FL_FAULT_RATE_BYTES,    /* absolute */
};

/* Where a rule applies. An absent selector ("" or -1) matches everything. */
struct fl_fault_where {
	char node[FL_NODE_NAME_LEN]; /* local node */
	char peer[FL_NODE_NAME_LEN]; /* remote node */
	char dev[FL_DEV_NAME_LEN];   /* local device */
	int rank;                    /* NCCL rank of the local process */
};

struct fl_fault_throttle {
	enum fl_fault_rate_kind kind;
	double fraction;      /* (0, 1], for FL_FAULT_RATE_FRACTION */
	uint64_t bytes_per_s; /* for FL_FAULT_RATE_BYTES */
	enum fl_fault_dir dir;
};

/* Exactly one of the two is set (non-zero). */
struct fl_fault_slow {
	double factor;     /* each send is held back (factor - 1) times its own wire time */
	uint64_t delay_ns; /* each send is held back this long */
};

struct fl_fault_stall {
	uint64_t for_ns;   /* pause length, < every_ns */
	uint64_t every_ns; /* period */
};

/* Exactly one of the two is set (non-zero). */
struct fl_fault_fail {
	uint64_t after_ns;    /* since the connection was established */
	uint64_t after_bytes; /* payload bytes moved on the connection */
};

struct fl_fault_rule {
	enum fl_fault_action action;
	struct fl_fault_where where;
	union {
		struct fl_fault_throttle throttle;
		struct fl_fault_slow slow;
		struct fl_fault_stall stall;
		struct fl_fault_fail fail;
	};
};

struct fl_fault_spec {
	int nrules;
	struct fl_fault_rule rules[FL_FAULT_MAX_RULES];
};

/*
 * One place a rule could apply: a local device talking to a peer. NULL names
 * and rank -1 mean "not known here"; an unknown attribute never satisfies a
 * selector that names it.
 */
struct fl_fault_site {
	const char *node;
	const char *dev;
	const char *peer;
	int rank;
};

/*
 * Parses text (NULL or blank: no rules) into *out. On a malformed value
 * returns FL_ERR_USAGE, fl_fail() text naming the rule number, the token and
 * the accepted form, and leaves out->nrules = 0.
 */
int fl_fault_parse(const char *text, struct fl_fault_spec *out);
/* fl_fault_parse() of the FABRICLAB_FAULT environment variable. */
int fl_fault_from_env(struct fl_fault_spec *out);
bool fl_fault_rule_matches(const struct fl_fault_rule *rule, const struct fl_fault_site *site);
/* Whether the rule can apply on this node at all (its node selector allows it). */
bool fl_fault_rule_targets_node(const struct fl_fault_rule *rule, const char *node);
/* The rule in canonical form, which fl_fault_parse() accepts back; returns buf. */
const char *fl_fault_describe(const struct fl_fault_rule *rule, char *buf, size_t len);
const char *fl_fault_action_name(enum fl_fault_action action);

#endif
