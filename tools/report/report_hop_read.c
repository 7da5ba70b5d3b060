/*
 * A hop's fields from its parsed table (report_hop_read.h). What each field
 * means: docs/report-format.md, "hops".
 */
#include "report_hop_read.h"

#include <stdio.h>
#include <string.h>

#include "plugin/base/error.h"

static struct report_value field(const struct report_json *j, const struct report_json_node *obj,
				 const char *key)
{
	return report_value_hop(j, report_json_get(j, obj, key));
}

static int get_string(const struct report_reader *r, const struct report_json *j,
		      const struct report_json_node *obj, const char *key, bool required,
		      char *dst, size_t len)
{
	struct report_value v = field(j, obj, key);

	return report_take_string(r, key, &v, required, dst, len);
}

static int get_number(const struct report_reader *r, const struct report_json *j,
		      const struct report_json_node *obj, const char *key, bool required,
		      double *out)
{
	struct report_value v = field(j, obj, key);

	return report_take_number(r, key, &v, required, out);
}

static int get_uint(const struct report_reader *r, const struct report_json *j, const char *key,
		    uint64_t *out)
{
	struct report_value v = field(j, report_json_root(j), key);

	return report_take_uint(r, key, &v, out);
}

static int get_long(const struct report_reader *r, const struct report_json *j, const char *key,
		    long long min, long dflt, long *out)
{
	long long x = dflt;
	struct report_value v = field(j, report_json_root(j), key);
	int err = report_take_int(r, key, &v, false, min, &x);

	*out = (long)x;
	return err;
}

int report_memory_bit(const char *name, size_t len)
{
	if (len == 4 && !memcmp(name, "host", 4))
		return FL_PTR_HOST;
	if (len == 4 && !memcmp(name, "cuda", 4))
		return FL_PTR_CUDA;
	if (len == 6 && !memcmp(name, "dmabuf", 6))
		return FL_PTR_DMABUF;
	return 0;
}

/* ["host", "cuda", ...] -> FL_PTR_* bits. */
static int get_memory(const struct report_reader *r, const struct report_json *j, int *out)
{
	const struct report_json_node *a = report_json_get(j, report_json_root(j), "memory");

	*out = 0;
	if (!a || a->type == REPORT_JSON_NULL)
		return 0;
	if (a->type != REPORT_JSON_ARRAY)
		return report_bad(r, "memory", "expected an array of \"host\", \"cuda\", \"dmabuf\"");
	for (const struct report_json_node *e = report_json_first(j, a); e;
	     e = report_json_next(j, a, e)) {
		int bit = e->type == REPORT_JSON_STRING
				  ? report_memory_bit(report_json_str(j, e), e->u.s.len)
				  : 0;

		if (!bit)
			return report_bad(r, "memory", "expected only \"host\", \"cuda\" or \"dmabuf\"");
		*out |= bit;
	}
	return 0;
}

static int get_wire_time(const struct report_reader *r, const struct report_json *j,
			 struct report_view *v)
{
	struct report_reader sub = *r;
	const struct report_json_node *t = report_json_get(j, report_json_root(j), "wire_time_us");
	int err;

	if (!t || t->type == REPORT_JSON_NULL)
		return 0;
	if (t->type != REPORT_JSON_OBJECT)
		return report_bad(r, "wire_time_us", "expected an object {p50, p99, max}");
	snprintf(sub.where, sizeof(sub.where), "%.40s.wire_time_us", r->where);
	err = get_number(&sub, j, t, "p50", false, &v->p50_us);
	err = err ? err : get_number(&sub, j, t, "p99", false, &v->p99_us);
	err = err ? err : get_number(&sub, j, t, "alone", false, &v->alone);
	err = err ? err : get_number(&sub, j, t, "queued", false, &v->queued);
	err = err ? err : get_number(&sub, j, t, "alone_p50", false, &v->alone_p50_us);
	err = err ? err : get_number(&sub, j, t, "queued_p50", false, &v->queued_p50_us);
	return err ? err : get_number(&sub, j, t, "max", false, &v->max_us);
}

