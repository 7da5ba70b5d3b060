/* Escaping text from inputs for terminals, SVG and JSON (tool_text.h). */
#include "tool_text.h"

#include <stdlib.h>
#include <string.h>

#include "plugin/base/fl_text.h"

/* One definition of what is safe to show, shared with the plugin (C0, C1, bidi controls...). */
size_t tool_text_char_len(const char *str)
{
	return fl_text_char_len(str);
}

bool tool_text_needs_escape(const char *s)
{
	return fl_text_needs_escape(s);
}

size_t tool_text_escape(char *dst, size_t len, const char *s)
{
	return fl_text_escape(dst, len, s);
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
