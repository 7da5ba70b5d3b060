#include "tool_opts.h"

#include <stdio.h>

#include "shim/shim_env.h"
#include "tool_text.h"

int tool_bad_option(const char *cmd, const char *opt, const char *value, const char *expected)
{
	fprintf(stderr, "fabriclab %s: %s \"", cmd, opt);
	tool_text_put(stderr, value); /* a value may carry a terminal's escapes */
	fprintf(stderr, "\": expected %s (see `fabriclab %s --help`)\n", expected, cmd);
	return TOOL_EXIT_USAGE;
}

int tool_long_option(const char *cmd, const char *opt, const char *v, long min, long max,
		     long *out)
{
	char expected[64];

	if (!shim_parse_long(v, out) && *out >= min && *out <= max)
		return 0;
	snprintf(expected, sizeof(expected), "an integer from %ld to %ld", min, max);
	return tool_bad_option(cmd, opt, v, expected);
}
