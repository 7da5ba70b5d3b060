#include "shim_env.h"

#include <errno.h>
#include <stdlib.h>

#include "plugin/base/config.h"
#include "plugin/base/error.h"
#include "plugin/base/fl_types.h"
#include "shim_error.h"

const char *shim_env(const char *name)
{
	const char *names[] = { name, NULL };

	return fl_env_first(names);
}

int shim_parse_long(const char *text, long *out)
{
	char *end;
	long x;

	if (!text || !*text)
		return -1;
	errno = 0;
	x = strtol(text, &end, 10);
	if (errno || *end)
		return -1;
	*out = x;
	return 0;
}

int shim_env_long(const char *name, long def, long min, long max, long *out)
{
	int rc = fl_env_long(name, def, min, max, out);

	return rc ? shim_fail(rc, "%s", fl_error_text()) : FL_OK;
}

int shim_env_bytes(const char *name, size_t def, size_t min, size_t max, size_t *out)
{
	int rc = fl_env_bytes(name, def, min, max, out);

	return rc ? shim_fail(rc, "%s", fl_error_text()) : FL_OK;
}
