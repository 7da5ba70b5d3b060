/*
 * `--prom`: a node_exporter textfile (text exposition format): per-hop wire
 * rate from each end, bytes per hop, and the verdict as a labelled gauge.
 */
#include <string.h>

#include "plugin/base/error.h"
#include "plugin/base/prom_out.h"
#include "plugin/base/version.h"
#include "report.h"

static bool is_profiler(const struct report_hop *h)
{
	return strcmp(report_hop_mode(h), "net") != 0;
}

static bool same_names(const struct report_hop_key *a, const struct report_hop_key *b)
{
	return !strcmp(a->src_node, b->src_node) && !strcmp(a->src_dev, b->src_dev) &&
	       !strcmp(a->dst_node, b->dst_node) && !strcmp(a->dst_dev, b->dst_dev);
}

/*
 * The hops that share one hop's four names: report_merge sorts the hops by
 * those names first, so they are one run, [start, end), with this many
 * net-mode hops. Walked forward once per section, the cursor finds each run
 * once: asking every hop about every other took 22 s for 4 096 nodes x 8 NICs
 * and minutes at 16 384 (issue 48).
 */
struct name_run {
	size_t start, end, net;
};

static void run_of(const struct report_set *set, size_t i, struct name_run *r)
{
	if (i >= r->start && i < r->end)
		return;
	r->start = i;
	while (r->start > 0 && same_names(&set->hops[r->start - 1].key, &set->hops[i].key))
		r->start--;
	r->net = 0;
	for (r->end = r->start;
	     r->end < set->nhops && same_names(&set->hops[r->end].key, &set->hops[i].key); r->end++)
		r->net += !is_profiler(&set->hops[r->end]);
}

/* Another net-mode hop of the same names: another process pair of the same nodes. */
static bool names_repeat(const struct report_set *set, size_t i, struct name_run *r)
{
	run_of(set, i, r);
	return r->net > (size_t)!is_profiler(&set->hops[i]);
}

/*
 * Prometheus takes no two series of one label set. Profiler-mode hops are rank
 * pairs of one communicator: the communicator and the ranks are labels, so the
 * same pair of two stays apart, and so do two pairs the net role named with
 * one node and device pair. Net-mode hops carry their ranks where their names
 * repeat (several process pairs of the same nodes).
 */
static void hop_labels(FILE *out, const struct report_set *set, size_t i, bool more,
		       struct name_run *r)
{
	const struct report_hop *h = &set->hops[i];
	const struct report_hop_key *k = &h->key;
	bool prof = is_profiler(h), ranks = prof || names_repeat(set, i, r);
	char text[24];

	fl_prom_label(out, "src_node", k->src_node, false);
	fl_prom_label(out, "src_dev", k->src_dev, false);
	fl_prom_label(out, "dst_node", k->dst_node, false);
	fl_prom_label(out, "dst_dev", k->dst_dev, !more && !ranks);
	if (!ranks)
		return;
	if (prof && k->comm_hash) {
		snprintf(text, sizeof(text), "%016llx", (unsigned long long)k->comm_hash);
		fl_prom_label(out, "comm", text, false);
	}
	snprintf(text, sizeof(text), "%ld", h->src_rank);
	fl_prom_label(out, "src_rank", text, false);
	snprintf(text, sizeof(text), "%ld", h->dst_rank);
	fl_prom_label(out, "dst_rank", text, !more);
}

static void wire_rates(const struct report_set *set, FILE *out)
{
	struct name_run run = { 0, 0, 0 };

	fl_prom_header(out, "fabriclab_hop_wire_bytes_per_second", "gauge",
	       "Wire bandwidth of one directed hop (bytes / union of wire intervals), "
	       "as its sender (view=send) or receiver (view=recv) measured it.");
	for (size_t i = 0; i < set->nhops; i++) {
		const struct report_hop *h = &set->hops[i];
		const struct report_view *views[] = { h->send, h->recv };

		for (size_t v = 0; v < 2; v++) {
			if (!report_has_wire(views[v]))
				continue;
			fputs("fabriclab_hop_wire_bytes_per_second{", out);
			hop_labels(out, set, i, true, &run);
			fl_prom_label(out, "view", v ? "recv" : "send", true);
			fprintf(out, "} %.6g\n", views[v]->wire_gbs * 1e9);
		}
	}
}

static void byte_counts(const struct report_set *set, FILE *out)
{
	struct name_run run = { 0, 0, 0 };

	fl_prom_header(out, "fabriclab_hop_bytes_total", "counter",
	       "Payload bytes one directed hop completed (the sender's count when known).");
	for (size_t i = 0; i < set->nhops; i++) {
		fputs("fabriclab_hop_bytes_total{", out);
		hop_labels(out, set, i, false, &run);
		fprintf(out, "} %llu\n", (unsigned long long)set->figures[i].bytes);
	}
}

/* The verdict's culprit as a finding's would read ("node3/eth0", "rail mlx5_2"), "" for none. */
static void verdict_culprit(const struct report_set *set, char *buf, size_t len)
{
	const struct fl_verdict *v = &set->verdict;
	struct fl_finding f = { .kind = v->kind, .hop = v->hop };

	snprintf(f.node, sizeof(f.node), "%s", v->node);
	snprintf(f.dev, sizeof(f.dev), "%s", v->dev);
	buf[0] = '\0';
	if (v->kind != FL_VERDICT_NONE)
		fl_finding_culprit(&f, set->figures, buf, len);
}

