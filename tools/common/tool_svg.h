/*
 * What the tools' pictures (report --svg, sweep --svg) draw alike: the
 * document's start, escaped text and the colour scale of their heatmaps.
 * Standalone SVG: no scripts, fonts or links outside the file.
 */
#ifndef TOOL_SVG_H
#define TOOL_SVG_H

#include <stddef.h>
#include <stdio.h>

/* The XML declaration, the <svg> element of that size and a white background. */
void tool_svg_begin(FILE *out, int width, int height);
/*
 * s as SVG text content or attribute value: &, <, >, ", ' as entities, control
 * characters and bytes that are not UTF-8 as the text \xNN.
 */
void tool_svg_text(FILE *out, const char *s);
/*
 * Viridis-like, t in [0, 1] (clamped): dark purple for slow, yellow for fast;
 * readable by the colour-blind. buf gets "#rrggbb" (8 bytes).
 */
void tool_svg_colour(double t, char *buf, size_t len);
/*
 * The scale under a heatmap: a bar from (x, y), width wide, with 5 ticks from
 * 0 to max labelled with `digits` significant digits. Defines the gradient
 * id "scale", so once per picture.
 */
void tool_svg_scale(FILE *out, double x, double y, double width, double max, int digits);

#endif
