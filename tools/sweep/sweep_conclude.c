/*
 * Rank 0 after the last round: the judgement, the outputs asked for, and the
 * job's exit status. A gate run says in one line whether the node may rejoin.
 */
#include "sweep.h"

#include <string.h>
#include <strings.h>

#include "shim/shim.h"

/* Whether the finding is about the node under test (a link or a node at it). */
static bool at_node(const struct sweep_result *res, const struct sweep_finding *f,
		    const char *node)
{
	return (f->node >= 0 && !strcasecmp(res->nodes[f->node].name, node)) ||
	       (f->other >= 0 && !strcasecmp(res->nodes[f->other].name, node));
}

/*
 * The gate passes only where the model calls the node's pairs healthy: a
 * culprit anywhere among them, or not enough evidence to tell, keeps it out.
 */
static void gate_line(const struct sweep_result *res, const struct sweep_verdict *v,
		      const struct sweep_opts *o, FILE *out)
{
	const struct sweep_finding *f = v->nfindings ? &v->findings[0] : NULL;
	size_t judged = 0;

	for (size_t i = 0; i < v->nentries; i++) {
		const struct sweep_entry *e = &v->entries[i];

		judged += !strcasecmp(res->nodes[e->src].name, o->gate_node) ||
			  !strcasecmp(res->nodes[e->dst].name, o->gate_node);
	}
	if (v->kind == SWEEP_NONE) {
		fprintf(out, "gate: PASS: %s may rejoin: all %zu directions to %d peers healthy "
			"(confidence %.2f, %s)\n", o->gate_node, judged, o->npeers,
			v->model->v.confidence, v->against_baseline ? "against the baseline" :
			"against the peers");
		return;
	}
	fprintf(out, "gate: FAIL: %s must not rejoin: %s", o->gate_node, sweep_kind_name(v->kind));
	if (f)
		fprintf(out, " %s%s", f->c->culprit, at_node(res, f, o->gate_node) ? "" :
			" (not the node under test: gate again with other peers)");
	fprintf(out, ", %zu of its %zu directions to %d peers slow (%s)\n", v->nslow, judged,
		o->npeers, v->reason);
}

static int outputs(const struct sweep_result *res, const struct sweep_verdict *v,
		   const struct sweep_opts *o)
{
	int rc = FL_OK;

	if (o->json)
		rc = sweep_print_json(res, v, o, stdout);
	else
		sweep_print_text(res, v, o, stdout);
	if (o->gate)
		gate_line(res, v, o, o->json ? stderr : stdout);
	fflush(stdout);
	if (!rc && o->svg)
		rc = sweep_write_svg(res, v, o->svg);
	if (!rc && o->save)
		rc = sweep_baseline_save(res, o->save);
	if (!rc && o->save && !o->json)
		printf("# baseline saved to %s\n", o->save);
	return rc;
}

int sweep_conclude(const struct sweep_result *res, const struct sweep_opts *o)
{
	struct sweep_baseline base = { 0 };
	struct sweep_verdict v;
	int rc = FL_OK;

	if (o->baseline)
		rc = sweep_baseline_load(o->baseline, &base);
	if (!rc)
		rc = sweep_judge(res, o, o->baseline ? &base : NULL, &v);
	if (rc) {
		sweep_print_error(shim_error_text());
		sweep_baseline_free(&base);
		return SWEEP_EXIT_USAGE;
	}
	rc = outputs(res, &v, o);
	if (rc)
		sweep_print_error(shim_error_text());
	if (res->wrong)
		fprintf(stderr, "fabriclab sweep: %llu bytes arrived wrong\n",
			(unsigned long long)res->wrong);
	rc = rc || res->wrong	    ? SWEEP_EXIT_FAILED
	     : v.kind != SWEEP_NONE ? SWEEP_EXIT_SLOW
				    : SWEEP_EXIT_OK;
	sweep_verdict_free(&v);
	sweep_baseline_free(&base);
	return rc;
}
