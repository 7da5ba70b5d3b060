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
 * escape word and its start and end in two more. The reader drains when a
 * ring is about a quarter full (report_thread.c): at one run per message, as
 * small messages make, 2048 keeps its wake-ups milliseconds apart, with room
 * for a wake-up three periods late before the writer has to bridge, in 16 KB.
 */
#define FL_RUN_RING 2048
#define FL_RUN_WORDS_MAX 3
#define FL_RUN_ESCAPE 0xffffffffULL /* a word's high half: the run follows in full */

struct fl_run {
	uint64_t start, end;
};

struct fl_runs {
	/* writer-private */
	uint64_t w_start, w_end; /* the open run; w_end == 0 before the first interval */
	uint64_t head_w;         /* next ring word to fill */
	uint64_t tail_seen;      /* the reader's tail as last read */
	uint64_t w_last;         /* end of the run pushed last: the next is coded from it */
	/* published by the writer */
	_Atomic uint64_t open_start, open_end;
	_Atomic uint64_t head;
	_Atomic uint64_t bridged_ns;
	_Atomic uint64_t overflows; /* times the ring was full and a gap was bridged */
	/* the reader's, on a line of its own */
	_Alignas(64) _Atomic uint64_t tail;
	uint64_t r_last; /* w_last as of tail */
	_Alignas(64) _Atomic uint64_t ring[FL_RUN_RING];
};

/* The ring looked full: reads the reader's tail again, else bridges to [s, e). */
void fl_runs_close_slow(struct fl_runs *r, uint64_t s, uint64_t e);
/* An interval entirely before the open run: pushed as a run of its own. */
void fl_runs_push_early(struct fl_runs *r, uint64_t s, uint64_t e);

/* Room for the longest run, as the writer last saw the reader. */
static inline int fl_runs_roomy(const struct fl_runs *r)
{
	return r->head_w - r->tail_seen <= FL_RUN_RING - FL_RUN_WORDS_MAX;
}

/*
 * Release on both words: a reader that sees either one of a new run also sees
 * the ring words the previous run was closed into.
 */
static inline void fl_runs_publish(struct fl_runs *r)
{
	atomic_store_explicit(&r->open_start, r->w_start, memory_order_release);
	atomic_store_explicit(&r->open_end, r->w_end, memory_order_release);
}

static inline void fl_runs_put(struct fl_runs *r, uint64_t word)
{
	atomic_store_explicit(&r->ring[r->head_w++ & (FL_RUN_RING - 1)], word,
			      memory_order_relaxed);
}

/* The caller has checked for room (fl_runs_roomy). */
static inline __attribute__((always_inline)) void fl_runs_push(struct fl_runs *r, uint64_t s,
								uint64_t e)
{
	uint64_t gap = s - r->w_last, len = e - s;

	if (s >= r->w_last && gap < FL_RUN_ESCAPE && len <= UINT32_MAX) {
		fl_runs_put(r, gap << 32 | len);
	} else {
		fl_runs_put(r, FL_RUN_ESCAPE << 32);
		fl_runs_put(r, s);
		fl_runs_put(r, e);
	}
	r->w_last = e;
	atomic_store_explicit(&r->head, r->head_w, memory_order_release);
}

/* [s, e) starts after the open run: close the open run into the ring, open a new one. */
static inline __attribute__((always_inline)) void fl_runs_close(struct fl_runs *r, uint64_t s,
								 uint64_t e)
{
	if (__builtin_expect(!fl_runs_roomy(r), 0)) {
		fl_runs_close_slow(r, s, e);
		return;
	}
	if (r->w_end)
		fl_runs_push(r, r->w_start, r->w_end);
	r->w_start = s;
	r->w_end = e;
	fl_runs_publish(r);
}

/*
 * Adds [s, e) to a connection's union. Writer thread only. Always inlined: it runs twice per
 * completed request, and a call costs as much as its common paths do.
 */
static inline __attribute__((always_inline)) void fl_runs_add(struct fl_runs *r, uint64_t s,
							       uint64_t e)
{
	if (e <= s)
		return;
	if (s > r->w_end) {
		fl_runs_close(r, s, e);
		return;
	}
	if (__builtin_expect(e < r->w_start, 0)) {
		fl_runs_push_early(r, s, e);
		return;
	}
	if (e > r->w_end) {
		r->w_end = e;
		atomic_store_explicit(&r->open_end, e, memory_order_release);
	}
	if (s < r->w_start) {
		r->w_start = s;
		atomic_store_explicit(&r->open_start, s, memory_order_release);
	}
}

/* disjoint runs kept after a pinned watermark: a ring's worth */
#define FL_UNION_PENDING FL_RUN_RING

/* Runs taken from the rings before they are merged; one per reader, reused. */
struct fl_run_scratch {
	struct fl_run *runs;
	size_t n, cap;
};

struct fl_union {
	uint64_t watermark; /* coverage before it is final and folded into folded_ns */
	uint64_t folded_ns;
	uint64_t bridged_ns; /* upper bound on how much the total overstates the union */
	uint64_t bridges;    /* times the reader bridged gaps or lacked memory for runs */
	struct fl_run *pending; /* sorted, disjoint, all after the watermark */
	size_t npending, pending_cap;
};

void fl_union_init(struct fl_union *u);
void fl_union_free(struct fl_union *u);
void fl_run_scratch_free(struct fl_run_scratch *sc);
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

#endif
