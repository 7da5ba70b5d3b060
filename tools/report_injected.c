/*
 * The faults each report says FABRICLAB_FAULT applied on its node
 * (`injected`, optional): listed beside the merged verdict so a chaos run is
 * never read as a real fault, and so the diagnosis can be checked against what
 * was injected. The verdict never reads them.
 */
#include <stdlib.h>
#include <string.h>

#include "../plugin/error.h"
#include "report.h"

static int bad(const char *path, size_t i, const char *key, const char *what)
{
	return fl_fail(FL_ERR_USAGE, "%s: injected[%zu].%s: %s", path, i, key, what);
}

static int get_text(const char *path, size_t i, json_t *e, const char *key, bool required,
		    char *dst, size_t len)
{
	json_t *v = json_object_get(e, key);

	dst[0] = '\0';
	if (!v || json_is_null(v))
		return required ? bad(path, i, key, "missing") : 0;
	if (!json_is_string(v))
		return bad(path, i, key, "expected a string");
	if (json_string_length(v) >= len)
		return bad(path, i, key, "too long");
	memcpy(dst, json_string_value(v), json_string_length(v) + 1);
	return 0;
}

static int read_one(const char *path, size_t i, json_t *e, const struct report_file *f,
		    struct report_injected *out)
{
	json_t *conns = json_object_get(e, "connections");
	int err;

	if (!json_is_object(e))
		return fl_fail(FL_ERR_USAGE, "%s: injected[%zu]: expected an object", path, i);
	snprintf(out->node, sizeof(out->node), "%s", f->node);
	err = get_text(path, i, e, "rule", true, out->rule, sizeof(out->rule));
	err = err ? err : get_text(path, i, e, "action", true, out->action, sizeof(out->action));
	err = err ? err : get_text(path, i, e, "dev", false, out->dev, sizeof(out->dev));
	err = err ? err : get_text(path, i, e, "peer", false, out->peer, sizeof(out->peer));
	err = err ? err : get_text(path, i, e, "dir", false, out->dir, sizeof(out->dir));
	if (err)
		return err;
	if (conns && (!json_is_integer(conns) || json_integer_value(conns) < 0))
		return bad(path, i, "connections", "expected a non-negative integer");
	out->connections = conns ? (long)json_integer_value(conns) : 0;
	return 0;
}

int report_read_injected(const char *path, json_t *root, struct report_file *f)
{
	json_t *list = json_object_get(root, "injected"), *e;
	size_t i;

	f->injected = NULL;
	f->ninjected = 0;
	if (!list || json_is_null(list))
		return 0;
	if (!json_is_array(list))
		return fl_fail(FL_ERR_USAGE, "%s: injected: expected an array", path);
	if (!json_array_size(list))
		return 0;
	f->injected = calloc(json_array_size(list), sizeof(*f->injected));
	if (!f->injected)
		return fl_fail(FL_ERR_SYSTEM, "%s: out of memory", path);
	json_array_foreach (list, i, e) {
		int err = read_one(path, i, e, f, &f->injected[i]);

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
