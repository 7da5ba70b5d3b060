#include "shim_error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "plugin/base/fl_text.h"

static _Thread_local char last_error[SHIM_ERROR_LEN];

int shim_fail(int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(last_error, sizeof(last_error), fmt, ap);
	va_end(ap);
	/* FABRICLAB_SHIM_MEM, _PIDFILE...: a value quoted here reaches a terminal escaped */
	fl_text_escape_in_place(last_error, sizeof(last_error));
	return err;
}

int shim_fail_context(int err, const char *fmt, ...)
{
	char reason[SHIM_ERROR_LEN];
	size_t len;
	va_list ap;

	memcpy(reason, last_error, sizeof(reason));
	va_start(ap, fmt);
	vsnprintf(last_error, sizeof(last_error), fmt, ap);
	va_end(ap);
	len = strlen(last_error);
	snprintf(last_error + len, sizeof(last_error) - len, "%s", reason);
	fl_text_escape_in_place(last_error, sizeof(last_error));
	return err;
}

const char *shim_error_text(void)
{
	return last_error[0] ? last_error : "unknown error";
}

const char *shim_result_name(int result)
{
	static const char *const names[] = {
		"success",	  "unhandled cuda error", "system error", "internal error",
		"invalid argument", "invalid usage",	  "remote error", "in progress",
	};

	if (result >= 0 && result < (int)(sizeof(names) / sizeof(names[0])))
		return names[result];
	return "unknown result";
}
