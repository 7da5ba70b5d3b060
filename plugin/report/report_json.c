/* The report as JSON, field by field as docs/report-format.md lists them. */
#include <stdio.h>
#include <string.h>

#include "base/json_out.h"
#include "base/version.h"
#include "report.h"
#include "report_model.h"

static void ptr_types(struct fl_json *j, const char *key, int types)
{
	fl_json_array_inline(j, key);
	if (types & FL_PTR_HOST)
		fl_json_string(j, NULL, "host");
	if (types & FL_PTR_CUDA)
		fl_json_string(j, NULL, "cuda");
	if (types & FL_PTR_DMABUF)
		fl_json_string(j, NULL, "dmabuf");
	fl_json_end(j);
}

static void devices(struct fl_json *j, const struct fl_report *r)
{
	fl_json_array(j, "devices");
	for (int i = 0; i < r->ndevs; i++) {
		const struct fl_report_device *d = &r->devs[i];

		fl_json_object(j, NULL);
		fl_json_int(j, "dev", d->dev);
		fl_json_string(j, "name", d->name);
		fl_json_int(j, "speed_mbps", d->speed_mbps);
		fl_json_double(j, "line_rate_gbs", fl_report_line_rate(d->speed_mbps));
		fl_json_string(j, "pci_path", d->pci_path[0] ? d->pci_path : NULL);
		ptr_types(j, "ptr_support", d->ptr_support);
		fl_json_string(j, "link_layer", d->link_layer[0] ? d->link_layer : NULL);
		fl_json_end(j);
	}
	fl_json_end(j);
}

/* The faults FABRICLAB_FAULT applied here, so a chaos run is never read as a real fault. */
static void injected(struct fl_json *j, const struct fl_report *r)
{
	fl_json_array(j, "injected");
	for (int i = 0; i < r->ninjected; i++) {
		const struct fl_fault_injected *e = &r->injected[i];

		fl_json_object_inline(j, NULL);
		fl_json_string(j, "rule", e->rule);
		fl_json_string(j, "action", e->action);
		fl_json_string(j, "dev", e->dev);
		fl_json_string(j, "peer", e->peer[0] ? e->peer : NULL);
		fl_json_string(j, "dir", e->dir[0] ? e->dir : NULL);
		fl_json_int(j, "connections", e->connections);
		fl_json_uint(j, "rate_bytes_per_s", e->rate_bytes_per_s);
		fl_json_uint(j, "delay_ns", e->delay_ns);
		if (!strcmp(e->action, "nogdr")) {
			ptr_types(j, "ptr_support_before", e->ptr_support_before);
			ptr_types(j, "ptr_support_after", e->ptr_support_after);
		}
		fl_json_end(j);
	}
	fl_json_end(j);
}

/* The node's RDMA ports (sysfs), used or not: a trained-down port or rising errors. */
static void rdma_ports(struct fl_json *j, const struct fl_report *r)
{
	fl_json_bool(j, "rdma_port_active", r->ports && fl_ports_first_active(r->ports));
	fl_ports_json(j, "ports", r->ports, r->ports_base, r->ports_seconds);
}

static void wire_times(struct fl_json *j, const struct fl_hop_snapshot *h)
{
	struct fl_wire_split split;

	fl_json_object_inline(j, "wire_time_us");
	fl_json_double(j, "p50", (double)fl_time_percentile(h->t.wire_times, 50) / 1e3);
	fl_json_double(j, "p99", (double)fl_time_percentile(h->t.wire_times, 99) / 1e3);
	fl_json_double(j, "max", (double)h->t.wire_max_ns / 1e3);
	fl_wire_split(h->t.wire_times, h->t.wire_times_alone, h->t.acked, &split);
	fl_json_uint(j, "alone", split.alone);
	fl_json_uint(j, "queued", split.queued);
	fl_json_double(j, "alone_p50", split.alone_p50_us);
	fl_json_double(j, "queued_p50", split.queued_p50_us);
	fl_json_end(j);
}

