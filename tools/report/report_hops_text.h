/*
 * A report's top-level "hops" array read one element at a time from the
 * file's text, so a report of 10^6 hops never holds jansson's tree of all of
 * them (about 2 KB a hop): the rest of the report is parsed with the array's
 * contents left out, then each hop is parsed, read and freed in turn. Where
 * the text has no plain top-level "hops": [...] the caller parses the whole
 * file as before.
 */
#ifndef FABRICLAB_REPORT_HOPS_TEXT_H
#define FABRICLAB_REPORT_HOPS_TEXT_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

struct report_hops_text {
	const char *text;
	size_t len;
	size_t open, close; /* offsets of the array's '[' and ']' */
	size_t next;        /* where the next element's search starts */
	size_t index;       /* elements returned so far */
};

/* Finds the top-level "hops" array of text; false when there is none to stream. */
bool report_hops_find(const char *text, size_t len, struct report_hops_text *h);
/* The document without the array's elements ("hops": []); NULL with err set. */
json_t *report_hops_load_rest(const struct report_hops_text *h, json_error_t *err);
/*
 * The next element (the caller decrefs it); NULL at the end (*err_offset = 0)
 * or on a syntax error, with *err_offset its byte offset in text and why in err.
 */
json_t *report_hops_next(struct report_hops_text *h, json_error_t *err, size_t *err_offset);
/* Line and column (1-based) of a byte offset of text, for messages. */
void report_hops_where(const char *text, size_t offset, int *line, int *column);

#endif
