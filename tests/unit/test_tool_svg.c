/*
 * The SVG pieces report --svg and sweep --svg share: the colour scale's ends, escaping, the legend;
 * and the escaping of text from inputs (tool_text) every output uses.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tools/common/tool_svg.h"
#include "tools/common/tool_text.h"

/* What fn wrote, as a malloc'd string. */
static char *drawn(void (*draw)(FILE *out))
{
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);

	assert_non_null(out);
	draw(out);
	assert_int_equal(fclose(out), 0);
	return text;
}

static void test_colour_scale_ends_and_clamps(void **state)
{
	char c[8];

	(void)state;
	tool_svg_colour(0, c, sizeof(c));
	assert_string_equal(c, "#440154");
	tool_svg_colour(-3, c, sizeof(c));
	assert_string_equal(c, "#440154");
	tool_svg_colour(0.5, c, sizeof(c));
	assert_string_equal(c, "#21918c");
	tool_svg_colour(1, c, sizeof(c));
	assert_string_equal(c, "#fde725");
	tool_svg_colour(7, c, sizeof(c));
	assert_string_equal(c, "#fde725");
	tool_svg_colour(0.125, c, sizeof(c)); /* halfway between the first two stops */
	assert_string_equal(c, "#402a70");
}

static void escape_odd_name(FILE *out)
{
	tool_svg_text(out, "a<b> & \"c\"");
}

static void test_text_is_escaped(void **state)
{
	char *text = drawn(escape_odd_name);

	(void)state;
	assert_string_equal(text, "a&lt;b&gt; &amp; &quot;c&quot;");
	free(text);
}

static void escape_hostile_name(FILE *out)
{
	/* a terminal title sequence, a byte that is no UTF-8, a C1 CSI, a cut sequence, ' */
	tool_svg_text(out, "ev\x1b]0;T\x07il\xff-\xc2\x9b-\xc3\xa9-'-\xe2\x82");
}

static void test_controls_and_bad_bytes_become_text(void **state)
{
	char *text = drawn(escape_hostile_name);

	(void)state;
	/* é (c3 a9) is UTF-8 and stays; the rest is visible, and the XML stays well-formed */
	assert_string_equal(text, "ev\\x1b]0;T\\x07il\\xff-\\xc2\\x9b-\xc3\xa9-&apos;-\\xe2\\x82");
	free(text);
}

static void test_text_escape_cuts_between_characters(void **state)
{
	char buf[8];

	(void)state;
	/* "a\x1b" needs 5 bytes; cut at 8: "a\x1b" + "\xc3\xa9" would be 7, "\xff" would pass 8 */
	assert_int_equal(tool_text_escape(buf, sizeof(buf), "a\x1b\xc3\xa9\xff"), 11);
	assert_string_equal(buf, "a\\x1b\xc3\xa9");
	assert_int_equal(tool_text_escape(buf, 3, "\xc3\xa9\xc3\xa9"), 4);
	assert_int_equal(strlen(buf), 2); /* one whole é, never half of the second */
	assert_false(tool_text_needs_escape("node-01 é 日本"));
	assert_true(tool_text_needs_escape("\xed\xa0\x80")); /* a surrogate */
	assert_true(tool_text_needs_escape("\xc0\xaf"));	  /* overlong '/' */
	assert_true(tool_text_needs_escape("\xf4\x90\x80\x80")); /* above U+10FFFF */
	assert_true(tool_text_needs_escape("\x7f"));
}

static void test_json_keeps_a_bad_name(void **state)
{
	json_t *j = tool_text_json("I\xff" "B");

	(void)state;
	assert_non_null(j); /* json_string() alone refuses it: that dropped nccl-log's ranks */
	assert_string_equal(json_string_value(j), "I\\xffB");
	json_decref(j);
	j = tool_text_json_opt("");
	assert_true(json_is_null(j));
	json_decref(j);
}

static void scale_to_25(FILE *out)
{
	tool_svg_scale(out, 100, 50, 400, 25, 3);
}

static void test_scale_has_five_labelled_ticks(void **state)
{
	char *text = drawn(scale_to_25);
	const char *p = text;
	int ticks = 0;

	(void)state;
	assert_non_null(strstr(text, "<linearGradient id=\"scale\""));
	assert_non_null(strstr(text, "<stop offset=\"100%\" stop-color=\"#fde725\"/>"));
	assert_non_null(strstr(text, "<rect x=\"100\" y=\"50\" width=\"400\""));
	assert_non_null(strstr(text, "x=\"100.0\" y=\"82\" font-size=\"12\" "
				     "text-anchor=\"middle\">0</text>"));
	assert_non_null(strstr(text, "x=\"200.0\" y=\"82\" font-size=\"12\" "
				     "text-anchor=\"middle\">6.25</text>"));
	assert_non_null(strstr(text, ">25</text>"));
	for (; (p = strstr(p, "<line ")); p++)
		ticks++;
	assert_int_equal(ticks, 5);
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_colour_scale_ends_and_clamps),
		cmocka_unit_test(test_text_is_escaped),
		cmocka_unit_test(test_controls_and_bad_bytes_become_text),
		cmocka_unit_test(test_text_escape_cuts_between_characters),
		cmocka_unit_test(test_json_keeps_a_bad_name),
		cmocka_unit_test(test_scale_has_five_labelled_ticks),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
