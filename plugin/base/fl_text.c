/* Escaping outside text once, where it enters (fl_text.h). */
#include "fl_text.h"

#include <stdio.h>
#include <string.h>

static bool continuation(unsigned char c)
{
	return (c & 0xc0) == 0x80;
}

/* The bounds of a sequence's second byte that rule out overlong forms, surrogates and > U+10FFFF. */
static size_t multibyte_len(const unsigned char *s)
{
	unsigned char lo = 0x80, hi = 0xbf;
	size_t n;

	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4;
	else
		return 0; /* a continuation byte alone, C0/C1 (overlong) or F5..FF */
	if (s[0] == 0xe0)
		lo = 0xa0;
	else if (s[0] == 0xed)
		hi = 0x9f; /* U+D800..DFFF are surrogates, not characters */
	else if (s[0] == 0xf0)
		lo = 0x90;
	else if (s[0] == 0xf4)
		hi = 0x8f;
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < n; i++) {
		if (!continuation(s[i]))
			return 0;
	}
	return n;
}

/*
 * U+200E, U+200F (marks), U+2028, U+2029 (line and paragraph separators),
 * U+202A..U+202E (embeddings and overrides), U+2066..U+2069 (isolates): they
 * reorder or break the text that follows them.
 */
static bool reorders(const unsigned char *s)
{
	if (s[0] == 0xd8 && s[1] == 0x9c)
		return true; /* U+061C ARABIC LETTER MARK */
	if (s[0] != 0xe2)
		return false;
	if (s[1] == 0x80)
		return s[2] == 0x8e || s[2] == 0x8f || (s[2] >= 0xa8 && s[2] <= 0xae);
	return s[1] == 0x81 && s[2] >= 0xa6 && s[2] <= 0xa9;
}

size_t fl_text_char_len(const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t n;

	if (s[0] < 0x80)
		return s[0] >= 0x20 && s[0] != 0x7f ? 1 : 0;
	n = multibyte_len(s);
	if (n == 2 && s[0] == 0xc2 && s[1] < 0xa0)
		return 0; /* U+0080..009F: C1 controls, CSI among them */
	if (n == 3 && s[0] == 0xef && s[1] == 0xbf && s[2] >= 0xbe)
		return 0; /* U+FFFE, U+FFFF: no characters, and not allowed in XML */
	if (n >= 2 && reorders(s))
		return 0;
	return n;
}

bool fl_text_needs_escape(const char *s)
{
	while (*s) {
		size_t n = fl_text_char_len(s);

		if (!n)
			return true;
		s += n;
	}
	return false;
}

size_t fl_text_escape(char *dst, size_t len, const char *s)
{
	size_t used = 0, need = 0;
	bool cut = false;

	while (*s) {
		size_t n = fl_text_char_len(s);
		char piece[FL_TEXT_ESCAPE_LEN + 1];
		const char *from = s;
		size_t plen = n;

		if (!n) {
			snprintf(piece, sizeof(piece), "\\x%02x", (unsigned char)*s);
			from = piece;
			plen = FL_TEXT_ESCAPE_LEN;
			n = 1;
		}
		if (!cut && used + plen < len) {
			memcpy(dst + used, from, plen);
			used += plen;
		} else {
			cut = true;
		}
		need += plen;
		s += n;
	}
	if (len)
		dst[used] = '\0';
	return need;
}

bool fl_text_escape_in_place(char *buf, size_t len)
{
	char copy[2048];
	size_t n = strnlen(buf, len);

	if (!len || !fl_text_needs_escape(buf))
		return true;
	if (n >= sizeof(copy))
		n = sizeof(copy) - 1;
	memcpy(copy, buf, n);
	copy[n] = '\0';
	return fl_text_escape(buf, len, copy) < len;
}
