/*
 * `--json`: the merged view, with the per-process format's field names: each
 * hop carries the joined figures plus both views as written, the verdict
 * carries its commands, and the input files are listed.
 *
 * Written as it goes (tools/common/tool_json_stream.h): the files and the hops,
 * the bulk of a fleet's document, field by field with no tree at all; the
 * verdict, findings and the short lists as small jansson trees. Peak memory
 * is the merge's plus one 64 KiB buffer, whatever the number of hops (a fleet
 * of 131 072 hops built as one tree took 1.8 GB, issue 48).
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugin/base/error.h"
#include "plugin/base/version.h"
#include "report.h"
#include "tools/common/tool_json_stream.h"
#include "tools/common/tool_text.h"

static void memory_names(struct tool_json_stream *s, int mem_types)
{
	tool_json_stream_open(s, "memory", '[');
	if (mem_types & FL_PTR_HOST)
		tool_json_stream_string(s, NULL, "host");
	if (mem_types & FL_PTR_CUDA)
		tool_json_stream_string(s, NULL, "cuda");
	if (mem_types & FL_PTR_DMABUF)
		tool_json_stream_string(s, NULL, "dmabuf");
	tool_json_stream_close(s);
}

/* [[bucket floor, count], ...] for the buckets that have some. */
static void size_histogram(struct tool_json_stream *s, const struct report_view *v)
{
	uint64_t sizes[REPORT_SIZE_BUCKETS];

	report_sizes_get(v, sizes);
	tool_json_stream_open(s, "size_histogram", '[');
	for (size_t b = 0; b < REPORT_SIZE_BUCKETS; b++) {
		if (!sizes[b])
			continue;
		tool_json_stream_open(s, NULL, '[');
		tool_json_stream_int(s, NULL, (long long)1 << b);
		tool_json_stream_int(s, NULL, (long long)sizes[b]);
		tool_json_stream_close(s);
	}
	tool_json_stream_close(s);
}

static double pct(double part, double whole)
{
	return whole > 0 ? 100.0 * part / whole : 0.0;
}

static void view_json(struct tool_json_stream *s, const char *key, const struct report_set *set,
		      const struct report_view *v)
{
	if (!v->present) {
		tool_json_stream_null(s, key);
		return;
	}
	tool_json_stream_open(s, key, '{');
	tool_json_stream_string(s, "file", set->files[v->input].path);
	tool_json_stream_int(s, "processes", v->processes);
	tool_json_stream_int(s, "src_rank", v->src_rank);
	tool_json_stream_int(s, "dst_rank", v->dst_rank);
	tool_json_stream_int(s, "connections", v->connections);
	tool_json_stream_int(s, "bytes", (long long)v->bytes);
	tool_json_stream_int(s, "wire_bytes", (long long)v->wire_bytes);
	tool_json_stream_int(s, "messages", (long long)v->messages);
	tool_json_stream_int(s, "unsized_messages", (long long)v->unsized_messages);
	tool_json_stream_real(s, "line_rate_gbs", v->line_rate_gbs);
	tool_json_stream_real(s, "wire_seconds", v->wire_seconds);
	tool_json_stream_real(s, "wire_gbs", v->wire_gbs);
	tool_json_stream_real(s, "pct_line_rate", pct(v->wire_gbs, v->line_rate_gbs));
	tool_json_stream_real(s, "active_seconds", v->active_seconds);
	tool_json_stream_real(s, "peer_wait_seconds", v->peer_wait_seconds);
	tool_json_stream_real(s, "outstanding_seconds", v->outstanding_seconds);
	tool_json_stream_open(s, "wire_time_us", '{');
	tool_json_stream_real(s, "p50", v->p50_us);
	tool_json_stream_real(s, "p99", v->p99_us);
	tool_json_stream_real(s, "max", v->max_us);
	tool_json_stream_int(s, "alone", (long long)v->alone);
	tool_json_stream_int(s, "queued", (long long)v->queued);
	tool_json_stream_real(s, "alone_p50", v->alone_p50_us);
	tool_json_stream_real(s, "queued_p50", v->queued_p50_us);
	tool_json_stream_close(s);
	size_histogram(s, v);
	memory_names(s, v->mem_types);
	tool_json_stream_bool(s, "gdr", v->gdr);
	if (v->profiler)
		tool_json_stream_real(s, "gpu_wait_seconds", v->gpu_wait_seconds);
	tool_json_stream_close(s);
}

