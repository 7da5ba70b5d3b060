/*
 * `--tc halve-cable`: the kernel, not the plugin, cuts the target's cable to
 * half the link rate. A token bucket (tbf) on each end of its veth pair: on
 * eth0 inside its namespace for what it sends, on its bridge port in the hub
 * for what it receives. An independent ground truth for the report.
 */
#include <stdio.h>

#include "lab.h"

/* Enough for the timer's granularity and one GSO burst; small next to a step's bytes. */
#define TBF_BURST "64kb"
#define TBF_LATENCY "200ms"

static int add_tbf(const char *netns, const char *dev, const char *rate, char *why, size_t len)
{
	const char *argv[] = { "tc", "-n", netns, "qdisc", "replace", "dev", dev, "root", "tbf",
			       "rate", rate, "burst", TBF_BURST, "latency", TBF_LATENCY, NULL };

	return lab_cmd(argv, NULL, why, len);
}

int lab_tc_halve(const struct lab_opts *o, char *why, size_t why_len)
{
	char node_ns[96], hub_ns[96], port[32], rate[32];

	lab_netns_name(o, o->target, node_ns, sizeof(node_ns));
	lab_netns_name(o, -1, hub_ns, sizeof(hub_ns));
	snprintf(port, sizeof(port), "veth%d", o->target);
	snprintf(rate, sizeof(rate), "%.0fbit", o->link_rate_bytes * 8.0 / 2.0);
	if (add_tbf(node_ns, "eth0", rate, why, why_len))
		return -1;
	return add_tbf(hub_ns, port, rate, why, why_len);
}
