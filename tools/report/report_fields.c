/*
 * Checked reads of report fields (report_fields.h): one set of rules and one
 * message form for every part of a report, so the same mistake reads the same
 * wherever it is.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "plugin/base/error.h"
#include "plugin/base/fl_types.h"
#include "report_fields.h"
#include "tools/common/tool_text.h"

struct report_reader report_reader_at(const struct report_reader *r, const char *list, size_t i)
{
	struct report_reader sub = { r->path, "" };

	snprintf(sub.where, sizeof(sub.where), "%.40s[%zu]", list, i);
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

int report_get_string(const struct report_reader *r, json_t *obj, const char *key, bool required,
		      char *dst, size_t len)
{
	int err;
	json_t *v = report_field(r, obj, key, required, &err);

	if (err || !v)
		return err;
	if (!json_is_string(v))
		return report_bad(r, key, "expected a string");
	/*
	 * Control characters (\u001b...) are kept escaped as \xNN: every output shows
	 * the names, and a terminal or an SVG must not take them for its own.
	 */
	if (json_string_length(v) >= len || tool_text_escape(dst, len, json_string_value(v)) >= len) {
		char what[96];

		snprintf(what, sizeof(what), "longer than %zu characters%s", len - 1,
			 json_string_length(v) < len ? " with its control characters escaped" : "");
		return report_bad(r, key, what);
	}
	return 0;
}

int report_get_int(const struct report_reader *r, json_t *obj, const char *key, bool required,
		   long long min, long long *out)
{
	int err;
	json_t *v = report_field(r, obj, key, required, &err);

	if (err || !v)
		return err;
	if (!json_is_integer(v) || json_integer_value(v) < min)
		return report_bad(r, key, min == 0 ? "expected a non-negative integer"
						   : "expected an integer");
	*out = json_integer_value(v);
	return 0;
}

int report_get_uint(const struct report_reader *r, json_t *obj, const char *key, uint64_t *out)
{
	long long x = 0;
	int err = report_get_int(r, obj, key, true, 0, &x);

	*out = (uint64_t)x;
	return err;
}

int report_get_number(const struct report_reader *r, json_t *obj, const char *key, bool required,
		      double *out)
{
	int err;
	json_t *v = report_field(r, obj, key, required, &err);

	if (err || !v)
		return err;
	if (!json_is_number(v) || !isfinite(json_number_value(v)) || json_number_value(v) < 0)
		return report_bad(r, key, "expected a non-negative number");
	*out = json_number_value(v);
	return 0;
}

int report_get_bool(const struct report_reader *r, json_t *obj, const char *key, bool *out)
{
	int err;
	json_t *v = report_field(r, obj, key, false, &err);

	if (!v)
		return 0;
	if (!json_is_boolean(v))
		return report_bad(r, key, "expected true or false");
	*out = json_is_true(v);
	return 0;
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