static void hop_json(struct tool_json_stream *s, const struct report_set *set, size_t i)
{
	const struct report_hop *h = &set->hops[i];
	const struct fl_hop_figures *f = &set->figures[i];
	char text[160];

	tool_json_stream_open(s, NULL, '{');
	tool_json_stream_string(s, "src_node", h->key.src_node);
	tool_json_stream_string(s, "src_dev", h->key.src_dev);
	tool_json_stream_string(s, "dst_node", h->key.dst_node);
	tool_json_stream_string(s, "dst_dev", h->key.dst_dev);
	tool_json_stream_int(s, "src_rank", h->src_rank);
	tool_json_stream_int(s, "dst_rank", h->dst_rank);
	tool_json_stream_string(s, "transport", h->transport);
	tool_json_stream_real(s, "line_rate_gbs", f->line_rate_gbs);
	tool_json_stream_int(s, "bytes", (long long)f->bytes);
	tool_json_stream_int(s, "messages", (long long)f->messages);
	tool_json_stream_real(s, "wire_gbs", f->wire_gbs);
	tool_json_stream_real(s, "wire_seconds", f->wire_seconds);
	tool_json_stream_string(s, "wire_view", report_wire_view_name(h));
	tool_json_stream_real(s, "pct_line_rate", pct(f->wire_gbs, f->line_rate_gbs));
	tool_json_stream_real(s, "active_seconds", f->active_seconds);
	tool_json_stream_real(s, "peer_wait_seconds", f->peer_wait_seconds);
	memory_names(s, f->mem_types);
	tool_json_stream_bool(s, "gdr", (f->mem_types & (FL_PTR_CUDA | FL_PTR_DMABUF)) != 0);
	tool_json_stream_bool(s, "culprit", report_is_culprit(set, i));
	view_json(s, "send", set, h->send);
	view_json(s, "recv", set, h->recv);
	tool_json_stream_string(s, "mode", report_hop_mode(h));
	tool_json_stream_string(s, "link_layer", f->link_layer[0] ? f->link_layer : NULL);
	snprintf(text, sizeof(text), "%016llx", (unsigned long long)h->key.comm_hash);
	tool_json_stream_string(s, "comm_hash", h->key.comm_hash ? text : NULL);
	tool_json_stream_string(s, "measurement_error",
				report_rate_error(set, i, text, sizeof(text)) ? text : NULL);
	/* busy stretches of wire_seconds: 0 where the reports said none (older ones) */
	tool_json_stream_int(s, "wire_runs", (long long)f->wire_runs);
	tool_json_stream_close(s);
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
			a, json_pack("{s:s, s:s, s:o, s:s, s:s, s:f, s:f, s:f, s:f, s:f, s:f, s:f,"
				     " s:s}",
				     "kind", fl_verdict_kind_name(f->kind), "culprit", culprit,
				     "hop", hop_key_json(set, f->hop), "node", f->node, "dev",
				     f->dev, "ratio", f->ratio, "median_gbs", f->median_gbs,
				     "culprit_gbs", f->culprit_gbs, "speedup", f->speedup, "cost",
				     f->cost, "confidence", f->confidence, "line_share",
				     f->line_share, "evidence", f->reason));
	}
	return a;
}

/* The explanation the model ranked second, what a reader checks if the verdict is wrong. */
static json_t *runner_up_json(const struct fl_runner_up *r)
{
	return json_pack("{s:s, s:o, s:f}", "kind", fl_verdict_kind_name(r->kind), "culprit",
			 tool_text_json(r->culprit), "confidence", r->confidence);
}

