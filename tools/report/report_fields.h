/*
 * Checked reads of one report's JSON fields, shared by every part of a report
 * (hops, ports, injected faults). A wrong value stops the run with the file,
 * the place in it ("hops[3]") and the field named, so the writer can be
 * found and fixed. A null counts as absent; a required field absent or null
 * is "missing".
 */
#ifndef FABRICLAB_REPORT_FIELDS_H
#define FABRICLAB_REPORT_FIELDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

struct report_json;
struct report_json_node;

struct report_reader {
	const char *path;
	char where[64]; /* "hops[3]", "" at top level */
};

/* A reader for element i of the top-level array `list` of r's file ("ports[2]"). */
struct report_reader report_reader_at(const struct report_reader *r, const char *list, size_t i);
/* FL_ERR_USAGE with "<path>: <where>.<key>: <what>". */
int report_bad(const struct report_reader *r, const char *key, const char *what);
/* FL_ERR_USAGE unless obj is a JSON object. */
int report_expect_object(const struct report_reader *r, json_t *obj);
/* obj's key, NULL when absent or null; *err set when it is required. */
json_t *report_field(const struct report_reader *r, json_t *obj, const char *key, bool required,
		     int *err);

/*
 * A field's value as the checks see it, read from jansson's tree (the report's
 * top level, ports, ranks...) or from a hop's table (report_hop_json.h): one
 * set of rules for both.
 */
struct report_value {
	int type;     /* REPORT_JSON_*, REPORT_VALUE_ABSENT when the key is not there */
	long long i;  /* an integer's value */
	double d;     /* a number's value, integer or real */
	const char *s; /* a string's bytes (no NUL among them), len of them */
	size_t len;
};
#define REPORT_VALUE_ABSENT (-1)

struct report_value report_value_json(json_t *v);
struct report_value report_value_hop(const struct report_json *j,
				     const struct report_json_node *n);

/*
 * The checks on a value: absent or null is "missing" when required, else
 * leaves *out (dst) as it was. Each report_get_* below is one of them on
 * obj's key.
 */
int report_take_string(const struct report_reader *r, const char *key,
		       const struct report_value *v, bool required, char *dst, size_t len);
int report_take_int(const struct report_reader *r, const char *key, const struct report_value *v,
		    bool required, long long min, long long *out);
int report_take_uint(const struct report_reader *r, const char *key,
		     const struct report_value *v, uint64_t *out);
int report_take_number(const struct report_reader *r, const char *key,
		       const struct report_value *v, bool required, double *out);
int report_take_bool(const struct report_reader *r, const char *key, const struct report_value *v,
		     bool *out);
/* The value is there and not null. */
bool report_value_given(const struct report_value *v);

/* Each leaves *out (dst) as it was when an optional field is absent. */
int report_get_string(const struct report_reader *r, json_t *obj, const char *key, bool required,
		      char *dst, size_t len);
/* An integer >= min. */
int report_get_int(const struct report_reader *r, json_t *obj, const char *key, bool required,
		   long long min, long long *out);
/* A required non-negative integer. */
int report_get_uint(const struct report_reader *r, json_t *obj, const char *key, uint64_t *out);
/* A finite non-negative number. */
int report_get_number(const struct report_reader *r, json_t *obj, const char *key, bool required,
		      double *out);
int report_get_bool(const struct report_reader *r, json_t *obj, const char *key, bool *out);
/* *out NULL when absent. */
int report_get_array(const struct report_reader *r, json_t *obj, const char *key, bool required,
		     json_t **out);

#endif
