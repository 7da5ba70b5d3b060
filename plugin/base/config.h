/*
 * Reading configuration from the environment. Every reader returns FL_ERR_USAGE
 * with a message naming the variable, the bad value and the accepted form.
 */
#ifndef FL_CONFIG_H
#define FL_CONFIG_H

#include <stddef.h>

/* Integer in [min, max]; unset or empty leaves *out = def. */
int fl_env_long(const char *name, long def, long min, long max, long *out);
/* Byte count with optional K/M/G suffix (powers of 1024), in [min, max]. */
int fl_env_bytes(const char *name, size_t def, size_t min, size_t max, size_t *out);
/* One of the words in choices (NULL-terminated); *out = its index, def when unset. */
int fl_env_choice(const char *name, const char *const *choices, int def, int *out);
/* First of the variables that is set and non-empty, else NULL. */
const char *fl_env_first(const char *const *names);
#define FL_QUOTE_LEN 72
/*
 * value made safe to echo in a message: control, non-ASCII, quote and
 * backslash bytes as \xNN, cut to fit len (FL_QUOTE_LEN) with "...".
 */
const char *fl_quote_value(const char *value, char *out, size_t len);
/* Parses a byte count like "512K" into *out; 0 on success, -1 on bad form. */
int fl_parse_bytes(const char *text, size_t *out);

#endif
