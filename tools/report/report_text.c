/* The merged report for people: the verdict, a hop table, the commands that confirm it. */
#include <stdio.h>
#include <string.h>

#include "report.h"
#include "report_fixed.h"

#define HOP_COLUMN_MAX 64


/* Every anomaly, when there is more than the verdict's: a second fault is never hidden. */
static void print_findings(const struct report_set *set, FILE *out)
{
	const struct fl_verdict *v = &set->verdict;
	char culprit[2 * FL_NODE_NAME_LEN + 2 * FL_DEV_NAME_LEN + 16];

	if (v->nfindings < 2)
		return;
	fprintf(out, "findings (%d, costliest first):\n", v->nfindings);
	for (int i = 0; i < v->nfindings; i++) {
		const struct fl_finding *f = &v->findings[i];

		fl_finding_culprit(f, set->figures, culprit, sizeof(culprit));
		fprintf(out,
			"  %d. %-6s %s  ratio %.2f  costs %.0f%% of the ring's time\n     %s\n",
			i + 1, fl_verdict_kind_name(f->kind), culprit, f->ratio, 100.0 * f->cost,
			f->reason);
	}
}

static void print_verdict(const struct report_set *set, FILE *out)
{
	const struct fl_verdict *v = &set->verdict;
	char culprit[2 * FL_NODE_NAME_LEN + 2 * FL_DEV_NAME_LEN + 16] = "";

	if (v->kind == FL_VERDICT_DEVICE)
		snprintf(culprit, sizeof(culprit), "%s/%s", v->node, v->dev);
	else if (v->kind == FL_VERDICT_RAIL)
		snprintf(culprit, sizeof(culprit), "rail %s", v->dev);
	else if (v->hop >= 0 && v->kind == FL_VERDICT_LINK)
		report_hop_name(set, (size_t)v->hop, culprit, sizeof(culprit));
	else
		snprintf(culprit, sizeof(culprit), "%s", v->node);
	fprintf(out, "verdict: %s%s%s", fl_verdict_kind_name(v->kind), *culprit ? "  " : "",
		culprit);
	if (v->kind != FL_VERDICT_NONE && v->kind != FL_VERDICT_UNSURE)
		fprintf(out, "  ratio %.2f  speedup %.2fx", v->ratio, v->speedup);
	fprintf(out, "  (confidence %.2f; next: %s%s%s, %.2f)\n  %s\n", v->confidence,
		fl_verdict_kind_name(v->runner_up.kind), v->runner_up.culprit[0] ? " " : "",
		v->runner_up.culprit, v->runner_up.confidence, v->reason);
	print_findings(set, out);
}

static void human_bytes(uint64_t bytes, char *buf, size_t len)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" };
	double x = (double)bytes;
	size_t u = 0;

	while (x >= 1024.0 && u + 1 < sizeof(units) / sizeof(units[0])) {
		x /= 1024.0;
		u++;
	}
	report_fixed(buf, len, x, u ? 1 : 0);
	snprintf(buf + strlen(buf), len - strlen(buf), " %s", units[u]);
}

static void rate(const struct report_view *v, char *buf, size_t len)
{
	if (report_has_wire(v))
		report_fixed(buf, len, v->wire_gbs, 2);
	else
		snprintf(buf, len, "-");
}

/* "-" when the whole is unknown. */
static void percent(double part, double whole, char *buf, size_t len)
{
	if (whole > 0) {
		report_fixed(buf, len, 100.0 * part / whole, 1);
		strncat(buf, "%", len - strlen(buf) - 1);
	} else {
		snprintf(buf, len, "-");
	}
}

static const char *gdr_word(int mem_types)
{
	if (!mem_types)
		return "?";
	return mem_types & (FL_PTR_CUDA | FL_PTR_DMABUF) ? "yes" : "no";
}

/* report_hop_name's length; counted, not printed, where names carry no ranks (10^6 hops). */
static size_t hop_name_len(const struct report_set *set, size_t i)
{
	const struct report_hop_key *k = &set->hops[i].key;
	char name[HOP_COLUMN_MAX * 4];

	if (!set->ranked_names)
		return strlen(k->src_node) + strlen(k->src_dev) + strlen(k->dst_node) +
		       strlen(k->dst_dev) + strlen("/ -> /");
	report_hop_name(set, i, name, sizeof(name));
	return strlen(name);
}

static int hop_column(const struct report_set *set)
{
	size_t width = strlen("src -> dst");

	for (size_t i = 0; i < set->nhops && width < HOP_COLUMN_MAX; i++) {
		size_t n = hop_name_len(set, i);

		width = n > width ? n : width;
	}
	return width > HOP_COLUMN_MAX ? HOP_COLUMN_MAX : (int)width;
}