/*
 * How sure the model is of the verdict, and of the explanation it ranked next:
 * an alert can wait for a confident verdict, a person read the runner-up.
 */
static void verdict_confidence(const struct report_set *set, FILE *out)
{
	const struct fl_verdict *v = &set->verdict;
	char culprit[FL_CULPRIT_LEN];

	verdict_culprit(set, culprit, sizeof(culprit));
	fl_prom_header(out, "fabriclab_verdict_confidence", "gauge",
	       "The model's probability (0..1) of the verdict's explanation, labelled with its "
	       "kind and culprit (none: how sure it is that the fabric is healthy).");
	fputs("fabriclab_verdict_confidence{", out);
	fl_prom_label(out, "kind", fl_verdict_kind_name(v->kind), false);
	fl_prom_label(out, "culprit", culprit, true);
	fprintf(out, "} %.6g\n", v->confidence);
	fl_prom_header(out, "fabriclab_verdict_runner_up_confidence", "gauge",
	       "The probability (0..1) of the explanation the model ranked second, labelled with "
	       "its kind and culprit: what to check if the verdict is wrong.");
	fputs("fabriclab_verdict_runner_up_confidence{", out);
	fl_prom_label(out, "kind", fl_verdict_kind_name(v->runner_up.kind), false);
	fl_prom_label(out, "culprit", v->runner_up.culprit, true);
	fprintf(out, "} %.6g\n", v->runner_up.confidence);
}

static void verdict(const struct report_set *set, FILE *out)
{
	const struct fl_verdict *v = &set->verdict;

	fl_prom_header(out, "fabriclab_verdict", "gauge",
	       "The cluster verdict of fabriclab report: 1 for the kind and the node/device "
	       "named.");
	fputs("fabriclab_verdict{", out);
	fl_prom_label(out, "kind", fl_verdict_kind_name(v->kind), false);
	fl_prom_label(out, "node", v->node, false);
	fl_prom_label(out, "dev", v->dev, true);
	fputs("} 1\n", out);
	fl_prom_header(out, "fabriclab_verdict_speedup", "gauge",
	       "Estimated speedup of the ring without the culprit (1 when none).");
	fprintf(out, "fabriclab_verdict_speedup %.6g\n", v->speedup);
	verdict_confidence(set, out);
}

static void build_info(FILE *out)
{
	fl_prom_header(out, "fabriclab_build_info", "gauge",
	       "The fabriclab that wrote this textfile: always 1, the version as a label.");
	fputs("fabriclab_build_info{", out);
	fl_prom_label(out, "version", fl_version(), true);
	fputs("} 1\n", out);
}

static void findings(const struct report_set *set, FILE *out)
{
	const struct fl_verdict *v = &set->verdict;
	char culprit[2 * FL_NODE_NAME_LEN + 2 * FL_DEV_NAME_LEN + 16];

	fl_prom_header(out, "fabriclab_finding_cost", "gauge",
	       "Every anomaly found: its estimated share of the ring's time (1 - 1 / speedup), "
	       "labelled with its kind and culprit; none when the fabric is healthy.");
	for (int i = 0; i < v->nfindings; i++) {
		const struct fl_finding *f = &v->findings[i];

		fl_finding_culprit(f, set->figures, culprit, sizeof(culprit));
		fputs("fabriclab_finding_cost{", out);
		fl_prom_label(out, "kind", fl_verdict_kind_name(f->kind), false);
		fl_prom_label(out, "culprit", culprit, false);
		fl_prom_label(out, "node", f->node, false);
		fl_prom_label(out, "dev", f->dev, true);
		fprintf(out, "} %.6g\n", f->cost);
	}
}

/* Where a RoCE setting differs from most of the job's interfaces (report_lossless.c). */
static void lossless(const struct report_set *set, FILE *out)
{
	char prio[8];

	fl_prom_header(out, "fabriclab_roce_setting_differs", "gauge",
	       "1 for each RoCE interface whose trust mode, PFC or ECN on a priority differs from "
	       "most of the job's (value: this interface's; others: theirs); none when alike.");
	for (size_t i = 0; i < set->nlossless; i++) {
		const struct report_lossless_diff *d = &set->lossless[i];

		snprintf(prio, sizeof(prio), "%d", d->prio);
		fputs("fabriclab_roce_setting_differs{", out);
		fl_prom_label(out, "node", d->node, false);
		fl_prom_label(out, "netdev", d->netdev, false);
		fl_prom_label(out, "setting", d->setting, false);
		fl_prom_label(out, "priority", d->prio < 0 ? "" : prio, false);
		fl_prom_label(out, "value", d->value, false);
		fl_prom_label(out, "others", d->others_value, true);
		fputs("} 1\n", out);
	}
}

int report_emit_prom(const struct report_set *set, FILE *out)
{
	wire_rates(set, out);
	byte_counts(set, out);
	verdict(set, out);
	build_info(out);
	findings(set, out);
	lossless(set, out);
	return ferror(out) ? fl_fail(FL_ERR_SYSTEM, "cannot write the textfile") : 0;
}

int report_write_prom(const struct report_set *set, const char *path)
{
	return report_write_atomic(path, report_emit_prom, set);
}
