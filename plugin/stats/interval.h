/*
 * The exact union of time intervals reported by many connections at once (the
 * wire intervals of every channel of a hop, or their posted -> done intervals),
 * in bounded memory, without a lock on the data path.
 *
 * Writer side (struct fl_runs, one per connection and kind, single writer: the
 * thread that completes its requests): intervals arrive roughly in time order,
 * so the writer keeps the union of its own as "runs". The open run grows at its
 * end; when an interval starts after it, the open run is closed into a small
 * SPSC ring. The open run is published as two words, start then end (release),
 * and every pair a reader can observe (end first) lies inside the true union.
 *
 * Reader side (struct fl_union, one per hop and kind, under the hop table's
 * lock): takes the closed runs and a copy of each open run (adding the same
 * coverage twice is harmless: a union is idempotent) into a scratch list,
 * merges them with the part after its watermark kept from before (a sorted
 * list of disjoint runs), and folds the part before a new watermark into a
 * total. The watermark is a time before which no connection can still report
 * anything (see hop.c: the oldest request still outstanding). The scratch
 * holds at most what the rings of one hop hold, and is shared by all hops.
 *
 * Both sides stay bounded: a full ring makes the writer bridge the gap to the
 * next interval; disjoint runs piling up after a watermark pinned by a
 * long-outstanding request (beyond FL_UNION_PENDING, or what one drain took)
 * make the reader bridge its smallest gaps.
 * Either way the bridged time is counted (the writer's `bridged_ns` plus the
 * reader's), so the union is known to lie in [total - bridged, total]; it stays
 * 0 while the reader keeps up.
 */
#ifndef FL_INTERVAL_H
#define FL_INTERVAL_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Words, a power of two. A run is usually one word: its gap after the run
 * pushed before it and its length, 32 bits each. One that does not fit (the
 * first, one that starts earlier, a gap or length of 4.3 s or more) is an
 * escape word (FL_RUN_ESCAPE) and its start and end in two more. The reader
 * drains when a ring is about a quarter full (report_thread.c): at one run per
 * message, as small messages make, 2048 keeps its wake-ups milliseconds apart,
 * with room for a wake-up three periods late before the writer has to bridge,
 * in 16 KB.
 */
#define FL_RUN_RING 2048
#define FL_RUN_WORDS_MAX 3
/*
 * Past this many words the writer asks the reader for a drain (fl_runs_set_nudge), again
 * every FL_RUN_NUDGE_AGAIN words while it stays there: a burst after a quiet spell, when the
 * reader's adaptive period has grown long, is drained before the ring is full, not bridged.
 * The fast path tests this bound in place of "full", so a nudge costs nothing until then.
 */
#define FL_RUN_NUDGE (FL_RUN_RING / 2)
#define FL_RUN_NUDGE_AGAIN (FL_RUN_RING / 8)
/*
 * A word of length 0 (no run has one): the run follows in full. Any gap and length below 2^32
 * then fit, so one test of their high halves tells a run that fits.
 */
#define FL_RUN_ESCAPE 0ULL

struct fl_run {
	uint64_t start, end;
};

struct fl_runs {
	/*
	 * The writer's state is what it publishes: it reads its own words back (plain loads on
	 * x86), so a closed run costs one copy of each, not a private one and a published one.
	 */
	_Atomic uint64_t open_start, open_end; /* the open run; open_end == 0 before the first */
	_Atomic uint64_t head;                  /* next ring word to fill */
	uint64_t tail_seen;                     /* the reader's tail as last read (writer-private) */
	uint64_t w_last; /* end of the run pushed last: the next is coded from it (writer-private) */
	uint64_t nudged; /* head at the writer's last nudge (writer-private) */
	_Atomic uint64_t bridged_ns;
	_Atomic uint64_t overflows; /* times the ring was full and a gap was bridged */
	/* the reader's, on a line of its own */
	_Alignas(64) _Atomic uint64_t tail;
	uint64_t r_last; /* w_last as of tail */
	_Alignas(64) _Atomic uint64_t ring[FL_RUN_RING];
};

