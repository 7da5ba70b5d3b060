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
#include "report_hops_text.h"
#include "tools/common/tool_json_arena.h"
#include "tools/common/tool_text.h"

/* One device of the writer's node: can NCCL hand it GPU memory? */
struct device_cap {
	const char *name;
	bool gdr_capable;
};

struct devices {
	struct device_cap *caps;
	size_t n;
};

static int memory_bit(const char *name)
{
	if (!strcmp(name, "host"))
		return FL_PTR_HOST;
	if (!strcmp(name, "cuda"))
		return FL_PTR_CUDA;
	if (!strcmp(name, "dmabuf"))
		return FL_PTR_DMABUF;
	return 0;
}

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
		int bit = json_is_string(e) ? memory_bit(json_string_value(e)) : 0;

		if (!bit)
			return report_bad(r, key, "expected only \"host\", \"cuda\" or \"dmabuf\"");
		*out |= bit;
	}
	return 0;
}

static int get_wire_time(const struct report_reader *r, json_t *hop, struct report_view *v)
{
	struct report_reader sub = *r;
	int err;
	json_t *t = report_field(r, hop, "wire_time_us", false, &err);

	if (!t)
		return 0;
	if (!json_is_object(t))
		return report_bad(r, "wire_time_us", "expected an object {p50, p99, max}");
	snprintf(sub.where, sizeof(sub.where), "%.40s.wire_time_us", r->where);
	err = report_get_number(&sub, t, "p50", false, &v->p50_us);
	err = err ? err : report_get_number(&sub, t, "p99", false, &v->p99_us);
	return err ? err : report_get_number(&sub, t, "max", false, &v->max_us);
}

static int size_bucket(uint64_t floor_bytes)
{
	int b = 0;

	while (b + 1 < REPORT_SIZE_BUCKETS && (floor_bytes >> (b + 1)))
		b++;
	return b;
}

/* [[floor_bytes, count], ...] */
static int get_sizes(const struct report_reader *r, json_t *hop, struct report_arena *sizes,
		     struct report_view *v)
{
	uint64_t counts[REPORT_SIZE_BUCKETS] = { 0 };
	size_t i;
	json_t *pair;
	int err;
	json_t *h = report_field(r, hop, "size_histogram", false, &err);

	if (!h)
		return 0;
	if (!json_is_array(h))
		return report_bad(r, "size_histogram",
				  "expected an array of [floor_bytes, count] pairs");
	json_array_foreach (h, i, pair) {
		json_t *f = json_array_get(pair, 0), *c = json_array_get(pair, 1);

		if (!json_is_array(pair) || json_array_size(pair) != 2 || !json_is_integer(f) ||
		    !json_is_integer(c) || json_integer_value(f) < 0 || json_integer_value(c) < 0)
			return report_bad(r, "size_histogram",
				   "expected [floor_bytes, count] pairs of non-negative integers");
		counts[size_bucket((uint64_t)json_integer_value(f))] +=
			(uint64_t)json_integer_value(c);
	}
	if (report_sizes_store(sizes, v, counts))
		return fl_fail(FL_ERR_SYSTEM, "%s: out of memory", r->path);
	return 0;
}

static int get_view_name(const struct report_reader *r, json_t *hop, bool *is_send)
{
	char view[8] = "";
	int err = report_get_string(r, hop, "view", true, view, sizeof(view));

	if (err)
		return err;
	if (strcmp(view, "send") && strcmp(view, "recv"))
		return report_bad(r, "view", "expected \"send\" or \"recv\"");
	*is_send = !strcmp(view, "send");
	return 0;
}

static int get_key(const struct report_reader *r, json_t *hop, struct report_hop_key *k)
{
	int err = report_get_string(r, hop, "src_node", true, k->src_node, sizeof(k->src_node));

	err = err ? err
		  : report_get_string(r, hop, "src_dev", true, k->src_dev, sizeof(k->src_dev));
	err = err ? err
		  : report_get_string(r, hop, "dst_node", true, k->dst_node, sizeof(k->dst_node));
	return err ? err
		   : report_get_string(r, hop, "dst_dev", true, k->dst_dev, sizeof(k->dst_dev));
}

/* Older reports lack wire_bytes: the timed bytes are then what the rate and time imply. */
static int get_wire_bytes(const struct report_reader *r, json_t *hop, struct report_view *v)
{
	if (!json_object_get(hop, "wire_bytes")) {
		/* clamped as a double: a product past 2^64 has no integer to become */
		double implied = v->wire_gbs * 1e9 * v->wire_seconds;

		v->wire_bytes = !(implied > 0.0)		  ? 0
				: implied >= (double)v->bytes ? v->bytes
							      : (uint64_t)(implied + 0.5);
		return 0;
	}
	return report_get_uint(r, hop, "wire_bytes", &v->wire_bytes);
}

