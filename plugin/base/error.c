#include "error.h"

#include <stdio.h>

static _Thread_local char last_error[FL_ERROR_LEN];

int fl_fail(int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(last_error, sizeof(last_error), fmt, ap);
	va_end(ap);
	return err;
}

const char *fl_error_text(void)
{
	return last_error[0] ? last_error : "unknown error";
}

void fl_error_clear(void)
{
	last_error[0] = '\0';
}
