/* The plugin's JSON writer (plugin/json_out.c), read back with jansson. */
#include <locale.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "plugin/base/json_out.h"
#include "tests/skip.h"

static json_t *parse(char *text)
{
	json_error_t err;
	json_t *root = json_loads(text, 0, &err);

	if (!root)
		fail_msg("not JSON (%s at line %d col %d):\n%s", err.text, err.line, err.column,
			 text);
	return root;
}

static json_t *finish(struct fl_json *j)
{
	char *text;
	size_t len;
	json_t *root;

	assert_int_equal(fl_json_finish(j, &text, &len), 0);
	assert_int_equal(strlen(text), len);
	root = parse(text);
	free(text);
	return root;
}

static void test_values_and_nesting_round_trip(void **state)
{
	struct fl_json j;
	json_t *root, *a;

	(void)state;
	assert_int_equal(fl_json_init(&j), 0);
	fl_json_object(&j, NULL);
	fl_json_string(&j, "s", "text");
	fl_json_string(&j, "nothing", NULL);
	fl_json_int(&j, "neg", -42);
	fl_json_uint(&j, "big", UINT64_MAX / 2);
	fl_json_double(&j, "x", 1.5e-7);
	fl_json_double(&j, "nan", NAN);
	fl_json_double(&j, "inf", INFINITY);
	fl_json_bool(&j, "yes", 1);
	fl_json_null(&j, "n");
	fl_json_array(&j, "rows");
	for (int i = 0; i < 3; i++) {
		fl_json_array_inline(&j, NULL);
		fl_json_int(&j, NULL, i);
		fl_json_int(&j, NULL, i * i);
		fl_json_end(&j);
	}
	fl_json_end(&j);
	fl_json_object_inline(&j, "inl");
	fl_json_array_inline(&j, "empty");
	fl_json_end(&j);
	fl_json_object(&j, "deep"); /* inside an inline container: stays on the line */
	fl_json_int(&j, "k", 1);
	fl_json_end(&j);
	fl_json_end(&j);
	fl_json_object(&j, "empty_obj");
	fl_json_end(&j);
	fl_json_end(&j);
	root = finish(&j);
	assert_string_equal(json_string_value(json_object_get(root, "s")), "text");
	assert_true(json_is_null(json_object_get(root, "nothing")));
	assert_int_equal(json_integer_value(json_object_get(root, "neg")), -42);
	assert_int_equal(json_integer_value(json_object_get(root, "big")), UINT64_MAX / 2);
	assert_true(fabs(json_real_value(json_object_get(root, "x")) - 1.5e-7) < 1e-18);
	assert_true(json_is_null(json_object_get(root, "nan")));
	assert_true(json_is_null(json_object_get(root, "inf")));
	assert_true(json_is_true(json_object_get(root, "yes")));
	assert_true(json_is_null(json_object_get(root, "n")));
	a = json_object_get(root, "rows");
	assert_int_equal(json_array_size(a), 3);
	assert_int_equal(json_integer_value(json_array_get(json_array_get(a, 2), 1)), 4);
	a = json_object_get(root, "inl");
	assert_int_equal(json_array_size(json_object_get(a, "empty")), 0);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(a, "deep"), "k")), 1);
	assert_int_equal(json_object_size(json_object_get(root, "empty_obj")), 0);
	json_decref(root);
}

static void check_escaped(const char *in, const char *want)
{
	struct fl_json j;
	json_t *root;

	assert_int_equal(fl_json_init(&j), 0);
	fl_json_object(&j, NULL);
	fl_json_string(&j, in, in); /* keys are escaped too */
	fl_json_end(&j);
	root = finish(&j);
	assert_int_equal(json_object_size(root), 1);
	assert_string_equal(json_string_value(json_object_get(root, want)), want);
	json_decref(root);
}

