/*
 * What a person would run on real hardware to confirm a verdict, with the
 * real node and device names filled in. "on NODE:" says where to run it;
 * a trailing shell comment says what to look for.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "verdict.h"

struct lines {
	char *buf;
	size_t len;
	size_t used;
	int count;
};

/* Appends one whole line, or nothing when it does not fit. */
__attribute__((format(printf, 2, 3))) static void add(struct lines *l, const char *fmt, ...)
{
	char line[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(line) || l->used + (size_t)n + 2 > l->len)
		return;
	memcpy(l->buf + l->used, line, (size_t)n);
	l->used += (size_t)n;
	l->buf[l->used++] = '\n';
	l->buf[l->used] = '\0';
	l->count++;
}

static bool over_socket(const struct fl_hop_figures *h)
{
	return !strcmp(h->transport, "socket");
}

/* Verbs over Ethernet: the link layer the transport read from the port. */
static bool over_roce(const struct fl_hop_figures *h)
{
	return !over_socket(h) && !strcmp(h->link_layer, FL_LINK_ETHERNET);
}

/* RoCE: the RDMA device's Ethernet interface (sysfs names it) counts the PFC pauses. */
static void roce_checks(struct lines *l, const char *node, const char *dev)
{
	add(l, "on %s: rdma link show %s/1   # state ACTIVE, physical_state LINK_UP, its netdev",
	    node, dev);
	add(l, "on %s: ethtool $(ls /sys/class/infiniband/%s/device/net)   # speed and link "
	       "detected as expected?", node, dev);
	add(l, "on %s: ethtool -S $(ls /sys/class/infiniband/%s/device/net) | grep -E "
	       "'pause|discard|out_of_buffer|err'   # PFC pause frames (rx/tx_prio*_pause) and "
	       "drops that grow", node, dev);
}

static void device_checks(struct lines *l, const struct fl_hop_figures *h, const char *node,
			  const char *dev)
{
	if (over_roce(h)) {
		roce_checks(l, node, dev);
		return;
	}
	if (over_socket(h)) {
		add(l, "on %s: ethtool %s   # speed, duplex and link detected as expected?", node,
		    dev);
		add(l, "on %s: ethtool -S %s | grep -E 'pause|discard|err'   # counters that grow",
		    node, dev);
		add(l, "on %s: ip -s link show %s   # errors, drops, overruns", node, dev);
		return;
	}
	add(l, "on %s: ibstat %s   # State Active, Physical state LinkUp, expected Rate", node,
	    dev);
	add(l, "on %s: perfquery -x -C %s   # SymbolErrors, LinkDowned, PortXmitWait growing?",
	    node, dev);
}

static void pair_test(struct lines *l, const struct fl_hop_figures *h)
{
	const char *var = over_socket(h) ? "NCCL_SOCKET_IFNAME" : "NCCL_IB_HCA";
	char devs[2 * FL_DEV_NAME_LEN + 2];

	if (strcmp(h->src_dev, h->dst_dev))
		snprintf(devs, sizeof(devs), "%s,%s", h->src_dev, h->dst_dev);
	else
		snprintf(devs, sizeof(devs), "%s", h->src_dev);
	add(l,
	    "mpirun -np 2 -H %s,%s -x %s=%s all_reduce_perf -b 1G -e 8G -f 2 -g 1   "
	    "# nccl-tests on the suspect pair %s -> %s: busbw well below its peers confirms",
	    h->src_node, h->dst_node, var, devs, h->src_node, h->dst_node);
}

/*
 * Profiler mode names ranks, not devices: first find the NIC NCCL gave the
 * rank's channels (its channel lines), then check that device as usual.
 */
static void nccl_commands(struct lines *l, const struct fl_verdict *v,
			  const struct fl_hop_figures *h)
{
	const char *node = v->kind == FL_VERDICT_DEVICE ? v->node : h->src_node;
	const char *rank = v->kind == FL_VERDICT_DEVICE ? v->dev : h->src_dev;

	add(l, "NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET <your job> 2>&1 | grep 'via NET/'   "
	       "# the NIC behind %s on %s: its channel lines read NET/IB/<n> or NET/Socket/<n>",
	    rank, node);
	add(l, "on %s: ibstat; perfquery -x   # that port: State Active, expected Rate, errors "
	       "growing? (ethtool -S <if> for Socket)", node);
	if (v->kind != FL_VERDICT_DEVICE)
		add(l, "on %s: ibstat; perfquery -x   # the receiving end, %s", h->dst_node,
		    h->dst_dev);
	add(l, "ibdiagnet   # from any node: width, speed and errors of every fabric link");
	add(l, "mpirun -np 2 -H %s,%s all_reduce_perf -b 1G -e 8G -f 2 -g 1   "
	       "# nccl-tests on the suspect pair: busbw well below its peers confirms",
	    h->src_node, h->dst_node);
}

static void wire_commands(struct lines *l, const struct fl_verdict *v,
			  const struct fl_hop_figures *h)
{
	if (!strcmp(h->transport, "nccl")) {
		nccl_commands(l, v, h);
		return;
	}
	if (v->kind == FL_VERDICT_DEVICE) {
		device_checks(l, h, v->node, v->dev);
	} else {
		device_checks(l, h, h->src_node, h->src_dev);
		device_checks(l, h, h->dst_node, h->dst_dev);
	}
	if (!over_socket(h) && !over_roce(h))
		add(l, "ibdiagnet   # from any node: width, speed and errors of every fabric link");
	pair_test(l, h);
}

