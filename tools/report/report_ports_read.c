/*
 * A report's `ports` (docs/report-format.md, "ports"), each element parsed
 * from the file's text into a table (report_hop_json.h) like the hops: a
 * fleet's 131 072 reports each list their node's ports, and jansson's tree of
 * them was most of the time spent reading such a fleet.
 */
#include <stdlib.h>
#include <string.h>

#include "plugin/base/error.h"
#include "report.h"
#include "report_fields.h"
#include "report_hop_json.h"
#include "report_hops_text.h"
#include "tools/common/tool_text.h"

#define RISING_LEN 320 /* the text of one port's rising counters, at most */

static struct report_value field(const struct report_json *j, const struct report_json_node *obj,
				 const char *key)
{
	return report_value_hop(j, report_json_get(j, obj, key));
}

static int get_string(const struct report_reader *r, const struct report_json *j,
		      const struct report_json_node *obj, const char *key, char *dst, size_t len,
		      bool required)
{
	struct report_value v = field(j, obj, key);

	return report_take_string(r, key, &v, required, dst, len);
}

/* "rx_pause_ctrl_phy +5" onto text: the counter's name after its source, escaped (it is shown). */
static size_t add_rising(const struct report_json *j, const struct report_json_node *name,
			 long long delta, char *text, size_t used)
{
	const char *n = report_json_str(j, name), *slash = memchr(n, '/', name->u.s.len);
	size_t from = slash ? (size_t)(slash + 1 - n) : 0, len = name->u.s.len - from;
	char raw[256], shown[64];
	int w;

	/* what is shown is at most 63 bytes of it: the first 255 are enough to escape */
	len = len < sizeof(raw) ? len : sizeof(raw) - 1;
	memcpy(raw, n + from, len);
	raw[len] = '\0';
	tool_text_escape(shown, sizeof(shown), raw);
	w = snprintf(text + used, RISING_LEN - used, "%s%s +%lld", used ? ", " : "", shown, delta);
	return w > 0 && used + (size_t)w < RISING_LEN ? used + (size_t)w : used;
}

/* "symbol_error +60, rx_pause_ctrl_phy +5" from [{counter, delta, severity}]. */
static int get_rising(const struct report_reader *r, const struct report_json *j,
		      struct report_arena *texts, struct report_port *out)
{
	const struct report_json_node *arr = report_json_get(j, report_json_root(j), "rising");
	char text[RISING_LEN] = "";
	size_t used = 0;

	out->rising = "";
	if (!arr || arr->type == REPORT_JSON_NULL)
		return 0;
	if (arr->type != REPORT_JSON_ARRAY)
		return report_bad(r, "rising", "expected an array");
	for (const struct report_json_node *e = report_json_first(j, arr); e;
	     e = report_json_next(j, arr, e)) {
		const struct report_json_node *name = report_json_get(j, e, "counter");
		const struct report_json_node *delta = report_json_get(j, e, "delta");
		const struct report_json_node *sev = report_json_get(j, e, "severity");

		if (!name || name->type != REPORT_JSON_STRING || !delta ||
		    delta->type != REPORT_JSON_INTEGER)
			return report_bad(r, "rising",
					  "expected {counter, delta, severity} objects");
		used = add_rising(j, name, delta->u.i, text, used);
		out->errors_rising |= sev && sev->type == REPORT_JSON_STRING &&
				      sev->u.s.len == 5 && !memcmp(report_json_str(j, sev), "error", 5);
	}
	if (used && !(out->rising = report_arena_text(texts, text)))
		return fl_fail(FL_ERR_SYSTEM, "%s: out of memory", r->path);
	return 0;
}

static int get_bits(const struct report_reader *r, const struct report_json *j,
		    const struct report_json_node *q, const char *key, bool *have,
		    bool bits[FL_QOS_PRIOS])
{
	char text[32] = "";
	int err = get_string(r, j, q, key, text, sizeof(text), false);

	*have = !err && text[0];
	if (*have && !fl_qos_parse_bits(text, bits))
		return report_bad(r, key, "eight 0/1 in priority order, like \"00010000\"");
	return err;
}

/* `qos`: null or absent where the writer knew nothing (older reports, InfiniBand). */
static int get_qos(const struct report_reader *r, const struct report_json *j,
		   struct fl_port_qos *q)
{
	const struct report_json_node *obj = report_json_get(j, report_json_root(j), "qos");
	bool have_np = false, have_rp = false;
	int err;

