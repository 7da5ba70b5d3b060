/* Environment parsing: accepted forms, and errors that name the variable and the form. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "plugin/base/config.h"
#include "plugin/base/error.h"
#include "plugin/base/fl_types.h"
#include "plugin/base/identity.h"

static void test_long_default_and_range(void **state)
{
	long v = 0;

	(void)state;
	unsetenv("FL_T_LONG");
	assert_int_equal(fl_env_long("FL_T_LONG", 4, 1, 16, &v), FL_OK);
	assert_int_equal(v, 4);
	setenv("FL_T_LONG", "16", 1);
	assert_int_equal(fl_env_long("FL_T_LONG", 4, 1, 16, &v), FL_OK);
	assert_int_equal(v, 16);
	setenv("FL_T_LONG", "17", 1);
	assert_int_equal(fl_env_long("FL_T_LONG", 4, 1, 16, &v), FL_ERR_USAGE);
	assert_int_equal(v, 4);
	assert_non_null(strstr(fl_error_text(), "FL_T_LONG=\"17\""));
	assert_non_null(strstr(fl_error_text(), "from 1 to 16"));
	setenv("FL_T_LONG", "3x", 1);
	assert_int_equal(fl_env_long("FL_T_LONG", 4, 1, 16, &v), FL_ERR_USAGE);
}

static void test_bytes_suffixes(void **state)
{
	size_t v = 0;

	(void)state;
	assert_int_equal(fl_parse_bytes("512K", &v), 0);
	assert_int_equal(v, 512 * 1024);
	assert_int_equal(fl_parse_bytes("128M", &v), 0);
	assert_int_equal(v, 128u << 20);
	assert_int_equal(fl_parse_bytes("1GiB", &v), 0);
	assert_int_equal(v, 1u << 30);
	assert_int_equal(fl_parse_bytes("8", &v), 0);
	assert_int_equal(v, 8);
	assert_int_equal(fl_parse_bytes("-1", &v), -1);
	assert_int_equal(fl_parse_bytes("12Q", &v), -1);
	assert_int_equal(fl_parse_bytes("", &v), -1);
	setenv("FL_T_BYTES", "2T", 1);
	assert_int_equal(fl_env_bytes("FL_T_BYTES", 1, 1, 1 << 20, &v), FL_ERR_USAGE);
	assert_non_null(strstr(fl_error_text(), "FL_T_BYTES"));
	assert_non_null(strstr(fl_error_text(), "suffix K, M or G"));
}

static void test_choice_lists_accepted_words(void **state)
{
	static const char *const words[] = { "auto", "socket", "ib", NULL };
	int v = -1;

	(void)state;
	setenv("FL_T_CHOICE", "SOCKET", 1);
	assert_int_equal(fl_env_choice("FL_T_CHOICE", words, 0, &v), FL_OK);
	assert_int_equal(v, 1);
	setenv("FL_T_CHOICE", "tcp", 1);
	assert_int_equal(fl_env_choice("FL_T_CHOICE", words, 0, &v), FL_ERR_USAGE);
	assert_non_null(strstr(fl_error_text(), "expected one of auto|socket|ib"));
}

static void test_node_name_precedence(void **state)
{
	struct fl_endpoint ep;

	(void)state;
	setenv("NODE_NAME", "k8s-node", 1);
	unsetenv("FABRICLAB_NODE_NAME");
	fl_identity_local(&ep, 2, "eth1", 9);
	assert_string_equal(ep.node, "k8s-node");
	assert_string_equal(ep.dev_name, "eth1");
	assert_int_equal(ep.dev, 2);
	assert_int_equal(ep.comm_hash, 9);
	setenv("FABRICLAB_NODE_NAME", "a-name-longer-than-the-forty-eight-bytes-a-handle-holds", 1);
	fl_identity_local(&ep, 0, "lo", 0);
	assert_int_equal(strlen(ep.node), FL_NODE_NAME_LEN - 1);
	setenv("RANK", "12", 1);
	unsetenv("FABRICLAB_RANK");
	fl_identity_local(&ep, 0, "lo", 0);
	assert_int_equal(ep.rank, 12);
	setenv("RANK", "twelve", 1);
	fl_identity_local(&ep, 0, "lo", 0);
	assert_int_equal(ep.rank, -1);
}

/* Only plain digits (and '-') are integers; echoed values are escaped. */
static void test_integers_are_plain_and_values_escaped(void **state)
{
	static const char *const bad[] = { " 7", "+3", "7 ", "0x10", "", NULL };
	long x = 0;
	size_t b = 0;
	char q[FL_QUOTE_LEN];

	(void)state;
	for (int i = 0; bad[i]; i++) {
		setenv("FL_T_LONG", bad[i], 1);
		if (bad[i][0])
			assert_int_equal(fl_env_long("FL_T_LONG", 1, -5, 100, &x), FL_ERR_USAGE);
	}
	setenv("FL_T_LONG", "-3", 1);
	assert_int_equal(fl_env_long("FL_T_LONG", 1, -5, 100, &x), FL_OK);
	assert_int_equal(x, -3);
	assert_int_equal(fl_parse_bytes(" 64K", &b), -1);
	assert_int_equal(fl_parse_bytes("+64K", &b), -1);
	assert_int_equal(fl_parse_bytes("64K", &b), 0);
	setenv("FL_T_LONG", "1\x1b[2J", 1);
	assert_int_equal(fl_env_long("FL_T_LONG", 1, 0, 100, &x), FL_ERR_USAGE);
	assert_non_null(strstr(fl_error_text(), "1\\x1b[2J"));
	assert_null(strchr(fl_error_text(), '\x1b'));
	assert_string_equal(fl_quote_value("a\"b\\c\n", q, sizeof(q)), "a\\x22b\\x5cc\\x0a");
	memset(q, 0, sizeof(q));
	fl_quote_value("0123456789012345678901234567890123456789012345678901234567890123456789"
		       "0123456789", q, sizeof(q));
	assert_true(strlen(q) < sizeof(q));
	assert_non_null(strstr(q, "..."));
}

