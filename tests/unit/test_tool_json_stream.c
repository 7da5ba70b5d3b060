/*
 * tool_json_stream: a document written as it goes reads, byte for byte, as
 * json_dumpf writes the same tree whole (indented or not, compact, with a real
 * precision), through its scalar writers and its jansson values alike; a bad
 * UTF-8 string is escaped, not refused; what outgrows its buffer is all written.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "tools/common/tool_json_stream.h"

static const double reals[] = { 0.0, 1.0, -2.5, 1e9, 1.5e-7, 123456789.0, 0.1, 100.0 / 3.0,
				-1e-300, 4.2e21, -0.0, 50.0, -7.0, 999999.0, 1e6, 1234567.0,
				12345678901234567.0, 5e15, 999999999999999.0, -123456.0 };
static const char *const strings[] = { "", "plain", "quote \" and \\ backslash",
				       "tab\tnew\nline\rcr\bbs\fff", "ctl \x01\x1f end",
				       "utf-8: \xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", "slash /" };

/* The reference: the whole tree built, then dumped. */
static json_t *tree(void)
{
	json_t *root = json_object(), *a = json_array(), *nested = json_object();

	json_object_set_new(root, "schema", json_string("x"));
	json_object_set_new(root, "count", json_integer(-42));
	for (size_t i = 0; i < sizeof(reals) / sizeof(reals[0]); i++)
		json_array_append_new(a, json_real(reals[i]));
	for (size_t i = 0; i < sizeof(strings) / sizeof(strings[0]); i++)
		json_array_append_new(a, json_string(strings[i]));
	json_array_append_new(a, json_true());
	json_array_append_new(a, json_false());
	json_array_append_new(a, json_null());
	json_array_append_new(a, json_array());
	json_array_append_new(a, json_object());
	json_array_append_new(a, json_pack("[[i,i],[i,i]]", 1, 2, 3, 4));
	json_object_set_new(root, "list", a);
	json_object_set_new(nested, "inner", json_pack("{s:f, s:[s, s], s:{}}", "r", 0.5, "l",
							  "a", "b", "e"));
	json_object_set_new(root, "nested", nested);
	json_object_set_new(root, "empty", json_array());
	return root;
}

/* The same written as it goes: scalars directly, some members as jansson values. */
static void streamed(struct tool_json_stream *s)
{
	tool_json_stream_open(s, NULL, '{');
	tool_json_stream_string(s, "schema", "x");
	tool_json_stream_int(s, "count", -42);
	tool_json_stream_open(s, "list", '[');
	for (size_t i = 0; i < sizeof(reals) / sizeof(reals[0]); i++)
		tool_json_stream_real(s, NULL, reals[i]);
	for (size_t i = 0; i < sizeof(strings) / sizeof(strings[0]); i++)
		tool_json_stream_string(s, NULL, strings[i]);
	tool_json_stream_bool(s, NULL, true);
	tool_json_stream_bool(s, NULL, false);
	tool_json_stream_null(s, NULL);
	tool_json_stream_open(s, NULL, '[');
	tool_json_stream_close(s);
	tool_json_stream_value(s, NULL, json_object());
	tool_json_stream_open(s, NULL, '[');
	tool_json_stream_value(s, NULL, json_pack("[i,i]", 1, 2));
	tool_json_stream_open(s, NULL, '[');
	tool_json_stream_int(s, NULL, 3);
	tool_json_stream_int(s, NULL, 4);
	tool_json_stream_close(s);
	tool_json_stream_close(s);
	tool_json_stream_close(s);
	tool_json_stream_open(s, "nested", '{');
	tool_json_stream_value(s, "inner", json_pack("{s:f, s:[s, s], s:{}}", "r", 0.5, "l", "a",
						      "b", "e"));
	tool_json_stream_close(s);
	tool_json_stream_open(s, "empty", '[');
	tool_json_stream_close(s);
	tool_json_stream_close(s);
}

static char *whole(size_t flags)
{
	json_t *t = tree();
	char *text = json_dumps(t, flags);

	json_decref(t);
	assert_non_null(text);
	return text;
}

static char *as_it_goes(size_t flags, void (*write)(struct tool_json_stream *))
{
	struct tool_json_stream *s = malloc(sizeof(*s));
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	assert_non_null(s);
	assert_non_null(f);
	tool_json_stream_init(s, f, flags);
	write(s);
	assert_int_equal(tool_json_stream_end(s), 0);
	fclose(f);
	free(s);
	return text;
}

static void same_text(size_t flags)
{
	char *a = whole(flags), *b = as_it_goes(flags, streamed);

	assert_string_equal(b, a);
	free(a);
	free(b);
}

static void test_indented_as_the_report_writes(void **state)
{
	(void)state;
	same_text(JSON_INDENT(1) | JSON_REAL_PRECISION(6));
}

static void test_other_indents_and_precisions(void **state)
{
	(void)state;
	same_text(JSON_INDENT(3));
	same_text(JSON_INDENT(2) | JSON_REAL_PRECISION(17));
	same_text(JSON_INDENT(1) | JSON_REAL_PRECISION(15));
	same_text(JSON_INDENT(1) | JSON_REAL_PRECISION(1));
	same_text(JSON_INDENT(31)); /* deeper than the indents written in one piece */
	same_text(0);
	same_text(JSON_COMPACT | JSON_REAL_PRECISION(3));
}

static void bad_utf8(struct tool_json_stream *s)
{
	tool_json_stream_open(s, NULL, '[');
	tool_json_stream_string(s, NULL, "node\xff\xfe");
	tool_json_stream_real(s, NULL, NAN);
	tool_json_stream_close(s);
}

