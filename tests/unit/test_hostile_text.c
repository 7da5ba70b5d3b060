/*
 * Issue 49, findings 7, 8 and 9: text from outside is escaped once where it enters, and the
 * environment's out-of-range values fail init naming the variable and the range.
 *  - fl_text: C0, DEL, C1, bytes that are not UTF-8 and the characters that reorder or break
 *    a line (U+202E and the other bidi controls, U+2028/9) become \xNN; other UTF-8 stays.
 *  - every fl_fail message and every log line reaches a terminal with them escaped, whoever
 *    formatted the value in (FABRICLAB_LINK_RATE's parser quotes it raw, for one).
 *  - a device name an inner plugin reports with ESC and a newline is a printable name of at
 *    most FL_DEV_NAME_LEN - 1 characters in the endpoint, cut between whole escapes.
 *  - FABRICLAB_WORLD_SIZE (and WORLD_SIZE...) outside 1..FL_WORLD_SIZE_MAX, or not a number,
 *    fails fl_identity_check, named with the range.
 *  - the tools escape alike (tool_text: SVG, HTML, Prometheus and text outputs).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "plugin/base/error.h"
#include "plugin/base/fl_text.h"
#include "plugin/base/fl_types.h"
#include "plugin/base/identity.h"
#include "plugin/base/log.h"
#include "tools/common/tool_text.h"

#define RLO "\xe2\x80\xae" /* U+202E RIGHT-TO-LEFT OVERRIDE */

static bool raw_control(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || (unsigned char)*s == 0x7f)
			return true;
	return false;
}

static void test_escape_controls_and_bidi(void **state)
{
	char out[128];

	(void)state;
	assert_int_equal(fl_text_escape(out, sizeof(out), "ev\x1b[31mil\nn" RLO "ame"),
			 strlen("ev\\x1b[31mil\\x0an\\xe2\\x80\\xaeame"));
	assert_string_equal(out, "ev\\x1b[31mil\\x0an\\xe2\\x80\\xaeame");
	fl_text_escape(out, sizeof(out), "a\xe2\x81\xa6" "b\xe2\x80\xa8" "c\xc2\x9b" "d\xff");
	assert_string_equal(out, "a\\xe2\\x81\\xa6b\\xe2\\x80\\xa8c\\xc2\\x9bd\\xff");
	/* printable UTF-8 passes: a name in another script is no attack */
	fl_text_escape(out, sizeof(out), "n\xc3\xb6" "de-\xe6\x97\xa5");
	assert_string_equal(out, "n\xc3\xb6" "de-\xe6\x97\xa5");
	assert_false(fl_text_needs_escape("mlx5_0"));
	assert_true(fl_text_needs_escape("x" RLO));
	/* the tools say the same */
	assert_true(tool_text_needs_escape("host" RLO "gpj.exe"));
	tool_text_escape(out, sizeof(out), "host" RLO);
	assert_string_equal(out, "host\\xe2\\x80\\xae");
	/* cut between whole escapes, never inside one */
	assert_true(fl_text_escape(out, 7, "ab\x1b\x1b") >= 7);
	assert_string_equal(out, "ab\\x1b");
}

static void test_fail_messages_escape(void **state)
{
	(void)state;
	fl_fail(FL_ERR_USAGE, "FABRICLAB_LINK_RATE \"%s\": expected a rate", "\x1b]0;owned\x07" RLO);
	assert_false(raw_control(fl_error_text()));
	assert_null(strstr(fl_error_text(), RLO));
	assert_non_null(strstr(fl_error_text(), "\\x1b]0;owned\\x07\\xe2\\x80\\xae"));
}

static char logged[1024];

static void keep_log(int level, unsigned long flags, const char *file, int line, const char *fmt,
		     ...)
{
	va_list ap;

	(void)level, (void)flags, (void)file, (void)line;
	va_start(ap, fmt);
	vsnprintf(logged, sizeof(logged), fmt, ap);
	va_end(ap);
}

static void test_log_lines_escape(void **state)
{
	(void)state;
	fl_log_set_logger(keep_log);
	FL_WARN("init failed: FABRICLAB_SOCKET_IFNAME=%s", "eth0\n\x1b[2J" RLO);
	assert_false(raw_control(logged));
	assert_null(strstr(logged, RLO));
	assert_non_null(strstr(logged, "eth0\\x0a\\x1b[2J"));
}

static void test_device_name_enters_escaped(void **state)
{
	struct fl_endpoint ep;

	(void)state;
	fl_identity_local(&ep, 0, "ev\x1b[31mil\nname" RLO, 0);
	assert_false(raw_control(ep.dev_name));
	assert_false(fl_text_needs_escape(ep.dev_name));
	assert_true(strlen(ep.dev_name) <= FL_DEV_NAME_LEN - 1);
	/* "ev\x1b[31mil" is 12: "\x0a" does not fit in 15 and is not cut in two */
	assert_string_equal(ep.dev_name, "ev\\x1b[31mil");
	fl_identity_local(&ep, 0, "abcdefghijklm\x1b", 0);
	assert_string_equal(ep.dev_name, "abcdefghijklm");
	/* a name escaped already (ext does it where it enters) is cut the same way */
	fl_identity_local(&ep, 0, "ev\\x1b[31mil\\x0an", 0);
	assert_string_equal(ep.dev_name, "ev\\x1b[31mil");
}

static void world_refused(const char *name, const char *value)
{
	setenv(name, value, 1);
	assert_int_equal(fl_identity_check(), FL_ERR_USAGE);
	assert_non_null(strstr(fl_error_text(), name));
	assert_non_null(strstr(fl_error_text(), "from 1 to 16777216"));
	assert_int_equal(fl_identity_world_size(), -1);
	unsetenv(name);
}

static void test_world_size_range(void **state)
{
	(void)state;
	unsetenv("FABRICLAB_RANK");
	unsetenv("RANK");
	unsetenv("FABRICLAB_NODE_NAME");
	unsetenv("NODE_NAME");
	unsetenv("WORLD_SIZE");
	unsetenv("OMPI_COMM_WORLD_SIZE");
	unsetenv("SLURM_NTASKS");
	world_refused("FABRICLAB_WORLD_SIZE", "20000000");
	world_refused("FABRICLAB_WORLD_SIZE", "-1");
	world_refused("FABRICLAB_WORLD_SIZE", "abc");
	world_refused("FABRICLAB_WORLD_SIZE", "100000000000000000000000");
	world_refused("FABRICLAB_WORLD_SIZE", "0");
	world_refused("WORLD_SIZE", "16777217");
	setenv("FABRICLAB_WORLD_SIZE", "16777216", 1);
	assert_int_equal(fl_identity_check(), FL_OK);
	assert_int_equal(fl_identity_world_size(), 16777216);
	setenv("FABRICLAB_WORLD_SIZE", "4", 1);
	assert_int_equal(fl_identity_check(), FL_OK);
	assert_int_equal(fl_identity_world_size(), 4);
	unsetenv("FABRICLAB_WORLD_SIZE");
	assert_int_equal(fl_identity_check(), FL_OK);
	assert_int_equal(fl_identity_world_size(), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_escape_controls_and_bidi),
		cmocka_unit_test(test_fail_messages_escape),
		cmocka_unit_test(test_log_lines_escape),
		cmocka_unit_test(test_device_name_enters_escaped),
		cmocka_unit_test(test_world_size_range),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
