/* From hop snapshots to the figures, verdict and commands of one process's report. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "report.h"
#include "report_model.h"

double fl_report_line_rate(int speed_mbps)
{
	return speed_mbps > 0 ? speed_mbps / 8000.0 : 0.0;
}

const struct fl_report_device *fl_report_device(const struct fl_report *r, int dev)
{
	for (int i = 0; i < r->ndevs; i++)
		if (r->devs[i].dev == dev)
			return &r->devs[i];
	return NULL;
}

double fl_report_wire_gbs(const struct fl_hop_snapshot *h)
{
	/* Only bytes whose wire time was seen: a transport may not time every request. */
	return h->wire_ns ? (double)h->t.wire_bytes / (double)h->wire_ns : 0.0;
}

static void copy_name(char *dst, size_t len, const char *src)
{
	snprintf(dst, len, "%s", src);
}

/*
 * The end that times a transport's wire best: for sockets the receiver (first
 * byte read -> last byte read), for verbs the sender (post -> completion), for
 * ext the sender (accepted -> done: a receive's posted -> done also holds the
 * wait for its sender), as `fabriclab report` merges them.
 */
int fl_report_best_view(const char *transport)
{
	/*
	 * NCCL's own transports seen through profiler events: the sender's SendWait ->
	 * stop is the transfer, the receiver's RecvWait -> RecvFlushWait also holds
	 * the wait for the sender.
	 */
	if (!strcmp(transport, FL_REPORT_NCCL_TRANSPORT))
		return FL_HOP_SEND;
	return strcmp(transport, "ib") && strcmp(transport, "ext") ? FL_HOP_RECV : FL_HOP_SEND;
}

const char *fl_report_hop_transport(const struct fl_report *r, const struct fl_hop_snapshot *h)
{
	return h->key.mode == FL_HOP_PROFILER ? FL_REPORT_NCCL_TRANSPORT : r->transport;
}

/* An active RDMA port on this node (sysfs), whatever transport carries the hop. */
static void rdma_port_of(const struct fl_report *r, struct fl_hop_figures *f)
{
	const struct fl_port *p = r->ports ? fl_ports_first_active(r->ports) : NULL;

	f->rdma_port_active = p != NULL;
	copy_name(f->rdma_node, sizeof(f->rdma_node), p ? r->node : "");
	copy_name(f->rdma_port, sizeof(f->rdma_port), p ? p->name : "");
}

/*
 * One process sees each of its hops from one end only. The verdict compares
 * like with like: wire rates from the end that times them best, and peer
 * wait and active time from the receiver (as struct fl_hop_figures defines
 * them); the other end's figures stay in the report but are not judged here.
 */
void fl_report_split_figures(const uint64_t all[FL_TIME_BUCKETS],
			     const uint64_t alone[FL_TIME_BUCKETS], int acked,
			     struct fl_hop_figures *f)
{
	struct fl_wire_split split;

	fl_wire_split(all, alone, acked, &split);
	f->wire_alone = split.alone;
	f->wire_queued = split.queued;
	f->alone_p50_us = split.alone_p50_us;
	f->queued_p50_us = split.queued_p50_us;
}

static void figures_of(const struct fl_report *r, const struct fl_hop_snapshot *h,
		       int wire_view, struct fl_hop_figures *f)
{
	const struct fl_report_device *d = fl_report_device(r, h->local_dev);

	memset(f, 0, sizeof(*f));
	copy_name(f->src_node, sizeof(f->src_node), h->key.src_node);
	copy_name(f->src_dev, sizeof(f->src_dev), h->key.src_dev);
	copy_name(f->dst_node, sizeof(f->dst_node), h->key.dst_node);
	copy_name(f->dst_dev, sizeof(f->dst_dev), h->key.dst_dev);
	copy_name(f->transport, sizeof(f->transport), fl_report_hop_transport(r, h));
	f->line_rate_gbs = d ? fl_report_line_rate(d->speed_mbps) : 0.0;
	f->bytes = h->t.bytes;
	f->messages = h->t.messages;
	f->typical_request = fl_size_median_byte(h->t.sizes);
	if (h->key.mode == FL_HOP_PROFILER)
		wire_view = FL_HOP_SEND;
	if (h->key.view == wire_view) {
		f->wire_seconds = (double)h->wire_ns / 1e9;
		f->wire_runs = h->wire_runs;
		f->wire_gbs = fl_report_wire_gbs(h);
		f->wire_p50_us = (double)fl_time_percentile(h->t.wire_times, 50) / 1e3;
		f->wire_p99_us = (double)fl_time_percentile(h->t.wire_times, 99) / 1e3;
		fl_report_split_figures(h->t.wire_times, h->t.wire_times_alone, h->t.acked, f);
	}
	if (h->key.view == FL_HOP_RECV) {
		f->peer_wait_seconds = (double)h->t.peer_wait_ns / 1e9;
		f->outstanding_seconds = (double)h->t.outstanding_ns / 1e9;
		f->active_seconds = (double)h->active_ns / 1e9;
	} else {
		f->send_wait_seconds = (double)h->t.peer_wait_ns / 1e9;
		f->send_outstanding_seconds = (double)h->t.outstanding_ns / 1e9;
	}
	f->mem_types = h->mem_types;
	f->gdr_capable = d && (d->ptr_support & (FL_PTR_CUDA | FL_PTR_DMABUF));
	/* both ends of a verbs connection share it: the transport refuses RoCE to IB */
	copy_name(f->link_layer, sizeof(f->link_layer), d ? d->link_layer : "");
	rdma_port_of(r, f);
}

