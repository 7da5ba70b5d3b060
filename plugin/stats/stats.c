#include "stats.h"

#include <string.h>

void fl_stats_init(struct fl_conn_stats *s)
{
	memset(s, 0, sizeof(*s));
	atomic_store_explicit(&s->tag_rank, -1, memory_order_relaxed);
	for (unsigned i = 0; i < FL_CONN_SLOTS; i++)
		atomic_store_explicit(&s->posted[i], FL_SLOT_FREE, memory_order_relaxed);
}

uint64_t fl_stats_oldest_post(const struct fl_conn_stats *s, uint64_t now)
{
	uint64_t oldest = now;
	unsigned used = atomic_load_explicit(&s->slots_used, memory_order_acquire);

	for (unsigned i = 0; i < used && i < FL_CONN_SLOTS; i++) {
		uint64_t t = atomic_load_explicit(&s->posted[i], memory_order_acquire);

		if (t < oldest)
			oldest = t;
	}
	return oldest;
}

void fl_stats_outstanding(const struct fl_conn_stats *s, struct fl_conn_totals *acc)
{
	unsigned used = atomic_load_explicit(&s->slots_used, memory_order_acquire);

	for (unsigned i = 0; i < used && i < FL_CONN_SLOTS; i++) {
		uint64_t t = atomic_load_explicit(&s->posted[i], memory_order_acquire);

		if (t == FL_SLOT_FREE)
			continue;
		acc->outstanding++;
		if (!acc->oldest_post_ns || t < acc->oldest_post_ns)
			acc->oldest_post_ns = t;
	}
}

void fl_stats_abandon(const struct fl_conn_stats *s, struct fl_conn_totals *acc)
{
	struct fl_conn_totals out = { 0 };

	fl_stats_outstanding(s, &out);
	acc->abandoned += out.outstanding;
}

/* The first impossible completion of s or of what acc holds already: the one to show. */
static void sum_impossible(const struct fl_conn_stats *s, struct fl_conn_totals *acc)
{
	uint64_t n = fl_stats_load(&s->impossible);

	if (!n)
		return;
	if (!acc->impossible) {
		acc->impossible_claimed = atomic_load_explicit(&s->impossible_claimed,
							       memory_order_relaxed);
		acc->impossible_posted = fl_stats_load(&s->impossible_posted);
	}
	acc->impossible += n;
}

/* The size histogram into sizes (zeroed by the caller); returns its count: the messages. */
static uint64_t read_sizes(const struct fl_conn_stats *s, uint64_t sizes[FL_SIZE_BUCKETS])
{
	uint64_t n = 0;

	fl_size_hist_sum(&s->sizes, sizes);
	for (unsigned i = 0; i < FL_SIZE_BUCKETS; i++)
		n += sizes[i];
	return n;
}

void fl_stats_sum(const struct fl_conn_stats *s, struct fl_conn_totals *acc)
{
	uint64_t max = fl_stats_load(&s->wire_max_ns);
	uint64_t sizes[FL_SIZE_BUCKETS] = { 0 };

	acc->bytes += fl_stats_load(&s->bytes);
	acc->wire_bytes += fl_stats_load(&s->wire_bytes);
	acc->peer_wait_ns += fl_stats_load(&s->peer_wait_ns);
	acc->gpu_wait_ns += fl_stats_load(&s->gpu_wait_ns);
	acc->outstanding_ns += fl_stats_load(&s->outstanding_ns);
	acc->wire_bridged_ns += fl_stats_load(&s->wire.bridged_ns);
	/* a gap the wire ring bridged is bridged in the active runs it carries too */
	acc->active_bridged_ns += fl_stats_load(s->active_is_wire ? &s->wire.bridged_ns
								   : &s->active.bridged_ns);
	acc->ring_overflows += fl_stats_load(&s->wire.overflows) + fl_stats_load(&s->active.overflows);
	if (max > acc->wire_max_ns)
		acc->wire_max_ns = max;
	/*
	 * Messages from the same reads as the histogram: a snapshot taken while
	 * requests complete never has one more in either.
	 */
	acc->messages += read_sizes(s, sizes);
	for (unsigned i = 0; i < FL_SIZE_BUCKETS; i++)
		acc->sizes[i] += sizes[i];
	fl_time_hist_sum(&s->wire_times, acc->wire_times);
	fl_time_hist_sum(&s->wire_times_alone, acc->wire_times_alone);
	acc->acked |= atomic_load_explicit(&s->acked, memory_order_relaxed);
	sum_impossible(s, acc);
	acc->unsized += fl_stats_load(&s->unsized);
}

uint64_t fl_stats_messages(const struct fl_conn_stats *s)
{
	uint64_t sizes[FL_SIZE_BUCKETS] = { 0 };

	return read_sizes(s, sizes);
}

void fl_wire_split(const uint64_t all[FL_TIME_BUCKETS], const uint64_t alone[FL_TIME_BUCKETS],
		   int acked, struct fl_wire_split *out)
{
	uint64_t queued[FL_TIME_BUCKETS];

	memset(out, 0, sizeof(*out));
	if (!acked)
		return;
	for (unsigned i = 0; i < FL_TIME_BUCKETS; i++) {
		/* a snapshot reads the two apart: never fewer in all than alone */
		queued[i] = all[i] > alone[i] ? all[i] - alone[i] : 0;
		out->alone += alone[i];
		out->queued += queued[i];
	}
	out->alone_p50_us = (double)fl_time_percentile(alone, 50) / 1e3;
	out->queued_p50_us = (double)fl_time_percentile(queued, 50) / 1e3;
}
