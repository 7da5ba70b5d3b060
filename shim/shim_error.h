/*
 * Why the last shim call failed, per thread. The shim keeps its own copy of
 * this (rather than plugin/error.h) because the fabriclab command links the
 * shim but not the plugin's objects.
 */
#ifndef SHIM_ERROR_H
#define SHIM_ERROR_H

#define SHIM_ERROR_LEN 512

/* Records why; returns err so call sites can `return shim_fail(FL_ERR_SYSTEM, ...)`. */
int shim_fail(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Prefixes the current reason with more context ("ring: " + reason). */
int shim_fail_context(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
const char *shim_error_text(void);
/* "system error", "remote error", ... for an fl_result / ncclResult_t value. */
const char *shim_result_name(int result);

#endif