static void test_strings_are_escaped_and_made_valid_utf8(void **state)
{
	(void)state;
	check_escaped("plain", "plain");
	check_escaped("q\"uote\\back/slash", "q\"uote\\back/slash");
	check_escaped("tab\tnl\ncr\rbell\x07" "del\x7f", "tab\tnl\ncr\rbell\x07" "del\x7f");
	check_escaped("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80",
		      "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
	/* Stray, overlong, truncated, surrogate and too-large sequences become U+FFFD. */
	check_escaped("a\xff" "b", "a\xef\xbf\xbd" "b");
	check_escaped("\xc0\x80", "\xef\xbf\xbd\xef\xbf\xbd");
	check_escaped("x\xe2\x82", "x\xef\xbf\xbd\xef\xbf\xbd");
	check_escaped("\xed\xa0\x80!", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd!");
	check_escaped("\xf4\x90\x80\x80", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
}

/* Locales whose decimal separator is a comma (scripts/deps.sh generates de_DE.UTF-8). */
static const char *const comma_locales[] = { "de_DE.UTF-8", "fr_FR.UTF-8", "de_DE", NULL };
static const char *comma_locale; /* the one installed here, found by main() */

static const char *find_comma_locale(void)
{
	const char *found = NULL;

	for (int i = 0; comma_locales[i] && !found; i++) {
		if (setlocale(LC_NUMERIC, comma_locales[i]) &&
		    localeconv()->decimal_point[0] == ',')
			found = comma_locales[i];
	}
	setlocale(LC_NUMERIC, "C");
	return found;
}

/* A host program's locale must not turn 0.5 into "0,5". */
static void test_numbers_ignore_the_locale(void **state)
{
	struct fl_json j;
	json_t *root;

	(void)state;
	assert_non_null(setlocale(LC_NUMERIC, comma_locale));
	assert_string_equal(localeconv()->decimal_point, ",");
	assert_int_equal(fl_json_init(&j), 0);
	fl_json_object(&j, NULL);
	fl_json_double(&j, "half", 0.5);
	fl_json_end(&j);
	setlocale(LC_NUMERIC, "C");
	root = finish(&j);
	assert_true(json_real_value(json_object_get(root, "half")) == 0.5);
	json_decref(root);
}

static void test_unbalanced_documents_are_refused(void **state)
{
	struct fl_json j;
	char *text = (char *)1;
	size_t len = 7;

	(void)state;
	assert_int_equal(fl_json_init(&j), 0);
	fl_json_object(&j, NULL);
	assert_int_not_equal(fl_json_finish(&j, &text, &len), 0); /* left open */
	assert_null(text);
	assert_int_equal(fl_json_init(&j), 0);
	fl_json_object(&j, NULL);
	fl_json_end(&j);
	fl_json_end(&j); /* one end too many */
	assert_int_not_equal(fl_json_finish(&j, &text, &len), 0);
	assert_int_equal(fl_json_init(&j), 0);
	for (int i = 0; i <= FL_JSON_MAX_DEPTH; i++)
		fl_json_array(&j, NULL);
	assert_int_not_equal(fl_json_finish(&j, &text, &len), 0); /* too deep */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_values_and_nesting_round_trip),
		cmocka_unit_test(test_strings_are_escaped_and_made_valid_utf8),
		cmocka_unit_test(test_unbalanced_documents_are_refused),
	};
	const struct CMUnitTest locale_tests[] = {
		cmocka_unit_test(test_numbers_ignore_the_locale),
	};
	int failed = cmocka_run_group_tests(tests, NULL, NULL);

	comma_locale = find_comma_locale();
	if (!comma_locale)
		return fl_test_status(failed, "numbers_ignore_the_locale: no locale with a decimal "
					      "comma installed (de_DE.UTF-8, fr_FR.UTF-8; "
					      "scripts/deps.sh generates de_DE.UTF-8)");
	return fl_test_status(failed + cmocka_run_group_tests(locale_tests, NULL, NULL), NULL);
}