static void test_bad_utf8_escaped_and_nan_null(void **state)
{
	char *text = as_it_goes(JSON_COMPACT, bad_utf8);
	json_t *back = json_loads(text, 0, NULL);

	(void)state;
	assert_non_null(back);
	assert_string_equal(json_string_value(json_array_get(back, 0)), "node\\xff\\xfe");
	assert_true(json_is_null(json_array_get(back, 1)));
	json_decref(back);
	free(text);
}

/* More than the buffer holds, in one string and in many members. */
static void big(struct tool_json_stream *s)
{
	char *long_text = malloc(3 * TOOL_JSON_STREAM_BUF);

	assert_non_null(long_text);
	memset(long_text, 'a', 3 * TOOL_JSON_STREAM_BUF - 1);
	long_text[3 * TOOL_JSON_STREAM_BUF - 1] = '\0';
	tool_json_stream_open(s, NULL, '[');
	tool_json_stream_string(s, NULL, long_text);
	for (int i = 0; i < 100000; i++)
		tool_json_stream_int(s, NULL, i);
	tool_json_stream_close(s);
	free(long_text);
}

static void test_more_than_its_buffer(void **state)
{
	char *text = as_it_goes(JSON_INDENT(1), big);
	json_t *back = json_loads(text, 0, NULL);

	(void)state;
	assert_non_null(back);
	assert_int_equal(json_array_size(back), 100001);
	assert_int_equal(strlen(json_string_value(json_array_get(back, 0))),
			 3 * TOOL_JSON_STREAM_BUF - 1);
	assert_int_equal(json_integer_value(json_array_get(back, 100000)), 99999);
	json_decref(back);
	free(text);
}

/*
 * Reals as a report has them (short decimals: 0.1, 12.25, 1e-4) and not
 * (thirds, random bits), near where "%g" turns to an exponent or rounds up a
 * digit: each written without printf where it can be must read as jansson's.
 */
#define MANY_REALS 6000
static double many[MANY_REALS];

static void fill_many(void)
{
	static const double edges[] = { 1e-4, 9.9999e-5, 0.00012, 999999.0, 999999.5,
					9999995.0, 0.1234565, 1.0 / 3.0, 2.675, 1e15 - 1.0,
					123456789012345.6, 0.3, 0.7, 1.1, 5e-5 };
	uint64_t seed = 12345;
	size_t n = 0;

	for (size_t i = 0; i < sizeof(edges) / sizeof(edges[0]); i++) {
		many[n++] = edges[i];
		many[n++] = -edges[i];
	}
	while (n < MANY_REALS) {
		uint64_t r;
		double v;

		seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
		r = seed >> 11;
		if (n % 3 == 0) /* digits / 10^k */
			v = (double)(r % 10000000) / pow(10.0, (double)((r >> 40) % 12));
		else if (n % 3 == 1) /* any bits in 10^-6 .. 10^9 */
			v = (double)r / (double)(1ULL << 53) * pow(10.0, (double)((r >> 7) % 16) - 6.0);
		else /* one digit after the point, as the rates are */
			v = (double)(r % 100000) / 10.0;
		many[n++] = (r & 1) ? -v : v;
	}
}

static void many_streamed(struct tool_json_stream *s)
{
	tool_json_stream_open(s, NULL, '[');
	for (size_t i = 0; i < MANY_REALS; i++)
		tool_json_stream_real(s, NULL, many[i]);
	tool_json_stream_close(s);
}

static void test_many_reals_as_jansson_writes(void **state)
{
	static const int precisions[] = { 1, 3, 6, 10, 15, 16, 17 };

	(void)state;
	fill_many();
	for (size_t p = 0; p < sizeof(precisions) / sizeof(precisions[0]); p++) {
		size_t flags = JSON_INDENT(1) | JSON_REAL_PRECISION(precisions[p]);
		json_t *a = json_array();
		char *want, *got;

		for (size_t i = 0; i < MANY_REALS; i++)
			json_array_append_new(a, json_real(many[i]));
		want = json_dumps(a, flags);
		json_decref(a);
		got = as_it_goes(flags, many_streamed);
		assert_non_null(want);
		assert_string_equal(got, want);
		free(want);
		free(got);
	}
}

static void test_unbalanced_is_an_error(void **state)
{
	struct tool_json_stream *s = malloc(sizeof(*s));
	FILE *f = fopen("/dev/null", "w");

	(void)state;
	assert_non_null(s);
	assert_non_null(f);
	tool_json_stream_init(s, f, 0);
	tool_json_stream_open(s, NULL, '{');
	assert_int_equal(tool_json_stream_end(s), -1); /* left open */
	tool_json_stream_init(s, f, 0);
	tool_json_stream_close(s);
	assert_int_equal(tool_json_stream_end(s), -1); /* closed what was not open */
	tool_json_stream_init(s, f, 0);
	tool_json_stream_value(s, NULL, NULL); /* a value jansson could not make */
	assert_int_equal(tool_json_stream_end(s), -1);
	fclose(f);
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_indented_as_the_report_writes),
		cmocka_unit_test(test_other_indents_and_precisions),
		cmocka_unit_test(test_bad_utf8_escaped_and_nan_null),
		cmocka_unit_test(test_more_than_its_buffer),
		cmocka_unit_test(test_unbalanced_is_an_error),
		cmocka_unit_test(test_many_reals_as_jansson_writes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