/* Optional (older reports and sockets have none): RoCE or InfiniBand decides the commands. */
static int get_link_layer(const struct report_reader *r, json_t *hop, struct report_view *v)
{
	int err = report_get_string(r, hop, "link_layer", false, v->link_layer,
				    sizeof(v->link_layer));

	if (!err && v->link_layer[0] && strcmp(v->link_layer, FL_LINK_ETHERNET) &&
	    strcmp(v->link_layer, FL_LINK_INFINIBAND))
		return report_bad(r, "link_layer", "expected \"" FL_LINK_ETHERNET "\", \""
				  FL_LINK_INFINIBAND "\" or null");
	return err;
}

static int get_figures(const struct report_reader *r, json_t *hop, struct report_arena *sizes,
		       struct report_view *v)
{
	long long x;
	int err = report_get_uint(r, hop, "bytes", &v->bytes);

	err = err ? err : report_get_uint(r, hop, "messages", &v->messages);
	err = err ? err : report_get_number(r, hop, "wire_seconds", true, &v->wire_seconds);
	err = err ? err : report_get_number(r, hop, "wire_gbs", true, &v->wire_gbs);
	err = err ? err : get_wire_bytes(r, hop, v);
	err = err || !json_object_get(hop, "wire_runs")
		      ? err
		      : report_get_uint(r, hop, "wire_runs", &v->wire_runs);
	err = err ? err : report_get_number(r, hop, "line_rate_gbs", true, &v->line_rate_gbs);
	err = err ? err : report_get_number(r, hop, "active_seconds", true, &v->active_seconds);
	err = err ? err
		  : report_get_number(r, hop, "peer_wait_seconds", true, &v->peer_wait_seconds);
	err = err ? err
		  : report_get_number(r, hop, "outstanding_seconds", false,
				      &v->outstanding_seconds);
	x = -1;
	err = err ? err : report_get_int(r, hop, "src_rank", false, -1, &x);
	v->src_rank = (long)x;
	x = -1;
	err = err ? err : report_get_int(r, hop, "dst_rank", false, -1, &x);
	v->dst_rank = (long)x;
	x = 1;
	err = err ? err : report_get_int(r, hop, "connections", false, 0, &x);
	v->connections = (long)x;
	err = err ? err : get_wire_time(r, hop, v);
	err = err ? err : get_sizes(r, hop, sizes, v);
	err = err ? err : get_memory(r, hop, "memory", &v->mem_types);
	err = err ? err : get_link_layer(r, hop, v);
	return err ? err : report_get_bool(r, hop, "gdr", &v->gdr);
}

static bool device_capable(const struct devices *d, const char *name)
{
	for (size_t i = 0; i < d->n; i++) {
		if (!strcmp(d->caps[i].name, name))
			return d->caps[i].gdr_capable;
	}
	return false;
}

static int read_view(const struct report_reader *r, json_t *hop, const char *file_transport,
		     const struct devices *devs, struct report_arena *sizes,
		     struct report_file_view *out)
{
	struct report_view *v = &out->v;
	int err;

	memset(out, 0, sizeof(*out));
	err = report_expect_object(r, hop);
	err = err ? err : get_key(r, hop, &out->key);
	err = err ? err : get_view_name(r, hop, &out->is_send);
	snprintf(out->transport, sizeof(out->transport), "%s", file_transport);
	err = err ? err
		  : report_get_string(r, hop, "transport", !*file_transport, out->transport,
				      sizeof(out->transport));
	err = err ? err : get_figures(r, hop, sizes, v);
	err = err ? err : report_read_hop_mode(r, hop, out);
	if (err)
		return err;
	v->present = true;
	v->processes = 1;
	v->dev_gdr_capable =
		device_capable(devs, out->is_send ? out->key.src_dev : out->key.dst_dev);
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
		d->caps[d->n++] = (struct device_cap){ json_string_value(name),
						       (mem & (FL_PTR_CUDA | FL_PTR_DMABUF)) != 0 };
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
 * Room for one more view. A tree's hops are counted ahead (one allocation a
 * file: 131 072 reports add up); the streamed hops are not.
 */
static int grow_views(const struct report_reader *r, struct report_file *f, size_t *cap)
{
	if (f->nviews < *cap)
		return 0;
	return reserve_views(r, f, *cap ? 2 * *cap : 2, cap);
}

/*
 * The next hop: from the array in the tree, or parsed from the text (stream)
 * into the arena after the rest's tree, given back once the hop is read.
 */
static json_t *next_hop(const struct report_reader *r, json_t *hops,
			struct report_hops_text *stream, size_t i, int *err)
{
	json_error_t jerr;
	size_t at;
	json_t *hop;
	int line, column;

	*err = 0;
	if (!stream)
		return json_incref(json_array_get(hops, i));
	hop = report_hops_next(stream, &jerr, &at);
	if (!hop && at) {
		report_hops_where(stream->text, at, &line, &column);
		*err = fl_fail(FL_ERR_USAGE, "%s: truncated or not JSON (line %d, column %d: %s)",
			       r->path, line, column, jerr.text);
	}
	return hop;
}

