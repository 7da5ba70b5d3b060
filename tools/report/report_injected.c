/*
 * The faults each report says FABRICLAB_FAULT applied on its node
 * (`injected`, optional): listed beside the merged verdict so a chaos run is
 * never read as a real fault, and so the diagnosis can be checked against what
 * was injected. The verdict never reads them.
 */
#include <stdlib.h>
#include <string.h>

#include "plugin/base/error.h"
#include "report.h"
#include "report_fields.h"

static int read_one(const struct report_reader *r, json_t *e, const struct report_file *f,
		    struct report_injected *out)
{
	long long conns = 0;
	int err = report_expect_object(r, e);

	memset(out, 0, sizeof(*out));
	snprintf(out->node, sizeof(out->node), "%s", f->node);
	err = err ? err : report_get_string(r, e, "rule", true, out->rule, sizeof(out->rule));
	err = err ? err
		  : report_get_string(r, e, "action", true, out->action, sizeof(out->action));
	err = err ? err : report_get_string(r, e, "dev", false, out->dev, sizeof(out->dev));
	err = err ? err : report_get_string(r, e, "peer", false, out->peer, sizeof(out->peer));
	err = err ? err : report_get_string(r, e, "dir", false, out->dir, sizeof(out->dir));
	err = err ? err : report_get_int(r, e, "connections", false, 0, &conns);
	out->connections = (long)conns;
	return err;
}

int report_read_injected(const char *path, json_t *root, struct report_file *f)
{
	struct report_reader r = { path, "" };
	json_t *list, *e;
	size_t i;
	int err = report_get_array(&r, root, "injected", false, &list);

	f->injected = NULL;
	f->ninjected = 0;
	if (err || !list)
		return err;
	if (!json_array_size(list))
		return 0;
	f->injected = calloc(json_array_size(list), sizeof(*f->injected));
	if (!f->injected)
		return fl_fail(FL_ERR_SYSTEM, "%s: out of memory", path);
	json_array_foreach (list, i, e) {
		struct report_reader at = report_reader_at(&r, "injected", i);

		err = read_one(&at, e, f, &f->injected[i]);
		if (err)
			return err;
		f->ninjected++;
	}
	return 0;
}

static void print_one(const struct report_injected *e, FILE *out)
{
	fprintf(out, "  %s: %s on %s", e->node, e->rule, e->dev[0] ? e->dev : "?");
	if (e->peer[0])
		fprintf(out, " toward %s", e->peer);
	if (e->dir[0])
		fprintf(out, " (%s, %ld connection%s)", e->dir, e->connections,
			e->connections == 1 ? "" : "s");
	fprintf(out, "\n");
	if (!strcmp(e->action, "nogdr"))
		fprintf(out, "    GPUDirect RDMA is not in use on %s/%s: this rule advertises host "
			"memory only\n", e->node, e->dev);
}

void report_print_injected(const struct report_set *set, FILE *out)
{
	bool header = false;

	for (size_t f = 0; f < set->nfiles; f++) {
		if (set->files[f].superseded_by >= 0)
			continue;
		for (size_t i = 0; i < set->files[f].ninjected; i++) {
			if (!header)
				fprintf(out, "\ninjected faults (FABRICLAB_FAULT; not used by the "
					     "verdict):\n");
			header = true;
			print_one(&set->files[f].injected[i], out);
		}
	}
}

json_t *report_injected_json(const struct report_set *set)
{
	json_t *a = json_array();

	for (size_t f = 0; a && f < set->nfiles; f++) {
		if (set->files[f].superseded_by >= 0)
			continue;
		for (size_t i = 0; i < set->files[f].ninjected; i++) {
			const struct report_injected *e = &set->files[f].injected[i];

			json_array_append_new(
				a, json_pack("{s:s, s:s, s:s, s:s, s:s?, s:s?, s:I}", "node", e->node,
					     "rule", e->rule, "action", e->action, "dev", e->dev,
					     "peer", e->peer[0] ? e->peer : NULL, "dir",
					     e->dir[0] ? e->dir : NULL, "connections",
					     (json_int_t)e->connections));
		}
	}
	return a;
}
