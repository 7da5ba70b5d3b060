/*
 * What the merged view rests on less than all of: reports whose writer said its
 * figures are incomplete (a ring, table or pool overflowed: `complete`/`incomplete`)
 * and profiler-mode ops relayed for another process (PXN) or dropped past the link
 * cap (`ranks[].relayed_ops`, `dropped_ops`). Reports older than these fields say
 * nothing and are taken as complete.
 */
#include <jansson.h>
#include <stdio.h>

#include "report.h"
#include "report_fields.h"

static int read_rank_ops(const struct report_reader *r, json_t *ranks, struct report_file *f)
{
	json_t *e;
	size_t i;

	json_array_foreach (ranks, i, e) {
		struct report_reader sub = report_reader_at(r, "ranks", i);
		long long relayed = 0, dropped = 0;
		int err = report_get_int(&sub, e, "relayed_ops", false, 0, &relayed);

		err = err ? err : report_get_int(&sub, e, "dropped_ops", false, 0, &dropped);
		if (err)
			return err;
		if (relayed < 0 || dropped < 0)
			return report_bad(&sub, relayed < 0 ? "relayed_ops" : "dropped_ops",
					  "expected a count, 0 or more");
		f->relayed_ops += (uint64_t)relayed;
		f->dropped_ops += (uint64_t)dropped;
	}
	return 0;
}

int report_read_gaps(const char *path, json_t *root, struct report_file *f)
{
	struct report_reader r = { path, "" };
	bool complete = true;
	json_t *ranks = NULL, *said = json_object_get(root, "complete");
	int err = said ? report_get_bool(&r, root, "complete", &complete) : 0;

	err = err ? err
		  : report_get_string(&r, root, "incomplete", false, f->incomplete,
				      sizeof(f->incomplete));
	if (!err && !complete && !*f->incomplete)
		snprintf(f->incomplete, sizeof(f->incomplete), "no reason given");
	if (!err && complete)
		*f->incomplete = '\0';
	err = err ? err : report_get_array(&r, root, "ranks", false, &ranks);
	return err || !ranks ? err : read_rank_ops(&r, ranks, f);
}

struct gap_totals {
	size_t incomplete;
	uint64_t relayed_ops, dropped_ops;
};

static struct gap_totals totals(const struct report_set *set)
{
	struct gap_totals t = { 0, 0, 0 };

	for (size_t i = 0; i < set->nfiles; i++) {
		const struct report_file *f = &set->files[i];

		if (f->superseded_by >= 0)
			continue;
		t.incomplete += *f->incomplete != '\0';
		t.relayed_ops += f->relayed_ops;
		t.dropped_ops += f->dropped_ops;
	}
	return t;
}

/* At most this many incomplete reports are named in text; JSON names them all. */
#define GAPS_NAMED 8

void report_print_gaps(const struct report_set *set, FILE *out)
{
	struct gap_totals t = totals(set);
	size_t named = 0;

	if (t.relayed_ops || t.dropped_ops)
		fprintf(out, "profiler ops: %llu relayed for other processes (PXN), %llu dropped%s\n",
			(unsigned long long)t.relayed_ops, (unsigned long long)t.dropped_ops,
			t.dropped_ops ? " (hops missing: raise FABRICLAB_PROFILER_MAX_LINKS)" : "");
	if (!t.incomplete)
		return;
	fprintf(out, "incomplete data in %zu report%s (their figures are bounds, not exact):\n",
		t.incomplete, t.incomplete == 1 ? "" : "s");
	for (size_t i = 0; i < set->nfiles && named < GAPS_NAMED; i++) {
		const struct report_file *f = &set->files[i];

		if (f->superseded_by >= 0 || !*f->incomplete)
			continue;
		fprintf(out, "  %s: %s\n", f->path, f->incomplete);
		named++;
	}
	if (t.incomplete > named)
		fprintf(out, "  ... and %zu more (--json lists them all)\n", t.incomplete - named);
}

json_t *report_gaps_json(const struct report_set *set)
{
	struct gap_totals t = totals(set);
	json_t *list = json_array();

	for (size_t i = 0; i < set->nfiles; i++) {
		const struct report_file *f = &set->files[i];

		if (f->superseded_by < 0 && *f->incomplete)
			json_array_append_new(list, json_pack("{s:s, s:s}", "path", f->path,
							      "why", f->incomplete));
	}
	return json_pack("{s:o, s:I, s:I}", "incomplete_reports", list, "relayed_ops",
			 (json_int_t)t.relayed_ops, "dropped_ops", (json_int_t)t.dropped_ops);
}
