/* The registration cache: page-aligned sharing, refcounts, ordering, failures. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "plugin/base/error.h"
#include "plugin/base/fl_types.h"
#include "plugin/transport/ib/ib_mr.h"

struct fake_hca {
	int regs, deregs, live;
	int fail_next;
	uint32_t next_key;
};

static int fake_reg(void *ctx, uintptr_t addr, size_t len, struct ib_mr *out)
{
	struct fake_hca *h = ctx;

	if (h->fail_next) {
		h->fail_next = 0;
		return fl_fail(FL_ERR_SYSTEM, "no memory to pin %zu bytes at %#lx", len,
			       (unsigned long)addr);
	}
	h->regs++;
	h->live++;
	out->mr = h;
	out->lkey = ++h->next_key;
	out->rkey = out->lkey | 0x1000;
	return FL_OK;
}

static int fake_dereg(void *ctx, struct ib_mr *m)
{
	struct fake_hca *h = ctx;

	assert_ptr_equal(m->mr, h);
	h->deregs++;
	h->live--;
	return FL_OK;
}

static const struct ib_mr_ops ops = { fake_reg, fake_dereg };

static void test_page_aligned_sharing(void **state)
{
	struct fake_hca h = { 0 };
	struct ib_mr_cache c;
	struct ib_mr *a, *b, *d;
	char *buf = aligned_alloc(4096, 8 * 4096);

	(void)state;
	ib_mr_cache_init(&c, &ops, &h);
	assert_int_equal(ib_mr_get(&c, buf + 100, 5000, &a), FL_OK);
	assert_int_equal(a->addr, (uintptr_t)buf);
	assert_int_equal(a->len, 2 * 4096); /* [100, 5100) spans two pages */
	assert_true(ib_mr_covers(a, buf + 100, 5000));
	assert_false(ib_mr_covers(a, buf + 100, 9000));
	/* inside the registered pages: shared, no new registration */
	assert_int_equal(ib_mr_get(&c, buf + 4096, 4096, &b), FL_OK);
	assert_ptr_equal(a, b);
	assert_int_equal(h.regs, 1);
	assert_int_equal(a->refs, 2);
	/* beyond them: a new one */
	assert_int_equal(ib_mr_get(&c, buf + 4096, 3 * 4096, &d), FL_OK);
	assert_ptr_not_equal(d, a);
	assert_int_equal(h.regs, 2);
	/* released only when the last user lets go */
	assert_int_equal(ib_mr_put(&c, a), FL_OK);
	assert_int_equal(h.deregs, 0);
	assert_int_equal(ib_mr_put(&c, b), FL_OK);
	assert_int_equal(h.deregs, 1);
	/* the survivor is still found */
	assert_int_equal(ib_mr_get(&c, buf + 2 * 4096, 10, &a), FL_OK);
	assert_ptr_equal(a, d);
	assert_int_equal(ib_mr_put(&c, a), FL_OK);
	assert_int_equal(ib_mr_put(&c, d), FL_OK);
	assert_int_equal(h.live, 0);
	assert_int_equal(ib_mr_cache_destroy(&c), 0);
	free(buf);
}

static void test_many_sorted(void **state)
{
	struct fake_hca h = { 0 };
	struct ib_mr_cache c;
	struct ib_mr *m[100];
	char *buf = aligned_alloc(4096, 200 * 4096);

	(void)state;
	ib_mr_cache_init(&c, &ops, &h);
	/* registered out of order, past the first growth of the array */
	for (int i = 0; i < 100; i++) {
		int page = (i * 37) % 100 * 2;

		assert_int_equal(ib_mr_get(&c, buf + page * 4096, 4096, &m[i]), FL_OK);
	}
	assert_int_equal(c.n, 100);
	for (int i = 1; i < c.n; i++)
		assert_true(c.items[i - 1]->addr < c.items[i]->addr);
	/* each lookup finds its own page */
	for (int i = 0; i < 100; i++) {
		struct ib_mr *again;
		int page = (i * 37) % 100 * 2;

		assert_int_equal(ib_mr_get(&c, buf + page * 4096 + 8, 64, &again), FL_OK);
		assert_ptr_equal(again, m[i]);
		ib_mr_put(&c, again);
	}
	assert_int_equal(h.regs, 100);
	/* a comm that never deregistered: destroy releases what is left */
	assert_int_equal(ib_mr_cache_destroy(&c), 100);
	assert_int_equal(h.live, 0);
	free(buf);
}

static void test_failures(void **state)
{
	struct fake_hca h = { .fail_next = 1 };
	struct ib_mr_cache c;
	struct ib_mr *m;
	char *buf = aligned_alloc(4096, 4096);

	(void)state;
	ib_mr_cache_init(&c, &ops, &h);
	assert_int_equal(ib_mr_get(&c, buf, 64, &m), FL_ERR_SYSTEM);
	assert_null(m);
	assert_non_null(strstr(fl_error_text(), "no memory to pin"));
	assert_int_equal(c.n, 0);
	/* a range that wraps around the address space */
	assert_int_equal(ib_mr_get(&c, (void *)(UINTPTR_MAX - 10), 64, &m), FL_ERR_ARGUMENT);
	/* zero bytes still get a page (NCCL registers empty buffers) */
	assert_int_equal(ib_mr_get(&c, buf, 0, &m), FL_OK);
	assert_int_equal(m->len, 4096);
	assert_int_equal(ib_mr_put(&c, m), FL_OK);
	assert_int_equal(ib_mr_put(&c, NULL), FL_OK);
	assert_int_equal(ib_mr_cache_destroy(&c), 0);
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_page_aligned_sharing),
		cmocka_unit_test(test_many_sorted),
		cmocka_unit_test(test_failures),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
