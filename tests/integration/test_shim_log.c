/*
 * The shim's logger reads NCCL_DEBUG and NCCL_DEBUG_SUBSYS once per process,
 * so each case runs in a forked child whose stderr is captured.
 */
#include <regex.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "shim/shim_log.h"

static char captured[8192];

static void set_or_unset(const char *name, const char *value)
{
	if (value)
		setenv(name, value, 1);
	else
		unsetenv(name);
}

static void emit_each_kind(void)
{
	shim_log(FL_LOG_WARN, SHIM_LOG_NET, "dir/file.c", 42, "warn-net %d", 1);
	shim_log(FL_LOG_INFO, SHIM_LOG_INIT, "file.c", 1, "info-init");
	shim_log(FL_LOG_INFO, SHIM_LOG_NET, "file.c", 1, "info-net\n");
	shim_log(FL_LOG_INFO, SHIM_LOG_COLL, "file.c", 1, "info-coll");
	shim_log(FL_LOG_TRACE, SHIM_LOG_NET, "file.c", 1, "trace-net");
	shim_log_set_rank(5);
	shim_log(FL_LOG_WARN, SHIM_LOG_ALL, "file.c", 1, "after-rank");
}

/* What a process with these settings prints to stderr. */
static const char *run(const char *debug, const char *subsys)
{
	int fds[2], status;
	size_t used = 0;
	ssize_t n;
	pid_t pid;

	assert_int_equal(pipe(fds), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(fds[1], STDERR_FILENO);
		close(fds[0]);
		set_or_unset("NCCL_DEBUG", debug);
		set_or_unset("NCCL_DEBUG_SUBSYS", subsys);
		setenv("RANK", "3", 1);
		emit_each_kind();
		_exit(0);
	}
	close(fds[1]);
	while ((n = read(fds[0], captured + used, sizeof(captured) - 1 - used)) > 0)
		used += (size_t)n;
	captured[used] = '\0';
	close(fds[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	return captured;
}

static int has_line(const char *text, const char *pattern)
{
	regex_t re;
	int found;

	assert_int_equal(regcomp(&re, pattern, REG_EXTENDED | REG_NEWLINE | REG_NOSUB), 0);
	found = regexec(&re, text, 0, NULL, 0) == 0;
	regfree(&re);
	return found;
}

static void test_unset_prints_warnings_only(void **state)
{
	const char *out = run(NULL, NULL);

	(void)state;
	assert_true(has_line(out,
			     "^[^: ]+:[0-9]+:[0-9]+ \\[3\\] file\\.c:42 NCCL WARN warn-net 1$"));
	assert_true(has_line(out, "\\[5\\] file\\.c:1 NCCL WARN after-rank$"));
	assert_null(strstr(out, "info-"));
	assert_null(strstr(out, "trace-"));
}

static void test_info_uses_nccl_default_subsystems(void **state)
{
	const char *out = run("INFO", NULL);

	(void)state;
	assert_true(has_line(out, "^[^: ]+:[0-9]+:[0-9]+ \\[3\\] NCCL INFO info-init$"));
	assert_null(strstr(out, "info-net"));
	assert_null(strstr(out, "info-coll"));
	assert_null(strstr(out, "trace-net"));
	assert_non_null(strstr(out, "warn-net"));
}

static void test_subsys_list_and_exclusion(void **state)
{
	const char *out = run("info", "NET,COLL");

	(void)state;
	/* The message's own newline is dropped, not doubled. */
	assert_true(has_line(out, "NCCL INFO info-net$"));
	assert_non_null(strstr(out, "info-coll"));
	assert_null(strstr(out, "info-init"));

	out = run("INFO", "^NET");
	assert_non_null(strstr(out, "info-init"));
	assert_non_null(strstr(out, "info-coll"));
	assert_null(strstr(out, "info-net"));

	out = run("INFO", "ALL");
	assert_non_null(strstr(out, "info-init"));
	assert_non_null(strstr(out, "info-net"));
}

static void test_trace_and_version_levels(void **state)
{
	const char *out = run("TRACE", "NET");

	(void)state;
	assert_true(has_line(out, "NCCL TRACE trace-net$"));
	assert_non_null(strstr(out, "info-net"));

	out = run("VERSION", NULL);
	assert_null(strstr(out, "warn-net"));
	assert_null(strstr(out, "info-init"));
}

static void test_bad_settings_are_reported(void **state)
{
	const char *out = run("LOUD", "INIT,BOGUS");

	(void)state;
	assert_non_null(strstr(out, "NCCL_DEBUG=\"LOUD\" not understood"));
	assert_non_null(strstr(out, "warn-net")); /* fell back to WARN */
	assert_null(strstr(out, "info-init"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unset_prints_warnings_only),
		cmocka_unit_test(test_info_uses_nccl_default_subsystems),
		cmocka_unit_test(test_subsys_list_and_exclusion),
		cmocka_unit_test(test_trace_and_version_levels),
		cmocka_unit_test(test_bad_settings_are_reported),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
