/*
 * Per-connection measurement. Written by one thread (the one that completes the
 * connection's requests: NCCL's proxy thread) with relaxed single-writer
 * updates, plain moves on x86, and read at any time by the report thread.
 * Nothing here locks or allocates.
 */
#ifndef FL_STATS_H
#define FL_STATS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/fl_types.h"
#include "histogram.h"
#include "interval.h"

/* One slot per request a connection can have outstanding (the wrap layer's pool). */
#define FL_CONN_SLOTS (FL_MAX_REQUESTS * FL_MAX_RECVS)
#define FL_SLOT_FREE UINT64_MAX

struct fl_hop;

struct fl_conn_stats {
	_Atomic uint64_t bytes;
	/* messages: the size histogram's count, so a snapshot's two always agree */
	_Atomic uint64_t wire_bytes;   /* bytes of the requests whose wire time was seen */
	_Atomic uint64_t peer_wait_ns; /* posted -> ready, summed */
	_Atomic uint64_t outstanding_ns; /* posted -> done, summed: peer_wait_ns is a share of it */
	_Atomic uint64_t wire_max_ns;  /* longest single wire time */
	_Atomic uint64_t gpu_wait_ns;  /* profiler mode: the GPU filling or draining a step */
	_Atomic int32_t tag_rank;      /* the rank NCCL's tags name, -1 until seen */
	_Atomic int mem_types;         /* FL_PTR_* registered (setup paths) */
	/*
	 * Completions whose sizes cannot be true (a negative size, or more bytes than were
	 * posted): counted here, never in the figures. The first one's claim is kept to show.
	 */
	_Atomic uint64_t impossible;
	_Atomic int64_t impossible_claimed;
	_Atomic uint64_t impossible_posted;
	/*
	 * Completions whose size the plugin behind did not tell (fastsocket's receives; a
	 * receive aws-ofi-nccl completed early under NCCL's optional-completion hint): in the
	 * messages and the times as 0 bytes, counted here so that a reader takes the sender's.
	 */
	_Atomic uint64_t unsized;
	struct fl_runs wire;           /* union of wire intervals */
	struct fl_runs active;         /* union of posted -> done */
	/*
	 * Set before the first request and never changed: every wire interval is the request's
	 * posted -> done (the transport's whole_requests), so the wire runs are the active runs
	 * too; the active ring stays empty and the hop reads them from the wire ring.
	 */
	int active_is_wire;
	struct fl_size_hist sizes;
	/* each request's own wire time: from when the wire took it (fl_stats_wire) */
	struct fl_time_hist wire_times;
	/*
	 * ... of the requests that found their connection's wire idle: they pay the round trip
	 * (a verbs write completes when its acknowledgement is back), where a request queued
	 * behind the one before pays only its bytes' time.
	 */
	struct fl_time_hist wire_times_alone;
	_Atomic int acked; /* its transport's requests wait for the round trip (fl_xfer_times) */
	/* the writer's alone: when the connection's latest request left the wire */
	uint64_t wire_last_end_ns;
	/*
	 * One past the highest slot ever posted: the reader scans posted[] only that far. Pools
	 * hand out their lowest free slots first, so a few lines are read, not all of posted[].
	 */
	_Atomic uint32_t slots_used;
	/* Post time of each outstanding request: the reader's watermark. */
	_Atomic uint64_t posted[FL_CONN_SLOTS];
	/* Hop membership, owned by hop.c under its lock. */
	struct fl_hop *hop;
	struct fl_conn_stats *hop_prev, *hop_next;
};

/* Plain sums a reader builds from one or many connections. */
struct fl_conn_totals {
	uint64_t bytes, messages, wire_bytes, peer_wait_ns, outstanding_ns, wire_max_ns, gpu_wait_ns;
	uint64_t wire_bridged_ns, active_bridged_ns; /* see interval.h */
	/* What bounded memory cost (0 when the reader kept up): see interval.h */
	uint64_t ring_overflows; /* a connection's ring of runs was full: a gap bridged */
	uint64_t union_bridges;  /* the hop's reader bridged gaps (or had no memory for runs) */
	uint64_t sizes[FL_SIZE_BUCKETS];
	uint64_t wire_times[FL_TIME_BUCKETS];
	uint64_t wire_times_alone[FL_TIME_BUCKETS];
	int acked; /* some connection's requests wait for the round trip: the split means something */
	/* Completions left out for sizes that cannot be true, and the first one's claim. */
	uint64_t impossible, impossible_posted;
	int64_t impossible_claimed;
	uint64_t unsized; /* completions of unknown size, in messages as 0 bytes */
	/*
	 * Requests posted and not done: of the connections still open at the snapshot
	 * (outstanding, the oldest posted at oldest_post_ns, 0 when none) and of those closed
	 * with requests still out (abandoned): a job stopped while it hung.
	 */
	uint64_t outstanding, oldest_post_ns, abandoned;
};