static int size_bucket(uint64_t floor_bytes)
{
	int b = 0;

	while (b + 1 < REPORT_SIZE_BUCKETS && (floor_bytes >> (b + 1)))
		b++;
	return b;
}

/* One [floor_bytes, count] pair into counts; false when it is not one. */
static bool size_pair(const struct report_json *j, const struct report_json_node *pair,
		      uint64_t counts[REPORT_SIZE_BUCKETS])
{
	const struct report_json_node *f = report_json_first(j, pair);
	const struct report_json_node *c = f ? report_json_next(j, pair, f) : NULL;

	if (pair->type != REPORT_JSON_ARRAY || pair->count != 2 || f->type != REPORT_JSON_INTEGER ||
	    c->type != REPORT_JSON_INTEGER || f->u.i < 0 || c->u.i < 0)
		return false;
	counts[size_bucket((uint64_t)f->u.i)] += (uint64_t)c->u.i;
	return true;
}

/* [[floor_bytes, count], ...] */
static int get_sizes(const struct report_reader *r, const struct report_json *j,
		     struct report_arena *sizes, struct report_view *v)
{
	uint64_t counts[REPORT_SIZE_BUCKETS] = { 0 };
	const struct report_json_node *h = report_json_get(j, report_json_root(j), "size_histogram");

	if (!h || h->type == REPORT_JSON_NULL)
		return 0;
	if (h->type != REPORT_JSON_ARRAY)
		return report_bad(r, "size_histogram",
				  "expected an array of [floor_bytes, count] pairs");
	for (const struct report_json_node *pair = report_json_first(j, h); pair;
	     pair = report_json_next(j, h, pair)) {
		if (!size_pair(j, pair, counts))
			return report_bad(r, "size_histogram",
				   "expected [floor_bytes, count] pairs of non-negative integers");
	}
	if (report_sizes_store(sizes, v, counts))
		return fl_fail(FL_ERR_SYSTEM, "%s: out of memory", r->path);
	return 0;
}

static int get_view_name(const struct report_reader *r, const struct report_json *j,
			 bool *is_send)
{
	char view[8] = "";
	int err = get_string(r, j, report_json_root(j), "view", true, view, sizeof(view));

	if (err)
		return err;
	if (strcmp(view, "send") && strcmp(view, "recv"))
		return report_bad(r, "view", "expected \"send\" or \"recv\"");
	*is_send = !strcmp(view, "send");
	return 0;
}

static int get_key(const struct report_reader *r, const struct report_json *j,
		   struct report_view_key *k)
{
	const struct report_json_node *hop = report_json_root(j);
	int err = get_string(r, j, hop, "src_node", true, k->src_node, sizeof(k->src_node));

	err = err ? err : get_string(r, j, hop, "src_dev", true, k->src_dev, sizeof(k->src_dev));
	err = err ? err : get_string(r, j, hop, "dst_node", true, k->dst_node, sizeof(k->dst_node));
	return err ? err : get_string(r, j, hop, "dst_dev", true, k->dst_dev, sizeof(k->dst_dev));
}

/* Older reports lack wire_bytes: the timed bytes are then what the rate and time imply. */
static int get_wire_bytes(const struct report_reader *r, const struct report_json *j,
			  struct report_view *v)
{
	if (!report_json_get(j, report_json_root(j), "wire_bytes")) {
		/* clamped as a double: a product past 2^64 has no integer to become */
		double implied = v->wire_gbs * 1e9 * v->wire_seconds;

		v->wire_bytes = !(implied > 0.0)		  ? 0
				: implied >= (double)v->bytes ? v->bytes
							      : (uint64_t)(implied + 0.5);
		return 0;
	}
	return get_uint(r, j, "wire_bytes", &v->wire_bytes);
}

/* Optional (older reports and sockets have none): RoCE or InfiniBand decides the commands. */
static int get_link_layer(const struct report_reader *r, const struct report_json *j,
			  struct report_view *v)
{
	int err = get_string(r, j, report_json_root(j), "link_layer", false, v->link_layer,
			     sizeof(v->link_layer));

