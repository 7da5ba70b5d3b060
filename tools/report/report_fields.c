/*
 * Checked reads of report fields (report_fields.h): one set of rules and one
 * message form for every part of a report, so the same mistake reads the same
 * wherever it is.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugin/base/error.h"
#include "plugin/base/fl_types.h"
#include "report_fields.h"
#include "report_hop_json.h"
#include "tools/common/tool_text.h"

/* "<list>[i]" with list cut at 40 bytes: once per hop or port, so without snprintf's cost. */
struct report_reader report_reader_at(const struct report_reader *r, const char *list, size_t i)
{
	struct report_reader sub = { r->path, "" };
	char digits[24];
	size_t n = 0, len = strnlen(list, 40);

	do
		digits[n++] = (char)('0' + i % 10);
	while ((i /= 10));
	memcpy(sub.where, list, len);
	sub.where[len++] = '[';
	while (n)
		sub.where[len++] = digits[--n];
	memcpy(sub.where + len, "]", 2);
	return sub;
}

int report_bad(const struct report_reader *r, const char *key, const char *what)
{
	return fl_fail(FL_ERR_USAGE, "%s: %s%s%s: %s", r->path, r->where, *r->where ? "." : "", key,
		       what);
}

int report_expect_object(const struct report_reader *r, json_t *obj)
{
	if (json_is_object(obj))
		return 0;
	return fl_fail(FL_ERR_USAGE, "%s: %s: expected an object", r->path, r->where);
}

json_t *report_field(const struct report_reader *r, json_t *obj, const char *key, bool required,
		     int *err)
{
	json_t *v = json_object_get(obj, key);

	if (v && json_is_null(v))
		v = NULL;
	*err = !v && required ? report_bad(r, key, "missing") : 0;
	return v;
}

struct report_value report_value_json(json_t *v)
{
	struct report_value out = { REPORT_VALUE_ABSENT, 0, 0.0, NULL, 0 };

	switch (v ? json_typeof(v) : JSON_NULL) {
	case JSON_OBJECT: out.type = REPORT_JSON_OBJECT; break;
	case JSON_ARRAY: out.type = REPORT_JSON_ARRAY; break;
	case JSON_STRING:
		out.type = REPORT_JSON_STRING;
		out.s = json_string_value(v);
		out.len = json_string_length(v);
		break;
	case JSON_INTEGER:
		out.type = REPORT_JSON_INTEGER;
		out.i = json_integer_value(v);
		out.d = (double)out.i;
		break;
	case JSON_REAL:
		out.type = REPORT_JSON_REAL;
		out.d = json_real_value(v);
		break;
	case JSON_TRUE: out.type = REPORT_JSON_TRUE; break;
	case JSON_FALSE: out.type = REPORT_JSON_FALSE; break;
	case JSON_NULL: out.type = v ? REPORT_JSON_NULL : REPORT_VALUE_ABSENT; break;
	}
	return out;
}

struct report_value report_value_hop(const struct report_json *j,
				     const struct report_json_node *n)
{
	struct report_value out = { REPORT_VALUE_ABSENT, 0, 0.0, NULL, 0 };

	if (!n)
		return out;
	out.type = n->type;
	if (n->type == REPORT_JSON_STRING) {
		out.s = report_json_str(j, n);
		out.len = n->u.s.len;
	} else if (n->type == REPORT_JSON_INTEGER) {
		out.i = n->u.i;
		out.d = (double)n->u.i;
	} else if (n->type == REPORT_JSON_REAL) {
		out.d = n->u.d;
	}
	return out;
}

bool report_value_given(const struct report_value *v)
{
	return v->type != REPORT_VALUE_ABSENT && v->type != REPORT_JSON_NULL;
}

/* Absent or null: "missing" when required (-> *err), else nothing to take. */
static bool take(const struct report_reader *r, const char *key, const struct report_value *v,
		 bool required, int *err)
{
	bool given = report_value_given(v);

	*err = !given && required ? report_bad(r, key, "missing") : 0;
	return given;
}

