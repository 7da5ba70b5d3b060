/* Command-line values shared by the subcommands: one wording for a bad value, everywhere. */
#ifndef FABRICLAB_TOOL_OPTS_H
#define FABRICLAB_TOOL_OPTS_H

#define TOOL_EXIT_USAGE 2

/* "fabriclab CMD: OPT "VALUE": expected EXPECTED (see `fabriclab CMD --help`)"; TOOL_EXIT_USAGE. */
int tool_bad_option(const char *cmd, const char *opt, const char *value, const char *expected);
/* An integer from min to max, else tool_bad_option's message and status. */
int tool_long_option(const char *cmd, const char *opt, const char *v, long min, long max,
		     long *out);

#endif