static void size_histogram(struct fl_json *j, const struct fl_hop_snapshot *h)
{
	fl_json_array_inline(j, "size_histogram");
	for (unsigned b = 0; b < FL_SIZE_BUCKETS; b++) {
		if (!h->t.sizes[b])
			continue;
		fl_json_array_inline(j, NULL);
		fl_json_uint(j, NULL, fl_size_bucket_floor(b));
		fl_json_uint(j, NULL, h->t.sizes[b]);
		fl_json_end(j);
	}
	fl_json_end(j);
}

/* A communicator's hash as hex text: JSON numbers lose 64-bit integers. */
static void comm_hash(struct fl_json *j, const char *key, int known, uint64_t hash)
{
	char text[24];

	snprintf(text, sizeof(text), "%016llx", (unsigned long long)hash);
	fl_json_string(j, key, known ? text : NULL);
}

/* Who this process is in each communicator: `fabriclab report` names peer ranks' nodes. */
static void ranks(struct fl_json *j, const struct fl_report *r)
{
	fl_json_array(j, "ranks");
	for (int i = 0; i < r->nranks_held; i++) {
		const struct fl_report_rank *k = &r->ranks[i];

		fl_json_object_inline(j, NULL);
		comm_hash(j, "comm_hash", 1, k->comm_hash);
		fl_json_int(j, "rank", k->rank);
		fl_json_int(j, "nranks", k->nranks);
		fl_json_int(j, "nnodes", k->nnodes);
		fl_json_string(j, "comm_name", k->comm_name[0] ? k->comm_name : NULL);
		fl_json_string(j, "node", r->node);
		fl_json_int(j, "pid", r->pid);
		if (k->prof_counted) {
			fl_json_uint(j, "profiler_ops", k->prof.ops);
			fl_json_uint(j, "relayed_ops", k->prof.relayed_ops);
			fl_json_uint(j, "dropped_ops", k->prof.dropped_ops);
			fl_json_uint(j, "dropped_links", k->prof.dropped_links);
			fl_json_uint(j, "dropped_steps", k->prof.dropped_steps);
			fl_json_uint(j, "abandoned_steps", k->prof.abandoned_steps);
		}
		fl_json_end(j);
	}
	fl_json_end(j);
}

