/*
 * `--json`: the merged view, with the per-process format's field names: each
 * hop carries the joined figures plus both views as written, the verdict
 * carries its commands, and the input files are listed.
 */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "plugin/base/error.h"
#include "plugin/base/version.h"
#include "report.h"

static json_t *memory_names(int mem_types)
{
	json_t *a = json_array();

	if (mem_types & FL_PTR_HOST)
		json_array_append_new(a, json_string("host"));
	if (mem_types & FL_PTR_CUDA)
		json_array_append_new(a, json_string("cuda"));
	if (mem_types & FL_PTR_DMABUF)
		json_array_append_new(a, json_string("dmabuf"));
	return a;
}

static json_t *size_histogram(const struct report_view *v)
{
	uint64_t sizes[REPORT_SIZE_BUCKETS];
	json_t *a = json_array();

	report_sizes_get(v, sizes);
	for (size_t b = 0; b < REPORT_SIZE_BUCKETS; b++) {
		if (sizes[b])
			json_array_append_new(
				a, json_pack("[II]", (json_int_t)1 << b, (json_int_t)sizes[b]));
	}
	return a;
}

static double pct(double part, double whole)
{
	return whole > 0 ? 100.0 * part / whole : 0.0;
}

static json_t *view_json(const struct report_set *set, const struct report_view *v)
{
	json_t *o;

	if (!v->present)
		return json_null();
	o = json_pack("{s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:f, s:f, s:f, s:f, s:f, s:f,"
			 " s:f, s:{s:f, s:f, s:f}, s:o, s:o, s:b}",
			 "file", set->files[v->input].path, "processes", (json_int_t)v->processes,
			 "src_rank", (json_int_t)v->src_rank, "dst_rank", (json_int_t)v->dst_rank,
			 "connections", (json_int_t)v->connections, "bytes", (json_int_t)v->bytes,
			 "wire_bytes", (json_int_t)v->wire_bytes,
			 "messages", (json_int_t)v->messages, "line_rate_gbs", v->line_rate_gbs,
			 "wire_seconds", v->wire_seconds, "wire_gbs", v->wire_gbs, "pct_line_rate",
			 pct(v->wire_gbs, v->line_rate_gbs), "active_seconds", v->active_seconds,
			 "peer_wait_seconds", v->peer_wait_seconds, "outstanding_seconds",
			 v->outstanding_seconds, "wire_time_us", "p50",
			 v->p50_us, "p99", v->p99_us, "max", v->max_us, "size_histogram",
			 size_histogram(v), "memory", memory_names(v->mem_types), "gdr", v->gdr);
	if (o && v->profiler)
		json_object_set_new(o, "gpu_wait_seconds", json_real(v->gpu_wait_seconds));
	return o;
}

static json_t *rate_error_json(const struct report_set *set, size_t i)
{
	char why[160];

	if (!report_rate_error(set, i, why, sizeof(why)))
		return json_null();
	return json_string(why);
}

/* %line by the median request with the fabric's round trip out; null unless rates are diluted. */
static json_t *round_trip_out_json(const struct report_set *set, size_t i)
{
	double share = fl_verdict_line_share_rtt_out(&set->figures[i], set->round_trip_us);

	return share > 0.0 ? json_real(100.0 * share) : json_null();
}

static json_t *hop_json(const struct report_set *set, size_t i)
{
	const struct report_hop *h = &set->hops[i];
	const struct fl_hop_figures *f = &set->figures[i];
	json_t *o;

	char hash[24];

	o = json_pack("{s:s, s:s, s:s, s:s, s:I, s:I, s:s, s:f, s:I, s:I, s:f, s:f, s:s,"
			 " s:f, s:f, s:f, s:o, s:b, s:b, s:o, s:o}",
			 "src_node", h->key.src_node, "src_dev", h->key.src_dev, "dst_node",
			 h->key.dst_node, "dst_dev", h->key.dst_dev, "src_rank",
			 (json_int_t)h->src_rank, "dst_rank", (json_int_t)h->dst_rank, "transport",
			 h->transport,
			 "line_rate_gbs", f->line_rate_gbs, "bytes", (json_int_t)f->bytes,
			 "messages", (json_int_t)f->messages, "wire_gbs", f->wire_gbs,
			 "wire_seconds", f->wire_seconds, "wire_view", report_wire_view_name(h),
			 "pct_line_rate", pct(f->wire_gbs, f->line_rate_gbs), "active_seconds",
			 f->active_seconds, "peer_wait_seconds", f->peer_wait_seconds, "memory",
			 memory_names(f->mem_types), "gdr",
			 (f->mem_types & (FL_PTR_CUDA | FL_PTR_DMABUF)) != 0, "culprit",
			 report_is_culprit(set, i), "send", view_json(set, &h->send), "recv",
			 view_json(set, &h->recv));

	if (!o)
		return NULL;
	snprintf(hash, sizeof(hash), "%016llx", (unsigned long long)h->key.comm_hash);
	json_object_set_new(o, "mode", json_string(report_hop_mode(h)));
	json_object_set_new(o, "link_layer",
			    f->link_layer[0] ? json_string(f->link_layer) : json_null());
	json_object_set_new(o, "comm_hash", h->key.comm_hash ? json_string(hash) : json_null());
	json_object_set_new(o, "measurement_error", rate_error_json(set, i));
	/* busy stretches of wire_seconds: 0 where the reports said none (older ones) */
	json_object_set_new(o, "wire_runs", json_integer((json_int_t)f->wire_runs));
	json_object_set_new(o, "pct_line_rate_round_trip_out",
			    round_trip_out_json(set, i));
	return o;
}

