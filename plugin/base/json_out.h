/*
 * A small JSON writer into memory (the plugin links nothing but libc). Members
 * are written in order; `key` is NULL for array elements and the top value.
 * Strings are escaped, and bytes that are not valid UTF-8 become U+FFFD, so
 * any node or device name gives a file every JSON parser accepts. Containers
 * are indented two spaces, except "inline" ones, which stay on one line.
 * Errors (out of memory, nesting too deep) are sticky and reported by the end.
 */
#ifndef FL_JSON_OUT_H
#define FL_JSON_OUT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define FL_JSON_MAX_DEPTH 16

struct fl_json {
	FILE *f;
	char *buf;
	size_t len;
	int depth;
	int inline_from; /* depth of the outermost inline container, 0 when none */
	int failed;
	unsigned char empty[FL_JSON_MAX_DEPTH + 1]; /* nothing written yet at this depth */
	char closer[FL_JSON_MAX_DEPTH + 1];
};

int fl_json_init(struct fl_json *j);
void fl_json_object(struct fl_json *j, const char *key);
void fl_json_array(struct fl_json *j, const char *key);
void fl_json_array_inline(struct fl_json *j, const char *key);
void fl_json_object_inline(struct fl_json *j, const char *key);
void fl_json_end(struct fl_json *j);
void fl_json_string(struct fl_json *j, const char *key, const char *value); /* NULL: null */
void fl_json_int(struct fl_json *j, const char *key, int64_t value);
void fl_json_uint(struct fl_json *j, const char *key, uint64_t value);
void fl_json_double(struct fl_json *j, const char *key, double value); /* not finite: null */
void fl_json_bool(struct fl_json *j, const char *key, int value);
void fl_json_null(struct fl_json *j, const char *key);
/*
 * Closes the writer. On success *text is a malloc'd NUL-terminated document
 * (the caller frees it) and FL_OK is returned; else an error with fl_fail text.
 */
int fl_json_finish(struct fl_json *j, char **text, size_t *len);

/* Writes s as a JSON string literal, quotes included. */
void fl_json_put_string(FILE *f, const char *s);

#endif
