/*
 * Reading one per-process report (docs/report-format.md) into plain structs,
 * checking every field the merge relies on. A file from another schema
 * version, a truncated file or a wrong field stops the run with the file
 * and the field named: a merge built on a half-understood file would mislead.
 * In a folder, what is not a fabriclab report at all (another program's
 * JSON, a FIFO or a folder named *.json) is skipped with a warning instead.
 */
#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "plugin/base/error.h"
#include "plugin/base/file_read.h"
#include "plugin/base/version.h"
#include "report.h"
#include "report_fields.h"
#include "report_hop_read.h"
#include "report_hops_text.h"
#include "tools/common/tool_json_arena.h"
#include "tools/common/tool_text.h"

/* The devices of the writer's node, from its `devices`. */
struct devices {
	struct report_device_cap *caps;
	size_t n;
};

/* ["host", "cuda", ...] -> FL_PTR_* bits. */
static int get_memory(const struct report_reader *r, json_t *obj, const char *key, int *out)
{
	size_t i;
	json_t *e;
	int err;
	json_t *v = report_field(r, obj, key, false, &err);

	*out = 0;
	if (!v)
		return 0;
	if (!json_is_array(v))
		return report_bad(r, key, "expected an array of \"host\", \"cuda\", \"dmabuf\"");
	json_array_foreach (v, i, e) {
		int bit = json_is_string(e) ? report_memory_bit(json_string_value(e),
								 json_string_length(e))
					    : 0;

		if (!bit)
			return report_bad(r, key, "expected only \"host\", \"cuda\" or \"dmabuf\"");
		*out |= bit;
	}
	return 0;
}

static int read_devices(const struct report_reader *r, json_t *root, struct devices *d)
{
	size_t i;
	json_t *dev;
	json_t *arr;
	int err = report_get_array(r, root, "devices", false, &arr);

	d->n = 0;
	d->caps = NULL;
	if (err || !arr)
		return err;
	d->caps = calloc(json_array_size(arr) + 1, sizeof(*d->caps));
	if (!d->caps)
		return fl_fail(FL_ERR_SYSTEM, "%s: out of memory", r->path);
	json_array_foreach (arr, i, dev) {
		struct report_reader sub = report_reader_at(r, "devices", i);
		int mem = 0;
		json_t *name = json_object_get(dev, "name");

		if (!json_is_string(name))
			return report_bad(&sub, "name", "expected a string");
		err = get_memory(&sub, dev, "ptr_support", &mem);
		if (err)
			return err;
		d->caps[d->n++] = (struct report_device_cap){
			json_string_value(name), (mem & (FL_PTR_CUDA | FL_PTR_DMABUF)) != 0
		};
	}
	return 0;
}

/*
 * The writer's node has an active RDMA port: said outright by the optional
 * `rdma_port_active`, or implied by its own `transport` verdict.
 */
static int read_rdma(const struct report_reader *r, json_t *root, bool *active)
{
	json_t *verdict = json_object_get(root, "verdict");
	json_t *kind = json_object_get(verdict, "kind");
	int err = report_get_bool(r, root, "rdma_port_active", active);

	if (!err && json_is_string(kind) && !strcmp(json_string_value(kind), "transport"))
		*active = true;
	return err;
}

static int reserve_views(const struct report_reader *r, struct report_file *f, size_t n,
			 size_t *cap)
{
	/* exactly n (> 0): 131 072 reports' views are all held until the join */
	struct report_file_view *more = realloc(f->views, n * sizeof(*more));

	if (!more)
		return fl_fail(FL_ERR_SYSTEM, "%s: out of memory", r->path);
	f->views = more;
	*cap = n;
	return 0;
}

/*
 * Room for one more view: 2 at first (one allocation for a fleet's report of
 * a send and a receive view: 131 072 reports add up), then doubling.
 */
static int grow_views(const struct report_reader *r, struct report_file *f, size_t *cap)
{
	if (f->nviews < *cap)
		return 0;
	return reserve_views(r, f, *cap ? 2 * *cap : 2, cap);
}

/* The top level's figures for all its hops: transport, devices, an active RDMA port. */
static int read_context(const struct report_reader *r, json_t *root, char *transport,
			size_t len, struct devices *devs, bool *rdma)
{
	int err = report_get_string(r, root, "transport", false, transport, len);

	err = err ? err : read_rdma(r, root, rdma);
	return err ? err : read_devices(r, root, devs);
}