static void hop(struct fl_json *j, const struct fl_report *r, int i)
{
	const struct fl_hop_snapshot *h = &r->hops[i];
	/* The verdict's figures keep only what it judges; the report gives this view whole. */
	const struct fl_hop_figures *f = &r->figs[i];
	double gbs = fl_report_wire_gbs(h);

	fl_json_object(j, NULL);
	fl_json_string(j, "src_node", h->key.src_node);
	fl_json_string(j, "src_dev", h->key.src_dev);
	fl_json_string(j, "dst_node", h->key.dst_node);
	fl_json_string(j, "dst_dev", h->key.dst_dev);
	fl_json_int(j, "src_rank", h->src_rank);
	fl_json_int(j, "dst_rank", h->dst_rank);
	fl_json_string(j, "view", h->key.view == FL_HOP_SEND ? "send" : "recv");
	fl_json_string(j, "mode", h->key.mode == FL_HOP_PROFILER ? "profiler" : "net");
	comm_hash(j, "comm_hash", h->key.mode == FL_HOP_PROFILER, h->key.comm_hash);
	fl_json_string(j, "transport", f->transport);
	fl_json_string(j, "link_layer", f->link_layer[0] ? f->link_layer : NULL);
	fl_json_double(j, "line_rate_gbs", f->line_rate_gbs);
	fl_json_int(j, "connections", h->connections);
	fl_json_uint(j, "bytes", h->t.bytes);
	fl_json_uint(j, "wire_bytes", h->t.wire_bytes);
	fl_json_uint(j, "messages", h->t.messages);
	fl_json_uint(j, "unsized_messages", h->t.unsized);
	fl_json_double(j, "wire_seconds", (double)h->wire_ns / 1e9);
	fl_json_uint(j, "wire_runs", h->wire_runs);
	fl_json_double(j, "wire_error_seconds", (double)h->t.wire_bridged_ns / 1e9);
	fl_json_double(j, "active_error_seconds", (double)h->t.active_bridged_ns / 1e9);
	fl_json_uint(j, "ring_overflows", h->t.ring_overflows);
	fl_json_uint(j, "union_bridges", h->t.union_bridges);
	fl_json_double(j, "wire_gbs", gbs);
	fl_json_double(j, "pct_line_rate",
		       f->line_rate_gbs > 0 ? 100.0 * gbs / f->line_rate_gbs : 0.0);
	fl_json_double(j, "active_seconds", (double)h->active_ns / 1e9);
	fl_json_double(j, "peer_wait_seconds", (double)h->t.peer_wait_ns / 1e9);
	fl_json_double(j, "gpu_wait_seconds", (double)h->t.gpu_wait_ns / 1e9);
	fl_json_double(j, "outstanding_seconds", (double)h->t.outstanding_ns / 1e9);
	fl_json_double(j, "peer_wait_share",
		       h->t.outstanding_ns ? (double)h->t.peer_wait_ns / (double)h->t.outstanding_ns
					   : 0.0);
	wire_times(j, h);
	size_histogram(j, h);
	ptr_types(j, "memory", h->mem_types);
	fl_json_bool(j, "gdr", (h->mem_types & (FL_PTR_CUDA | FL_PTR_DMABUF)) != 0);
	fl_json_end(j);
}

static void commands(struct fl_json *j, const char *lines)
{
	fl_json_array(j, "commands");
	while (*lines) {
		const char *nl = strchr(lines, '\n');
		size_t n = nl ? (size_t)(nl - lines) : strlen(lines);
		char line[1024];

		if (n >= sizeof(line))
			n = sizeof(line) - 1;
		memcpy(line, lines, n);
		line[n] = '\0';
		if (n)
			fl_json_string(j, NULL, line);
		lines += nl ? (size_t)(nl - lines) + 1 : strlen(lines);
	}
	fl_json_end(j);
}

static void verdict(struct fl_json *j, const struct fl_report *r)
{
	const struct fl_verdict *v = &r->verdict;

	fl_json_object(j, "verdict");
	fl_json_string(j, "kind", fl_verdict_kind_name(v->kind));
	if (v->hop >= 0 && v->hop < r->nhops) {
		const struct fl_hop_key *k = &r->hops[v->hop].key;

		fl_json_object_inline(j, "hop");
		fl_json_string(j, "src_node", k->src_node);
		fl_json_string(j, "src_dev", k->src_dev);
		fl_json_string(j, "dst_node", k->dst_node);
		fl_json_string(j, "dst_dev", k->dst_dev);
		fl_json_end(j);
	} else {
		fl_json_null(j, "hop");
	}
	fl_json_string(j, "node", v->node);
	fl_json_string(j, "dev", v->dev);
	fl_json_double(j, "ratio", v->ratio);
	fl_json_double(j, "median_gbs", v->median_gbs);
	fl_json_double(j, "culprit_gbs", v->culprit_gbs);
	fl_json_double(j, "speedup", v->speedup);
	fl_json_int(j, "judged_hops", v->judged_hops);
	fl_json_double(j, "confidence", v->confidence);
	fl_json_double(j, "line_share", v->line_share);
	fl_json_double(j, "noise", v->noise);
	fl_json_object_inline(j, "runner_up");
	fl_json_string(j, "kind", fl_verdict_kind_name(v->runner_up.kind));
	fl_json_string(j, "culprit", v->runner_up.culprit);
	fl_json_double(j, "confidence", v->runner_up.confidence);
	fl_json_end(j);
	fl_json_string(j, "reason", v->reason);
	commands(j, r->commands);
	fl_json_end(j);
}

