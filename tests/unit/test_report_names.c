/*
 * tools/report/report_names: each distinct name kept once, so that a joined
 * hop's names are pointers (report_hop_key) and equal names are one pointer,
 * through the set's growth; the text is the name's, exact bytes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tools/report/report.h"
#include "tools/report/report_names.h"

#define NAMES 5000 /* past several doublings of the set */

static void test_one_copy_per_name(void **state)
{
	struct report_names t = { NULL, 0, 0 };
	struct report_arena a = { NULL };
	const char **first = calloc(NAMES, sizeof(*first));
	char name[32];

	(void)state;
	assert_non_null(first);
	for (int i = 0; i < NAMES; i++) {
		snprintf(name, sizeof(name), "node%05d", i);
		first[i] = report_names_intern(&t, &a, name);
		assert_non_null(first[i]);
		assert_string_equal(first[i], name);
		assert_ptr_not_equal(first[i], name); /* a copy, not the caller's buffer */
	}
	assert_int_equal(t.n, NAMES);
	for (int i = NAMES - 1; i >= 0; i--) {
		snprintf(name, sizeof(name), "node%05d", i);
		assert_ptr_equal(report_names_intern(&t, &a, name), first[i]);
	}
	assert_int_equal(t.n, NAMES);
	/* names that differ by case, a prefix or nothing at all stay apart */
	assert_ptr_not_equal(report_names_intern(&t, &a, "Node00001"), first[1]);
	assert_ptr_not_equal(report_names_intern(&t, &a, "node0000"), first[0]);
	assert_string_equal(report_names_intern(&t, &a, ""), "");
	assert_ptr_equal(report_names_intern(&t, &a, ""), report_names_intern(&t, &a, ""));
	assert_int_equal(t.n, NAMES + 3);
	report_names_free(&t);
	assert_null(t.slots);
	assert_string_equal(first[7], "node00007"); /* the text lives as long as its arena */
	report_arena_free(&a);
	free(first);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_copy_per_name),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
