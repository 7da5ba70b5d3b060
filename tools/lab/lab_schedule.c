/*
 * Did the emulation keep up? Each rank's emulated NIC writes its schedule as
 * it exits (schedule-<pid>.json in the fabric's state folder, fabric/README.md):
 * messages executed, how many later than their bytes arrived, how many of
 * those in its first 0.5 s or looped back to itself. The lab sums them.
 */
#include <glob.h>
#include <jansson.h>
#include <stdio.h>

#include "lab.h"

struct schedule {
	unsigned long long n, late, startup, loop;
	double worst_ms;
	int ranks;
};

static unsigned long long field(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	return json_is_integer(v) && json_integer_value(v) > 0 ?
	       (unsigned long long)json_integer_value(v) : 0;
}

static void add_file(const char *path, struct schedule *s)
{
	json_t *o = json_load_file(path, 0, NULL);
	double worst;

	if (!json_is_object(o)) {
		fprintf(stderr, "fabriclab lab: %s: not an emulated NIC's schedule\n", path);
		json_decref(o);
		return;
	}
	s->n += field(o, "executed");
	s->late += field(o, "late");
	s->startup += field(o, "late_startup");
	s->loop += field(o, "late_loopback");
	worst = (double)field(o, "worst_late_ns") / 1e6;
	s->worst_ms = worst > s->worst_ms ? worst : s->worst_ms;
	s->ranks += field(o, "executed") > 0;
	json_decref(o);
}

void lab_like_print_schedule(const struct lab_opts *o, FILE *out)
{
	char pattern[PATH_MAX + 32];
	struct schedule s = { 0 };
	unsigned long long steady;
	glob_t g;

	if (!o->like)
		return;
	snprintf(pattern, sizeof(pattern), "%s/fabric/schedule-*.json", o->run_dir);
	if (glob(pattern, 0, NULL, &g))
		return;
	for (size_t i = 0; i < g.gl_pathc; i++)
		add_file(g.gl_pathv[i], &s);
	globfree(&g);
	steady = s.late - s.startup - s.loop;
	fprintf(out, "emulated NIC schedule: %llu messages on %d ranks, %llu late (%.2f%%) by "
		"more than a message's wire time, worst %.1f ms behind: %llu in the first 0.5 s "
		"(start-up), %llu loopback reads (flushes), %llu on the fabric after (%.2f%%)%s\n",
		s.n, s.ranks, s.late, s.n ? 100.0 * (double)s.late / (double)s.n : 0.0, s.worst_ms,
		s.startup, s.loop, steady, s.n ? 100.0 * (double)steady / (double)s.n : 0.0,
		steady * 100 > s.n ? " (the machine did not keep up: timings reflect it)" : "");
	fprintf(out, "emulated fabric counters: %s/fabric/counters.json\n", o->run_dir);
}
