/*
 * The result check of `fabriclab bench` must catch what a broken collective
 * does: a missing contribution, a misplaced slice, data from the wrong rank,
 * an untouched buffer.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tools/bench/bench.h"

#define COUNT 100003 /* not a multiple of the pattern's period or of any chunk */

/* The exact ring result, summed the plain way. */
static float *reference_sum(int nranks, size_t count)
{
	float *sum = calloc(count, sizeof(float)), *one = malloc(count * sizeof(float));

	assert_non_null(sum);
	assert_non_null(one);
	for (int r = 0; r < nranks; r++) {
		bench_fill(BENCH_ALL_REDUCE, r, one, count * sizeof(float));
		for (size_t i = 0; i < count; i++)
			sum[i] += one[i];
	}
	free(one);
	return sum;
}

static void test_all_reduce_right_result_passes(void **state)
{
	(void)state;
	for (int n = 1; n <= 9; n++) {
		float *sum = reference_sum(n, COUNT);

		assert_int_equal(bench_count_wrong(BENCH_ALL_REDUCE, 0, n, sum, COUNT), 0);
		free(sum);
	}
}

static void test_all_reduce_errors_are_counted(void **state)
{
	float *sum = reference_sum(4, COUNT), *shifted = malloc(COUNT * sizeof(float));
	float *missing = reference_sum(3, COUNT);

	(void)state;
	assert_non_null(shifted);
	sum[777] += 1.0f;
	assert_int_equal(bench_count_wrong(BENCH_ALL_REDUCE, 0, 4, sum, COUNT), 1);
	sum[777] -= 1.0f;
	/* A slice landing one element off. */
	memcpy(shifted + 1, sum, (COUNT - 1) * sizeof(float));
	shifted[0] = sum[0];
	assert_true(bench_count_wrong(BENCH_ALL_REDUCE, 0, 4, shifted, COUNT) > COUNT / 2);
	/* One rank's contribution missing. */
	assert_int_equal(bench_count_wrong(BENCH_ALL_REDUCE, 0, 4, missing, COUNT), COUNT);
	bench_poison(BENCH_ALL_REDUCE, 0, 4, sum, COUNT * sizeof(float));
	assert_int_equal(bench_count_wrong(BENCH_ALL_REDUCE, 0, 4, sum, COUNT), COUNT);
	free(sum);
	free(shifted);
	free(missing);
}

static void test_all_reduce_sums_stay_exact(void **state)
{
	/* Integer-valued inputs: any order of float additions gives the same bits. */
	float one[64], forward[64] = { 0 }, backward[64] = { 0 };
	int n = 1000;

	(void)state;
	for (int r = 0; r < n; r++) {
		bench_fill(BENCH_ALL_REDUCE, r, one, sizeof(one));
		for (int i = 0; i < 64; i++)
			forward[i] += one[i];
	}
	for (int r = n - 1; r >= 0; r--) {
		bench_fill(BENCH_ALL_REDUCE, r, one, sizeof(one));
		for (int i = 0; i < 64; i++)
			backward[i] += one[i];
	}
	assert_memory_equal(forward, backward, sizeof(forward));
	assert_int_equal(bench_count_wrong(BENCH_ALL_REDUCE, 0, n, forward, 64), 0);
}

static void test_sendrecv_checks_bytes_from_prev(void **state)
{
	uint8_t buf[COUNT];

	(void)state;
	for (size_t bytes = 1; bytes <= 3; bytes++) {
		bench_fill(BENCH_SENDRECV, 2, buf, bytes);
		assert_int_equal(bench_count_wrong(BENCH_SENDRECV, 3, 4, buf, bytes), 0);
		buf[bytes - 1] ^= 0x10;
		assert_int_equal(bench_count_wrong(BENCH_SENDRECV, 3, 4, buf, bytes), 1);
	}
	bench_fill(BENCH_SENDRECV, 3, buf, COUNT);
	assert_int_equal(bench_count_wrong(BENCH_SENDRECV, 0, 4, buf, COUNT), 0);
	/* Data from the wrong neighbour. */
	bench_fill(BENCH_SENDRECV, 1, buf, COUNT);
	assert_int_equal(bench_count_wrong(BENCH_SENDRECV, 0, 4, buf, COUNT), COUNT);
	bench_poison(BENCH_SENDRECV, 0, 4, buf, COUNT);
	assert_int_equal(bench_count_wrong(BENCH_SENDRECV, 0, 4, buf, COUNT), COUNT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_all_reduce_right_result_passes),
		cmocka_unit_test(test_all_reduce_errors_are_counted),
		cmocka_unit_test(test_all_reduce_sums_stay_exact),
		cmocka_unit_test(test_sendrecv_checks_bytes_from_prev),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
