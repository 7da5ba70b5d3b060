/* The text exposition format's header lines and escaped labels (see prom_out.h). */
#include "prom_out.h"

#include "fl_text.h"

void fl_prom_header(FILE *out, const char *name, const char *type, const char *help)
{
	fprintf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/*
 * Names are escaped where they enter (base/fl_text.h); a control or bidi character that
 * reaches a label anyway is written as \xNN (its backslash escaped as the format wants), so
 * a dashboard shows it and a terminal running curl never obeys it.
 */
void fl_prom_label(FILE *out, const char *name, const char *value, bool last)
{
	fprintf(out, "%s=\"", name);
	for (const char *c = value; *c;) {
		size_t n = fl_text_char_len(c);

		if (!n)
			fprintf(out, "\\\\x%02x", (unsigned char)*c++);
		else if (*c == '\\' || *c == '"')
			fprintf(out, "\\%c", *c++);
		else {
			fwrite(c, 1, n, out);
			c += n;
		}
	}
	fputs(last ? "\"" : "\",", out);
}
