/*
 * The parser's state, shared by report_hop_json.c (containers, keys) and
 * report_json_scalar.c (strings, numbers, literals). Internal to them.
 */
#ifndef FABRICLAB_REPORT_JSON_PARSER_H
#define FABRICLAB_REPORT_JSON_PARSER_H

#include <stdbool.h>
#include <stddef.h>

#include "report_hop_json.h"

struct report_json_parser {
	struct report_json *j;
	const char *t;
	size_t at, end; /* the next byte to read; the end of what may be read */
};

/* -1, with why (printf-style) and where in the parse's error. */
int report_json_fail(struct report_json_parser *p, size_t at, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* The string at t[at] (its '"'): its span in the text, or in the decoded buffer (*decoded). */
int report_json_string(struct report_json_parser *p, size_t *at, size_t *len, bool *decoded);
/* The number at t[at]: an integer or a real, into n. */
int report_json_number(struct report_json_parser *p, struct report_json_node *n);
/* true, false or null at t[at], into n. */
int report_json_literal(struct report_json_parser *p, struct report_json_node *n);

#endif
