/* A report's hops array read one element at a time (report_hops_text.h). */
#include "report_hops_text.h"

#include <stdio.h>
#include <string.h>

#include "plugin/base/error.h"
#include "plugin/base/fl_types.h"

static size_t skip_ws(const char *t, size_t i, size_t len)
{
	while (i < len && (t[i] == ' ' || t[i] == '\t' || t[i] == '\n' || t[i] == '\r'))
		i++;
	return i;
}

/*
 * The bytes the scan stops at: one look-up a byte, as these scans cross every
 * byte of a report's hops and ports once before they are parsed.
 */
enum { PLAIN, QUOTE, ESCAPE, OPEN, CLOSE };
static const unsigned char in_string[256] = { ['"'] = QUOTE, ['\\'] = ESCAPE };
static const unsigned char in_container[256] = { ['"'] = QUOTE, ['['] = OPEN, ['{'] = OPEN,
						 [']'] = CLOSE, ['}'] = CLOSE };

/* From the '"' at t[i]: the offset after the closing quote, or len. */
static size_t skip_string(const char *t, size_t i, size_t len)
{
	for (i++; i < len; i++) {
		while (i < len && !in_string[(unsigned char)t[i]])
			i++;
		if (i >= len)
			break;
		if (in_string[(unsigned char)t[i]] == QUOTE)
			return i + 1;
		i++; /* the escaped byte */
	}
	return len;
}

/* From the '[' or '{' at t[i]: the offset of the bracket that closes it, or len. */
static size_t skip_container(const char *t, size_t i, size_t len)
{
	size_t depth = 0;

	for (; i < len; i++) {
		while (i < len && !in_container[(unsigned char)t[i]])
			i++;
		if (i >= len)
			break;
		switch (in_container[(unsigned char)t[i]]) {
		case QUOTE: i = skip_string(t, i, len) - 1; break;
		case OPEN: depth++; break;
		default:
			if (--depth == 0)
				return i;
		}
	}
	return len;
}

/* The value at t[i] (ws skipped): the offset after it, or len. */
static size_t skip_value(const char *t, size_t i, size_t len)
{
	if (t[i] == '"')
		return skip_string(t, i, len);
	if (t[i] == '[' || t[i] == '{') {
		i = skip_container(t, i, len);
		return i < len ? i + 1 : len;
	}
	while (i < len && t[i] != ',' && t[i] != '}' && t[i] != ' ' && t[i] != '\n' &&
	       t[i] != '\t' && t[i] != '\r')
		i++;
	return i;
}

/* A key of the root object at t[key] (its '"'): "hops" or "ports"'s span, else NULL. */
static struct report_hops_text *wanted(const char *t, size_t key, size_t len,
				       struct report_streams *s)
{
	size_t end = skip_string(t, key, len);

	if (end == key + 6 && !memcmp(t + key, "\"hops\"", 6))
		return &s->hops;
	if (end == key + 7 && !memcmp(t + key, "\"ports\"", 7))
		return &s->ports;
	return NULL;
}

bool report_streams_find(const char *t, size_t len, struct report_streams *s)
{
	size_t i = skip_ws(t, 0, len);

	memset(s, 0, sizeof(*s));
	if (i >= len || t[i] != '{')
		return false;
	for (i++;;) {
		struct report_hops_text *h;
		size_t key;

		i = skip_ws(t, i, len);
		if (i >= len || t[i] != '"')
			break; /* "}" or not JSON: the parse of the rest says which */
		key = i;
		i = skip_ws(t, skip_string(t, i, len), len);
		if (i >= len || t[i] != ':')
			break;
		i = skip_ws(t, i + 1, len);
		if (i >= len)
			break;
		h = wanted(t, key, len, s);
		if (h && !h->text && t[i] == '[') { /* the first only: jansson refuses a second */
			size_t close = skip_container(t, i, len);

			if (close >= len)
				break;
			*h = (struct report_hops_text){ t, len, i, close, i + 1, 0 };
		}
		i = skip_ws(t, skip_value(t, i, len), len);
		if (i >= len || t[i] != ',')
			break;
		i++;
	}
	if (!s->hops.text)
		memset(s, 0, sizeof(*s));
	return s->hops.text != NULL;
}