/*
 * The share of its receives' outstanding time spent waiting for the sender to
 * start; over verbs, where a receiver never waits (its buffer goes out at once),
 * the share of the sends' time spent waiting for the receiver to post, marked "s".
 */
static void peer_wait(const struct fl_hop_figures *f, char *buf, size_t len)
{
	if (!strcmp(f->transport, "ib") && f->send_outstanding_seconds > 0.0) {
		percent(f->send_wait_seconds, f->send_outstanding_seconds, buf, len);
		strncat(buf, " s", len - strlen(buf) - 1);
		return;
	}
	percent(f->peer_wait_seconds, f->outstanding_seconds, buf, len);
}

static void print_hop(const struct report_set *set, size_t i, int width, FILE *out)
{
	const struct report_hop *h = &set->hops[i];
	const struct fl_hop_figures *f = &set->figures[i];
	const struct report_view *w = report_wire_view(h);
	char name[HOP_COLUMN_MAX * 4], recv[16], send[16], bytes[16], line[16], wait[16];
	char why[160], p50[32], p99[32];

	report_hop_name(set, i, name, sizeof(name));
	rate(h->recv, recv, sizeof(recv));
	rate(h->send, send, sizeof(send));
	human_bytes(f->bytes, bytes, sizeof(bytes));
	percent(f->wire_gbs, f->line_rate_gbs, line, sizeof(line));
	if (report_rate_error(set, i, why, sizeof(why)))
		strncat(line, "!", sizeof(line) - strlen(line) - 1);
	peer_wait(f, wait, sizeof(wait));
	report_fixed(p50, sizeof(p50), w->p50_us, 1);
	report_fixed(p99, sizeof(p99), w->p99_us, 1);
	fprintf(out, "%c %-*.*s %9s %9s %7s %10s %9llu %11s %4s %8s %8s  %s\n",
		report_is_culprit(set, i) ? '*' : ' ', width, width, name, recv, send, line, bytes,
		(unsigned long long)f->messages, wait, gdr_word(f->mem_types), p50, p99,
		report_hop_mode(h));
}

/* Rates no cable carries are shown as what they are, with their likely cause. */
static void print_rate_errors(const struct report_set *set, FILE *out)
{
	char name[HOP_COLUMN_MAX * 4], why[160];

	for (size_t i = 0; i < set->nhops; i++) {
		if (!report_rate_error(set, i, why, sizeof(why)))
			continue;
		report_hop_name(set, i, name, sizeof(name));
		fprintf(out, "  ! %s: %.0f%% of its line rate is a measurement error, judged as "
			"the line rate: %s\n", name,
			100.0 * set->figures[i].wire_gbs / set->figures[i].line_rate_gbs, why);
	}
}

static void print_missing(const struct report_set *set, FILE *out)
{
	char text[1024];

	report_missing_text(set, text, sizeof(text));
	if (*text)
		fprintf(out, "missing reports: %s\n", text);
}

static void print_hops(const struct report_set *set, FILE *out)
{
	int width = hop_column(set);
	size_t used = 0;

	for (size_t f = 0; f < set->nfiles; f++)
		used += set->files[f].superseded_by < 0;
	fprintf(out,
		"\nhops: %zu from %zu processes on %zu nodes, %d judged (wire rate from the "
		"slower end for sockets where both timed it, else the one that did; the sender for verbs, "
		"ext and profiler mode; * = culprit; peer wait: the receives' time waiting on "
		"their sender, or with s (verbs) the sends' time waiting on their receiver)\n",
		set->nhops, used, set->nodes, set->verdict.judged_hops);
	print_missing(set, out);
	report_print_gaps(set, out);
	fprintf(out, "  %-*s %9s %9s %7s %10s %9s %11s %4s %8s %8s  %s\n", width,
		"src -> dst", "recv GB/s", "send GB/s", "%line", "bytes", "messages",
		"peer wait", "GDR", "p50 us", "p99 us", "measured by");
	for (size_t i = 0; i < set->nhops; i++)
		print_hop(set, i, width, out);
	print_rate_errors(set, out);
}

static void print_commands(const struct report_set *set, FILE *out)
{
	const char *line = set->commands;

	if (!set->ncommands)
		return;
	fprintf(out, "\nto confirm on the machines:\n");
	while (*line) {
		const char *end = strchr(line, '\n');
		int n = end ? (int)(end - line) : (int)strlen(line);

		fprintf(out, "  %.*s\n", n, line);
		line += n + (end != NULL);
	}
}

int report_print_text(const struct report_set *set, FILE *out)
{
	print_verdict(set, out);
	print_hops(set, out);
	report_print_ports(set, out);
	report_print_lossless(set, out);
	report_print_injected(set, out);
	print_commands(set, out);
	return ferror(out) ? -1 : 0;
}