/* A leaf switch: every node's device of that name is cabled to it. */
static void rail_commands(struct lines *l, const struct fl_verdict *v,
			  const struct fl_hop_figures *h)
{
	if (over_socket(h)) {
		add(l, "on %s: lldpctl %s   # the leaf switch and port it is cabled to (same "
		    "switch on every node of the rail)", h->src_node, v->dev);
		add(l, "on %s: ethtool -S %s | grep -E 'pause|discard|err'   # counters that grow "
		    "on every node's %s: the switch, not one NIC", h->src_node, v->dev, v->dev);
	} else if (over_roce(h)) {
		roce_checks(l, h->src_node, v->dev);
		add(l, "on %s: lldpctl $(ls /sys/class/infiniband/%s/device/net)   # the leaf "
		    "switch it is cabled to (same switch on every node of the rail)", h->src_node,
		    v->dev);
	} else {
		add(l, "on %s: ibstat %s   # the rail's NIC: State Active, expected Rate",
		    h->src_node, v->dev);
		add(l, "ibnetdiscover | grep -B2 -A10 '%s'   # the leaf switch every node's %s "
		    "is cabled to", v->dev, v->dev);
		add(l, "ibdiagnet   # from any node: that switch's ports, width, speed and errors");
	}
	pair_test(l, h);
}

static void node_commands(struct lines *l, const struct fl_verdict *v)
{
	add(l, "on %s: nvidia-smi -q -d CLOCK,PERFORMANCE   # clocks and throttle reasons",
	    v->node);
	add(l, "on %s: top -b -n 1 | head -20   # other processes competing for the CPUs", v->node);
	add(l, "on %s: mpstat -P ALL 1 5   # a saturated core or interrupt storm", v->node);
}

static void gdr_commands(struct lines *l, const struct fl_verdict *v)
{
	add(l, "on %s: lsmod | grep -E 'nvidia_peermem|nv_peer_mem'   # GPUDirect RDMA needs one",
	    v->node);
	add(l,
	    "on %s: nvidia-smi topo -m   "
	    "# GPU-NIC distance: GDR needs PIX/PXB (NCCL_NET_GDR_LEVEL)",
	    v->node);
	add(l,
	    "NCCL_DEBUG=INFO <your job> 2>&1 | grep 'GPU Direct RDMA'   "
	    "# expect 'GPU Direct RDMA Enabled' on %s",
	    v->node);
	add(l, "NCCL_DEBUG=INFO <your job> 2>&1 | grep -E 'via NET/'   "
	       "# channel lines should read NET/IB/<n>/GDRDMA");
}

/* The active port the verdict named ("mlx5_0/1"): ibstat and NCCL_IB_HCA spell it their way. */
static void port_commands(struct lines *l, const struct fl_verdict *v)
{
	char dev[FL_DEV_NAME_LEN];
	const char *slash = strchr(v->dev, '/');
	int n = slash ? (int)(slash - v->dev) : (int)strlen(v->dev);

	snprintf(dev, sizeof(dev), "%.*s", n, v->dev);
	add(l, "on %s: ibstat %s %s   # State: Active, Rate: the port NCCL is not using", v->node,
	    dev, slash ? slash + 1 : "");
	add(l,
	    "NCCL_NET=IB NCCL_IB_HCA==%s%s%s <your job>   # insist on it: NCCL fails where IB "
	    "cannot work (FABRICLAB_TRANSPORT=ib under fabriclab)",
	    dev, slash ? ":" : "", slash ? slash + 1 : "");
}

static void transport_commands(struct lines *l, const struct fl_verdict *v)
{
	add(l, "NCCL_DEBUG=INFO <your job> 2>&1 | grep -E 'NET/(IB|Socket)'   "
	       "# NCCL should say NET/IB, not NET/Socket");
	if (v->dev[0])
		port_commands(l, v);
	else
		add(l, "on %s: ibv_devinfo   # a port in state PORT_ACTIVE: RDMA is there to use",
		    v->node);
	add(l,
	    "on %s: env | grep -E 'NCCL_(IB_DISABLE|NET|NET_PLUGIN|IB_HCA)='   "
	    "# settings that force TCP",
	    v->node);
}

/*
 * A shared element of the topology: the switch's own commands (perfquery on
 * its port, ibtracert between the slow hop's ends) come with the topology,
 * in `fabriclab report --topology`'s list of shared elements.
 */
static void switch_commands(struct lines *l, const struct fl_verdict *v)
{
	add(l, "ibdiagnet   # from any node: width, speed and errors of every link, %s's included",
	    v->node);
	add(l, "fabriclab report <reports> --topology <file>   # the switch's port and the commands "
	       "that name it (perfquery, ibtracert)");
}

int fl_verdict_commands(const struct fl_verdict *v, const struct fl_hop_figures *hops, size_t nhops,
			char *buf, size_t len)
{
	struct lines l = { buf, len, 0, 0 };
	bool has_hop = v->hop >= 0 && (size_t)v->hop < nhops;

	if (len)
		buf[0] = '\0';
	switch (v->kind) {
	case FL_VERDICT_LINK:
	case FL_VERDICT_DEVICE:
		if (has_hop)
			wire_commands(&l, v, &hops[v->hop]);
		break;
	case FL_VERDICT_RAIL:
		if (has_hop)
			rail_commands(&l, v, &hops[v->hop]);
		break;
	case FL_VERDICT_SWITCH: switch_commands(&l, v); break;
	case FL_VERDICT_NODE: node_commands(&l, v); break;
	case FL_VERDICT_GDR: gdr_commands(&l, v); break;
	case FL_VERDICT_TRANSPORT: transport_commands(&l, v); break;
	case FL_VERDICT_NONE:
	case FL_VERDICT_UNSURE: break;
	}
	return l.count;
}