static void hop_key(struct fl_json *j, const struct fl_report *r, int hop)
{
	const struct fl_hop_key *k;

	if (hop < 0 || hop >= r->nhops) {
		fl_json_null(j, "hop");
		return;
	}
	k = &r->hops[hop].key;
	fl_json_object_inline(j, "hop");
	fl_json_string(j, "src_node", k->src_node);
	fl_json_string(j, "src_dev", k->src_dev);
	fl_json_string(j, "dst_node", k->dst_node);
	fl_json_string(j, "dst_dev", k->dst_dev);
	fl_json_end(j);
}

/* Every anomaly of this process's view, costliest first (the verdict is the first). */
static void findings(struct fl_json *j, const struct fl_report *r)
{
	char culprit[2 * FL_NODE_NAME_LEN + 2 * FL_DEV_NAME_LEN + 16];

	fl_json_array(j, "findings");
	for (int i = 0; i < r->verdict.nfindings; i++) {
		const struct fl_finding *f = &r->verdict.findings[i];

		fl_finding_culprit(f, r->figs, culprit, sizeof(culprit));
		fl_json_object(j, NULL);
		fl_json_string(j, "kind", fl_verdict_kind_name(f->kind));
		fl_json_string(j, "culprit", culprit);
		hop_key(j, r, f->hop);
		fl_json_string(j, "node", f->node);
		fl_json_string(j, "dev", f->dev);
		fl_json_double(j, "ratio", f->ratio);
		fl_json_double(j, "median_gbs", f->median_gbs);
		fl_json_double(j, "culprit_gbs", f->culprit_gbs);
		fl_json_double(j, "speedup", f->speedup);
		fl_json_double(j, "cost", f->cost);
		fl_json_string(j, "evidence", f->reason);
		fl_json_end(j);
	}
	fl_json_end(j);
}

/* complete: every figure rests on all that was measured; else incomplete says what was not. */
static void incomplete(struct fl_json *j, const struct fl_report *r)
{
	char why[FL_REPORT_WHY_LEN];
	int partial = fl_report_incomplete(r, why, sizeof(why));

	fl_json_bool(j, "complete", !partial);
	fl_json_string(j, "incomplete", partial ? why : NULL);
}

int fl_report_json(const struct fl_report *r, char **text, size_t *len)
{
	struct fl_json j;
	int rc = fl_json_init(&j);

	if (rc)
		return rc;
	fl_json_object(&j, NULL);
	fl_json_string(&j, "schema", FL_REPORT_SCHEMA);
	fl_json_int(&j, "schema_version", FL_REPORT_SCHEMA_VERSION);
	fl_json_string(&j, "fabriclab_version", fl_version());
	fl_json_string(&j, "node", r->node);
	fl_json_int(&j, "pid", r->pid);
	fl_json_int(&j, "rank", r->rank);
	fl_json_int(&j, "world_size", r->world_size);
	fl_json_bool(&j, "final", r->final);
	fl_json_double(&j, "started_unix", r->started_unix);
	fl_json_double(&j, "written_unix", r->written_unix);
	fl_json_string(&j, "transport", r->transport);
	incomplete(&j, r);
	devices(&j, r);
	ranks(&j, r);
	/* Process-wide: these ops are of no rank of ours (another process's or thread's, PXN). */
	fl_json_uint(&j, "profiler_unhomed_ops", r->prof_unhomed_ops);
	rdma_ports(&j, r);
	injected(&j, r);
	fl_json_array(&j, "hops");
	for (int i = 0; i < r->nhops; i++)
		hop(&j, r, i);
	fl_json_end(&j);
	verdict(&j, r);
	findings(&j, r);
	fl_json_end(&j);
	return fl_json_finish(&j, text, len);
}