/* Each hop of the stream parsed into j and read into f's views. */
static int read_hops(const struct report_reader *r, json_t *root, struct report_file *f,
		     struct report_hops_text *stream, struct report_arena *sizes,
		     struct report_json *j)
{
	char transport[16] = "";
	struct devices devs = { NULL, 0 };
	bool rdma = false;
	size_t cap = 0;
	int err = read_context(r, root, transport, sizeof(transport), &devs, &rdma);
	struct report_hop_context c = { transport, devs.caps, devs.n, sizes };

	for (size_t i = 0; !err && report_hops_take(r->path, stream, j, &err) > 0; i++) {
		struct report_reader sub = report_reader_at(r, "hops", i);

		err = grow_views(r, f, &cap);
		err = err ? err : report_read_hop(&sub, j, &c, &f->views[i]);
		if (!err)
			f->views[f->nviews++].v.rdma_port_active = rdma;
	}
	if (!err && cap > f->nviews) { /* what doubling left unused goes back */
		struct report_file_view *fit = realloc(f->views, (f->nviews + 1) * sizeof(*fit));

		f->views = fit ? fit : f->views;
	}
	free(devs.caps);
	return err;
}

/*
 * A report whose hops the text scan did not find (its key written with an
 * escape, say) was parsed whole: its hops array, written back compactly by
 * jansson, is read the same way as a file's.
 */
static int read_tree_hops(const struct report_reader *r, json_t *root, struct report_file *f,
			  struct report_arena *sizes, struct report_json *j)
{
	struct report_hops_text stream;
	json_free_t give_back;
	json_t *hops;
	char *text;
	int err = report_get_array(r, root, "hops", true, &hops);

	if (err)
		return err;
	if (!(text = json_dumps(hops, JSON_COMPACT)))
		return fl_fail(FL_ERR_SYSTEM, "%s: out of memory", r->path);
	report_hops_of_array(text, strlen(text), &stream);
	err = read_hops(r, root, f, &stream, sizes, j);
	json_get_alloc_funcs(NULL, &give_back); /* the text is jansson's: in the arena */
	give_back(text);
	return err;
}

static int check_schema(const struct report_reader *r, json_t *root, bool *foreign)
{
	char schema[64] = "", version[32] = "unknown";
	long long sv = 0;
	int err;

	*foreign = true;
	if (!json_is_object(root))
		return fl_fail(FL_ERR_USAGE,
			       "%s: not a fabriclab report (the JSON is not an object)", r->path);
	err = report_get_string(r, root, "schema", true, schema, sizeof(schema));
	if (err || strcmp(schema, REPORT_SCHEMA))
		return fl_fail(FL_ERR_USAGE,
			       "%s: not a fabriclab report (schema \"%s\", expected \"%s\")",
			       r->path, schema, REPORT_SCHEMA);
	*foreign = false;
	err = report_get_int(r, root, "schema_version", true, 0, &sv);
	if (err)
		return err;
	report_get_string(r, root, "fabriclab_version", false, version, sizeof(version));
	if (sv != REPORT_SCHEMA_VERSION)
		return fl_fail(FL_ERR_USAGE,
			       "%s: schema_version %lld (written by fabriclab %s); this fabriclab "
			       "(%s) reads schema_version %d only",
			       r->path, sv, version, fl_version(), REPORT_SCHEMA_VERSION);
	return 0;
}

static int read_header(const struct report_reader *r, json_t *root, struct report_file *f)
{
	int err = report_get_string(r, root, "node", true, f->node, sizeof(f->node));

	snprintf(f->version, sizeof(f->version), "unknown");
	f->rank = -1;
	f->world_size = -1;
	err = err ? err
		  : report_get_string(r, root, "fabriclab_version", false, f->version,
				      sizeof(f->version));
	err = err ? err : report_get_int(r, root, "pid", true, 0, &f->pid);
	err = err ? err : report_get_int(r, root, "rank", false, -1, &f->rank);
	err = err ? err : report_get_int(r, root, "world_size", false, -1, &f->world_size);
	if (!err && f->world_size > REPORT_MAX_WORLD)
		err = report_bad(r, "world_size", "expected at most " REPORT_MAX_WORLD_TEXT " ranks");
	err = err ? err : report_get_bool(r, root, "final", &f->final);
	return err ? err : report_get_number(r, root, "written_unix", false, &f->written_unix);
}