/* NCCL's tags give the sender's rank; this process's rank fills its own end. */
static void fill_ranks(struct fl_report *r)
{
	for (int i = 0; r->rank < 0 && i < r->nhops; i++)
		if (r->hops[i].key.view == FL_HOP_SEND && r->hops[i].src_rank >= 0)
			r->rank = r->hops[i].src_rank;
	for (int i = 0; i < r->nhops; i++) {
		struct fl_hop_snapshot *h = &r->hops[i];

		if (h->key.view == FL_HOP_SEND && h->src_rank < 0)
			h->src_rank = r->rank;
		if (h->key.view == FL_HOP_RECV && h->dst_rank < 0)
			h->dst_rank = r->rank;
	}
}

/* Among the hops timed from the better end, if any; else among all. */
static int hop_best_view(const struct fl_report *r, const struct fl_hop_snapshot *h)
{
	return fl_report_best_view(fl_report_hop_transport(r, h));
}

static int slowest_hop(const struct fl_report *r)
{
	int best = -1, any_best = 0;

	for (int i = 0; i < r->nhops; i++)
		any_best |= r->hops[i].key.view == hop_best_view(r, &r->hops[i]) &&
			    r->hops[i].wire_ns && r->hops[i].t.bytes;
	for (int i = 0; i < r->nhops; i++) {
		if (!r->hops[i].wire_ns || !r->hops[i].t.bytes)
			continue;
		if (any_best && r->hops[i].key.view != hop_best_view(r, &r->hops[i]))
			continue;
		if (best < 0 ||
		    fl_report_wire_gbs(&r->hops[i]) < fl_report_wire_gbs(&r->hops[best]))
			best = i;
	}
	return best;
}

/*
 * The view whose wire rates this process judges: the transport's best one,
 * unless no hop seen from it has a wire sample (a socket receiver driven by
 * the proxy thread times nothing); then the other end's, like with like still.
 */
static int judged_wire_view(const struct fl_report *r)
{
	int best = fl_report_best_view(r->transport);

	for (int i = 0; i < r->nhops; i++)
		if (r->hops[i].key.mode == FL_HOP_NET && r->hops[i].key.view == best &&
		    r->hops[i].wire_ns)
			return best;
	return best == FL_HOP_RECV ? FL_HOP_SEND : FL_HOP_RECV;
}

/* Like with like: hops of the two modes time different things, each is judged on its own. */
static void judge(struct fl_report *r, const struct fl_verdict_params *params)
{
	int *group = calloc(r->nhops > 0 ? (size_t)r->nhops : 1, sizeof(*group));

	if (!group) {
		fl_verdict_compute(r->figs, (size_t)r->nhops, params, &r->verdict);
		return;
	}
	for (int i = 0; i < r->nhops; i++)
		group[i] = r->hops[i].key.mode;
	fl_verdict_compute_groups(r->figs, group, (size_t)r->nhops, params, &r->verdict);
	free(group);
}

int fl_report_fill(struct fl_report *r, struct fl_hop_snapshot *hops, int nhops,
		   const struct fl_verdict_params *params)
{
	int wire_view;

	r->hops = hops;
	r->nhops = nhops;
	r->figs = calloc(nhops > 0 ? (size_t)nhops : 1, sizeof(*r->figs));
	if (!r->figs)
		return fl_fail(FL_ERR_SYSTEM, "out of memory for a report");
	fill_ranks(r);
	wire_view = judged_wire_view(r);
	for (int i = 0; i < nhops; i++)
		figures_of(r, &hops[i], wire_view, &r->figs[i]);
	judge(r, params);
	if (wire_view == FL_HOP_SEND && strcmp(r->transport, "ib"))
		fl_verdict_note_sender_view(&r->verdict);
	fl_verdict_commands(&r->verdict, r->figs, (size_t)nhops, r->commands,
			    sizeof(r->commands));
	r->slowest = slowest_hop(r);
	return FL_OK;
}

void fl_report_release(struct fl_report *r)
{
	free(r->hops);
	free(r->figs);
	free(r->ports);
	r->hops = NULL;
	r->figs = NULL;
	r->ports = NULL;
	r->nhops = 0;
}

void fl_report_summary_line(const struct fl_report *r, const char *path, char *buf, size_t len)
{
	const char *kind = fl_verdict_kind_name(r->verdict.kind);
	const struct fl_hop_snapshot *h;

	if (r->slowest < 0) {
		snprintf(buf, len, "fabriclab: %s no traffic measured (%s), report %s", r->node,
			 kind, path);
		return;
	}
	h = &r->hops[r->slowest];
	snprintf(buf, len, "fabriclab: %s slowest hop %s/%s -> %s/%s %.3f GB/s (%s), report %s",
		 r->node, h->key.src_node, h->key.src_dev, h->key.dst_node, h->key.dst_dev,
		 fl_report_wire_gbs(h), kind, path);
}
