/* The text exposition format's header lines and escaped labels (see prom_out.h). */
#include "prom_out.h"

void fl_prom_header(FILE *out, const char *name, const char *type, const char *help)
{
	fprintf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

void fl_prom_label(FILE *out, const char *name, const char *value, bool last)
{
	fprintf(out, "%s=\"", name);
	for (const char *c = value; *c; c++) {
		if (*c == '\\' || *c == '"')
			fprintf(out, "\\%c", *c);
		else if (*c == '\n')
			fputs("\\n", out);
		else
			fputc(*c, out);
	}
	fputs(last ? "\"" : "\",", out);
}
