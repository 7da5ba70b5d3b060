/* Message-size and wire-time histograms (plugin/histogram.c): buckets, ranges, percentiles. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "plugin/stats/histogram.h"

static void test_size_buckets_are_powers_of_two(void **state)
{
	(void)state;
	assert_int_equal(fl_size_bucket(0), 0);
	assert_int_equal(fl_size_bucket_floor(0), 0);
	assert_int_equal(fl_size_bucket(1), 1);
	assert_int_equal(fl_size_bucket_floor(1), 1);
	assert_int_equal(fl_size_bucket(2), 2);
	assert_int_equal(fl_size_bucket(3), 2);
	assert_int_equal(fl_size_bucket(4095), 12);
	assert_int_equal(fl_size_bucket(4096), 13);
	assert_int_equal(fl_size_bucket_floor(13), 4096);
	assert_int_equal(fl_size_bucket(512 << 10), 20);
	assert_int_equal(fl_size_bucket(1ULL << 60), FL_SIZE_BUCKETS - 1);
	assert_int_equal(fl_size_bucket(UINT64_MAX), FL_SIZE_BUCKETS - 1);
	for (unsigned b = 1; b < FL_SIZE_BUCKETS; b++) {
		assert_int_equal(fl_size_bucket(fl_size_bucket_floor(b)), b);
		assert_int_equal(fl_size_bucket(fl_size_bucket_floor(b) - 1), b - 1);
	}
}

/* The ranges tile 0..2^40-1 with no gap and no overlap, each within 1/16 of its floor. */
static void test_time_buckets_tile_the_range(void **state)
{
	uint64_t lo, hi, next = 0;

	(void)state;
	for (unsigned b = 0; b < FL_TIME_BUCKETS; b++) {
		fl_time_bucket_range(b, &lo, &hi);
		assert_int_equal(lo, next);
		assert_true(hi >= lo);
		assert_int_equal(fl_time_bucket(lo), b);
		assert_int_equal(fl_time_bucket(hi), b);
		if (lo >= 16)
			assert_true((hi - lo + 1) * 16 <= lo);
		next = hi + 1;
	}
	assert_int_equal(next, 1ULL << 40);
	assert_int_equal(fl_time_bucket(1ULL << 40), FL_TIME_BUCKETS - 1);
	assert_int_equal(fl_time_bucket(UINT64_MAX), FL_TIME_BUCKETS - 1);
	for (uint64_t v = 0; v < 16; v++) /* small values are exact */
		assert_int_equal(fl_time_bucket(v), v);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

static uint64_t rnd(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/* Nearest rank, as fl_time_percentile defines it. */
static uint64_t exact_percentile(const uint64_t *sorted, size_t n, double p)
{
	size_t rank = (size_t)(p / 100.0 * (double)n);

	if ((double)rank < p / 100.0 * (double)n)
		rank++;
	return sorted[(rank ? rank : 1) - 1];
}

static void assert_within_32th(uint64_t got, uint64_t want)
{
	uint64_t diff = got > want ? got - want : want - got;

	if (diff * 32 > want)
		fail_msg("percentile %llu, true value %llu: off by more than 1/32",
			 (unsigned long long)got, (unsigned long long)want);
}

static void check_percentiles(uint64_t *samples, size_t n)
{
	static const double ps[] = { 1, 10, 50, 90, 99, 99.9, 100 };
	struct fl_time_hist *h = calloc(1, sizeof(*h));
	uint64_t counts[FL_TIME_BUCKETS] = { 0 };

	assert_non_null(h);
	for (size_t i = 0; i < n; i++)
		fl_time_hist_add(h, samples[i]);
	fl_time_hist_sum(h, counts);
	qsort(samples, n, sizeof(samples[0]), cmp_u64);
	for (size_t k = 0; k < sizeof(ps) / sizeof(ps[0]); k++)
		assert_within_32th(fl_time_percentile(counts, ps[k]),
				   exact_percentile(samples, n, ps[k]));
	free(h);
}

static void test_percentiles_are_within_bounds(void **state)
{
	enum { N = 100000 };
	uint64_t *v = malloc(N * sizeof(*v)), seed = 2463534242ULL;

	(void)state;
	assert_non_null(v);
	/* Log-uniform from 100 ns to ~100 ms: every octave in play. */
	for (size_t i = 0; i < N; i++)
		v[i] = (100ULL << (rnd(&seed) % 20)) + rnd(&seed) % (100ULL << 4);
	check_percentiles(v, N);
	/* Two clusters, p99 in the rare slow one. */
	for (size_t i = 0; i < N; i++)
		v[i] = i % 50 ? 40000 + rnd(&seed) % 3000 : 900000 + rnd(&seed) % 90000;
	check_percentiles(v, N);
	/* One sample, and many equal samples. */
	v[0] = 123456;
	check_percentiles(v, 1);
	for (size_t i = 0; i < 1000; i++)
		v[i] = 7;
	check_percentiles(v, 1000);
	free(v);
}

/* The size carrying the median byte, not the median request: many small ones do not hide it. */
static void test_median_byte_is_where_the_bytes_are(void **state)
{
	uint64_t counts[FL_SIZE_BUCKETS] = { 0 };

	(void)state;
	assert_int_equal(fl_size_median_byte(counts), 0);
	counts[fl_size_bucket(1024)] = 16384;     /* 16 MiB in 1 KiB requests */
	counts[fl_size_bucket(512 << 10)] = 96;   /* 48 MiB in 512 KiB requests */
	assert_int_equal(fl_size_median_byte(counts), 512 << 10);
	counts[fl_size_bucket(1024)] = 131072;    /* 128 MiB in 1 KiB requests */
	assert_int_equal(fl_size_median_byte(counts), 1024);
	counts[fl_size_bucket(0)] = 1000000;      /* empty requests weigh nothing */
	assert_int_equal(fl_size_median_byte(counts), 1024);
}

static void test_empty_histogram_has_zero_percentiles(void **state)
{
	uint64_t counts[FL_TIME_BUCKETS] = { 0 };

	(void)state;
	assert_int_equal(fl_time_percentile(counts, 50), 0);
	assert_int_equal(fl_time_percentile(counts, 99), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_size_buckets_are_powers_of_two),
		cmocka_unit_test(test_time_buckets_tile_the_range),
		cmocka_unit_test(test_percentiles_are_within_bounds),
		cmocka_unit_test(test_median_byte_is_where_the_bytes_are),
		cmocka_unit_test(test_empty_histogram_has_zero_percentiles),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