void fl_stats_init(struct fl_conn_stats *s);

/*
 * A hop's requests by whether they found their connection's wire idle (alone: they pay the
 * round trip) or queued behind the one before (only their bytes' time): how many of each,
 * and each kind's median wire time in microseconds (0 where none). All 0 where its
 * transport's requests do not wait for a round trip (!acked): nothing to tell apart.
 */
struct fl_wire_split {
	uint64_t alone, queued;
	double alone_p50_us, queued_p50_us;
};
void fl_wire_split(const uint64_t all[FL_TIME_BUCKETS], const uint64_t alone[FL_TIME_BUCKETS],
		   int acked, struct fl_wire_split *out);

static inline uint64_t fl_stats_load(const _Atomic uint64_t *c)
{
	return atomic_load_explicit(c, memory_order_relaxed);
}

static inline void fl_stats_add(_Atomic uint64_t *c, uint64_t v)
{
	atomic_store_explicit(c, fl_stats_load(c) + v, memory_order_relaxed);
}

/*
 * Readers scan posted[] up to `used` from now on: called before a slot at or past the old
 * bound is first posted (release: a reader that sees the bound sees the slot with it).
 */
static inline void fl_stats_slots_used(struct fl_conn_stats *s, unsigned used)
{
	if (used > atomic_load_explicit(&s->slots_used, memory_order_relaxed))
		atomic_store_explicit(&s->slots_used, used, memory_order_release);
}

/* A post into a slot the caller told fl_stats_slots_used about before its first post. */
static inline void fl_stats_post_listed(struct fl_conn_stats *s, unsigned slot, uint64_t now)
{
	atomic_store_explicit(&s->posted[slot], now, memory_order_relaxed);
}

static inline void fl_stats_post(struct fl_conn_stats *s, unsigned slot, uint64_t now)
{
	fl_stats_slots_used(s, slot + 1);
	fl_stats_post_listed(s, slot, now);
}

/* The transport refused the request after all ("not now"). */
static inline void fl_stats_unpost(struct fl_conn_stats *s, unsigned slot)
{
	atomic_store_explicit(&s->posted[slot], FL_SLOT_FREE, memory_order_relaxed);
}

static inline uint64_t fl_stats_posted_at(const struct fl_conn_stats *s, unsigned slot)
{
	return atomic_load_explicit(&s->posted[slot], memory_order_relaxed);
}

/* Only the first tag matters, so only the first one costs a store. */
static inline void fl_stats_note_tag(struct fl_conn_stats *s, int tag)
{
	if (atomic_load_explicit(&s->tag_rank, memory_order_relaxed) < 0 && tag >= 0)
		atomic_store_explicit(&s->tag_rank, tag, memory_order_relaxed);
}

/* The writer needs no more tags (fl_stats_note_tag would change nothing). */
static inline int fl_stats_tag_known(const struct fl_conn_stats *s)
{
	return atomic_load_explicit(&s->tag_rank, memory_order_relaxed) >= 0;
}

