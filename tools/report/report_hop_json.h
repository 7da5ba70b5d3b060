/*
 * One element of a report's hops array parsed straight from the file's text
 * into a flat table of values, with no jansson tree: an object with its own
 * hash table, a copy of every key and string, an allocation per value, for
 * every hop, was most of the time a 10^6-hop report or 131 072 small ones
 * took to read. The table and the buffer for strings with escapes are kept
 * from one hop to the next, so a hop costs no allocation.
 *
 * It accepts exactly what jansson's json_loadb accepts with JSON_DECODE_ANY |
 * JSON_DISABLE_EOF_CHECK | JSON_REJECT_DUPLICATES, the flags the hops were
 * read with before: RFC 8259 syntax, strings of valid UTF-8 without control
 * characters or \u0000, surrogates only in pairs, integers that fit a long
 * long, reals that do not overflow, no key twice in one object, at most 2048
 * values deep. tests/unit/test_report_hop_json.c holds it to jansson on valid
 * and broken inputs, and to the same values. One difference: jansson skips a
 * NUL byte right after a number or a literal; a NUL is refused here.
 */
#ifndef FABRICLAB_REPORT_HOP_JSON_H
#define FABRICLAB_REPORT_HOP_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum report_json_type {
	REPORT_JSON_NULL,
	REPORT_JSON_FALSE,
	REPORT_JSON_TRUE,
	REPORT_JSON_INTEGER,
	REPORT_JSON_REAL,
	REPORT_JSON_STRING,
	REPORT_JSON_ARRAY,
	REPORT_JSON_OBJECT,
};

/*
 * A value, in document order: a container's members (or elements) follow it,
 * each one's subtree ending where the next begins. A string or key is a span
 * of the text, or of the decoded buffer when it held escapes.
 */
struct report_json_node {
	uint8_t type; /* enum report_json_type */
	bool key_decoded, str_decoded;
	size_t key_at, key_len; /* a member's key */
	size_t text_at;         /* where it starts in the text (a member: its key), for messages */
	size_t next;            /* the index after this value's subtree */
	size_t count;           /* a container's members or elements */
	union {
		long long i;
		double d;
		struct {
			size_t at, len;
		} s;
	} u;
};

struct report_json {
	const char *text; /* the text parsed last: spans not decoded are in it */
	struct report_json_node *nodes;
	size_t nnodes, nodes_cap;
	char *decoded; /* strings and keys that held escapes, decoded */
	size_t decoded_len, decoded_cap;
	uint32_t *slots; /* the root object's members by key: node index + 1, 0 empty */
	size_t nslots;
	char error[96];
	size_t error_at; /* the offset in text where the parse failed */
};

/*
 * Parses the value at text[at] (whitespace first), which must end before
 * text[end]. 0 with *next the offset just after it; -1 when it is not JSON
 * (error, error_at), or out of memory (error says so, error_at = at).
 * j keeps its memory for the next parse: zeroed to start, report_json_free at
 * the end.
 */
int report_json_parse(struct report_json *j, const char *text, size_t at, size_t end,
		      size_t *next);
void report_json_free(struct report_json *j);

/* The root value of the last parse. */
static inline const struct report_json_node *report_json_root(const struct report_json *j)
{
	return &j->nodes[0];
}

/* The member key of object obj, NULL when it has none. */
const struct report_json_node *report_json_get(const struct report_json *j,
					       const struct report_json_node *obj, const char *key);
/* A container's first member or element, NULL when empty; then the next, NULL after the last. */
const struct report_json_node *report_json_first(const struct report_json *j,
						 const struct report_json_node *c);
const struct report_json_node *report_json_next(const struct report_json *j,
						const struct report_json_node *c,
						const struct report_json_node *n);
/* A string's bytes (no NUL inside, none after: its length is n->u.s.len). */
const char *report_json_str(const struct report_json *j, const struct report_json_node *n);

#endif