	if (!err && v->link_layer[0] && strcmp(v->link_layer, FL_LINK_ETHERNET) &&
	    strcmp(v->link_layer, FL_LINK_INFINIBAND))
		return report_bad(r, "link_layer", "expected \"" FL_LINK_ETHERNET "\", \""
				  FL_LINK_INFINIBAND "\" or null");
	return err;
}

/* The figures every hop has; the rest of get_figures below. */
static int get_rates(const struct report_reader *r, const struct report_json *j,
		     struct report_view *v)
{
	const struct report_json_node *hop = report_json_root(j);
	int err = get_uint(r, j, "bytes", &v->bytes);

	err = err ? err : get_uint(r, j, "messages", &v->messages);
	err = err || !report_json_get(j, hop, "unsized_messages")
		      ? err
		      : get_uint(r, j, "unsized_messages", &v->unsized_messages);
	err = err ? err : get_number(r, j, hop, "wire_seconds", true, &v->wire_seconds);
	err = err ? err : get_number(r, j, hop, "wire_gbs", true, &v->wire_gbs);
	err = err ? err : get_wire_bytes(r, j, v);
	err = err || !report_json_get(j, hop, "wire_runs")
		      ? err
		      : get_uint(r, j, "wire_runs", &v->wire_runs);
	err = err ? err : get_number(r, j, hop, "line_rate_gbs", true, &v->line_rate_gbs);
	err = err ? err : get_number(r, j, hop, "active_seconds", true, &v->active_seconds);
	err = err ? err : get_number(r, j, hop, "peer_wait_seconds", true, &v->peer_wait_seconds);
	return err ? err
		   : get_number(r, j, hop, "outstanding_seconds", false, &v->outstanding_seconds);
}

static int get_figures(const struct report_reader *r, const struct report_json *j,
		       struct report_arena *sizes, struct report_view *v)
{
	struct report_value gdr;
	int err = get_rates(r, j, v);

	err = err ? err : get_long(r, j, "src_rank", -1, -1, &v->src_rank);
	err = err ? err : get_long(r, j, "dst_rank", -1, -1, &v->dst_rank);
	err = err ? err : get_long(r, j, "connections", 0, 1, &v->connections);
	err = err ? err : get_wire_time(r, j, v);
	err = err ? err : get_sizes(r, j, sizes, v);
	err = err ? err : get_memory(r, j, &v->mem_types);
	err = err ? err : get_link_layer(r, j, v);
	gdr = field(j, report_json_root(j), "gdr");
	return err ? err : report_take_bool(r, "gdr", &gdr, &v->gdr);
}

static bool device_capable(const struct report_hop_context *c, const char *name)
{
	for (size_t i = 0; i < c->ndevs; i++) {
		if (!strcmp(c->devs[i].name, name))
			return c->devs[i].gdr_capable;
	}
	return false;
}

int report_read_hop(const struct report_reader *r, const struct report_json *j,
		    const struct report_hop_context *c, struct report_file_view *out)
{
	const struct report_json_node *hop = report_json_root(j);
	struct report_view *v = &out->v;
	int err;

	memset(out, 0, sizeof(*out));
	if (hop->type != REPORT_JSON_OBJECT)
		return fl_fail(FL_ERR_USAGE, "%s: %s: expected an object", r->path, r->where);
	err = get_key(r, j, &out->key);
	err = err ? err : get_view_name(r, j, &out->is_send);
	snprintf(out->transport, sizeof(out->transport), "%s", c->transport);
	err = err ? err
		  : get_string(r, j, hop, "transport", !*c->transport, out->transport,
			       sizeof(out->transport));
	err = err ? err : get_figures(r, j, c->sizes, v);
	err = err ? err : report_read_hop_mode(r, j, out);
	if (err)
		return err;
	v->present = true;
	v->processes = 1;
	v->dev_gdr_capable = device_capable(c, out->is_send ? out->key.src_dev : out->key.dst_dev);
	return 0;
}
