/*
 * The profiler's registries of what it owns (plugin/profiler/prof_registry.c):
 * a pointer is found by its value only, never read first; removed entries
 * are not found again, and their slots serve later entries; a handle maps to
 * its aligned chunk, and only inside the chunk's used bytes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

#include <cmocka.h>

#include "plugin/profiler/prof_internal.h"

/* Keys that are never dereferenced: a PROT_NONE mapping makes sure of it. */
static char *no_access_pages(size_t n)
{
	void *p = mmap(NULL, n * 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	assert_true(p != MAP_FAILED);
	return p;
}

static void test_contexts_by_address(void **state)
{
	char *pages = no_access_pages(4);
	const struct fl_prof_ctx *a = (const void *)pages, *b = (const void *)(pages + 4096);

	(void)state;
	assert_false(fl_prof_reg_ctx_has(NULL));
	assert_false(fl_prof_reg_ctx_has(a));
	assert_int_equal(fl_prof_reg_ctx_add(a), 0);
	assert_true(fl_prof_reg_ctx_has(a));
	assert_false(fl_prof_reg_ctx_has(b));
	assert_false(fl_prof_reg_ctx_has(pages + 1)); /* an address inside is not the context */
	fl_prof_reg_ctx_del(a);
	assert_false(fl_prof_reg_ctx_has(a));
	fl_prof_reg_ctx_del(a); /* twice: nothing */
	munmap(pages, 4 * 4096);
}

/* Many communicators come and go: the table never fills with what has gone. */
static void test_removed_slots_serve_again(void **state)
{
	char *pages = no_access_pages(4);

	(void)state;
	for (int round = 0; round < 50; round++) {
		for (int i = 0; i < 200; i++)
			assert_int_equal(fl_prof_reg_ctx_add((const void *)(pages + round * 8 + i * 64)),
					 0);
		for (int i = 0; i < 200; i++)
			assert_true(fl_prof_reg_ctx_has(pages + round * 8 + i * 64));
		for (int i = 0; i < 200; i++)
			fl_prof_reg_ctx_del((const void *)(pages + round * 8 + i * 64));
	}
	assert_false(fl_prof_reg_ctx_has(pages));
	munmap(pages, 4 * 4096);
}

static void test_handles_map_to_their_chunk(void **state)
{
	struct fl_prof_chunk *k = NULL;
	char *p;

	(void)state;
	assert_int_equal(posix_memalign((void **)&k, FL_PROF_CHUNK_ALIGN, 4096), 0);
	k->magic = FL_PROF_CHUNK_MAGIC;
	k->bytes = 4096;
	p = (char *)k;
	assert_null(fl_prof_chunk_of(p + 100)); /* not registered yet */
	assert_int_equal(fl_prof_reg_chunk_add(k), 0);
	assert_ptr_equal(fl_prof_chunk_of(p + 100), k);
	assert_ptr_equal(fl_prof_chunk_of(p + 4095), k);
	assert_null(fl_prof_chunk_of(p + 4096)); /* past its ops: never a handle we gave */
	assert_null(fl_prof_chunk_of(NULL));
	fl_prof_reg_chunk_del(k);
	assert_null(fl_prof_chunk_of(p + 100));
	free(k);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_contexts_by_address),
		cmocka_unit_test(test_removed_slots_serve_again),
		cmocka_unit_test(test_handles_map_to_their_chunk),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