/* The spans left out of the rest, in text order: each array's contents, its '[' kept. */
struct rest_reader {
	const struct report_hops_text *span[2];
	size_t nspans;
	const char *text;
	size_t len;
	size_t at;   /* in the text */
	size_t next; /* the next span to skip */
};

static void rest_init(struct rest_reader *r, const struct report_streams *s)
{
	memset(r, 0, sizeof(*r));
	r->text = s->hops.text;
	r->len = s->hops.len;
	r->span[r->nspans++] = &s->hops;
	if (s->ports.text)
		r->span[r->nspans++] = &s->ports;
	if (r->nspans == 2 && r->span[1]->open < r->span[0]->open) {
		r->span[0] = &s->ports;
		r->span[1] = &s->hops;
	}
}

/* The text with each span's contents skipped. */
static size_t feed_rest(void *buffer, size_t buflen, void *data)
{
	struct rest_reader *r = data;
	size_t end, n;

	if (r->next < r->nspans && r->at == r->span[r->next]->open + 1)
		r->at = r->span[r->next++]->close;
	end = r->next < r->nspans ? r->span[r->next]->open + 1 : r->len;
	if (r->at >= end)
		return 0;
	n = end - r->at < buflen ? end - r->at : buflen;
	memcpy(buffer, r->text + r->at, n);
	r->at += n;
	return n;
}

json_t *report_streams_load_rest(const struct report_streams *s, json_error_t *err)
{
	struct rest_reader r;
	json_t *root;

	rest_init(&r, s);
	root = json_load_callback(feed_rest, &r, JSON_REJECT_DUPLICATES, err);
	if (!root && err->position >= 0) { /* a position in the rest is further on in the text */
		size_t at = (size_t)err->position;

		for (size_t k = 0; k < r.nspans && at > r.span[k]->open; k++)
			at += r.span[k]->close - r.span[k]->open - 1;
		report_hops_where(r.text, at < r.len ? at : r.len, &err->line, &err->column);
	}
	return root;
}

static int syntax(struct report_json *j, size_t *err_offset, size_t at, const char *why)
{
	snprintf(j->error, sizeof(j->error), "%s", why);
	*err_offset = at;
	return -1;
}

int report_hops_next(struct report_hops_text *h, struct report_json *j, size_t *err_offset)
{
	size_t i = skip_ws(h->text, h->next, h->close);

	*err_offset = 0;
	if (h->index) { /* after an element: "," and another, or the end */
		if (i >= h->close)
			return 0;
		if (h->text[i] != ',')
			return syntax(j, err_offset, i, "',' or ']' expected between hops");
		i = skip_ws(h->text, i + 1, h->close);
		if (i >= h->close)
			return syntax(j, err_offset, i, "a hop expected after ','");
	} else if (i >= h->close) {
		return 0; /* [] */
	}
	if (report_json_parse(j, h->text, i, h->close, &h->next)) {
		*err_offset = j->error_at ? j->error_at : 1;
		return -1;
	}
	h->index++;
	return 1;
}

int report_hops_take(const char *path, struct report_hops_text *h, struct report_json *j,
		     int *err)
{
	size_t at;
	int line, column, got = report_hops_next(h, j, &at);

	*err = 0;
	if (got < 0) {
		report_hops_where(h->text, at, &line, &column);
		*err = fl_fail(FL_ERR_USAGE, "%s: truncated or not JSON (line %d, column %d: %s)",
			       path, line, column, j->error);
	}
	return got;
}

void report_hops_of_array(const char *text, size_t len, struct report_hops_text *h)
{
	*h = (struct report_hops_text){ text, len, 0, len ? len - 1 : 0, 1, 0 };
}

void report_hops_where(const char *text, size_t offset, int *line, int *column)
{
	const char *nl = text;

	*line = 1;
	for (const char *p = text; p < text + offset; p++) {
		if (*p == '\n') {
			++*line;
			nl = p + 1;
		}
	}
	*column = (int)(text + offset - nl) + 1;
}
