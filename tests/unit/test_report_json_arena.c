/*
 * The bump arena `fabriclab report` builds each file's jansson trees in
 * (tools/common/tool_json_arena.h): values carved from it while it is on,
 * given back by a release, malloc'd as ever when it is off or on another
 * thread, and a value made before it was on really freed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>
#include <pthread.h>

#include "tools/common/tool_json_arena.h"

static json_t *parse(const char *text)
{
	json_error_t err;
	json_t *root = json_loadb(text, strlen(text), JSON_REJECT_DUPLICATES, &err);

	assert_non_null(root);
	return root;
}

static void test_values_are_carved_and_kept_until_off(void **state)
{
	struct tool_json_arena a = { NULL, NULL };
	json_t *root;
	size_t used;

	(void)state;
	tool_json_arena_on(&a);
	assert_int_equal(tool_json_arena_used(), 0);
	root = parse("{\"node\":\"n1\",\"hops\":[{\"bytes\":5,\"gbs\":1.5}]}");
	used = tool_json_arena_used();
	assert_true(used > 0);
	assert_string_equal(json_string_value(json_object_get(root, "node")), "n1");
	assert_int_equal(json_integer_value(json_object_get(
				 json_array_get(json_object_get(root, "hops"), 0), "bytes")),
			 5);
	json_decref(root); /* costs nothing: the arena is still as full */
	assert_int_equal(tool_json_arena_used(), used);
	tool_json_arena_off(&a);
	assert_int_equal(tool_json_arena_used(), 0);
	/* off: jansson's own malloc and free again (a sanitizer build sees a mistake) */
	root = parse("[1, 2, \"x\"]");
	json_decref(root);
	/* on again: it starts empty and reuses its memory */
	tool_json_arena_on(&a);
	root = parse("{\"node\":\"n1\",\"hops\":[{\"bytes\":5,\"gbs\":1.5}]}");
	assert_int_equal(tool_json_arena_used(), used);
	json_decref(root);
	tool_json_arena_off(&a);
	tool_json_arena_free(&a);
}

static void test_release_gives_back_what_followed_the_mark(void **state)
{
	struct tool_json_arena a = { NULL, NULL };
	struct tool_json_mark m;
	json_t *rest, *hop1, *hop2;
	size_t at_mark;

	(void)state;
	tool_json_arena_on(&a);
	rest = parse("{\"schema\":\"s\",\"hops\":[]}");
	m = tool_json_arena_mark(&a);
	at_mark = tool_json_arena_used();
	hop1 = parse("{\"src_node\":\"a\",\"bytes\":1}");
	assert_true(tool_json_arena_used() > at_mark);
	json_decref(hop1);
	tool_json_arena_release(&a, m);
	assert_int_equal(tool_json_arena_used(), at_mark);
	hop2 = parse("{\"src_node\":\"b\",\"bytes\":2}");
	assert_ptr_equal(hop2, hop1); /* the same bytes again */
	assert_string_equal(json_string_value(json_object_get(hop2, "src_node")), "b");
	assert_string_equal(json_string_value(json_object_get(rest, "schema")), "s");
	json_decref(hop2);
	json_decref(rest);
	tool_json_arena_off(&a);
	tool_json_arena_free(&a);
}

/* Values past a chunk's end (64 KiB) and one larger than a chunk. */
static void test_large_trees_span_chunks(void **state)
{
	struct tool_json_arena a = { NULL, NULL };
	size_t big = 300 << 10, n = 20000;
	char *text = malloc(big + 3), *list = malloc(n * 4 + 3);
	struct tool_json_mark start;
	json_t *s, *arr;

	(void)state;
	assert_non_null(text);
	assert_non_null(list);
	text[0] = '"';
	memset(text + 1, 'x', big);
	strcpy(text + big + 1, "\"");
	strcpy(list, "[");
	for (size_t i = 0; i < n; i++)
		strcat(list + i * 2, i ? ",7" : "7");
	strcat(list + n * 2, "]");
	tool_json_arena_on(&a);
	start = tool_json_arena_mark(&a);
	s = json_loadb(text, strlen(text), JSON_DECODE_ANY, NULL);
	assert_non_null(s);
	assert_int_equal(json_string_length(s), big);
	assert_true(tool_json_arena_used() >= big);
	arr = parse(list);
	assert_int_equal(json_array_size(arr), n);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(json_integer_value(json_array_get(arr, i)), 7);
	assert_int_equal(json_string_length(s), big);
	json_decref(arr);
	json_decref(s);
	tool_json_arena_release(&a, start);
	assert_int_equal(tool_json_arena_used(), 0);
	arr = parse(list); /* again, in the chunks already there */
	assert_int_equal(json_array_size(arr), n);
	json_decref(arr);
	tool_json_arena_off(&a);
	tool_json_arena_free(&a);
	free(text);
	free(list);
}

/* Made by malloc before the arena was on: freed for real (a leak checker would see it). */
static void test_value_from_before_is_really_freed(void **state)
{
	struct tool_json_arena a = { NULL, NULL };
	json_t *before = parse("{\"kept\":[1,2,3],\"name\":\"a long enough string\"}");

	(void)state;
	tool_json_arena_on(&a);
	json_decref(before);
	assert_int_equal(tool_json_arena_used(), 0);
	tool_json_arena_off(&a);
	tool_json_arena_free(&a);
}

static void *other_thread(void *arg)
{
	json_t *v;

	(void)arg;
	if (tool_json_arena_used())
		return "another thread's arena was on here";
	v = json_pack("{s:s, s:i}", "node", "n2", "rank", 3);
	json_decref(v); /* really freed: malloc'd here */
	return NULL;
}

static void test_other_threads_keep_malloc(void **state)
{
	struct tool_json_arena a = { NULL, NULL };
	pthread_t t;
	void *res = "not run";
	json_t *mine;
	size_t used;

	(void)state;
	tool_json_arena_on(&a);
	mine = parse("{\"a\":1}");
	used = tool_json_arena_used();
	assert_int_equal(pthread_create(&t, NULL, other_thread, NULL), 0);
	assert_int_equal(pthread_join(t, &res), 0);
	assert_null(res);
	assert_int_equal(tool_json_arena_used(), used);
	json_decref(mine);
	tool_json_arena_off(&a);
	tool_json_arena_free(&a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_values_are_carved_and_kept_until_off),
		cmocka_unit_test(test_release_gives_back_what_followed_the_mark),
		cmocka_unit_test(test_large_trees_span_chunks),
		cmocka_unit_test(test_value_from_before_is_really_freed),
		cmocka_unit_test(test_other_threads_keep_malloc),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
