/*
 * Scenarios from the field, each one FABRICLAB_FAULT rule on the target node
 * (docs/faults.md): the value every rank gets, as a chaos run would set it on
 * every pod of a job.
 */
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "plugin/base/error.h"
#include "plugin/fault/fault_spec.h"
#include "lab.h"

struct scenario {
	enum lab_scenario id;
	const char *name;
	const char *rule; /* printf format, %s = the target node */
};

/*
 * slow-node: a GPU at half speed. Its compute (the lab's sleep) takes twice
 * as long, and its slow kernels hand their data over at half the rate: each
 * message held back twice its time at the line rate (factor 3), since NCCL's
 * pipeline keeps two slices in flight and a shorter hold hides behind the
 * other one's wire (shim/nccl_rules.c). flaky-roce: the target's hops
 * stop 40 ms of every 100 ms, the pause-frame storm of a misconfigured PFC
 * hop (shorter storms hide below the verdict's 0.8x threshold).
 */
#define SLOW_NODE_FACTOR 2.0
static const struct scenario scenarios[] = {
	{ LAB_HEALTHY, "healthy", NULL },
	{ LAB_HALVE_CABLE, "halve-cable", "throttle:node=%s,rate=50%%,dir=both" },
	{ LAB_SLOW_NODE, "slow-node", "slow:node=%s,factor=3" },
	{ LAB_GDR_OFF, "gdr-off", "nogdr:node=%s" },
	{ LAB_FLAKY_ROCE, "flaky-roce", "stall:node=%s,for=40ms,every=100ms" },
	/* %s = the rail's device: no node selector, so every node applies it. */
	{ LAB_SLOW_RAIL, "slow-rail", "throttle:dev=%s,rate=50%%,dir=both" },
	{ LAB_CUSTOM, "custom", NULL },
};

#define NSCENARIOS (sizeof(scenarios) / sizeof(scenarios[0]))

const char *lab_scenario_name(enum lab_scenario s)
{
	for (size_t i = 0; i < NSCENARIOS; i++) {
		if (scenarios[i].id == s)
			return scenarios[i].name;
	}
	return "?";
}

int lab_scenario_parse(const char *name, enum lab_scenario *out)
{
	for (size_t i = 0; i < NSCENARIOS; i++) {
		if (scenarios[i].id != LAB_CUSTOM && !strcmp(scenarios[i].name, name)) {
			*out = scenarios[i].id;
			return 0;
		}
	}
	return -1;
}

/* The rate grammar is the fault grammar's: let its parser read it. */
int lab_parse_rate(const char *text, double *bytes_per_s)
{
	struct fl_fault_spec spec;
	char rule[96];

	if (strlen(text) >= sizeof(rule) - 16 || strchr(text, '%') || strchr(text, ',') ||
	    strchr(text, ';'))
		return -1;
	snprintf(rule, sizeof(rule), "throttle:rate=%s", text);
	if (fl_fault_parse(rule, &spec) || spec.nrules != 1 ||
	    spec.rules[0].throttle.kind != FL_FAULT_RATE_BYTES)
		return -1;
	*bytes_per_s = (double)spec.rules[0].throttle.bytes_per_s;
	return 0;
}

static int random_rank(int ranks)
{
	unsigned int r;

	if (getrandom(&r, sizeof(r), 0) != sizeof(r))
		r = (unsigned int)time(NULL) ^ (unsigned int)getpid();
	return (int)(r % (unsigned int)ranks);
}

static const struct scenario *find(enum lab_scenario id)
{
	for (size_t i = 0; i < NSCENARIOS; i++) {
		if (scenarios[i].id == id)
			return &scenarios[i];
	}
	return &scenarios[0];
}

static int check_spec(const char *spec)
{
	struct fl_fault_spec parsed;

	if (!fl_fault_parse(spec, &parsed))
		return 0;
	fprintf(stderr, "fabriclab lab: --fault: %s\n", fl_error_text());
	return -1;
}

int lab_scenario_prepare(struct lab_opts *o)
{
	const struct scenario *s = find(o->scenario);
	char node[32];

	if (o->target < 0) {
		o->target = random_rank(o->nodes);
		o->target_random = true;
	}
	snprintf(node, sizeof(node), "node%d", o->target);
	if (o->scenario == LAB_SLOW_RAIL) {
		o->target_random = o->target_rail < 0;
		if (o->target_rail < 0)
			o->target_rail = random_rank(o->rails);
		lab_rail_dev_of(o, o->target_rail, node, sizeof(node));
	}
	o->spec[0] = '\0';
	if (o->scenario == LAB_CUSTOM)
		snprintf(o->spec, sizeof(o->spec), "%s", o->fault);
	else if (s->rule && !o->tc)
		snprintf(o->spec, sizeof(o->spec), s->rule, node);
	if (o->scenario == LAB_SLOW_NODE)
		o->target_compute = SLOW_NODE_FACTOR;
	return o->spec[0] ? check_spec(o->spec) : 0;
}
