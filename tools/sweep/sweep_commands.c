/*
 * What to run on the machines to confirm a sweep's finding, with the real node
 * and device names: the node's own check, the device's counters, a one-way
 * perftest or iperf3 between the two ends, and the gate again; where the
 * model had not enough evidence, the sweep again with more transfers.
 */
#include "sweep.h"

#include <stdarg.h>
#include <string.h>

static bool rdma_device(const char *dev)
{
	static const char *const prefixes[] = { "mlx", "bnxt_re", "irdma", "rxe", "siw", "efa",
						"ionic", "hns", "qedr", "hfi" };

	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
		if (!strncmp(dev, prefixes[i], strlen(prefixes[i])))
			return true;
	}
	return false;
}

__attribute__((format(printf, 2, 3))) static void add(struct sweep_commands *c,
						       const char *fmt, ...)
{
	va_list ap;

	if (c->count >= SWEEP_MAX_COMMANDS)
		return;
	va_start(ap, fmt);
	vsnprintf(c->line[c->count++], sizeof(c->line[0]), fmt, ap);
	va_end(ap);
}

static void device_checks(struct sweep_commands *c, const struct sweep_node *n)
{
	add(c, "on %s: fabriclab doctor   # port state, rate against the device's best, "
	    "counters, PFC/ECN", n->name);
	if (rdma_device(n->dev)) {
		add(c, "on %s: ibstat %s   # State Active, expected Rate", n->name, n->dev);
		add(c, "on %s: perfquery -x -C %s   # SymbolErrors, LinkDowned, PortXmitWait "
		    "growing?", n->name, n->dev);
	} else {
		add(c, "on %s: ethtool -S %s | grep -E 'pause|discard|err'   # counters that "
		    "grow", n->name, n->dev);
	}
}

static void pair_test(struct sweep_commands *c, const struct sweep_node *src,
		      const struct sweep_node *dst)
{
	if (rdma_device(src->dev)) {
		add(c, "on %s: ib_write_bw -d %s --report_gbits; then on %s: ib_write_bw -d %s "
		    "--report_gbits %s   # one way, %s -> %s", dst->name, dst->dev, src->name,
		    src->dev, dst->name, src->name, dst->name);
	} else {
		add(c, "on %s: iperf3 -s; then on %s: iperf3 -c %s -t 10   # one way, %s -> %s",
		    dst->name, src->name, dst->name, src->name, dst->name);
	}
}

/* The gate on `node` against `first` (when >= 0) and healthy peers, three in all. */
static void rerun(struct sweep_commands *c, const struct sweep_result *res,
		  const struct sweep_opts *o, int node, int first)
{
	char peers[3 * SWEEP_NAME_LEN + 4] = "";
	int k = 0;

	if (first >= 0)
		snprintf(peers, sizeof(peers), "%s", res->nodes[first].name), k++;
	for (int i = 0; i < res->n && k < 3; i++) {
		if (i == node || i == first)
			continue;
		snprintf(peers + strlen(peers), sizeof(peers) - strlen(peers), "%s%s",
			 k++ ? "," : "", res->nodes[i].name);
	}
	if (!k)
		return;
	add(c, "fabriclab sweep --gate --node %s --peers %s%s%s   # the node against healthy "
	    "peers; non-zero exit = still slow", res->nodes[node].name, peers,
	    o->baseline ? " --baseline " : "", o->baseline ? o->baseline : "");
}

void sweep_commands(const struct sweep_result *res, const struct sweep_verdict *v,
		    const struct sweep_opts *o, struct sweep_commands *c)
{
	const struct sweep_node *nodes = res->nodes;

	c->count = 0;
	if ((v->kind == SWEEP_LINK && (v->node < 0 || v->other < 0)) ||
	    (v->kind == SWEEP_NODE && v->node < 0))
		return; /* a culprit the sweep cannot place on its nodes: nothing to fill in */
	switch (v->kind) {
	case SWEEP_LINK:
		device_checks(c, &nodes[v->node]);
		device_checks(c, &nodes[v->other]);
		pair_test(c, &nodes[v->node], &nodes[v->other]);
		pair_test(c, &nodes[v->other], &nodes[v->node]);
		rerun(c, res, o, v->node, v->other);
		break;
	case SWEEP_NODE:
		device_checks(c, &nodes[v->node]);
		for (size_t i = 0; i < v->nentries; i++) {
			const struct sweep_entry *e = &v->entries[i];

			if (e->flag != SWEEP_FINE && e->src == v->node) {
				pair_test(c, &nodes[e->src], &nodes[e->dst]);
				break;
			}
		}
		rerun(c, res, o, v->node, -1);
		break;
	case SWEEP_RAIL:
		add(c, "ibnetdiscover -p | grep %s   # which leaf switch the %s ports hang off",
		    v->rail, v->rail);
		add(c, "ibdiagnet   # from any node: width, speed and errors of every link of "
		    "that leaf");
		break;
	case SWEEP_UNSURE:
		/* the model's error of a pair shrinks with its transfers: more time, more of them */
		add(c, "fabriclab sweep -e %zu -t %g%s%s --json > sweep.json   # again, 4x the "
		    "transfers per pair: the reason says how much traffic would settle it",
		    res->sizes[res->nsizes - 1].bytes, 4 * o->seconds, o->baseline ? " --baseline " :
		    "", o->baseline ? o->baseline : "");
		break;
	case SWEEP_NONE:
		break;
	}
}