/* A file that never claimed to be a report; the schema check tells the rest. */
static bool foreign_text(const char *text)
{
	return !strstr(text, "\"" REPORT_SCHEMA "\"");
}

/*
 * The tree of the text without the hops' and ports' elements, which are then
 * parsed one at a time from the text (*streamed); where the scan finds no
 * plain top-level "hops": [...], the whole text as one tree.
 */
static json_t *load_json(const char *text, size_t len, struct report_streams *streams,
			 bool *streamed, json_error_t *jerr)
{
	*streamed = report_streams_find(text, len, streams);
	if (*streamed)
		return report_streams_load_rest(streams, jerr);
	return json_loadb(text, len, JSON_REJECT_DUPLICATES, jerr);
}

/* What reading one file needs, kept from one file to the next. */
struct report_loader {
	struct tool_json_arena arena; /* the trees of the reports' top levels */
	struct report_json hop;       /* one hop's table */
};

/*
 * *foreign: the failure is that the file is no fabriclab report at all. The
 * file's trees are built in the loader's arena (on from the parse to the last
 * decref).
 */
static int parse(const char *path, struct report_file *f, struct report_arena *sizes,
		 struct report_loader *l, bool listed, bool *foreign)
{
	struct report_reader r = { path, "" };
	struct report_streams streams;
	json_error_t jerr;
	json_t *root;
	bool streamed;
	size_t len;
	char *text;
	int err = listed ? fl_read_listed_regular(path, REPORT_MAX_BYTES, &text, &len)
			 : fl_read_regular(path, REPORT_MAX_BYTES, &text, &len);

	*foreign = true;
	if (err)
		return err;
	tool_json_arena_on(&l->arena);
	root = load_json(text, len, &streams, &streamed, &jerr);
	if (!root) {
		tool_json_arena_off(&l->arena);
		*foreign = foreign_text(text);
		free(text);
		return fl_fail(FL_ERR_USAGE, "%s: truncated or not JSON (line %d, column %d: %s)",
			       path, jerr.line, jerr.column, jerr.text);
	}
	err = check_schema(&r, root, foreign);
	err = err ? err : read_header(&r, root, f);
	err = err			? err
	      : streamed ? read_hops(&r, root, f, &streams.hops, sizes, &l->hop)
				: read_tree_hops(&r, root, f, sizes, &l->hop);
	err = err ? err
		  : report_read_ports(path, root, streams.ports.text ? &streams.ports : NULL,
				      &l->hop, sizes, f);
	free(text);
	err = err ? err : report_read_injected(path, root, f);
	err = err ? err : report_read_ranks(path, root, f);
	err = err ? err : report_read_gaps(path, root, f);
	json_decref(root);
	tool_json_arena_off(&l->arena);
	return err;
}

static void loader_free(struct report_loader *l)
{
	tool_json_arena_free(&l->arena);
	report_json_free(&l->hop);
}

static struct report_file *new_file(struct report_set *set)
{
	if (set->nfiles == set->files_cap) {
		size_t cap = set->files_cap ? 2 * set->files_cap : 64;
		struct report_file *f = realloc(set->files, cap * sizeof(*f));

		if (!f)
			return NULL;
		set->files = f;
		set->files_cap = cap;
	}
	memset(&set->files[set->nfiles], 0, sizeof(set->files[0]));
	set->files[set->nfiles].superseded_by = -1;
	return &set->files[set->nfiles];
}

/* listed: a folder's listing said path is a regular file; arena: for its trees */
static int load_file(struct report_set *set, const char *path, struct report_loader *l,
		     bool listed, bool *foreign)
{
	struct report_file *f = new_file(set);
	int err;

	*foreign = false;
	if (!f || !(f->path = strdup(path)))
		return fl_fail(FL_ERR_SYSTEM, "%s: out of memory", path);
	err = parse(path, f, &set->sizes, l, listed, foreign);
	if (err) {
		free(f->path);
		free(f->incomplete);
		free(f->views);
		free(f->ports);
		free(f->injected);
		free(f->ranks);
		return err;
	}
	/* from here on the path is only shown: escaped, like the names */
	if (tool_text_needs_escape(f->path)) {
		char *shown = tool_text_dup(f->path);

		if (!shown)
			return fl_fail(FL_ERR_SYSTEM, "out of memory");
		free(f->path);
		f->path = shown;
	}
	set->nfiles++;
	return 0;
}

