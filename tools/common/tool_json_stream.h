/*
 * A JSON document written as it goes: containers opened and closed one at a
 * time, each member a small jansson value dumped and freed at once. Its text
 * is the text json_dumpf gives for the whole tree with the same flags (same
 * indentation, separators and number format), but only one member's tree is
 * ever in memory: the merged report of 131 072 hops built whole took 1.8 GB
 * and 16 s (issue 48); written this way, a few KB beyond the merge itself.
 */
#ifndef TOOL_JSON_STREAM_H
#define TOOL_JSON_STREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <jansson.h>

#define TOOL_JSON_STREAM_DEPTH 16 /* containers open at once */
#define TOOL_JSON_STREAM_BUF (64 << 10) /* written out in blocks of this size */

struct tool_json_stream {
	FILE *out;
	size_t flags;  /* jansson's dump flags: JSON_INDENT(n), JSON_REAL_PRECISION(p)... */
	int depth;     /* containers open */
	bool members[TOOL_JSON_STREAM_DEPTH]; /* the container at that depth has one already */
	char closing[TOOL_JSON_STREAM_DEPTH]; /* and the bracket that closes it */
	bool failed;   /* a write or a value failed: everything after is skipped */
	size_t used;   /* bytes of buf not yet written out */
	char buf[TOOL_JSON_STREAM_BUF];
};

void tool_json_stream_init(struct tool_json_stream *s, FILE *out, size_t flags);
/*
 * Opens an object ('{') or an array ('[') as the next member: key names it inside
 * an object, NULL inside an array or at the top. Keys are the writer's own
 * names (printable ASCII, no quote or backslash), never input.
 */
void tool_json_stream_open(struct tool_json_stream *s, const char *key, char bracket);
void tool_json_stream_close(struct tool_json_stream *s);
/* value as the next member, then its reference is dropped; NULL (out of memory) fails the stream. */
void tool_json_stream_value(struct tool_json_stream *s, const char *key, json_t *value);
/*
 * Scalars written directly, as jansson would dump json_string, json_integer,
 * json_real (with the stream's JSON_REAL_PRECISION), json_boolean and
 * json_null, without building them: the bulk of a large document (a hop's
 * forty figures) costs a formatting each, not a tree. A string that is not
 * valid UTF-8 is written with its bad bytes as the text \xNN (tool_text.h),
 * where json_string would refuse it; NULL writes null, and so does a real
 * that is not finite (jansson has no value for it).
 */
void tool_json_stream_string(struct tool_json_stream *s, const char *key, const char *value);
void tool_json_stream_int(struct tool_json_stream *s, const char *key, long long value);
void tool_json_stream_real(struct tool_json_stream *s, const char *key, double value);
void tool_json_stream_bool(struct tool_json_stream *s, const char *key, bool value);
void tool_json_stream_null(struct tool_json_stream *s, const char *key);
/* Writes out what is buffered; 0 when every container was closed and all was written, else -1. */
int tool_json_stream_end(struct tool_json_stream *s);

#endif
