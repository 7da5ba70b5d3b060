#include "tool_svg.h"

#include <math.h>

#include "tool_text.h"

#define SCALE_STEPS 4

void tool_svg_begin(FILE *out, int width, int height)
{
	fprintf(out,
		"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
		"viewBox=\"0 0 %d %d\" font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\">\n"
		"<rect width=\"100%%\" height=\"100%%\" fill=\"#ffffff\"/>\n",
		width, height, width, height);
}

/*
 * Markup escaped as entities; what XML 1.0 cannot hold at all (controls, bytes
 * that are not UTF-8) as the text \xNN (tool_text.h), so any name gives a
 * well-formed document.
 */
void tool_svg_text(FILE *out, const char *s)
{
	while (*s) {
		size_t n = tool_text_char_len(s);

		switch (n ? *s : 0) {
		case '&': fputs("&amp;", out); break;
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '"': fputs("&quot;", out); break;
		case '\'': fputs("&apos;", out); break;
		case 0: fprintf(out, "\\x%02x", (unsigned char)*s); break;
		default: fwrite(s, 1, n, out);
		}
		s += n ? n : 1;
	}
}

void tool_svg_colour(double t, char *buf, size_t len)
{
	static const unsigned char stops[SCALE_STEPS + 1][3] = {
		{ 0x44, 0x01, 0x54 }, { 0x3b, 0x52, 0x8b }, { 0x21, 0x91, 0x8c },
		{ 0x5e, 0xc9, 0x62 }, { 0xfd, 0xe7, 0x25 },
	};
	double x = (t < 0 ? 0 : t > 1 ? 1 : t) * SCALE_STEPS;
	size_t k = x >= SCALE_STEPS ? SCALE_STEPS - 1 : (size_t)x;
	double f = x - (double)k;
	int rgb[3];

	for (size_t c = 0; c < 3; c++)
		rgb[c] = (int)lround(stops[k][c] + f * (stops[k + 1][c] - stops[k][c]));
	snprintf(buf, len, "#%02x%02x%02x", rgb[0], rgb[1], rgb[2]);
}

void tool_svg_scale(FILE *out, double x, double y, double width, double max, int digits)
{
	fputs("<defs><linearGradient id=\"scale\" x1=\"0\" x2=\"1\" y1=\"0\" y2=\"0\">\n", out);
	for (int s = 0; s <= SCALE_STEPS; s++) {
		char c[8];

		tool_svg_colour((double)s / SCALE_STEPS, c, sizeof(c));
		fprintf(out, "<stop offset=\"%d%%\" stop-color=\"%s\"/>\n", s * 100 / SCALE_STEPS,
			c);
	}
	fputs("</linearGradient></defs>\n", out);
	fprintf(out,
		"<rect x=\"%.0f\" y=\"%.0f\" width=\"%.0f\" height=\"14\" fill=\"url(#scale)\" "
		"stroke=\"#888\"/>\n",
		x, y, width);
	for (int s = 0; s <= SCALE_STEPS; s++) {
		double at = x + width * s / SCALE_STEPS;

		fprintf(out,
			"<line x1=\"%.1f\" y1=\"%.0f\" x2=\"%.1f\" y2=\"%.0f\" stroke=\"#444\"/>\n"
			"<text x=\"%.1f\" y=\"%.0f\" font-size=\"12\" "
			"text-anchor=\"middle\">%.*g</text>\n",
			at, y + 14, at, y + 19, at, y + 32, digits, max * s / SCALE_STEPS);
	}
}
