/*
 * The baseline: one sweep kept as a file, so a later sweep (or the rejoin
 * gate) can hold each directed pair to what it did before. It keeps the
 * fabric's identity next to the figures (nodes, devices, line rates, the net
 * plugin ABI and fabriclab's version), so a comparison across a changed
 * fabric can say so. Only the largest size is compared: per pair its rate,
 * and where known its transfers and their median and 99th percentile time,
 * which the model takes as the pair's sampling error (sweep_figures.c).
 */
#include "sweep.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "plugin/base/error.h"
#include "plugin/base/file_read.h"
#include "plugin/base/version.h"
#include "plugin/report/report.h"
#include "shim/shim.h"
#include "tools/common/tool_text.h"

#define FORMAT "fabriclab-sweep-baseline"
#define FORMAT_VERSION 1
#define BASELINE_MAX_BYTES (256UL << 20) /* as a report: larger is not one of ours */
#define BASELINE_MAX_GBS 10000.0          /* 80 Tbit/s: no link of today is near */
#define BASELINE_MAX_US 3.6e9             /* an hour for one message */
#define BASELINE_MAX_ITERS 1e9            /* transfers of one pair: far beyond what -t times */

static json_t *nodes_json(const struct sweep_result *res)
{
	json_t *a = json_array();

	for (int i = 0; i < res->n; i++) {
		const struct sweep_node *n = &res->nodes[i];

		if (json_array_append_new(a, json_pack("{s:o, s:o, s:i, s:i, s:i}", "name",
							tool_text_json(n->name), "device",
							tool_text_json(n->dev), "dev_index",
							n->dev_index, "speed_mbps", n->speed_mbps,
							"net_abi", n->net_version))) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

/* What the model needs of a pair beside its rate: how many transfers, their spread. */
static int add_samples(json_t *pair, const struct sweep_size *s, size_t k)
{
	if (!s->iters || s->iters[k] < 1)
		return 0;
	if (json_object_set_new(pair, "iterations", json_integer((json_int_t)s->iters[k])))
		return -1;
	if (s->p50_us[k] <= 0 || s->p99_us[k] < s->p50_us[k])
		return 0;
	return json_object_set_new(pair, "p50_us", json_real(s->p50_us[k])) ||
	       json_object_set_new(pair, "p99_us", json_real(s->p99_us[k]));
}

static json_t *pair_json(const struct sweep_result *res, int i, int j)
{
	const struct sweep_size *s = &res->sizes[res->nsizes - 1];
	size_t k = (size_t)i * (size_t)res->n + (size_t)j;
	double t = s->time_us[k], gbs = sweep_gbs(s->bytes, t);
	json_t *p = json_pack("{s:o, s:o, s:o, s:o, s:f, s:f, s:f}", "src",
			      tool_text_json(res->nodes[i].name), "dst",
			      tool_text_json(res->nodes[j].name), "src_dev",
			      tool_text_json(res->nodes[i].dev), "dst_dev",
			      tool_text_json(res->nodes[j].dev), "time_us", t, "algbw_gbs", gbs,
			      "busbw_gbs", gbs);

	if (p && add_samples(p, s, k)) {
		json_decref(p);
		return NULL;
	}
	return p;
}

static json_t *pairs_json(const struct sweep_result *res)
{
	const struct sweep_size *s = &res->sizes[res->nsizes - 1];
	json_t *a = json_array();
	int n = res->n;

	for (int i = 0; i < n; i++) {
		for (int j = 0; j < n; j++) {
			if (i == j || s->time_us[i * n + j] < 0)
				continue;
			if (json_array_append_new(a, pair_json(res, i, j))) {
				json_decref(a);
				return NULL;
			}
		}
	}
	return a;
}

static void utc_now(char *buf, size_t len)
{
	time_t now = time(NULL);
	struct tm tm;

	gmtime_r(&now, &tm);
	strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

int sweep_baseline_check_save(const char *path)
{
	char dir[4096];
	const char *slash = strrchr(path, '/');
	struct stat st;

	if (!*path)
		return shim_fail(FL_ERR_USAGE, "--save: an empty path");
	if (!stat(path, &st) && !S_ISREG(st.st_mode))
		return shim_fail(FL_ERR_USAGE, "--save %s: %s, not a regular file", path,
				 S_ISDIR(st.st_mode) ? "a directory" : "exists");
	/* the baseline is written beside it and renamed over it: its folder takes new files */
	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else if (slash == path)
		snprintf(dir, sizeof(dir), "/");
	else
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	if (stat(dir, &st))
		return shim_fail(FL_ERR_USAGE, "--save %s: folder %s: %s", path, dir,
				 strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return shim_fail(FL_ERR_USAGE, "--save %s: %s is not a directory", path, dir);
	if (access(dir, W_OK | X_OK))
		return shim_fail(FL_ERR_USAGE, "--save %s: cannot create files in %s: %s", path,
				 dir, strerror(errno));
	return FL_OK;
}

int sweep_baseline_save(const struct sweep_result *res, const char *path)
{
	char created[32], tmp[4096];
	json_t *root;
	int rc;

	utc_now(created, sizeof(created));
	errno = 0;
	root = json_pack("{s:s, s:i, s:s, s:s, s:s, s:I, s:o, s:o}", "format", FORMAT,
			 "format_version", FORMAT_VERSION, "fabriclab", fl_version(),
			 "nccl", "none (fabriclab shim)", "created", created, "bytes",
			 (json_int_t)res->sizes[res->nsizes - 1].bytes, "nodes", nodes_json(res),
			 "pairs", pairs_json(res));
	if (!root)
		return shim_fail(FL_ERR_SYSTEM, "cannot build the baseline");
	/* Written aside and renamed, so a reader never sees half a baseline. */
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	rc = json_dump_file(root, tmp, JSON_INDENT(1) | JSON_SORT_KEYS);
	json_decref(root);
	if (rc || rename(tmp, path)) {
		int err = errno;

		remove(tmp);
		return shim_fail(FL_ERR_SYSTEM, "cannot write the baseline %s: %s", path,
				 strerror(err ? err : EIO));
	}
	return FL_OK;
}

/* A pair's names: their order, without case (host names are), the lookups' order too. */
static int cmp_names(const char *src_a, const char *dst_a, const char *src_b, const char *dst_b)
{
	int c = strcasecmp(src_a, src_b);

	return c ? c : strcasecmp(dst_a, dst_b);
}

static int cmp_pairs(const void *pa, const void *pb)
{
	const struct sweep_base_pair *a = pa, *b = pb;
	int c = cmp_names(a->src, a->dst, b->src, b->dst);

	return c ? c : (a->index > b->index) - (a->index < b->index);
}

/* A name of a pair: a non-empty string that fits, control bytes refused. */
static int pair_name(json_t *p, const char *key, const char *path, size_t i, char *dst)
{
	json_t *v = json_object_get(p, key);

	if (!json_is_string(v) || !json_string_length(v) ||
	    json_string_length(v) >= SWEEP_NAME_LEN || tool_text_needs_escape(json_string_value(v)))
		return shim_fail(FL_ERR_USAGE, "%s: pairs[%zu].%s: expected a node name (1 to %d "
				 "printable characters)", path, i, key, SWEEP_NAME_LEN - 1);
	memcpy(dst, json_string_value(v), json_string_length(v) + 1);
	return FL_OK;
}

/* An optional figure of a pair: when there, a number in (0, max]. */
static int pair_figure(json_t *p, const char *key, bool required, double max, const char *path,
		       size_t i, double *out)
{
	json_t *v = json_object_get(p, key);

	if (!v && !required)
		return FL_OK;
	if (!json_is_number(v) || !isfinite(json_number_value(v)) || json_number_value(v) <= 0 ||
	    json_number_value(v) > max)
		return shim_fail(FL_ERR_USAGE, "%s: pairs[%zu].%s: expected a number above 0 and "
				 "at most %g", path, i, key, max);
	*out = json_number_value(v);
	return FL_OK;
}

/* An optional device name of a pair: when there, as a node name but shorter. */
static int pair_dev(json_t *p, const char *key, const char *path, size_t i, char *dst)
{
	json_t *v = json_object_get(p, key);

	if (!v)
		return FL_OK;
	if (!json_is_string(v) || !json_string_length(v) ||
	    json_string_length(v) >= SWEEP_DEV_LEN || tool_text_needs_escape(json_string_value(v)))
		return shim_fail(FL_ERR_USAGE, "%s: pairs[%zu].%s: expected a device name (1 to %d "
				 "printable characters)", path, i, key, SWEEP_DEV_LEN - 1);
	memcpy(dst, json_string_value(v), json_string_length(v) + 1);
	return FL_OK;
}

/* The pair's samples where the file has them (saved since the sweep judges with the model). */
static int read_samples(json_t *p, const char *path, size_t i, struct sweep_base_pair *b)
{
	int rc = pair_figure(p, "iterations", false, BASELINE_MAX_ITERS, path, i, &b->iters);

	rc = rc ? rc : pair_figure(p, "p50_us", false, BASELINE_MAX_US, path, i, &b->p50_us);
	rc = rc ? rc : pair_figure(p, "p99_us", false, BASELINE_MAX_US, path, i, &b->p99_us);
	if (!rc && (b->p50_us > 0) != (b->p99_us > 0))
		rc = shim_fail(FL_ERR_USAGE, "%s: pairs[%zu]: p50_us and p99_us go together", path,
			       i);
	if (!rc && b->p99_us < b->p50_us)
		rc = shim_fail(FL_ERR_USAGE, "%s: pairs[%zu].p99_us: %g is below p50_us %g", path,
			       i, b->p99_us, b->p50_us);
	return rc;
}

static int read_pair(json_t *p, const char *path, size_t i, struct sweep_base_pair *b)
{
	double ignored;
	int rc;

	if (!json_is_object(p))
		return shim_fail(FL_ERR_USAGE, "%s: pairs[%zu]: expected an object {src, dst, "
				 "busbw_gbs, ...}", path, i);
	rc = pair_name(p, "src", path, i, b->src);
	rc = rc ? rc : pair_name(p, "dst", path, i, b->dst);
	rc = rc ? rc : pair_figure(p, "busbw_gbs", true, BASELINE_MAX_GBS, path, i, &b->gbs);
	rc = rc ? rc : pair_figure(p, "algbw_gbs", false, BASELINE_MAX_GBS, path, i, &ignored);
	rc = rc ? rc : pair_figure(p, "time_us", false, BASELINE_MAX_US, path, i, &ignored);
	rc = rc ? rc : pair_dev(p, "src_dev", path, i, b->src_dev);
	rc = rc ? rc : pair_dev(p, "dst_dev", path, i, b->dst_dev);
	rc = rc ? rc : read_samples(p, path, i, b);
	if (!rc && !strcasecmp(b->src, b->dst))
		rc = shim_fail(FL_ERR_USAGE, "%s: pairs[%zu]: src and dst are the same node (%s)",
			       path, i, b->src);
	b->index = i;
	return rc;
}

/* Sorted, each directed pair once: NODE1 beside node1 would hold one pair to two figures. */
static int check_repeats(const struct sweep_baseline *base, const char *path)
{
	for (size_t i = 1; i < base->npairs; i++) {
		const struct sweep_base_pair *a = &base->pairs[i - 1], *b = &base->pairs[i];

		if (!cmp_names(a->src, a->dst, b->src, b->dst))
			return shim_fail(FL_ERR_USAGE, "%s: pairs[%zu] (%s -> %s) repeats pairs[%zu] "
					 "(%s -> %s): each directed pair once (node names compare "
					 "without case)", path, b->index, b->src, b->dst,
					 a->index, a->src, a->dst);
	}
	return FL_OK;
}

static int load_pairs(json_t *pairs, const char *path, struct sweep_baseline *base)
{
	size_t n = json_array_size(pairs), i;
	json_t *p;
	int rc = FL_OK;

	base->pairs = calloc(n + 1, sizeof(*base->pairs));
	if (!base->pairs)
		return shim_fail(FL_ERR_SYSTEM, "out of memory");
	json_array_foreach(pairs, i, p) {
		rc = read_pair(p, path, i, &base->pairs[i]);
		if (rc)
			break;
	}
	base->npairs = rc ? 0 : n;
	qsort(base->pairs, base->npairs, sizeof(*base->pairs), cmp_pairs);
	return rc ? rc : check_repeats(base, path);
}

/* An optional string of the header, kept escaped (it is shown). */
static int header_text(json_t *root, const char *key, const char *path, char *dst, size_t len)
{
	json_t *v = json_object_get(root, key);

	if (!v)
		return FL_OK;
	if (!json_is_string(v))
		return shim_fail(FL_ERR_USAGE, "%s: %s: expected a string", path, key);
	tool_text_escape(dst, len, json_string_value(v));
	return FL_OK;
}

static int read_header(json_t *root, const char *path, struct sweep_baseline *base)
{
	json_t *format = json_object_get(root, "format"), *version, *bytes;
	int rc;

	if (!json_is_object(root) || !json_is_string(format) ||
	    strcmp(json_string_value(format), FORMAT))
		return shim_fail(FL_ERR_USAGE, "%s: not a sweep baseline (expected \"format\": \""
				 FORMAT "\"; written by `fabriclab sweep --save`)", path);
	version = json_object_get(root, "format_version");
	if (!json_is_integer(version))
		return shim_fail(FL_ERR_USAGE, "%s: format_version: %s, expected %d", path,
				 version ? "not an integer" : "missing", FORMAT_VERSION);
	if (json_integer_value(version) != FORMAT_VERSION)
		return shim_fail(FL_ERR_USAGE, "%s: format_version %lld: this fabriclab reads "
				 "format_version %d only (save the baseline again with `fabriclab "
				 "sweep --save`)", path, (long long)json_integer_value(version),
				 FORMAT_VERSION);
	bytes = json_object_get(root, "bytes");
	if (!json_is_integer(bytes) || json_integer_value(bytes) <= 0 ||
	    (uint64_t)json_integer_value(bytes) > SIZE_MAX)
		return shim_fail(FL_ERR_USAGE, "%s: bytes: expected a positive integer (the "
				 "largest message size measured)", path);
	base->bytes = (size_t)json_integer_value(bytes);
	snprintf(base->created, sizeof(base->created), "?");
	snprintf(base->version, sizeof(base->version), "?");
	rc = header_text(root, "created", path, base->created, sizeof(base->created));
	rc = rc ? rc : header_text(root, "fabriclab", path, base->version, sizeof(base->version));
	if (!rc && !json_is_array(json_object_get(root, "pairs")))
		rc = shim_fail(FL_ERR_USAGE, "%s: pairs: expected an array of {src, dst, "
			       "busbw_gbs}", path);
	return rc;
}

int sweep_baseline_load(const char *path, struct sweep_baseline *base)
{
	json_error_t err;
	json_t *root;
	size_t len;
	char *text;
	int rc;

	*base = (struct sweep_baseline){ 0 };
	/* a regular file only, its size checked before it is read: a FIFO would block */
	if (fl_read_regular(path, BASELINE_MAX_BYTES, &text, &len))
		return shim_fail(FL_ERR_USAGE, "%s", fl_error_text());
	root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &err);
	free(text);
	if (!root)
		return shim_fail(FL_ERR_USAGE, "%s: line %d, column %d: %s", path, err.line,
				 err.column, err.text);
	rc = read_header(root, path, base);
	rc = rc ? rc : load_pairs(json_object_get(root, "pairs"), path, base);
	json_decref(root);
	if (rc)
		sweep_baseline_free(base);
	return rc;
}

void sweep_baseline_free(struct sweep_baseline *base)
{
	free(base->pairs);
	*base = (struct sweep_baseline){ 0 };
}

double sweep_baseline_find(const struct sweep_baseline *base, const char *src, const char *dst)
{
	char src_kept[TOOL_TEXT_ESCAPE_LEN * SWEEP_NAME_LEN], dst_kept[sizeof(src_kept)];
	size_t lo = 0, hi = base->npairs;

	/* a name that is not printable UTF-8 was saved escaped */
	if (tool_text_needs_escape(src) || tool_text_needs_escape(dst)) {
		tool_text_escape(src_kept, sizeof(src_kept), src);
		tool_text_escape(dst_kept, sizeof(dst_kept), dst);
		src = src_kept;
		dst = dst_kept;
	}
	while (lo < hi) { /* the pairs are sorted by cmp_names, without repeats */
		size_t mid = lo + (hi - lo) / 2;
		const struct sweep_base_pair *p = &base->pairs[mid];
		int c = cmp_names(p->src, p->dst, src, dst);

		if (!c)
			return p->gbs;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}
