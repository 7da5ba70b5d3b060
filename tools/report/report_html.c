/*
 * `fabriclab report --html FILE`: the cluster view as one self-contained page
 * to share (no script, no external file): the verdict and the reason, the
 * heatmap and ring picture (the --svg drawing, inline), and the text report
 * with the hop table and the commands.
 */
#include <stdlib.h>
#include <string.h>

#include "plugin/base/error.h"
#include "report.h"

static const char style[] =
	"body{font:14px/1.4 system-ui,sans-serif;margin:2em;max-width:80em;color:#222}"
	"h1{font-size:1.4em}pre{background:#f6f6f6;padding:1em;overflow:auto}"
	".verdict{font-size:1.2em;font-weight:600}";

static void escaped(FILE *out, const char *text, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		switch (text[i]) {
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '&': fputs("&amp;", out); break;
		case '"': fputs("&quot;", out); break;
		default: fputc(text[i], out);
		}
	}
}

/* A rendering into memory, so it can be embedded (and escaped where it is text). */
static int render(const struct report_set *set, int (*emit)(const struct report_set *, FILE *),
		  char **buf, size_t *len)
{
	FILE *mem = open_memstream(buf, len);
	int rc;

	if (!mem)
		return fl_fail(FL_ERR_SYSTEM, "out of memory for the HTML report");
	rc = emit(set, mem);
	if (fclose(mem) && !rc)
		rc = fl_fail(FL_ERR_SYSTEM, "out of memory for the HTML report");
	if (rc)
		free(*buf);
	return rc;
}

/* Inside HTML the drawing needs no XML declaration. */
static const char *inline_svg(const char *svg)
{
	const char *end;

	if (strncmp(svg, "<?xml", 5) || !(end = strstr(svg, "?>")))
		return svg;
	end += 2;
	return end + strspn(end, "\n");
}

static void verdict_line(const struct report_set *set, FILE *out)
{
	const struct fl_verdict *v = &set->verdict;
	const char *kind = fl_verdict_kind_name(v->kind);

	fputs("<p class=\"verdict\" id=\"verdict\">verdict: ", out);
	escaped(out, kind, strlen(kind));
	if (v->node[0]) {
		fputs(" on ", out);
		escaped(out, v->node, strlen(v->node));
	}
	fputs("</p>\n<p id=\"reason\">", out);
	escaped(out, v->reason, strlen(v->reason));
	fputs("</p>\n", out);
}

int report_emit_html(const struct report_set *set, FILE *out)
{
	char *svg = NULL, *text = NULL;
	size_t svg_len = 0, text_len = 0; /* open_memstream keeps them NUL-terminated */
	int rc = render(set, report_emit_svg, &svg, &svg_len);

	if (!rc)
		rc = render(set, report_print_text, &text, &text_len);
	if (rc) {
		free(svg);
		return rc;
	}
	fprintf(out, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
		"<title>fabriclab report</title><style>%s</style></head><body>\n"
		"<h1>fabriclab report</h1>\n", style);
	verdict_line(set, out);
	fputs(inline_svg(svg), out);
	fputs("\n<pre id=\"text\">", out);
	escaped(out, text, text_len);
	fputs("</pre>\n</body></html>\n", out);
	free(svg);
	free(text);
	return ferror(out) ? fl_fail(FL_ERR_SYSTEM, "cannot write the HTML report") : FL_OK;
}

int report_write_html(const struct report_set *set, const char *path)
{
	return report_write_atomic(path, report_emit_html, set);
}
