/* A report's hops array read one element at a time (report_hops_text.h). */
#include "report_hops_text.h"

#include <stdio.h>
#include <string.h>

static size_t skip_ws(const char *t, size_t i, size_t len)
{
	while (i < len && (t[i] == ' ' || t[i] == '\t' || t[i] == '\n' || t[i] == '\r'))
		i++;
	return i;
}

/* From the '"' at t[i]: the offset after the closing quote, or len. */
static size_t skip_string(const char *t, size_t i, size_t len)
{
	for (i++; i < len; i++) {
		if (t[i] == '\\')
			i++;
		else if (t[i] == '"')
			return i + 1;
	}
	return len;
}

/* From the '[' or '{' at t[i]: the offset of the bracket that closes it, or len. */
static size_t skip_container(const char *t, size_t i, size_t len)
{
	size_t depth = 0;

	for (; i < len; i++) {
		if (t[i] == '"') {
			i = skip_string(t, i, len) - 1;
		} else if (t[i] == '[' || t[i] == '{') {
			depth++;
		} else if (t[i] == ']' || t[i] == '}') {
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

bool report_hops_find(const char *t, size_t len, struct report_hops_text *h)
{
	size_t i = skip_ws(t, 0, len);

	if (i >= len || t[i] != '{')
		return false;
	for (i++;;) {
		size_t key;

		i = skip_ws(t, i, len);
		if (i >= len || t[i] != '"')
			return false; /* "}" (no hops) or not JSON: the whole parse says which */
		key = i;
		i = skip_ws(t, skip_string(t, i, len), len);
		if (i >= len || t[i] != ':')
			return false;
		i = skip_ws(t, i + 1, len);
		if (i >= len)
			return false;
		if (skip_string(t, key, len) == key + 6 && !memcmp(t + key, "\"hops\"", 6)) {
			size_t close;

			if (t[i] != '[')
				return false;
			close = skip_container(t, i, len);
			if (close >= len)
				return false;
			*h = (struct report_hops_text){ t, len, i, close, i + 1, 0 };
			return true;
		}
		i = skip_ws(t, skip_value(t, i, len), len);
		if (i >= len || t[i] != ',')
			return false;
		i++;
	}
}

struct rest_reader {
	const struct report_hops_text *h;
	size_t at; /* in the text, the array's contents skipped */
};

/* The text up to the array's '[', then on from its ']'. */
static size_t feed_rest(void *buffer, size_t buflen, void *data)
{
	struct rest_reader *r = data;
	size_t end, n;

	if (r->at == r->h->open + 1)
		r->at = r->h->close;
	end = r->at <= r->h->open ? r->h->open + 1 : r->h->len;
	if (r->at >= end)
		return 0;
	n = end - r->at < buflen ? end - r->at : buflen;
	memcpy(buffer, r->h->text + r->at, n);
	r->at += n;
	return n;
}

json_t *report_hops_load_rest(const struct report_hops_text *h, json_error_t *err)
{
	struct rest_reader r = { h, 0 };
	json_t *root = json_load_callback(feed_rest, &r, JSON_REJECT_DUPLICATES, err);

	/* positions past the array are in the text without its contents */
	if (!root && (size_t)err->position > h->open) {
		size_t at = (size_t)err->position + (h->close - h->open - 1);

		report_hops_where(h->text, at < h->len ? at : h->len, &err->line, &err->column);
	}
	return root;
}

json_t *report_hops_next(struct report_hops_text *h, json_error_t *err, size_t *err_offset)
{
	size_t i = skip_ws(h->text, h->next, h->close);
	json_t *e;

	*err_offset = 0;
	if (h->index) { /* after an element: "," and another, or the end */
		if (i >= h->close)
			return NULL;
		if (h->text[i] != ',') {
			snprintf(err->text, sizeof(err->text), "',' or ']' expected between hops");
			*err_offset = i;
			return NULL;
		}
		i = skip_ws(h->text, i + 1, h->close);
		if (i >= h->close) {
			snprintf(err->text, sizeof(err->text), "a hop expected after ','");
			*err_offset = i;
			return NULL;
		}
	} else if (i >= h->close) {
		return NULL; /* [] */
	}
	e = json_loadb(h->text + i, h->close - i,
		       JSON_DISABLE_EOF_CHECK | JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, err);
	if (!e) {
		*err_offset = i + (size_t)(err->position > 0 ? err->position : 0);
		if (!*err_offset)
			*err_offset = 1;
		return NULL;
	}
	h->next = i + (size_t)err->position;
	h->index++;
	return e;
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
