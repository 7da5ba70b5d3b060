/*
 * Names as ranks (plugin/verdict/verdict_names.h), which the diagnosis sorts
 * its candidates' endpoints by: equal names get equal ranks, ranks follow
 * strcmp (as unsigned bytes, long shared prefixes, the empty name), and they
 * are dense from 0.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "plugin/verdict/verdict_names.h"

#define N 4000

static char text[N][48];
static const char *names[N];
static uint32_t rank[N];

static int sign(long x)
{
	return (x > 0) - (x < 0);
}

/* Every pair of names: rank order is strcmp's; the ranks are 0..distinct-1. */
static void check_ranks(size_t n)
{
	uint32_t top = 0;
	size_t distinct = 0;

	assert_int_equal(vm_name_ranks(names, n, rank), 0);
	for (size_t i = 0; i < n; i++) {
		bool first = true;

		for (size_t j = 0; j < n; j++) {
			assert_int_equal(sign((long)rank[i] - (long)rank[j]),
					 sign(strcmp(names[i], names[j])));
			first &= j >= i || strcmp(names[i], names[j]);
		}
		distinct += first;
		top = rank[i] > top ? rank[i] : top;
	}
	assert_int_equal(top + 1, distinct);
}

/* Host names as fleets have them: one long prefix, numbers, some repeated, a few odd ones. */
static void test_fleet_names_rank_as_strcmp(void **state)
{
	(void)state;
	srand(48);
	for (size_t i = 0; i < N; i++) {
		int pick = rand() % 8;

		if (pick == 0)
			snprintf(text[i], sizeof(text[i]), "%s", "");
		else if (pick == 1)
			snprintf(text[i], sizeof(text[i]), "mlx5_%d", rand() % 9);
		else if (pick == 2) /* bytes above 0x7f order after ASCII, as strcmp's unsigned bytes */
			snprintf(text[i], sizeof(text[i]), "n\xc3\xa9ud-%d", rand() % 50);
		else
			snprintf(text[i], sizeof(text[i]), "gpu-node-%05d.rack%d.cluster.example",
				 rand() % 700, rand() % 3);
		names[i] = text[i];
	}
	check_ranks(N);
}

static void test_one_name_many_times_is_rank_zero(void **state)
{
	(void)state;
	for (size_t i = 0; i < 100; i++)
		names[i] = "node00000";
	check_ranks(100);
	assert_int_equal(rank[99], 0);
}

static void test_no_names(void **state)
{
	(void)state;
	assert_int_equal(vm_name_ranks(names, 0, rank), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fleet_names_rank_as_strcmp),
		cmocka_unit_test(test_one_name_many_times_is_rank_zero),
		cmocka_unit_test(test_no_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
