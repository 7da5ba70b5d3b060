/*
 * Writing the Prometheus text exposition format (node_exporter's textfile
 * collector): a metric's HELP and TYPE lines, and labels with their values
 * escaped. Shared by the plugin's live textfile and the tools' --prom outputs.
 */
#ifndef FL_PROM_OUT_H
#define FL_PROM_OUT_H

#include <stdbool.h>
#include <stdio.h>

/* "# HELP name help" and "# TYPE name type" (gauge, counter). */
void fl_prom_header(FILE *out, const char *name, const char *type, const char *help);
/* name="value" with backslash and double quote escaped, control and bidi bytes as \\xNN
 * (base/fl_text.h); a comma after unless last. */
void fl_prom_label(FILE *out, const char *name, const char *value, bool last);

#endif
