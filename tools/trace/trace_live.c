/*
 * The plugin's live findings as the trace holds them: what the job was told
 * while it ran, and how long after its hop's first byte on the wire (both
 * times from the trace: the wire start of its request events, the event's
 * at_ns), so the delay of the live judgement can be read without the plugin's
 * word for it.
 */
#include <jansson.h>

#include "trace.h"

/* The first byte on the wire of the process's hop with this id; 0 when the trace has none. */
static uint64_t first_wire(const struct trace_process *p, uint32_t hop_id)
{
	uint64_t first = 0;

	for (size_t i = 0; i < p->nhops; i++) {
		uint64_t t = p->hops[i].first_wire_ns;

		if (p->hops[i].hop_id == hop_id && t && (!first || t < first))
			first = t;
	}
	return first;
}

/* Seconds from the hop's first traffic to the event; negative when unknown. */
static double after_traffic(const struct trace_process *p, const struct trace_live *l)
{
	uint64_t first = first_wire(p, l->hop_id);

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
