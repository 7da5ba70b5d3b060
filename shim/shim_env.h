/*
 * Environment and command-line numbers for the shim and the tools: the
 * plugin's readers (plugin/config.h), with their complaint moved into the
 * shim's error text so callers have one place to look.
 */
#ifndef SHIM_ENV_H
#define SHIM_ENV_H

#include <stddef.h>

/* Integer in [min, max]; unset or empty leaves *out = def. */
int shim_env_long(const char *name, long def, long min, long max, long *out);
/* Byte count with optional K/M/G suffix (powers of 1024), in [min, max]. */
int shim_env_bytes(const char *name, size_t def, size_t min, size_t max, size_t *out);
/* Set and non-empty value, else NULL. */
const char *shim_env(const char *name);
/* Decimal integer, whole string; 0 on success, -1 on a bad form. */
int shim_parse_long(const char *text, long *out);

#endif
