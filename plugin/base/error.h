/* The reason for the last failure on this thread, for the layer that logs it. */
#ifndef FL_ERROR_H
#define FL_ERROR_H

#include <stdarg.h>

#define FL_ERROR_LEN 1024 /* room for a list of plugins, each with its path and reason */

/* Records why; returns err so call sites can `return fl_fail(FL_ERR_SYSTEM, ...)`. */
int fl_fail(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
const char *fl_error_text(void);
void fl_error_clear(void);

#endif