static json_t *verdict_json(const struct report_set *set)
{
	const struct fl_verdict *v = &set->verdict;

	return json_pack("{s:s, s:o, s:s, s:s, s:f, s:f, s:f, s:f, s:i, s:f, s:f, s:f, s:o, s:s,"
			 " s:o}", "kind",
			 fl_verdict_kind_name(v->kind), "hop", hop_key_json(set, v->hop), "node",
			 v->node, "dev", v->dev, "ratio", v->ratio, "median_gbs", v->median_gbs,
			 "culprit_gbs", v->culprit_gbs, "speedup", v->speedup, "judged_hops",
			 v->judged_hops, "confidence", v->confidence, "line_share", v->line_share,
			 "noise", v->noise, "runner_up", runner_up_json(&v->runner_up), "reason",
			 v->reason, "commands", commands_json(set));
}

static void files_json(struct tool_json_stream *s, const struct report_set *set)
{
	tool_json_stream_open(s, "files", '[');
	for (size_t i = 0; i < set->nfiles && !s->failed; i++) {
		const struct report_file *f = &set->files[i];

		tool_json_stream_open(s, NULL, '{');
		tool_json_stream_string(s, "path", f->path);
		tool_json_stream_string(s, "node", f->node);
		tool_json_stream_int(s, "pid", f->pid);
		tool_json_stream_int(s, "rank", f->rank);
		tool_json_stream_bool(s, "final", f->final);
		tool_json_stream_string(s, "fabriclab_version", f->version);
		tool_json_stream_bool(s, "used", f->superseded_by < 0);
		tool_json_stream_close(s);
	}
	tool_json_stream_close(s);
}

static void hops_json(struct tool_json_stream *s, const struct report_set *set)
{
	tool_json_stream_open(s, "hops", '[');
	for (size_t i = 0; i < set->nhops && !s->failed; i++)
		hop_json(s, set, i);
	tool_json_stream_close(s);
}

static void missing_json(struct tool_json_stream *s, const struct report_set *set)
{
	tool_json_stream_open(s, "missing_ranks", '[');
	for (size_t k = 0; k < set->nmissing_ranks && !s->failed; k++)
		tool_json_stream_int(s, NULL, set->missing_ranks[k]);
	tool_json_stream_close(s);
	tool_json_stream_open(s, "missing_nodes", '[');
	for (size_t k = 0; k < set->nmissing_nodes && !s->failed; k++)
		tool_json_stream_string(s, NULL, set->missing_nodes[k]);
	tool_json_stream_close(s);
}

int report_print_json(const struct report_set *set, FILE *out)
{
	struct tool_json_stream *s = malloc(sizeof(*s)); /* its buffer is 64 KiB: not on the stack */
	int err;

	if (!s)
		return fl_fail(FL_ERR_SYSTEM, "out of memory writing the JSON report");
	tool_json_stream_init(s, out, JSON_INDENT(1) | JSON_REAL_PRECISION(6));
	tool_json_stream_open(s, NULL, '{');
	tool_json_stream_string(s, "schema", REPORT_MERGED_SCHEMA);
	tool_json_stream_int(s, "schema_version", REPORT_SCHEMA_VERSION);
	tool_json_stream_string(s, "fabriclab_version", fl_version());
	tool_json_stream_int(s, "nodes", (long long)set->nodes);
	files_json(s, set);
	hops_json(s, set);
	tool_json_stream_value(s, "verdict", verdict_json(set));
	tool_json_stream_open(s, "port_suspects", '[');
	for (size_t i = 0; i < set->nsuspects && !s->failed; i++)
		tool_json_stream_value(s, NULL, report_port_json(set, i));
	tool_json_stream_close(s);
	tool_json_stream_value(s, "lossless", report_lossless_json(set));
	tool_json_stream_value(s, "injected", report_injected_json(set));
	tool_json_stream_value(s, "findings", findings_json(set));
	tool_json_stream_int(s, "world_size", set->world_size);
	missing_json(s, set);
	tool_json_stream_value(s, "data_gaps", report_gaps_json(set));
	tool_json_stream_close(s);
	err = tool_json_stream_end(s);
	free(s);
	if (err || fputc('\n', out) == EOF || ferror(out))
		return fl_fail(FL_ERR_SYSTEM, "cannot write the JSON report (out of memory, or the "
			       "output failed)");
	return 0;
}
