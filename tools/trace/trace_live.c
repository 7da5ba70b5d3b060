/*
 * The plugin's live findings as the trace holds them: what the job was told
 * while it ran, and how long after its hop's first traffic (both times from
 * the trace: the wire starts of its request events, the event's at_ns), so the
 * delay of the live judgement can be read without the plugin's word for it.
 */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "report/report_live.h"
#include "trace.h"

/*
 * When the hop's traffic became enough to judge: the first wire start from
 * which its requests moved what the plugin needs in a window (fl_live_min_bytes:
 * 4 MiB, less on a slow line) within one window. 0 when never.
 */
static uint64_t traffic_start(const struct trace_spans *w, uint64_t window_ns, double line_gbs)
{
	double judged = fl_live_min_bytes(line_gbs, (double)window_ns / 1e9);
	uint64_t bytes = 0;
	size_t first = 0;

	/* spans sorted by start (trace_spans_union sorted them for the report) */
	for (size_t i = 0; i < w->n; i++) {
		bytes += w->v[i].bytes;
		while (w->v[i].start - w->v[first].start > window_ns)
			bytes -= w->v[first++].bytes;
		if ((double)bytes >= judged)
			return w->v[first].start;
	}
	return 0;
}

/* The finding's hop, or for a device finding ("node/dev") every hop of that device here. */
static bool finding_on(const struct trace_live *l, const struct trace_hop *h)
{
	char local[sizeof(l->culprit)];

	if (strcmp(l->kind, "device"))
		return h->hop_id == l->hop_id;
	snprintf(local, sizeof(local), "%s/%s", h->is_send ? h->key.src_node : h->key.dst_node,
		 h->is_send ? h->key.src_dev : h->key.dst_dev);
	return !strcmp(local, l->culprit);
}

static uint64_t first_traffic(const struct trace_process *p, const struct trace_live *l)
{
	uint64_t first = 0;

	for (size_t i = 0; i < p->nhops; i++) {
		uint64_t t;

		if (!finding_on(l, &p->hops[i]))
			continue;
		t = traffic_start(&p->hops[i].wire, l->window_ns, l->line_gbs);
		if (t && (!first || t < first))
			first = t;
	}
	return first;
}

/* Seconds from the hop's traffic start to the event; negative when unknown. */
static double after_traffic(const struct trace_process *p, const struct trace_live *l)
{
	uint64_t first = first_traffic(p, l);

	return first && l->at_ns >= first ? (double)(l->at_ns - first) / 1e9 : -1.0;
}

void trace_print_live(const struct trace_model *m, FILE *out)
{
	bool any = false;

	for (size_t i = 0; i < m->nprocs; i++) {
		const struct trace_process *p = &m->procs[i];

		for (size_t k = 0; k < p->nlive; k++) {
			const struct trace_live *l = &p->live[k];
			double after = after_traffic(p, l);

			if (!any)
				fputs("live findings (fabriclab:live_finding, while the job ran):\n",
				      out);
			any = true;
			fprintf(out, "  %s: %s %s %s, %.2fx its line rate, cost %.2f, %d windows of "
				"%.2f s", p->node[0] ? p->node : p->host, l->state, l->kind,
				l->culprit, l->ratio, l->cost, l->windows,
				(double)l->window_ns / 1e9);
			if (after >= 0)
				fprintf(out, ", %.2f s after the hop's first traffic", after);
			fputc('\n', out);
		}
	}
	if (any)
		fputc('\n', out);
}

void *trace_live_json(const struct trace_model *m)
{
	json_t *all = json_array();

	for (size_t i = 0; i < m->nprocs; i++) {
		const struct trace_process *p = &m->procs[i];

		for (size_t k = 0; k < p->nlive; k++) {
			const struct trace_live *l = &p->live[k];
			double after = after_traffic(p, l);

			json_array_append_new(
				all, json_pack("{s:s, s:I, s:s, s:s, s:s, s:I, s:f, s:f, s:i, "
					       "s:f, s:o}",
					       "node", p->node, "pid", (json_int_t)p->vpid, "state",
					       l->state, "kind", l->kind, "culprit", l->culprit,
					       "hop_id", (json_int_t)l->hop_id, "ratio", l->ratio,
					       "cost", l->cost, "windows", l->windows,
					       "window_seconds", (double)l->window_ns / 1e9,
					       "after_first_traffic_seconds",
					       after >= 0 ? json_real(after) : json_null()));
		}
	}
	return all;
}
