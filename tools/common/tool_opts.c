#include "tool_opts.h"

#include <stdio.h>
#include <stdlib.h>

#include "shim/shim_env.h"
#include "tool_text.h"

int tool_bad_option(const char *cmd, const char *opt, const char *value, const char *expected)
{
	char *shown = tool_text_dup(value); /* a value may carry a terminal's escapes */

	fprintf(stderr, "fabriclab %s: %s \"%s\": expected %s (see `fabriclab %s --help`)\n", cmd,
		opt, shown ? shown : "?", expected, cmd);
	free(shown);
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