/*
 * Called by a writer whose ring is filling faster than it is drained (any thread, often;
 * must not block): wakes the reader. NULL: nobody to wake (the default).
 */
void fl_runs_set_nudge(void (*nudge)(void));
/* The ring looked half full: reads the reader's tail again (nudging it), else bridges to [s, e). */
void fl_runs_close_slow(struct fl_runs *r, uint64_t s, uint64_t e);
/* An interval entirely before the open run: pushed as a run of its own. */
void fl_runs_push_early(struct fl_runs *r, uint64_t s, uint64_t e);

/* The writer reading its own words back. */
static inline uint64_t fl_runs_own(const _Atomic uint64_t *w)
{
	return atomic_load_explicit(w, memory_order_relaxed);
}

/* Below the nudge mark at ring word `head`, as the writer last saw the reader. */
static inline int fl_runs_roomy(const struct fl_runs *r, uint64_t head)
{
	return head - r->tail_seen <= FL_RUN_NUDGE;
}

/*
 * Release on both words: a reader that sees either one of a new run also sees
 * the ring words the previous run was closed into.
 */
static inline void fl_runs_publish(struct fl_runs *r, uint64_t s, uint64_t e)
{
	atomic_store_explicit(&r->open_start, s, memory_order_release);
	atomic_store_explicit(&r->open_end, e, memory_order_release);
}

/*
 * [s, e), s < e, into the ring at word `head`; the caller has checked for room
 * (fl_runs_roomy). No test of s >= w_last: below w_last, gap wraps to 2^64 - (w_last - s),
 * past 2^32 for any time under 2^63 ns, and the run escapes.
 */
static inline __attribute__((always_inline)) void fl_runs_push_at(struct fl_runs *r,
								   uint64_t head, uint64_t s,
								   uint64_t e)
{
	uint64_t gap = s - r->w_last, len = e - s;
	_Atomic uint64_t *ring = r->ring;

	if (__builtin_expect(((gap | len) >> 32) == 0, 1)) {
		atomic_store_explicit(&ring[head++ & (FL_RUN_RING - 1)], gap << 32 | len,
				      memory_order_relaxed);
	} else {
		atomic_store_explicit(&ring[head++ & (FL_RUN_RING - 1)], FL_RUN_ESCAPE,
				      memory_order_relaxed);
		atomic_store_explicit(&ring[head++ & (FL_RUN_RING - 1)], s, memory_order_relaxed);
		atomic_store_explicit(&ring[head++ & (FL_RUN_RING - 1)], e, memory_order_relaxed);
	}
	r->w_last = e;
	atomic_store_explicit(&r->head, head, memory_order_release);
}

static inline void fl_runs_push(struct fl_runs *r, uint64_t s, uint64_t e)
{
	fl_runs_push_at(r, fl_runs_own(&r->head), s, e);
}

/* The open run, ending at we, into the ring at word `head` (room checked); [s, e) opens. */
static inline __attribute__((always_inline)) void fl_runs_close_at(struct fl_runs *r,
								    uint64_t head, uint64_t s,
								    uint64_t e, uint64_t we)
{
	if (__builtin_expect(we != 0, 1))
		fl_runs_push_at(r, head, fl_runs_own(&r->open_start), we);
	fl_runs_publish(r, s, e);
}

/*
 * [s, e) starts after the open run, which ends at we: close the open run into the ring,
 * open a new one.
 */
static inline __attribute__((always_inline)) void fl_runs_close(struct fl_runs *r, uint64_t s,
								 uint64_t e, uint64_t we)
{
	uint64_t head = fl_runs_own(&r->head);

	if (__builtin_expect(!fl_runs_roomy(r, head), 0)) {
		fl_runs_close_slow(r, s, e);
		return;
	}
	fl_runs_close_at(r, head, s, e, we);
}

/*
 * Adds [s, e), s < e, to a connection's union. Writer thread only. Always inlined: it runs
 * twice per completed request, and a call costs as much as its common paths do.
 */
