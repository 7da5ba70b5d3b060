/*
 * The run's merged report, with `fabriclab report`'s own merge and rendering:
 * the lab shows exactly what a user of the report tool would see.
 */
#include <stdio.h>
#include <string.h>

#include "plugin/base/error.h"
#include "lab.h"
#include "tools/report/report.h"
#include "plugin/verdict/verdict_topology.h"

/* With --topology the lab knows its switches: they are the diagnosis's too. */
static int merge(const char *reports, const char *topology, struct report_set *set,
		 struct fl_hop_elements *e)
{
	struct fl_verdict_params params;
	int err = fl_verdict_params_from_env(&params);

	if (!err)
		err = report_add_path(set, reports);
	if (!err)
		err = report_merge(set, &params);
	if (err)
		fprintf(stderr, "fabriclab lab: report: %s\n", fl_error_text());
	else if (topology && report_judge_topology(set, &params, topology, e))
		fprintf(stderr, "fabriclab lab: %s could not be used: the verdict is without the "
			"switches\n", topology);
	return err ? -1 : 0;
}

/* A rule no rank applied is a chaos run that tested nothing: say so. */
static void note_unapplied(const struct lab_opts *o, const struct report_set *set, FILE *out)
{
	size_t applied = 0;

	for (size_t f = 0; f < set->nfiles; f++)
		applied += set->files[f].ninjected;
	if (o->spec[0] && !applied)
		fprintf(out, "\nno rank applied FABRICLAB_FAULT='%s': it matched nothing here\n",
			o->spec);
}

int lab_print_report(const struct lab_opts *o, FILE *out)
{
	char reports[PATH_MAX + 16], json[PATH_MAX + 16], topology[PATH_MAX + 16];
	struct fl_hop_elements elements = { 0 };
	struct report_set set;
	int rc;

	snprintf(reports, sizeof(reports), "%s/reports", o->run_dir);
	snprintf(json, sizeof(json), "%s/report.json", o->run_dir);
	snprintf(topology, sizeof(topology), "%s/topology.json", o->run_dir);
	memset(&set, 0, sizeof(set));
	rc = merge(reports, o->topology ? topology : NULL, &set, &elements);
	if (!rc) {
		fprintf(out, "\n== merged report (fabriclab report %s%s%s)\n", reports,
			o->topology ? " --topology " : "", o->topology ? topology : "");
		rc = report_print_text(&set, out);
		note_unapplied(o, &set, out);
	}
	if (!rc && report_write_atomic(json, report_print_json, &set)) {
		fprintf(stderr, "fabriclab lab: %s\n", fl_error_text());
		rc = -1;
	}
	report_free(&set);
	fl_hop_elements_free(&elements);
	return rc;
}
