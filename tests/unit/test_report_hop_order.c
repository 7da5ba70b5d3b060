/*
 * The joined hops' order (tools/report/report_hop_order.h) against the plain
 * sort it replaces: qsort_r comparing the four names by strverscmp, then the
 * ranks, then the communicator. Names chosen where natural and byte order
 * part (n9 < n10, leading zeros, prefixes), repeated keys, unknown ranks.
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
#include "tools/report/report_hop_order.h"

static int cmp_num(long long a, long long b)
{
	return (a > b) - (a < b);
}

/* The order as it was defined: names compared per compare. */
static int reference(const void *pa, const void *pb, void *arg)
{
	const struct report_hop *hops = arg;
	const struct report_hop *x = &hops[*(const size_t *)pa], *y = &hops[*(const size_t *)pb];
	int c = strverscmp(x->key.src_node, y->key.src_node);

	c = c ? c : strverscmp(x->key.src_dev, y->key.src_dev);
	c = c ? c : strverscmp(x->key.dst_node, y->key.dst_node);
	c = c ? c : strverscmp(x->key.dst_dev, y->key.dst_dev);
	c = c ? c : cmp_num(x->src_rank, y->src_rank);
	c = c ? c : cmp_num(x->dst_rank, y->dst_rank);
	return c ? c : (x->key.comm_hash > y->key.comm_hash) - (x->key.comm_hash < y->key.comm_hash);
}

static size_t distinct_nodes(const struct report_hop *hops, size_t n)
{
	size_t count = 0;

	for (size_t i = 0; i < 2 * n; i++) {
		const char *name = i % 2 ? hops[i / 2].key.dst_node : hops[i / 2].key.src_node;
		bool seen = false;

		for (size_t j = 0; j < i && !seen; j++)
			seen = !strcmp(name, j % 2 ? hops[j / 2].key.dst_node
						   : hops[j / 2].key.src_node);
		count += !seen;
	}
	return count;
}

static void check_against_reference(struct report_hop *hops, size_t n)
{
	size_t *got = malloc(n * sizeof(*got)), *want = malloc(n * sizeof(*want)), nodes = 0;

	assert_non_null(got);
	assert_non_null(want);
	for (size_t i = 0; i < n; i++)
		want[i] = i;
	qsort_r(want, n, sizeof(*want), reference, hops);
	assert_int_equal(report_hop_order(hops, n, got, &nodes), 0);
	for (size_t i = 0; i < n; i++) {
		if (got[i] != want[i])
			fail_msg("place %zu: hop %zu (%s/%s -> %s/%s), expected hop %zu (%s/%s -> %s/%s)",
				 i, got[i], hops[got[i]].key.src_node, hops[got[i]].key.src_dev,
				 hops[got[i]].key.dst_node, hops[got[i]].key.dst_dev, want[i],
				 hops[want[i]].key.src_node, hops[want[i]].key.src_dev,
				 hops[want[i]].key.dst_node, hops[want[i]].key.dst_dev);
	}
	assert_int_equal(nodes, distinct_nodes(hops, n));
	free(got);
	free(want);
}

static void test_same_order_as_names_compared(void **state)
{
	static const char *nodes[] = { "n10", "n9", "n09", "n010", "n1", "n", "node2", "a",
				       "n9a", "N9", "n0", "n00", "b-1", "b-01", "n99", "n100" };
	static const char *devs[] = { "mlx5_10", "mlx5_2", "mlx5_02", "eth0", "mlx5_1" };
	const size_t n = 3000;
	struct report_hop *hops = calloc(n, sizeof(*hops));
	unsigned seed = 7;

	(void)state;
	assert_non_null(hops);
	for (size_t i = 0; i < n; i++) {
		struct report_hop *h = &hops[i];

		seed = seed * 1103515245u + 12345u;
		h->key.src_node = nodes[(seed >> 8) % 16];
		h->key.dst_node = nodes[(seed >> 12) % 16];
		h->key.src_dev = devs[(seed >> 16) % 5];
		h->key.dst_dev = devs[(seed >> 20) % 5];
		h->src_rank = (long)((seed >> 24) % 3) - 1; /* -1 unknown, 0, 1 */
		h->dst_rank = (long)((seed >> 26) % 3) - 1;
		h->key.comm_hash = (seed >> 28) % 2 ? 0 : UINT64_MAX - (seed >> 29);
		h->send = h->recv = &report_no_view; /* the order reads names and ranks only */
	}
	check_against_reference(hops, n);
	check_against_reference(hops, 1);
	check_against_reference(hops, 0);
	free(hops);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same_order_as_names_compared),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
