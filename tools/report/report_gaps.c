/*
 * What the merged view rests on less than all of: reports whose writer said its
 * figures are incomplete (a ring, table or pool overflowed, or the profiler left
 * ops or steps unmeasured: `complete`/`incomplete`) and the profiler's counts
 * (`ranks[].relayed_ops`, `dropped_ops`, `dropped_links`, `dropped_steps`,
 * `abandoned_steps`; `profiler_unhomed_ops`). Reports older than these fields
 * say nothing and are taken as complete.
 */
#include <jansson.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "plugin/base/error.h"
#include "report.h"
#include "report_fields.h"

/* A rank entry's profiler counts, each optional (absent before its context finalized). */
static const struct rank_count {
	const char *key;
	size_t at;
} rank_counts[] = {
	{ "relayed_ops", offsetof(struct report_prof_gaps, relayed_ops) },
	{ "dropped_ops", offsetof(struct report_prof_gaps, dropped_ops) },
	{ "dropped_links", offsetof(struct report_prof_gaps, dropped_links) },
	{ "dropped_steps", offsetof(struct report_prof_gaps, dropped_steps) },
	{ "abandoned_steps", offsetof(struct report_prof_gaps, abandoned_steps) },
};

static uint64_t *count_of(struct report_prof_gaps *g, size_t at)
{
	return (uint64_t *)((char *)g + at);
}

static int read_rank_ops(const struct report_reader *r, json_t *ranks, struct report_file *f)
{
	json_t *e;
	size_t i;

	json_array_foreach (ranks, i, e) {
		struct report_reader sub = report_reader_at(r, "ranks", i);

		for (size_t k = 0; k < sizeof(rank_counts) / sizeof(rank_counts[0]); k++) {
			long long n = 0;
			int err = report_get_int(&sub, e, rank_counts[k].key, false, 0, &n);

			if (err)
				return err;
			*count_of(&f->prof, rank_counts[k].at) += (uint64_t)n;
		}
	}
	return 0;
}

int report_read_gaps(const char *path, json_t *root, struct report_file *f)
{
	struct report_reader r = { path, "" };
	bool complete = true;
	long long unhomed = 0;
	char why[1024] = "";
	json_t *ranks = NULL, *said = json_object_get(root, "complete");
	int err = said ? report_get_bool(&r, root, "complete", &complete) : 0;

	err = err ? err : report_get_string(&r, root, "incomplete", false, why, sizeof(why));
	if (!err && !complete && !(f->incomplete = strdup(*why ? why : "no reason given")))
		err = fl_fail(FL_ERR_SYSTEM, "%s: out of memory", path);
	err = err ? err : report_get_int(&r, root, "profiler_unhomed_ops", false, 0, &unhomed);
	f->prof.unhomed_ops = (uint64_t)unhomed;
	err = err ? err : report_get_array(&r, root, "ranks", false, &ranks);
	return err || !ranks ? err : read_rank_ops(&r, ranks, f);
}

struct gap_totals {
	size_t incomplete;
	struct report_prof_gaps prof;
};

static struct gap_totals totals(const struct report_set *set)
{
	struct gap_totals t = { 0 };

	for (size_t i = 0; i < set->nfiles; i++) {
		const struct report_file *f = &set->files[i];

		if (f->superseded_by >= 0)
			continue;
		t.incomplete += f->incomplete != NULL;
		t.prof.relayed_ops += f->prof.relayed_ops;
		t.prof.dropped_ops += f->prof.dropped_ops;
		t.prof.dropped_links += f->prof.dropped_links;
		t.prof.dropped_steps += f->prof.dropped_steps;
		t.prof.abandoned_steps += f->prof.abandoned_steps;
		t.prof.unhomed_ops += f->prof.unhomed_ops;
	}
	return t;
}

/* The profiler's line: said only when it relayed or missed anything. */
static void print_prof(const struct report_prof_gaps *p, FILE *out)
{
	if (!p->relayed_ops && !p->dropped_ops && !p->dropped_steps && !p->abandoned_steps &&
	    !p->unhomed_ops)
		return;
	fprintf(out, "profiler ops: %llu relayed for other processes (PXN), %llu dropped%s",
		(unsigned long long)p->relayed_ops, (unsigned long long)p->dropped_ops,
		p->dropped_links ? " (hops missing: raise FABRICLAB_PROFILER_MAX_LINKS)" : "");
	if (p->unhomed_ops)
		fprintf(out, ", %llu relayed with no context to measure them",
			(unsigned long long)p->unhomed_ops);
	if (p->dropped_steps || p->abandoned_steps)
		fprintf(out, "; steps: %llu not measured (no free stats slot), %llu lost (slot "
			"reused before their stop)", (unsigned long long)p->dropped_steps,
			(unsigned long long)p->abandoned_steps);
	fputc('\n', out);
}

/* At most this many incomplete reports are named in text; JSON names them all. */
#define GAPS_NAMED 8

void report_print_gaps(const struct report_set *set, FILE *out)
{
	struct gap_totals t = totals(set);
	size_t named = 0;

	print_prof(&t.prof, out);
	if (!t.incomplete)
		return;
	fprintf(out, "incomplete data in %zu report%s (their figures are bounds, not exact):\n",
		t.incomplete, t.incomplete == 1 ? "" : "s");
	for (size_t i = 0; i < set->nfiles && named < GAPS_NAMED; i++) {
		const struct report_file *f = &set->files[i];

		if (f->superseded_by >= 0 || !f->incomplete)
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

		if (f->superseded_by < 0 && f->incomplete)
			json_array_append_new(list, json_pack("{s:s, s:s}", "path", f->path,
							      "why", f->incomplete));
	}
	return json_pack("{s:o, s:I, s:I, s:I, s:I, s:I, s:I}", "incomplete_reports", list,
			 "relayed_ops", (json_int_t)t.prof.relayed_ops, "dropped_ops",
			 (json_int_t)t.prof.dropped_ops, "dropped_links",
			 (json_int_t)t.prof.dropped_links, "dropped_steps",
			 (json_int_t)t.prof.dropped_steps, "abandoned_steps",
			 (json_int_t)t.prof.abandoned_steps, "unhomed_ops",
			 (json_int_t)t.prof.unhomed_ops);
}
