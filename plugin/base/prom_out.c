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
 * a dashboard shows it and a terminal running curl never obeys it. The characters that need no
 * escape are written a run at a time: a merged report has a line per hop, ten labels a line
 * (10^6 hops wrote one character per call).
 */
void fl_prom_label(FILE *out, const char *name, const char *value, bool last)
{
	const char *run = value, *c = value;

	fputs(name, out);
	fputs("=\"", out);
	while (*c) {
		size_t n = fl_text_char_len(c);

		if (n && *c != '\\' && *c != '"') {
			c += n;
			continue;
		}
		fwrite(run, 1, (size_t)(c - run), out);
		if (!n)
			fprintf(out, "\\\\x%02x", (unsigned char)*c++);
		else
			fprintf(out, "\\%c", *c++);
		run = c;
	}
	fwrite(run, 1, (size_t)(c - run), out);
	fputs(last ? "\"" : "\",", out);
}