int report_add_file(struct report_set *set, const char *path)
{
	struct report_loader l;
	bool foreign;
	int err;

	memset(&l, 0, sizeof(l));
	err = load_file(set, path, &l, false, &foreign);
	loader_free(&l);
	return err;
}

static bool is_report_name(const char *name)
{
	size_t n = strlen(name);

	return name[0] != '.' && n > 5 && !strcmp(name + n - 5, ".json");
}

/* A *.json of a folder, and whether the listing said it is a regular file. */
struct listed {
	char *name;
	bool regular;
};

static int cmp_names(const void *a, const void *b)
{
	return strverscmp(((const struct listed *)a)->name, ((const struct listed *)b)->name);
}

static int list_reports(const char *dir, struct listed **names, size_t *n)
{
	size_t cap = 0;
	struct dirent *e;
	DIR *d = opendir(dir);

	*names = NULL;
	*n = 0;
	if (!d)
		return fl_fail(FL_ERR_USAGE, "%s: %s", dir, strerror(errno));
	while ((e = readdir(d))) {
		if (!is_report_name(e->d_name))
			continue;
		if (*n == cap) {
			struct listed *grown = realloc(*names, (cap = cap ? 2 * cap : 64) *
								       sizeof(**names));

			if (!grown)
				break;
			*names = grown;
		}
		if (!((*names)[*n].name = strdup(e->d_name)))
			break;
		(*names)[(*n)++].regular = e->d_type == DT_REG; /* DT_UNKNOWN: asked at the open */
	}
	closedir(d);
	if (e)
		return fl_fail(FL_ERR_SYSTEM, "%s: out of memory listing reports", dir);
	if (*n)
		qsort(*names, *n, sizeof(**names), cmp_names);
	return 0;
}

/* A folder's file that is no report: one warning naming it and why, then on. */
static int skip_foreign(struct report_set *set, int err, bool foreign, char *last, size_t len)
{
	if (!err || !foreign)
		return err;
	fputs("fabriclab report: warning: skipping ", stderr);
	tool_text_put(stderr, fl_error_text());
	fputc('\n', stderr);
	snprintf(last, len, "%s", fl_error_text());
	set->skipped++;
	return 0;
}

/* Every *.json directly in dir (not below), in name order. */
static int add_dir(struct report_set *set, const char *dir)
{
	size_t n, before = set->nfiles, skipped = set->skipped;
	struct report_loader l; /* one for all the files, reused */
	char last[FL_ERROR_LEN] = "";
	struct listed *names;
	int err = list_reports(dir, &names, &n);

	memset(&l, 0, sizeof(l));
	for (size_t i = 0; i < n; i++) {
		char *path = NULL;
		bool foreign = false;

		if (!err && asprintf(&path, "%s/%s", dir, names[i].name) < 0)
			err = fl_fail(FL_ERR_SYSTEM, "%s: out of memory", dir);
		if (!err) {
			err = load_file(set, path, &l, names[i].regular, &foreign);
			err = skip_foreign(set, err, foreign, last, sizeof(last));
		}
		free(path);
		free(names[i].name);
	}
	free(names);
	loader_free(&l);
	if (!err && !n)
		err = fl_fail(FL_ERR_USAGE, "%s: no *.json reports in this folder", dir);
	if (!err && set->nfiles == before)
		err = fl_fail(FL_ERR_USAGE, "%s: no fabriclab reports in this folder (%zu *.json "
			      "skipped, the last: %s)", dir, set->skipped - skipped, last);
	return err;
}

int report_add_path(struct report_set *set, const char *path)
{
	struct stat st;

	if (stat(path, &st))
		return fl_fail(FL_ERR_USAGE, "%s: %s", path, strerror(errno));
	return S_ISDIR(st.st_mode) ? add_dir(set, path) : report_add_file(set, path);
}