static json_t *commands_json(const struct report_set *set)
{
	json_t *a = json_array();
	const char *line = set->commands;

	while (*line) {
		const char *end = strchr(line, '\n');
		size_t n = end ? (size_t)(end - line) : strlen(line);

		json_array_append_new(a, json_stringn(line, n));
		line += n + (end != NULL);
	}
	return a;
}

static json_t *hop_key_json(const struct report_set *set, int hop)
{
	const struct report_hop_key *k;

	if (hop < 0)
		return json_null();
	k = &set->hops[hop].key;
	return json_pack("{s:s, s:s, s:s, s:s}", "src_node", k->src_node, "src_dev", k->src_dev,
			 "dst_node", k->dst_node, "dst_dev", k->dst_dev);
}

static json_t *findings_json(const struct report_set *set)
{
	const struct fl_verdict *v = &set->verdict;
	char culprit[2 * FL_NODE_NAME_LEN + 2 * FL_DEV_NAME_LEN + 16];
	json_t *a = json_array();

	for (int i = 0; i < v->nfindings; i++) {
		const struct fl_finding *f = &v->findings[i];

		fl_finding_culprit(f, set->figures, culprit, sizeof(culprit));
		json_array_append_new(
			a, json_pack("{s:s, s:s, s:o, s:s, s:s, s:f, s:f, s:f, s:f, s:f, s:s}",
				     "kind", fl_verdict_kind_name(f->kind), "culprit", culprit,
				     "hop", hop_key_json(set, f->hop), "node", f->node, "dev",
				     f->dev, "ratio", f->ratio, "median_gbs", f->median_gbs,
				     "culprit_gbs", f->culprit_gbs, "speedup", f->speedup, "cost",
				     f->cost, "evidence", f->reason));
	}
	return a;
}

static json_t *verdict_json(const struct report_set *set)
{
	const struct fl_verdict *v = &set->verdict;
	json_t *hop = json_null();

	if (v->hop >= 0) {
		const struct report_hop_key *k = &set->hops[v->hop].key;

		hop = json_pack("{s:s, s:s, s:s, s:s}", "src_node", k->src_node, "src_dev",
				k->src_dev, "dst_node", k->dst_node, "dst_dev", k->dst_dev);
	}
	return json_pack("{s:s, s:o, s:s, s:s, s:f, s:f, s:f, s:f, s:i, s:s, s:o}", "kind",
			 fl_verdict_kind_name(v->kind), "hop", hop, "node", v->node, "dev", v->dev,
			 "ratio", v->ratio, "median_gbs", v->median_gbs, "culprit_gbs",
			 v->culprit_gbs, "speedup", v->speedup, "judged_hops", v->judged_hops,
			 "reason", v->reason, "commands", commands_json(set));
}

static json_t *files_json(const struct report_set *set)
{
	json_t *a = json_array();

	for (size_t i = 0; i < set->nfiles; i++) {
		const struct report_file *f = &set->files[i];

		json_array_append_new(a, json_pack("{s:s, s:s, s:I, s:I, s:b, s:s, s:b}", "path",
						   f->path, "node", f->node, "pid",
						   (json_int_t)f->pid, "rank", (json_int_t)f->rank,
						   "final", f->final, "fabriclab_version",
						   f->version, "used", f->superseded_by < 0));
	}
	return a;
}

static json_t *missing_ranks_json(const struct report_set *set)
{
	json_t *a = json_array();

	for (size_t k = 0; k < set->nmissing_ranks; k++)
		json_array_append_new(a, json_integer(set->missing_ranks[k]));
	return a;
}

static json_t *missing_nodes_json(const struct report_set *set)
{
	json_t *a = json_array();

	for (size_t k = 0; k < set->nmissing_nodes; k++)
		json_array_append_new(a, json_string(set->missing_nodes[k]));
	return a;
}

int report_print_json(const struct report_set *set, FILE *out)
{
	json_t *hops = json_array(), *root;
	int err;

	for (size_t i = 0; i < set->nhops; i++)
		json_array_append_new(hops, hop_json(set, i));
	root = json_pack("{s:s, s:i, s:s, s:I, s:o, s:o, s:o}", "schema", REPORT_MERGED_SCHEMA,
			 "schema_version", REPORT_SCHEMA_VERSION, "fabriclab_version",
			 fl_version(), "nodes", (json_int_t)set->nodes, "files",
			 files_json(set), "hops", hops, "verdict", verdict_json(set));
	if (!root)
		return fl_fail(FL_ERR_SYSTEM, "out of memory building the JSON report");
	json_object_set_new(root, "port_suspects", report_ports_json(set));
	json_object_set_new(root, "lossless", report_lossless_json(set));
	json_object_set_new(root, "injected", report_injected_json(set));
	json_object_set_new(root, "findings", findings_json(set));
	json_object_set_new(root, "world_size", json_integer(set->world_size));
	json_object_set_new(root, "missing_ranks", missing_ranks_json(set));
	json_object_set_new(root, "missing_nodes", missing_nodes_json(set));
	json_object_set_new(root, "data_gaps", report_gaps_json(set));
	err = json_dumpf(root, out, JSON_INDENT(1) | JSON_REAL_PRECISION(6));
	json_decref(root);
	if (err || fputc('\n', out) == EOF || ferror(out))
		return fl_fail(FL_ERR_SYSTEM, "cannot write the JSON report");
	return 0;
}
