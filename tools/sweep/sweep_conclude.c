/*
 * Rank 0 after the last round: the judgement, the outputs asked for, and the
 * job's exit status. A gate run says in one line whether the node may rejoin.
 */
#include "sweep.h"

#include <strings.h>

#include "shim/shim.h"

static void gate_line(const struct sweep_result *res, const struct sweep_verdict *v,
		      const struct sweep_opts *o, FILE *out)
{
	size_t judged = 0;

	for (size_t i = 0; i < v->nentries; i++) {
		const struct sweep_entry *e = &v->entries[i];
		const char *src = res->nodes[e->src].name, *dst = res->nodes[e->dst].name;

		if (strcasecmp(src, o->gate_node) && strcasecmp(dst, o->gate_node))
			continue;
		judged++;
	}
	if (v->nslow)
		fprintf(out, "gate: FAIL: %s must not rejoin: %zu of its %zu directions to %d "
			"peers are slow (%s)\n", o->gate_node, v->nslow, judged, o->npeers,
			v->reason);
	else
		fprintf(out, "gate: PASS: %s may rejoin: all %zu directions to %d peers at or "
			"above the mark\n", o->gate_node, judged, o->npeers);
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
	rc = rc || res->wrong ? SWEEP_EXIT_FAILED : v.nslow ? SWEEP_EXIT_SLOW : SWEEP_EXIT_OK;
	sweep_verdict_free(&v);
	sweep_baseline_free(&base);
	return rc;
}