int report_take_string(const struct report_reader *r, const char *key,
		       const struct report_value *v, bool required, char *dst, size_t len)
{
	char small[256], *raw = small;
	bool cut = v->len >= len;
	int err;

	if (!take(r, key, v, required, &err))
		return err;
	if (v->type != REPORT_JSON_STRING)
		return report_bad(r, key, "expected a string");
	/*
	 * Control characters (\u001b...) are kept escaped as \xNN: every output shows
	 * the names, and a terminal or an SVG must not take them for its own. A hop's
	 * string is a span of the file's text: it is ended with a NUL here.
	 */
	if (!cut) {
		if (v->len >= sizeof(small) && !(raw = malloc(v->len + 1)))
			return fl_fail(FL_ERR_SYSTEM, "%s: out of memory", r->path);
		memcpy(raw, v->s, v->len);
		raw[v->len] = '\0';
		cut = tool_text_escape(dst, len, raw) >= len;
		if (raw != small)
			free(raw);
	}
	if (cut) {
		char what[96];

		snprintf(what, sizeof(what), "longer than %zu characters%s", len - 1,
			 v->len < len ? " with its control characters escaped" : "");
		return report_bad(r, key, what);
	}
	return 0;
}

int report_take_int(const struct report_reader *r, const char *key, const struct report_value *v,
		    bool required, long long min, long long *out)
{
	int err;

	if (!take(r, key, v, required, &err))
		return err;
	if (v->type != REPORT_JSON_INTEGER || v->i < min)
		return report_bad(r, key, min == 0 ? "expected a non-negative integer"
						   : "expected an integer");
	*out = v->i;
	return 0;
}

int report_take_uint(const struct report_reader *r, const char *key,
		     const struct report_value *v, uint64_t *out)
{
	long long x = 0;
	int err = report_take_int(r, key, v, true, 0, &x);

	*out = (uint64_t)x;
	return err;
}

int report_take_number(const struct report_reader *r, const char *key,
		       const struct report_value *v, bool required, double *out)
{
	int err;

	if (!take(r, key, v, required, &err))
		return err;
	if ((v->type != REPORT_JSON_INTEGER && v->type != REPORT_JSON_REAL) || !isfinite(v->d) ||
	    v->d < 0)
		return report_bad(r, key, "expected a non-negative number");
	*out = v->d;
	return 0;
}

int report_take_bool(const struct report_reader *r, const char *key, const struct report_value *v,
		     bool *out)
{
	int err;

	if (!take(r, key, v, false, &err))
		return 0;
	if (v->type != REPORT_JSON_TRUE && v->type != REPORT_JSON_FALSE)
		return report_bad(r, key, "expected true or false");
	*out = v->type == REPORT_JSON_TRUE;
	return 0;
}

int report_get_string(const struct report_reader *r, json_t *obj, const char *key, bool required,
		      char *dst, size_t len)
{
	struct report_value v = report_value_json(json_object_get(obj, key));

	return report_take_string(r, key, &v, required, dst, len);
}

int report_get_int(const struct report_reader *r, json_t *obj, const char *key, bool required,
		   long long min, long long *out)
{
	struct report_value v = report_value_json(json_object_get(obj, key));

	return report_take_int(r, key, &v, required, min, out);
}

int report_get_uint(const struct report_reader *r, json_t *obj, const char *key, uint64_t *out)
{
	struct report_value v = report_value_json(json_object_get(obj, key));

	return report_take_uint(r, key, &v, out);
}

int report_get_number(const struct report_reader *r, json_t *obj, const char *key, bool required,
		      double *out)
{
	struct report_value v = report_value_json(json_object_get(obj, key));

	return report_take_number(r, key, &v, required, out);
}

int report_get_bool(const struct report_reader *r, json_t *obj, const char *key, bool *out)
{
	struct report_value v = report_value_json(json_object_get(obj, key));

	return report_take_bool(r, key, &v, out);
}

int report_get_array(const struct report_reader *r, json_t *obj, const char *key, bool required,
		     json_t **out)
{
	int err;

	*out = report_field(r, obj, key, required, &err);
	if (err || !*out)
		return err;
	if (!json_is_array(*out))
		return report_bad(r, key, "expected an array");
	return 0;
}