static inline __attribute__((always_inline)) void fl_runs_add_nonempty(struct fl_runs *r,
									uint64_t s, uint64_t e)
{
	uint64_t we = fl_runs_own(&r->open_end), ws;

	if (s > we) {
		fl_runs_close(r, s, e, we);
		return;
	}
	ws = fl_runs_own(&r->open_start);
	if (__builtin_expect(e < ws, 0)) {
		fl_runs_push_early(r, s, e);
		return;
	}
	if (e > we)
		atomic_store_explicit(&r->open_end, e, memory_order_release);
	if (s < ws)
		atomic_store_explicit(&r->open_start, s, memory_order_release);
}

/* Adds [s, e) to a connection's union (nothing when it is empty). Writer thread only. */
static inline __attribute__((always_inline)) void fl_runs_add(struct fl_runs *r, uint64_t s,
							       uint64_t e)
{
	if (e > s)
		fl_runs_add_nonempty(r, s, e);
}

/* disjoint runs kept after a pinned watermark: a ring's worth */
#define FL_UNION_PENDING FL_RUN_RING

/* Runs taken from the rings before they are merged; one per reader, reused. */
struct fl_run_scratch {
	struct fl_run *runs;
	struct fl_run *spare; /* as large as runs: where sorted stretches are merged into */
	size_t n, cap;
	/* kept as runs come in, so settle need not check the order again */
	uint64_t last_start; /* start of runs[n - 1] */
	int unsorted;        /* a run came in starting before the one before it */
};

struct fl_union {
	uint64_t watermark; /* coverage before it is final and folded into folded_ns */
	uint64_t folded_ns;
	uint64_t bridged_ns; /* upper bound on how much the total overstates the union */
	uint64_t bridges;    /* times the reader bridged gaps or lacked memory for runs */
	uint64_t runs_folded; /* disjoint runs folded (in part or whole): busy stretches */
	uint64_t folded_end;  /* end of the last part folded: a part starting there continues it */
	struct fl_run *pending; /* sorted, disjoint, all after the watermark */
	size_t npending, pending_cap;
};

void fl_union_init(struct fl_union *u);
void fl_union_free(struct fl_union *u);
void fl_run_scratch_free(struct fl_run_scratch *sc);
/*
 * fl_union_take, and the same runs into u2's scratch sc2 as well: one connection's ring that
 * carries the runs of two unions (fl_conn_stats.active_is_wire). u2 must have u's watermark
 * (the two are settled at the same floors, and u2 began as a copy of u): the runs are clipped
 * to u's only.
 */
size_t fl_union_take_both(struct fl_union *u, struct fl_run_scratch *sc, struct fl_union *u2,
			  struct fl_run_scratch *sc2, struct fl_runs *r);
/*
 * dst becomes what src holds (the union so far). Without the memory for src's pending runs
 * they are folded into dst's total and counted as bridged (an upper bound).
 */
void fl_union_copy(struct fl_union *dst, const struct fl_union *src);
/* Adds one run, clipped to the watermark, to the scratch. */
void fl_union_add(struct fl_union *u, struct fl_run_scratch *sc, uint64_t start, uint64_t end);
/*
 * Takes a connection's closed runs and a copy of its open run into the
 * scratch; returns how many ring slots were drained (how full rings get).
 */
size_t fl_union_take(struct fl_union *u, struct fl_run_scratch *sc, struct fl_runs *r);
/*
 * Merges the scratch into the union and empties it, then folds everything
 * before `floor` (a time before which no connection can report anything any
 * more: every ring of the union must have been taken since it was read).
 */
void fl_union_settle(struct fl_union *u, struct fl_run_scratch *sc, uint64_t floor);
/* Length of the union of everything settled so far (ns). */
uint64_t fl_union_ns(const struct fl_union *u);
/* Its disjoint runs (busy stretches) so far; bridged gaps join runs. */
uint64_t fl_union_runs(const struct fl_union *u);

#endif