static int read_hops(const struct report_reader *r, json_t *root, struct report_file *f,
		     struct report_hops_text *stream, struct report_arena *sizes,
		     struct tool_json_arena *arena)
{
	char transport[16] = "";
	struct devices devs = { NULL, 0 };
	struct tool_json_mark rest = tool_json_arena_mark(arena);
	bool rdma = false;
	size_t cap = 0;
	json_t *hop;
	json_t *hops;
	int err = report_get_array(r, root, "hops", true, &hops);

	if (err)
		return err;
	err = report_get_string(r, root, "transport", false, transport, sizeof(transport));
	err = err ? err : read_rdma(r, root, &rdma);
	err = err ? err : read_devices(r, root, &devs);
	if (!err && !stream && json_array_size(hops))
		err = reserve_views(r, f, json_array_size(hops), &cap);
	for (size_t i = 0; !err && (hop = next_hop(r, hops, stream, i, &err)); i++) {
		struct report_reader sub = report_reader_at(r, "hops", i);

		err = grow_views(r, f, &cap);
		err = err ? err : read_view(&sub, hop, transport, &devs, sizes, &f->views[i]);
		json_decref(hop);
		if (stream)
			tool_json_arena_release(arena, rest);
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
 * A report up to this size is parsed as one tree (its hops' trees take a few
 * MB at most): one parse, not one for the rest and one per hop, which cost
 * 131 072 reports of two hops a second.
 */
#define WHOLE_PARSE_BYTES (1UL << 20)

/*
 * The whole text as one tree, or (large reports) the tree without the hops'
 * elements, which read_hops then parses one at a time from the text. A small
 * report the whole parse refuses is parsed again that way: the message names
 * the same place either way.
 */
static json_t *load_json(const char *text, size_t len, struct report_hops_text *stream,
			 bool *streamed, json_error_t *jerr)
{
	json_t *root;

	*streamed = false;
	if (len <= WHOLE_PARSE_BYTES &&
	    (root = json_loadb(text, len, JSON_REJECT_DUPLICATES, jerr)))
		return root;
	*streamed = report_hops_find(text, len, stream);
	if (*streamed)
		return report_hops_load_rest(stream, jerr);
	return json_loadb(text, len, JSON_REJECT_DUPLICATES, jerr);
}

/*
 * *foreign: the failure is that the file is no fabriclab report at all. The
 * file's trees are built in arena (on from the parse to the last decref).
 */
static int parse(const char *path, struct report_file *f, struct report_arena *sizes,
		 struct tool_json_arena *arena, bool listed, bool *foreign)
{
	struct report_reader r = { path, "" };
	struct report_hops_text stream;
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
	tool_json_arena_on(arena);
	root = load_json(text, len, &stream, &streamed, &jerr);
	if (!root) {
		tool_json_arena_off(arena);
		*foreign = foreign_text(text);
		free(text);
		return fl_fail(FL_ERR_USAGE, "%s: truncated or not JSON (line %d, column %d: %s)",
			       path, jerr.line, jerr.column, jerr.text);
	}
	err = check_schema(&r, root, foreign);
	err = err ? err : read_header(&r, root, f);
	err = err ? err : read_hops(&r, root, f, streamed ? &stream : NULL, sizes, arena);
	free(text);
	err = err ? err : report_read_ports(path, root, f);
	err = err ? err : report_read_injected(path, root, f);
	err = err ? err : report_read_ranks(path, root, f);
	err = err ? err : report_read_gaps(path, root, f);
	json_decref(root);
	tool_json_arena_off(arena);
	return err;
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
static int load_file(struct report_set *set, const char *path, struct tool_json_arena *arena,
		     bool listed, bool *foreign)
{
	struct report_file *f = new_file(set);
	int err;

	*foreign = false;
	if (!f || !(f->path = strdup(path)))
		return fl_fail(FL_ERR_SYSTEM, "%s: out of memory", path);
	err = parse(path, f, &set->sizes, arena, listed, foreign);
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
	struct tool_json_arena arena = { NULL, NULL };
	bool foreign;
	int err = load_file(set, path, &arena, false, &foreign);

	tool_json_arena_free(&arena);
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
	struct tool_json_arena arena = { NULL, NULL }; /* one for all the files, reused */
	char last[FL_ERROR_LEN] = "";
	struct listed *names;
	int err = list_reports(dir, &names, &n);

	for (size_t i = 0; i < n; i++) {
		char *path = NULL;
		bool foreign = false;

		if (!err && asprintf(&path, "%s/%s", dir, names[i].name) < 0)
			err = fl_fail(FL_ERR_SYSTEM, "%s: out of memory", dir);
		if (!err) {
			err = load_file(set, path, &arena, names[i].regular, &foreign);
			err = skip_foreign(set, err, foreign, last, sizeof(last));
		}
		free(path);
		free(names[i].name);
	}
	free(names);
	tool_json_arena_free(&arena);
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
