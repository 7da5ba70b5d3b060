#include "error.h"

#include <stdio.h>

#include "fl_text.h"

static _Thread_local char last_error[FL_ERROR_LEN];

int fl_fail(int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(last_error, sizeof(last_error), fmt, ap);
	va_end(ap);
	/*
	 * Values from outside (environment, an inner plugin's answers) end up on a terminal
	 * through whoever logs this: a control or bidi character is shown as \xNN, never obeyed.
	 */
	fl_text_escape_in_place(last_error, sizeof(last_error));
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
