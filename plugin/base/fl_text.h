/*
 * Text from outside (an inner plugin's device names, environment values, trace
 * fields, report fields) made safe to show, once, where it enters: a terminal
 * must not obey an escape sequence it carries (ESC ] 0 ; title BEL retitles
 * it), a line-based output must not be split by its newline, and text that
 * reorders what follows (U+202E RIGHT-TO-LEFT OVERRIDE and the other bidi
 * controls) must not make a report read differently from what it holds.
 * Valid printable UTF-8 passes as is; every other byte (C0 and C1 controls,
 * DEL, bytes that are not UTF-8, a sequence cut short, and each byte of a bidi
 * control or of U+2028/U+2029, U+FFFE, U+FFFF) becomes the four characters
 * \xNN, so the reader sees what was there. Shared by the plugin and the tools
 * (tools/common/tool_text.c), so both escape alike.
 */
#ifndef FL_TEXT_H
#define FL_TEXT_H

#include <stdbool.h>
#include <stddef.h>

/* The text "\xNN" stands for one byte that was escaped. */
#define FL_TEXT_ESCAPE_LEN 4

/*
 * The length of the valid, printable UTF-8 character at s (1 to 4), or 0 when
 * the byte at s must be escaped. Stops at NUL.
 */
size_t fl_text_char_len(const char *s);
/* s holds something that fl_text_escape would change. */
bool fl_text_needs_escape(const char *s);
/*
 * s escaped into dst (len bytes, NUL-terminated; dst may be NULL when len is
 * 0). Cuts only between whole characters or escapes. Returns the length the
 * whole escaped text needs (without NUL): >= len means it was cut.
 */
size_t fl_text_escape(char *dst, size_t len, const char *s);
/* s escaped in place (buf holds len bytes); returns false when it had to be cut. */
bool fl_text_escape_in_place(char *buf, size_t len);

#endif
