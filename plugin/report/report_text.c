/* The report for people: who, devices, one line per hop, the verdict and its commands. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/error.h"
#include "base/version.h"
#include "report_model.h"

static void memory_names(int types, char *buf, size_t len)
{
	snprintf(buf, len, "%s%s%s%s", types & FL_PTR_HOST ? "host " : "",
		 types & FL_PTR_CUDA ? "cuda " : "", types & FL_PTR_DMABUF ? "dmabuf " : "",
		 types ? "" : "- ");
	buf[strlen(buf) - 1] = '\0';
}

static void bytes_text(uint64_t bytes, char *buf, size_t len)
{
	static const char *const units[] = { "B", "kB", "MB", "GB", "TB", "PB" };
	double x = (double)bytes;
	int u = 0;

	while (x >= 1000.0 && u < 5) {
		x /= 1000.0;
		u++;
	}
	snprintf(buf, len, u ? "%.1f %s" : "%.0f %s", x, units[u]);
}

static void header(FILE *f, const struct fl_report *r)
{
	time_t when = (time_t)r->written_unix;
	char stamp[64];
	struct tm tm;

	strftime(stamp, sizeof(stamp), "%Y-%m-%d %H:%M:%S UTC", gmtime_r(&when, &tm));
	fprintf(f, "fabriclab report: node %s, pid %d, rank %d, %s, written %s\n", r->node,
		r->pid, r->rank, r->final ? "final" : "snapshot (the job is still running)",
		stamp);
	fprintf(f, "fabriclab %s, transport %s\n", fl_version(), r->transport);
	for (int i = 0; i < r->ndevs; i++) {
		const struct fl_report_device *d = &r->devs[i];
		char mem[32];

		memory_names(d->ptr_support, mem, sizeof(mem));
		fprintf(f, "device %d %s: %d Mbit/s (%.2f GB/s), PCI %s, memory %s%s%s\n", d->dev,
			d->name, d->speed_mbps, fl_report_line_rate(d->speed_mbps),
			d->pci_path[0] ? d->pci_path : "none", mem,
			d->link_layer[0] ? ", link layer " : "", d->link_layer);
	}
}

static void rdma_ports(FILE *f, const struct fl_report *r)
{
	if (!r->ports || !r->ports->n)
		return;
	fprintf(f, "RDMA ports of this node (counters since the plugin's init):\n");
	fl_ports_text(f, "  ", r->ports, r->ports_base, r->ports_seconds);
}

static void hop_name(const struct fl_hop_snapshot *h, char *buf, size_t len)
{
	snprintf(buf, len, "%s/%s -> %s/%s", h->key.src_node, h->key.src_dev, h->key.dst_node,
		 h->key.dst_dev);
}

static void hop_table(FILE *f, const struct fl_report *r)
{
	char name[160], bytes[32], mem[32], ranks[32];
	int width = 3;

	for (int i = 0; i < r->nhops; i++) {
		hop_name(&r->hops[i], name, sizeof(name));
		if ((int)strlen(name) > width)
			width = (int)strlen(name);
	}
	fprintf(f, "\nhops (wire GB/s = bytes / union of the wire intervals of all the hop's "
		   "connections)\n");
	if (!r->nhops) {
		fprintf(f, "  none: no connection was set up\n");
		return;
	}
	fprintf(f, "  %-*s %-4s %-9s %5s %10s %9s %9s %6s %9s %9s %10s %9s %9s  %s\n", width,
		"hop", "view", "ranks", "conns", "bytes", "messages", "wire GB/s", "%line",
		"wire s", "active s", "peer wait", "p50 us", "p99 us", "memory (measured by)");
	for (int i = 0; i < r->nhops; i++) {
		const struct fl_hop_snapshot *h = &r->hops[i];
		double line = r->figs[i].line_rate_gbs, gbs = fl_report_wire_gbs(h);

		hop_name(h, name, sizeof(name));
		bytes_text(h->t.bytes, bytes, sizeof(bytes));
		memory_names(h->mem_types, mem, sizeof(mem));
		/* Profiler mode sees no registrations: the column says what measured the hop. */
		if (h->key.mode == FL_HOP_PROFILER)
			snprintf(mem, sizeof(mem), "(profiler)");
		snprintf(ranks, sizeof(ranks), "%d->%d", h->src_rank, h->dst_rank);
		fprintf(f, "  %-*s %-4s %-9s %5d %10s %9llu %9.3f %6.1f %9.3f %9.3f %10.3f %9.1f "
			   "%9.1f  %s\n",
			width, name, h->key.view == FL_HOP_SEND ? "send" : "recv", ranks,
			h->connections, bytes, (unsigned long long)h->t.messages, gbs,
			line > 0 ? 100.0 * gbs / line : 0.0, (double)h->wire_ns / 1e9,
			(double)h->active_ns / 1e9, (double)h->t.peer_wait_ns / 1e9,
			(double)fl_time_percentile(h->t.wire_times, 50) / 1e3,
			(double)fl_time_percentile(h->t.wire_times, 99) / 1e3, mem);
	}
	if (r->slowest >= 0) {
		hop_name(&r->hops[r->slowest], name, sizeof(name));
		fprintf(f, "slowest hop: %s at %.3f GB/s\n", name,
			fl_report_wire_gbs(&r->hops[r->slowest]));
	}
}

