/*
 * The baseline: one sweep kept as a file, so a later sweep (or the rejoin
 * gate) can hold each directed pair to what it did before. It keeps the
 * fabric's identity next to the figures (nodes, devices, line rates, the net
 * plugin ABI and fabriclab's version), so a comparison across a changed
 * fabric can say so. Only the largest size is compared.
 */
#include "sweep.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "plugin/base/version.h"
#include "plugin/report/report.h"
#include "shim/shim.h"

#define FORMAT "fabriclab-sweep-baseline"
#define FORMAT_VERSION 1

static json_t *nodes_json(const struct sweep_result *res)
{
	json_t *a = json_array();

	for (int i = 0; i < res->n; i++) {
		const struct sweep_node *n = &res->nodes[i];

		json_array_append_new(a, json_pack("{s:s, s:s, s:i, s:i, s:i}", "name", n->name,
						   "device", n->dev, "dev_index", n->dev_index,
						   "speed_mbps", n->speed_mbps, "net_abi",
						   n->net_version));
	}
	return a;
}

static json_t *pairs_json(const struct sweep_result *res)
{
	const struct sweep_size *s = &res->sizes[res->nsizes - 1];
	json_t *a = json_array();
	int n = res->n;

	for (int i = 0; i < n; i++) {
		for (int j = 0; j < n; j++) {
			double t = s->time_us[i * n + j], gbs = sweep_gbs(s->bytes, t);

			if (i == j || t < 0)
				continue;
			json_array_append_new(a, json_pack("{s:s, s:s, s:s, s:s, s:f, s:f, s:f}",
							   "src", res->nodes[i].name, "dst",
							   res->nodes[j].name, "src_dev",
							   res->nodes[i].dev, "dst_dev",
							   res->nodes[j].dev, "time_us", t,
							   "algbw_gbs", gbs, "busbw_gbs", gbs));
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

int sweep_baseline_save(const struct sweep_result *res, const char *path)
{
	char created[32], tmp[4096];
	json_t *root;
	int rc;

	utc_now(created, sizeof(created));
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
		remove(tmp);
		return shim_fail(FL_ERR_SYSTEM, "cannot write the baseline %s", path);
	}
	return FL_OK;
}

static int load_pairs(json_t *pairs, const char *path, struct sweep_baseline *base)
{
	size_t n = json_array_size(pairs), i;
	double *values;
	json_t *p;

	base->pairs = calloc(n + 1, sizeof(*base->pairs));
	values = calloc(n + 1, sizeof(*values));
	if (!base->pairs || !values) {
		free(values);
		return shim_fail(FL_ERR_SYSTEM, "out of memory");
	}
	json_array_foreach(pairs, i, p) {
		struct sweep_base_pair *b = &base->pairs[i];
		const char *src, *dst;

		if (json_unpack(p, "{s:s, s:s, s:F}", "src", &src, "dst", &dst, "busbw_gbs",
				&b->gbs) || b->gbs <= 0) {
			free(values);
			return shim_fail(FL_ERR_USAGE, "%s: pair %zu: expected src, dst and a "
					 "positive busbw_gbs", path, i);
		}
		snprintf(b->src, sizeof(b->src), "%s", src);
		snprintf(b->dst, sizeof(b->dst), "%s", dst);
		values[i] = b->gbs;
	}
	base->npairs = n;
	base->median_gbs = sweep_median(values, n);
	free(values);
	return FL_OK;
}

int sweep_baseline_load(const char *path, struct sweep_baseline *base)
{
	const char *format = "", *created = "?", *version = "?";
	json_int_t bytes = 0;
	json_t *root, *pairs = NULL;
	json_error_t err;
	int rc;

	*base = (struct sweep_baseline){ 0 };
	root = json_load_file(path, 0, &err);
	if (!root)
		return shim_fail(FL_ERR_USAGE, "%s: line %d: %s", path, err.line, err.text);
	if (json_unpack(root, "{s:s, s:I, s:o, s?:s, s?:s}", "format", &format, "bytes", &bytes,
			"pairs", &pairs, "created", &created, "fabriclab", &version) ||
	    strcmp(format, FORMAT) || bytes <= 0 || !json_is_array(pairs)) {
		json_decref(root);
		return shim_fail(FL_ERR_USAGE, "%s: not a sweep baseline (expected \"format\": \""
				 FORMAT "\", \"bytes\" and \"pairs\"; written by `fabriclab "
				 "sweep --save`)", path);
	}
	base->bytes = (size_t)bytes;
	snprintf(base->created, sizeof(base->created), "%s", created);
	snprintf(base->version, sizeof(base->version), "%s", version);
	rc = load_pairs(pairs, path, base);
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
	for (size_t i = 0; i < base->npairs; i++) {
		if (!strcasecmp(base->pairs[i].src, src) && !strcasecmp(base->pairs[i].dst, dst))
			return base->pairs[i].gbs;
	}
	return 0;
}
