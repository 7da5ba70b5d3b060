/*
 * Bounded histograms for the data path: message sizes in power-of-two buckets,
 * and per-message wire times on a log-linear scale (16 sub-buckets per power of
 * two, so a bucket's midpoint is within 1/32 of any value in it). Recording is
 * one relaxed load and store by the connection's single writer; readers copy
 * the counts into plain arrays and work on those.
 */
#ifndef FL_HISTOGRAM_H
#define FL_HISTOGRAM_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define FL_SIZE_BUCKETS 48 /* bucket k > 0 holds [2^(k-1), 2^k); the last one holds the rest */

#define FL_TIME_SUB_BITS 4
#define FL_TIME_SUB (1u << FL_TIME_SUB_BITS)
#define FL_TIME_MAX_EXP 39 /* values at or above 2^40 ns (~18 min) share the top bucket */
#define FL_TIME_BUCKETS (FL_TIME_SUB + (FL_TIME_MAX_EXP - FL_TIME_SUB_BITS + 1) * FL_TIME_SUB)

struct fl_size_hist {
	_Atomic uint64_t n[FL_SIZE_BUCKETS];
	/* writer-private: the size recorded last and its bucket (NCCL repeats its sizes) */
	uint64_t last_bytes;
	unsigned last_bucket; /* fl_size_bucket(last_bytes); 0 for the zeroed start */
};

struct fl_time_hist {
	_Atomic uint64_t n[FL_TIME_BUCKETS];
};

static inline unsigned fl_size_bucket(uint64_t bytes)
{
	unsigned k = bytes ? 64u - (unsigned)__builtin_clzll(bytes) : 0u;

	return k < FL_SIZE_BUCKETS ? k : FL_SIZE_BUCKETS - 1;
}

/*
 * Without branches: for ns >= 16, ns >> sh lies in [16, 32) where sh = floor(log2 ns) - 4,
 * so sh * 16 + (ns >> sh) is 16 + (sh * 16) + the four bits below the top one; below 16,
 * sh = 0 and the bucket is ns. Values past the top share its last bucket.
 */
static inline unsigned fl_time_bucket(uint64_t ns)
{
	const uint64_t cap = 1ULL << (FL_TIME_MAX_EXP + 1);
	uint64_t v = ns < cap ? ns : cap - 1;
	unsigned e = 63u - (unsigned)__builtin_clzll(v | 1);
	unsigned sh = e > FL_TIME_SUB_BITS ? e - FL_TIME_SUB_BITS : 0;

	return (sh << FL_TIME_SUB_BITS) + (unsigned)(v >> sh);
}

/* Single writer: a plain increment that readers may load at any time. */
static inline void fl_hist_bump(_Atomic uint64_t *slot)
{
	atomic_store_explicit(slot, atomic_load_explicit(slot, memory_order_relaxed) + 1,
			      memory_order_relaxed);
}

static inline void fl_size_hist_add(struct fl_size_hist *h, uint64_t bytes)
{
	if (bytes != h->last_bytes) {
		h->last_bytes = bytes;
		h->last_bucket = fl_size_bucket(bytes);
	}
	fl_hist_bump(&h->n[h->last_bucket]);
}

static inline void fl_time_hist_add(struct fl_time_hist *h, uint64_t ns)
{
	fl_hist_bump(&h->n[fl_time_bucket(ns)]);
}

/* Smallest size a size bucket holds. */
uint64_t fl_size_bucket_floor(unsigned bucket);
/* The integer range [*lo, *hi] a time bucket holds. */
void fl_time_bucket_range(unsigned bucket, uint64_t *lo, uint64_t *hi);

/* Adds the live counts into plain accumulators (readers, any thread). */
void fl_size_hist_sum(const struct fl_size_hist *h, uint64_t acc[FL_SIZE_BUCKETS]);
void fl_time_hist_sum(const struct fl_time_hist *h, uint64_t acc[FL_TIME_BUCKETS]);

/*
 * The p-th percentile (0 < p <= 100, nearest rank: the smallest recorded value
 * with at least p% of the samples at or below it) as its bucket's midpoint;
 * 0 when there are no samples.
 */
uint64_t fl_time_percentile(const uint64_t counts[FL_TIME_BUCKETS], double p);
/*
 * The floor of the size bucket that holds the median byte moved, each bucket's
 * requests weighed at its floor: the request size that carries the traffic,
 * where a mean over requests would be pulled down by many small ones. 0 when
 * nothing moved.
 */
uint64_t fl_size_median_byte(const uint64_t counts[FL_SIZE_BUCKETS]);

#endif