static void injected(FILE *f, const struct fl_report *r)
{
	char mem[32];

	if (!r->ninjected)
		return;
	fprintf(f, "\ninjected faults (FABRICLAB_FAULT; not real, and not used by the verdict):\n");
	for (int i = 0; i < r->ninjected; i++) {
		const struct fl_fault_injected *e = &r->injected[i];

		fprintf(f, "  %s on %s", e->rule, e->dev);
		if (e->peer[0])
			fprintf(f, " toward %s", e->peer);
		if (e->dir[0])
			fprintf(f, " (%s, %d connection%s)", e->dir, e->connections,
				e->connections == 1 ? "" : "s");
		if (e->rate_bytes_per_s)
			fprintf(f, ": paced to %.3f Gbit/s", (double)e->rate_bytes_per_s * 8 / 1e9);
		fprintf(f, "\n");
		if (!strcmp(e->action, "nogdr")) {
			memory_names(e->ptr_support_after, mem, sizeof(mem));
			fprintf(f, "    GPUDirect RDMA is not in use on %s: this rule made it offer %s "
				"memory only, so NCCL stages through host memory\n", e->dev, mem);
		}
	}
}

/* Said only when it happened: a healthy run's report reads as before. */
static void incomplete(FILE *f, const struct fl_report *r)
{
	char why[FL_REPORT_WHY_LEN];

	if (fl_report_incomplete(r, why, sizeof(why)))
		fprintf(f, "incomplete data (figures are bounds, not exact): %s\n", why);
}

static void verdict(FILE *f, const struct fl_report *r)
{
	const struct fl_verdict *v = &r->verdict;

	fprintf(f, "\nverdict: %s (%d hop%s judged on this process's view alone; confidence %.2f; "
		"next: %s%s%s, %.2f)\n",
		fl_verdict_kind_name(v->kind), v->judged_hops, v->judged_hops == 1 ? "" : "s",
		v->confidence, fl_verdict_kind_name(v->runner_up.kind),
		v->runner_up.culprit[0] ? " " : "", v->runner_up.culprit, v->runner_up.confidence);
	if (v->reason[0])
		fprintf(f, "  %s\n", v->reason);
	if (!r->commands[0])
		return;
	fprintf(f, "commands that would confirm it on real hardware:\n");
	for (const char *line = r->commands; *line;) {
		const char *nl = strchr(line, '\n');
		int n = nl ? (int)(nl - line) : (int)strlen(line);

		if (n)
			fprintf(f, "  %.*s\n", n, line);
		line += n + (nl ? 1 : 0);
	}
}

int fl_report_text(const struct fl_report *r, char **text, size_t *len)
{
	FILE *f = open_memstream(text, len);

	if (!f)
		return fl_fail(FL_ERR_SYSTEM, "out of memory for a report");
	header(f, r);
	rdma_ports(f, r);
	hop_table(f, r);
	incomplete(f, r);
	injected(f, r);
	verdict(f, r);
	if (ferror(f)) {
		fclose(f);
		free(*text);
		*text = NULL;
		return fl_fail(FL_ERR_SYSTEM, "out of memory for a report");
	}
	fclose(f);
	return FL_OK;
}