static inline __attribute__((always_inline)) void
fl_stats_wire(struct fl_conn_stats *s, uint64_t post_ns, uint64_t bytes,
	      const struct fl_xfer_times *t)
{
	uint64_t took = t->wire_end_ns - t->wire_start_ns, own = t->wire_start_ns;
	bool queued = s->wire_last_end_ns > own;

	/*
	 * A request queued behind the connection's earlier ones is on the wire only from when
	 * the one before it left (a FIFO's departures): its time before that is theirs. A
	 * burst of requests posted at once would otherwise read as each request slow.
	 */
	if (queued && s->wire_last_end_ns < t->wire_end_ns)
		own = s->wire_last_end_ns;
	if (t->wire_end_ns > s->wire_last_end_ns)
		s->wire_last_end_ns = t->wire_end_ns;
	/* A transport may time only part of a request: rate only what was timed (0: all of it). */
	fl_stats_add(&s->wire_bytes, t->wire_bytes - 1 < bytes ? t->wire_bytes : bytes);
	fl_time_hist_add(&s->wire_times, t->wire_end_ns - own);
	if (t->acked && !queued)
		fl_time_hist_add(&s->wire_times_alone, took);
	if (t->acked && !atomic_load_explicit(&s->acked, memory_order_relaxed))
		atomic_store_explicit(&s->acked, 1, memory_order_relaxed);
	if (took > fl_stats_load(&s->wire_max_ns))
		atomic_store_explicit(&s->wire_max_ns, took, memory_order_relaxed);
	/* Nothing a request reports starts before it was posted: the watermark relies on it. */
	fl_runs_add(&s->wire, t->wire_start_ns > post_ns ? t->wire_start_ns : post_ns,
		    t->wire_end_ns);
}

/*
 * One request of `bytes`, posted at post_ns, completed at done_ns: its counts,
 * wait and intervals. The caller frees the request's slot afterwards.
 */
static inline __attribute__((always_inline)) void
fl_stats_account(struct fl_conn_stats *s, uint64_t bytes, uint64_t post_ns, uint64_t done_ns,
		 const struct fl_xfer_times *t)
{
	fl_stats_add(&s->bytes, bytes);
	fl_size_hist_add(&s->sizes, bytes);
	if (t->ready_ns > post_ns)
		fl_stats_add(&s->peer_wait_ns, t->ready_ns - post_ns);
	if (t->wire_start_ns && t->wire_end_ns > t->wire_start_ns)
		fl_stats_wire(s, post_ns, bytes, t);
	/* one test for the sum and the run: an empty interval adds to neither */
	if (done_ns > post_ns) {
		fl_stats_add(&s->outstanding_ns, done_ns - post_ns);
		if (!s->active_is_wire)
			fl_runs_add_nonempty(&s->active, post_ns, done_ns);
	}
}

/* Frees a slot last (release): a reader that sees it free also sees its intervals. */
static inline void fl_stats_release(struct fl_conn_stats *s, unsigned slot)
{
	atomic_store_explicit(&s->posted[slot], FL_SLOT_FREE, memory_order_release);
}

/* One request of `bytes` in `slot` completed at done_ns. */
static inline __attribute__((always_inline)) void
fl_stats_complete(struct fl_conn_stats *s, unsigned slot, uint64_t bytes, uint64_t done_ns,
		  const struct fl_xfer_times *t)
{
	fl_stats_account(s, bytes, fl_stats_posted_at(s, slot), done_ns, t);
	fl_stats_release(s, slot);
}

/*
 * A completion whose sizes cannot be true: counted, not accounted, and its slot freed. The
 * first one's claim and posted bytes are kept for the report to show.
 */
static inline void fl_stats_impossible(struct fl_conn_stats *s, unsigned slot, int64_t claimed,
				       uint64_t posted)
{
	if (!fl_stats_load(&s->impossible)) {
		atomic_store_explicit(&s->impossible_claimed, claimed, memory_order_relaxed);
		atomic_store_explicit(&s->impossible_posted, posted, memory_order_relaxed);
	}
	fl_stats_add(&s->impossible, 1);
	fl_stats_release(s, slot);
}

/* Requests still out on this connection into acc: outstanding, oldest_post_ns. */
void fl_stats_outstanding(const struct fl_conn_stats *s, struct fl_conn_totals *acc);
/* The same, counted as abandoned: the connection closes with them still out. */
void fl_stats_abandon(const struct fl_conn_stats *s, struct fl_conn_totals *acc);
/* The oldest post time of a request still outstanding, or `now` when none is. */
uint64_t fl_stats_oldest_post(const struct fl_conn_stats *s, uint64_t now);
/* Adds one connection's counters into acc (any thread). */
void fl_stats_sum(const struct fl_conn_stats *s, struct fl_conn_totals *acc);
/* Requests completed: the size histogram's count (one atomic add per request, not two). */
uint64_t fl_stats_messages(const struct fl_conn_stats *s);

#endif
