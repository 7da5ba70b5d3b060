#include "histogram.h"

uint64_t fl_size_bucket_floor(unsigned bucket)
{
	return bucket ? 1ULL << (bucket - 1) : 0;
}

void fl_time_bucket_range(unsigned bucket, uint64_t *lo, uint64_t *hi)
{
	unsigned e, sub;

	if (bucket < FL_TIME_SUB) {
		*lo = *hi = bucket;
		return;
	}
	e = (bucket - FL_TIME_SUB) / FL_TIME_SUB + FL_TIME_SUB_BITS;
	sub = (bucket - FL_TIME_SUB) % FL_TIME_SUB;
	*lo = (uint64_t)(FL_TIME_SUB + sub) << (e - FL_TIME_SUB_BITS);
	*hi = *lo + (1ULL << (e - FL_TIME_SUB_BITS)) - 1;
}

void fl_size_hist_sum(const struct fl_size_hist *h, uint64_t acc[FL_SIZE_BUCKETS])
{
	for (unsigned i = 0; i < FL_SIZE_BUCKETS; i++)
		acc[i] += atomic_load_explicit(&h->n[i], memory_order_relaxed);
}

void fl_time_hist_sum(const struct fl_time_hist *h, uint64_t acc[FL_TIME_BUCKETS])
{
	for (unsigned i = 0; i < FL_TIME_BUCKETS; i++)
		acc[i] += atomic_load_explicit(&h->n[i], memory_order_relaxed);
}

uint64_t fl_time_percentile(const uint64_t counts[FL_TIME_BUCKETS], double p)
{
	uint64_t total = 0, rank, seen = 0, lo, hi;
	double want;

	for (unsigned i = 0; i < FL_TIME_BUCKETS; i++)
		total += counts[i];
	if (!total)
		return 0;
	/* ceil() by hand: the plugin links nothing but libc, pthread and dl. */
	want = p / 100.0 * (double)total;
	rank = (uint64_t)want;
	if ((double)rank < want)
		rank++;
	if (rank < 1)
		rank = 1;
	if (rank > total)
		rank = total;
	for (unsigned i = 0; i < FL_TIME_BUCKETS; i++) {
		seen += counts[i];
		if (seen >= rank) {
			fl_time_bucket_range(i, &lo, &hi);
			return lo + (hi - lo) / 2;
		}
	}
	return 0;
}

uint64_t fl_size_median_byte(const uint64_t counts[FL_SIZE_BUCKETS])
{
	double total = 0.0, seen = 0.0;

	for (unsigned i = 0; i < FL_SIZE_BUCKETS; i++)
		total += (double)counts[i] * (double)fl_size_bucket_floor(i);
	for (unsigned i = 0; i < FL_SIZE_BUCKETS && total > 0.0; i++) {
		seen += (double)counts[i] * (double)fl_size_bucket_floor(i);
		if (seen >= total / 2.0)
			return fl_size_bucket_floor(i);
	}
	return 0;
}