	if (!obj || obj->type == REPORT_JSON_NULL)
		return 0;
	if (obj->type != REPORT_JSON_OBJECT)
		return fl_fail(FL_ERR_USAGE, "%s: %s: expected an object", r->path, r->where);
	err = get_string(r, j, obj, "trust", q->trust, sizeof(q->trust), false);
	if (!err && q->trust[0] && strcmp(q->trust, "pcp") && strcmp(q->trust, "dscp"))
		return report_bad(r, "trust", "\"pcp\", \"dscp\" or null");
	q->have_trust = q->trust[0] != '\0';
	err = err ? err : get_bits(r, j, obj, "pfc", &q->have_pfc, q->pfc);
	err = err ? err : get_bits(r, j, obj, "ecn_np", &have_np, q->ecn_np);
	err = err ? err : get_bits(r, j, obj, "ecn_rp", &have_rp, q->ecn_rp);
	q->have_ecn = have_np && have_rp;
	return err;
}

static int get_flags(const struct report_reader *r, const struct report_json *j,
		     struct report_port *out)
{
	const struct report_json_node *p = report_json_root(j);
	struct report_value active = field(j, p, "active"), down = field(j, p, "trained_down");
	struct report_value gbps = field(j, p, "active_gbps"), max = field(j, p, "max_gbps");
	struct report_value secs = field(j, p, "delta_seconds");
	int err = report_take_bool(r, "active", &active, &out->active);

	err = err ? err : report_take_bool(r, "trained_down", &down, &out->trained_down);
	err = err ? err : report_take_number(r, "active_gbps", &gbps, false, &out->active_gbps);
	err = err ? err : report_take_number(r, "max_gbps", &max, false, &out->max_gbps);
	return err ? err : report_take_number(r, "delta_seconds", &secs, false, &out->seconds);
}

static int read_port(const struct report_reader *r, const struct report_json *j, const char *node,
		     struct report_arena *texts, struct report_port *out)
{
	const struct report_json_node *p = report_json_root(j);
	int err;

	memset(out, 0, sizeof(*out));
	out->rising = "";
	snprintf(out->node, sizeof(out->node), "%s", node);
	if (p->type != REPORT_JSON_OBJECT)
		return fl_fail(FL_ERR_USAGE, "%s: %s: expected an object", r->path, r->where);
	err = get_string(r, j, p, "name", out->name, sizeof(out->name), true);
	err = err ? err : get_string(r, j, p, "device", out->device, sizeof(out->device), false);
	err = err ? err : get_string(r, j, p, "netdev", out->netdev, sizeof(out->netdev), false);
	err = err ? err : get_flags(r, j, out);
	err = err ? err : get_qos(r, j, &out->qos);
	return err ? err : get_rising(r, j, texts, out);
}

static int add_port(const char *path, struct report_file *f, size_t *cap)
{
	struct report_port *more;

	if (f->nports < *cap)
		return 0;
	*cap = *cap ? 2 * *cap : 8;
	if (!(more = realloc(f->ports, *cap * sizeof(*more))))
		return fl_fail(FL_ERR_SYSTEM, "%s: out of memory", path);
	f->ports = more;
	return 0;
}

static int read_stream(const char *path, struct report_hops_text *stream, struct report_json *j,
		       struct report_arena *texts, struct report_file *f)
{
	struct report_reader r = { path, "" };
	size_t cap = 0;
	int err = 0;

	for (size_t i = 0; !err && report_hops_take(path, stream, j, &err) > 0; i++) {
		struct report_reader at = report_reader_at(&r, "ports", i);

		err = add_port(path, f, &cap);
		err = err ? err : read_port(&at, j, f->node, texts, &f->ports[f->nports]);
		f->nports += !err;
	}
	return err;
}

/* A `ports` the text scan did not find (not an array, or in a tree parsed whole). */
static int read_tree(const char *path, json_t *root, struct report_json *j,
		     struct report_arena *texts, struct report_file *f)
{
	struct report_reader r = { path, "" };
	struct report_hops_text stream;
	json_free_t give_back;
	json_t *arr;
	char *text;
	int err = report_get_array(&r, root, "ports", false, &arr);

	if (err || !arr)
		return err;
	if (!(text = json_dumps(arr, JSON_COMPACT)))
		return fl_fail(FL_ERR_SYSTEM, "%s: out of memory", path);
	report_hops_of_array(text, strlen(text), &stream);
	err = read_stream(path, &stream, j, texts, f);
	json_get_alloc_funcs(NULL, &give_back); /* jansson's: in the loader's arena, if on */
	give_back(text);
	return err;
}

int report_read_ports(const char *path, json_t *root, struct report_hops_text *stream,
		      struct report_json *j, struct report_arena *texts, struct report_file *f)
{
	const struct report_port *active = NULL;
	int err = stream ? read_stream(path, stream, j, texts, f)
			 : read_tree(path, root, j, texts, f);

	for (size_t i = 0; !err && i < f->nports && !active; i++)
		active = f->ports[i].active ? &f->ports[i] : NULL;
	for (size_t v = 0; active && v < f->nviews; v++) {
		f->views[v].v.rdma_port_active = true;
		f->views[v].v.rdma_port = active->name; /* f->ports lives as long as the set */
	}
	return err;
}
