/* Escaping text from inputs for terminals, SVG and JSON (tool_text.h). */
#include "tool_text.h"

#include <stdlib.h>
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

size_t tool_text_char_len(const char *str)
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
	return n;
}

bool tool_text_needs_escape(const char *s)
{
	while (*s) {
		size_t n = tool_text_char_len(s);

		if (!n)
			return true;
		s += n;
	}
	return false;
}

size_t tool_text_escape(char *dst, size_t len, const char *s)
{
	size_t used = 0, need = 0;
	bool cut = false;

	while (*s) {
		size_t n = tool_text_char_len(s);
		char piece[TOOL_TEXT_ESCAPE_LEN + 1];
		const char *from = s;
		size_t plen = n;

		if (!n) {
			snprintf(piece, sizeof(piece), "\\x%02x", (unsigned char)*s);
			from = piece;
			plen = TOOL_TEXT_ESCAPE_LEN;
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

char *tool_text_dup(const char *s)
{
	size_t need = tool_text_escape(NULL, 0, s);
	char *d = malloc(need + 1);

	if (d)
		tool_text_escape(d, need + 1, s);
	return d;
}

void tool_text_put(FILE *out, const char *s)
{
	while (*s) {
		size_t n = tool_text_char_len(s);

		if (n) {
			fwrite(s, 1, n, out);
			s += n;
		} else {
			fprintf(out, "\\x%02x", (unsigned char)*s++);
		}
	}
}

json_t *tool_text_json(const char *s)
{
	char *clean;
	json_t *j;

	if (!tool_text_needs_escape(s))
		return json_string(s);
	clean = tool_text_dup(s);
	j = clean ? json_string(clean) : NULL;
	free(clean);
	return j;
}

json_t *tool_text_json_opt(const char *s)
{
	return s[0] ? tool_text_json(s) : json_null();
}
