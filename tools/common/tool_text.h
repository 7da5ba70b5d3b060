/*
 * Text from inputs the tools do not control (log lines, host names, report
 * fields, file names) made safe to show: a terminal must not obey an escape
 * sequence a log carries (ESC ] 0 ; title BEL retitles it), an SVG or JSON
 * document must stay well-formed UTF-8. Every byte stays accounted for: valid
 * printable UTF-8 passes as is, every other byte (C0 and C1 controls, DEL,
 * bytes that are not UTF-8, a sequence cut short, bidi controls such as U+202E:
 * plugin/base/fl_text.h) becomes the four characters \xNN, so the reader sees
 * what was there.
 */
#ifndef TOOL_TEXT_H
#define TOOL_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <jansson.h>

/* The text "\xNN" stands for one byte that was escaped. */
#define TOOL_TEXT_ESCAPE_LEN 4

/*
 * The length of the valid, printable UTF-8 character at s (1 to 4), or 0 when
 * the byte at s must be escaped. Stops at NUL.
 */
size_t tool_text_char_len(const char *s);
/* s holds something that tool_text_escape would change. */
bool tool_text_needs_escape(const char *s);
/*
 * s escaped into dst (len bytes, NUL-terminated). Cuts only between whole
 * characters or escapes. Returns the length the whole escaped text needs
 * (without NUL): >= len means it was cut.
 */
size_t tool_text_escape(char *dst, size_t len, const char *s);
/* s escaped, malloc'd (the caller frees it); NULL only when out of memory. */
char *tool_text_dup(const char *s);
/* s escaped onto out. */
void tool_text_put(FILE *out, const char *s);
/* A JSON string of s escaped: never NULL for a bad byte, only when out of memory. */
json_t *tool_text_json(const char *s);
/* tool_text_json, JSON null for "". */
json_t *tool_text_json_opt(const char *s);

#endif
