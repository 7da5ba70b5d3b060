/*
 * A report's top-level "hops" and "ports" arrays read one element at a time
 * from the file's text, so a report of 10^6 hops never holds a tree of all of
 * them (jansson's took about 2 KB a hop), and a fleet's reports, each with
 * its node's ports, are not parsed twice: the rest of the report is parsed by
 * jansson with the arrays' contents left out, then each element is parsed
 * into a table (report_hop_json.h) and read in turn. Where the text has no
 * plain top-level "hops": [...] the caller parses the whole file, and reads
 * each array as jansson writes it back.
 */
#ifndef FABRICLAB_REPORT_HOPS_TEXT_H
#define FABRICLAB_REPORT_HOPS_TEXT_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "report_hop_json.h"

struct report_hops_text {
	const char *text;
	size_t len;
	size_t open, close; /* offsets of the array's '[' and ']' */
	size_t next;        /* where the next element's search starts */
	size_t index;       /* elements returned so far */
};

/* The arrays streamed out of one report's text. */
struct report_streams {
	struct report_hops_text hops;
	struct report_hops_text ports; /* ports.text NULL: none, or not an array */
};

/*
 * Finds the top-level "hops" array of text, and "ports" if it has one; false
 * when there are no hops to stream (the text scan does not check the syntax
 * outside the arrays: jansson's parse of the rest does).
 */
bool report_streams_find(const char *text, size_t len, struct report_streams *s);
/* The document without the arrays' elements ("hops": [], "ports": []); NULL with err set. */
json_t *report_streams_load_rest(const struct report_streams *s, json_error_t *err);
/*
 * The next element parsed into j: 1, or 0 at the end, or -1 on a syntax
 * error with *err_offset its byte offset in text and why in j->error.
 */
int report_hops_next(struct report_hops_text *h, struct report_json *j, size_t *err_offset);
/*
 * report_hops_next with the failure said: "<path>: truncated or not JSON (line
 * L, column C: why)" into fl_error_text() and *err.
 */
int report_hops_take(const char *path, struct report_hops_text *h, struct report_json *j,
		     int *err);
/* A text that is one array, "[...]" (len bytes), read element by element the same way. */
void report_hops_of_array(const char *text, size_t len, struct report_hops_text *h);
/* Line and column (1-based) of a byte offset of text, for messages. */
void report_hops_where(const char *text, size_t offset, int *line, int *column);

#endif