static void test_identity_check(void **state)
{
	char name[5001];

	(void)state;
	unsetenv("RANK");
	unsetenv("NODE_NAME");
	setenv("FABRICLAB_NODE_NAME", "node-3_a.b", 1);
	setenv("FABRICLAB_RANK", "7", 1);
	assert_int_equal(fl_identity_check(), FL_OK);
	setenv("FABRICLAB_RANK", "garbage", 1);
	assert_int_equal(fl_identity_check(), FL_ERR_USAGE);
	assert_non_null(strstr(fl_error_text(), "FABRICLAB_RANK=\"garbage\""));
	setenv("FABRICLAB_RANK", " 7", 1);
	assert_int_equal(fl_identity_check(), FL_ERR_USAGE);
	unsetenv("FABRICLAB_RANK");
	setenv("RANK", "+3", 1);
	assert_int_equal(fl_identity_check(), FL_ERR_USAGE);
	assert_non_null(strstr(fl_error_text(), "RANK=\"+3\""));
	unsetenv("RANK");
	memset(name, 'n', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	setenv("FABRICLAB_NODE_NAME", name, 1);
	assert_int_equal(fl_identity_check(), FL_ERR_USAGE);
	assert_non_null(strstr(fl_error_text(), "(5000 characters)"));
	setenv("FABRICLAB_NODE_NAME", "evil\x1b]0;title\x07", 1);
	assert_int_equal(fl_identity_check(), FL_ERR_USAGE);
	assert_null(strchr(fl_error_text(), '\x1b'));
	assert_null(strchr(fl_error_text(), '\x07'));
	unsetenv("FABRICLAB_NODE_NAME");
	setenv("NODE_NAME", "has space", 1);
	assert_int_equal(fl_identity_check(), FL_ERR_USAGE);
	assert_non_null(strstr(fl_error_text(), "NODE_NAME=\"has space\""));
	unsetenv("NODE_NAME");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_long_default_and_range),
		cmocka_unit_test(test_bytes_suffixes),
		cmocka_unit_test(test_choice_lists_accepted_words),
		cmocka_unit_test(test_node_name_precedence),
		cmocka_unit_test(test_integers_are_plain_and_values_escaped),
		cmocka_unit_test(test_identity_check),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
