#include "json_out.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "fl_types.h"

int fl_json_init(struct fl_json *j)
{
	memset(j, 0, sizeof(*j));
	j->empty[0] = 1;
	j->f = open_memstream(&j->buf, &j->len);
	if (!j->f)
		return fl_fail(FL_ERR_SYSTEM, "out of memory for a JSON document");
	return FL_OK;
}

static void newline(struct fl_json *j)
{
	if (j->inline_from)
		return;
	fputc('\n', j->f);
	for (int i = 0; i < j->depth; i++)
		fputs("  ", j->f);
}

/* Comma, line break and key before a value. */
static void member(struct fl_json *j, const char *key)
{
	if (!j->empty[j->depth])
		fputc(',', j->f);
	if (j->depth) {
		if (j->inline_from && !j->empty[j->depth])
			fputc(' ', j->f);
		newline(j);
	}
	j->empty[j->depth] = 0;
	if (key) {
		fl_json_put_string(j->f, key);
		fputs(": ", j->f);
	}
}

static void open_container(struct fl_json *j, const char *key, char bracket, int is_inline)
{
	member(j, key);
	fputc(bracket, j->f);
	if (j->depth == FL_JSON_MAX_DEPTH) {
		j->failed = 1;
		return;
	}
	j->depth++;
	j->empty[j->depth] = 1;
	j->closer[j->depth] = bracket == '{' ? '}' : ']';
	if (is_inline && !j->inline_from)
		j->inline_from = j->depth;
}

void fl_json_object(struct fl_json *j, const char *key)
{
	open_container(j, key, '{', 0);
}

void fl_json_array(struct fl_json *j, const char *key)
{
	open_container(j, key, '[', 0);
}

void fl_json_object_inline(struct fl_json *j, const char *key)
{
	open_container(j, key, '{', 1);
}

void fl_json_array_inline(struct fl_json *j, const char *key)
{
	open_container(j, key, '[', 1);
}

void fl_json_end(struct fl_json *j)
{
	int d = j->depth;

	if (!d) {
		j->failed = 1;
		return;
	}
	j->depth--;
	if (j->inline_from == d)
		j->inline_from = 0;
	else if (!j->empty[d])
		newline(j);
	fputc(j->closer[d], j->f);
}

static void put_utf8_or_replacement(FILE *f, const unsigned char **p)
{
	const unsigned char *s = *p;
	int len = 0;
	uint32_t cp;

	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4;
	if (len) {
		cp = s[0] & (0x7f >> len);
		for (int i = 1; i < len; i++) {
			if ((s[i] & 0xc0) != 0x80) {
				len = 0;
				break;
			}
			cp = (cp << 6) | (s[i] & 0x3f);
		}
		/* Overlong forms, surrogates and code points past U+10FFFF are not UTF-8. */
		if (len && ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
			    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff))
			len = 0;
	}
	if (!len) {
		fputs("\\ufffd", f);
		*p = s + 1;
		return;
	}
	fwrite(s, 1, (size_t)len, f);
	*p = s + len;
}

void fl_json_put_string(FILE *f, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;

	fputc('"', f);
	while (*s) {
		unsigned char c = *s;

		if (c >= 0x80) {
			put_utf8_or_replacement(f, &s);
			continue;
		}
		s++;
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c == '\n')
			fputs("\\n", f);
		else if (c == '\t')
			fputs("\\t", f);
		else if (c == '\r')
			fputs("\\r", f);
		else if (c < 0x20 || c == 0x7f)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

void fl_json_string(struct fl_json *j, const char *key, const char *value)
{
	member(j, key);
	if (value)
		fl_json_put_string(j->f, value);
	else
		fputs("null", j->f);
}

void fl_json_int(struct fl_json *j, const char *key, int64_t value)
{
	member(j, key);
	fprintf(j->f, "%" PRId64, value);
}

void fl_json_uint(struct fl_json *j, const char *key, uint64_t value)
{
	member(j, key);
	fprintf(j->f, "%" PRIu64, value);
}

void fl_json_double(struct fl_json *j, const char *key, double value)
{
	char text[64];

	member(j, key);
	if (!isfinite(value)) {
		fputs("null", j->f);
		return;
	}
	snprintf(text, sizeof(text), "%.12g", value);
	/* A host program may have set a locale whose decimal point is a comma. */
	for (char *c = text; *c; c++)
		if (*c == ',')
			*c = '.';
	fputs(text, j->f);
}

void fl_json_bool(struct fl_json *j, const char *key, int value)
{
	member(j, key);
	fputs(value ? "true" : "false", j->f);
}

void fl_json_null(struct fl_json *j, const char *key)
{
	member(j, key);
	fputs("null", j->f);
}

int fl_json_finish(struct fl_json *j, char **text, size_t *len)
{
	int bad = j->failed || j->depth || ferror(j->f);

	if (!bad)
		fputc('\n', j->f);
	if (fclose(j->f) || bad) {
		free(j->buf);
		*text = NULL;
		*len = 0;
		return fl_fail(FL_ERR_INTERNAL, "JSON document %s",
			       j->depth ? "left open" : "could not be built (out of memory?)");
	}
	*text = j->buf;
	*len = j->len;
	return FL_OK;
}
