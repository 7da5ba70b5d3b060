#include "interval.h"

#include <stdlib.h>
#include <string.h>

/* ---- writer side: the slow paths of fl_runs_add ---- */

static _Atomic(void (*)(void)) nudge_hook;

void fl_runs_set_nudge(void (*nudge)(void))
{
	atomic_store_explicit(&nudge_hook, nudge, memory_order_release);
}

/*
 * The writer's view of the ring was past the nudge mark: reads the reader's tail again; still
 * past it, wakes the reader (once per FL_RUN_NUDGE_AGAIN words). Room for the longest run?
 */
static int ring_has_room(struct fl_runs *r)
{
	uint64_t head = fl_runs_own(&r->head);
	void (*nudge)(void);

	r->tail_seen = atomic_load_explicit(&r->tail, memory_order_acquire);
	if (head - r->tail_seen > FL_RUN_NUDGE && head - r->nudged >= FL_RUN_NUDGE_AGAIN) {
		r->nudged = head;
		nudge = atomic_load_explicit(&nudge_hook, memory_order_acquire);
		if (nudge)
			nudge();
	}
	return head - r->tail_seen <= FL_RUN_RING - FL_RUN_WORDS_MAX;
}

static void add_relaxed(_Atomic uint64_t *c, uint64_t v)
{
	atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + v,
			      memory_order_relaxed);
}

void fl_runs_close_slow(struct fl_runs *r, uint64_t s, uint64_t e)
{
	uint64_t we = fl_runs_own(&r->open_end);

	if (ring_has_room(r)) {
		fl_runs_close_at(r, fl_runs_own(&r->head), s, e, we);
		return;
	}
	/* Nobody drained the ring: cover the gap rather than lose the run, and say so. */
	add_relaxed(&r->bridged_ns, s - we);
	add_relaxed(&r->overflows, 1);
	atomic_store_explicit(&r->open_end, e, memory_order_release);
}

void fl_runs_push_early(struct fl_runs *r, uint64_t s, uint64_t e)
{
	if (ring_has_room(r)) {
		fl_runs_push(r, s, e);
		return;
	}
	add_relaxed(&r->bridged_ns, fl_runs_own(&r->open_start) - e);
	add_relaxed(&r->overflows, 1);
	atomic_store_explicit(&r->open_start, s, memory_order_release);
}

/* ---- reader side ---- */

void fl_union_init(struct fl_union *u)
{
	memset(u, 0, sizeof(*u));
	u->folded_end = UINT64_MAX;
}

void fl_union_free(struct fl_union *u)
{
	free(u->pending);
	fl_union_init(u);
}

void fl_run_scratch_free(struct fl_run_scratch *sc)
{
	free(sc->runs);
	free(sc->spare);
	memset(sc, 0, sizeof(*sc));
}

/* Where the stretch of runs in start order that begins at i ends. */
static size_t stretch_end(const struct fl_run *runs, size_t i, size_t n)
{
	while (++i < n && runs[i - 1].start <= runs[i].start)
		;
	return i;
}

/* a[0, na) and b[0, nb), each in start order, into out in start order. */
static void merge_two(const struct fl_run *a, size_t na, const struct fl_run *b, size_t nb,
		      struct fl_run *out)
{
	const struct fl_run *a_end = a + na, *b_end = b + nb;

	/* the pointer chosen, not the run copied by a branch: the two ends interleave unpredictably */
	while (a < a_end && b < b_end) {
		int from_b = b->start < a->start;

		*out++ = *(from_b ? b : a);
		b += from_b;
		a += !from_b;
	}
	memcpy(out, a, (size_t)(a_end - a) * sizeof(*a));
	memcpy(out + (a_end - a), b, (size_t)(b_end - b) * sizeof(*b));
}

/*
 * Sorts the scratch by start. What it holds is a few stretches already in order, one per
 * connection of a hop (and the pending runs before them), so neighbouring stretches are
 * merged pairwise into the spare buffer and back until one is left: O(n log k) for k
 * stretches, a few instructions a run. qsort, comparing through a function pointer, cost
 * 150-300 instructions a run, and every drain of a hop whose channels interleave needs it.
 */
static void sort_stretches(struct fl_run_scratch *sc, size_t n)
{
	for (;;) {
		struct fl_run *from = sc->runs, *to = sc->spare;
		size_t i = 0, stretches = 0;

		while (i < n) {
			size_t mid = stretch_end(from, i, n);
			size_t end = mid < n ? stretch_end(from, mid, n) : n;

			merge_two(from + i, mid - i, from + mid, end - mid, to + i);
			stretches++;
			i = end;
		}
		sc->runs = to;
		sc->spare = from;
		if (stretches <= 1)
			return;
	}
}

/* Sorted, overlapping or touching runs become one; returns the new count. */
static size_t coalesce(struct fl_run *runs, size_t n)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		if (k && runs[i].start <= runs[k - 1].end) {
			if (runs[i].end > runs[k - 1].end)
				runs[k - 1].end = runs[i].end;
		} else {
			runs[k++] = runs[i];
		}
	}
	return k;
}

static int by_gap(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;

	return (*x > *y) - (*x < *y);
}

/*
 * Too many disjoint runs: join the closest neighbours, counting each gap
 * joined as possible overstatement, until `keep` runs remain. Without memory
 * for the gaps, everything becomes one run.
 */
static size_t bridge_smallest_gaps(struct fl_union *u, struct fl_run *runs, size_t n, size_t keep)
{
	uint64_t *gaps = malloc((n - 1) * sizeof(*gaps)), limit;
	size_t joins = n - keep, k = 0, over = 0;

	for (size_t i = 1; gaps && i < n; i++)
		gaps[i - 1] = runs[i].start - runs[i - 1].end;
	if (gaps) {
		qsort(gaps, n - 1, sizeof(gaps[0]), by_gap);
		limit = gaps[joins - 1];
		/* Gaps equal to the limit are joined only as long as joins remain. */
		for (size_t i = 0; i < joins; i++)
			over += gaps[i] == limit;
		free(gaps);
	} else {
		limit = UINT64_MAX;
	}
	for (size_t i = 0; i < n; i++) {
		uint64_t gap = i ? runs[i].start - runs[k - 1].end : 0;

		if (i && (gap < limit || (gap == limit && over))) {
			over -= gap == limit && over;
			u->bridged_ns += gap;
			runs[k - 1].end = runs[i].end;
		} else {
			runs[k++] = runs[i];
		}
	}
	return k;
}

static int scratch_room(struct fl_run_scratch *sc, size_t more)
{
	size_t cap = sc->cap ? sc->cap : 1024;
	struct fl_run *runs;

	if (sc->n + more <= sc->cap)
		return 1;
	while (cap < sc->n + more)
		cap *= 2;
	runs = realloc(sc->spare, cap * sizeof(*runs));
	if (!runs)
		return 0;
	sc->spare = runs;
	runs = realloc(sc->runs, cap * sizeof(*runs));
	if (!runs)
		return 0;
	sc->runs = runs;
	sc->cap = cap;
	return 1;
}

void fl_union_add(struct fl_union *u, struct fl_run_scratch *sc, uint64_t start, uint64_t end)
{
	if (start < u->watermark)
		start = u->watermark;
	if (end <= start)
		return;
	if (!scratch_room(sc, 1)) {
		/* No memory to place it: count it, and say it may be redundant. */
		u->folded_ns += end - start;
		u->bridged_ns += end - start;
		u->bridges++;
		return;
	}
	sc->unsorted |= sc->n && start < sc->last_start;
	sc->last_start = start;
	sc->runs[sc->n++] = (struct fl_run){ start, end };
}

static uint64_t ring_word(const struct fl_runs *r, uint64_t i)
{
	return atomic_load_explicit(&r->ring[i & (FL_RUN_RING - 1)], memory_order_relaxed);
}

/*
 * Decodes the runs the writer pushed (fl_runs_push_at), in order, against r_last, into
 * the scratch from `out` on (room checked); returns the end of what it wrote. Each run
 * clipped to the watermark; empty ones dropped. Runs coded in one word start after the end
 * of the run before (from = last + gap), so only an escaped run can start earlier: the order
 * is checked there, where the batch meets what the scratch held, and nowhere else.
 */
static struct fl_run *take_runs(struct fl_run_scratch *sc, struct fl_run *out,
				const struct fl_runs *r, uint64_t tail, uint64_t head,
				uint64_t watermark, uint64_t *r_last)
{
	struct fl_run *first = out;
	uint64_t last = *r_last;
	const _Atomic uint64_t *ring = r->ring;
	int unsorted = 0;

	for (uint64_t i = tail; i != head;) {
		uint64_t word = atomic_load_explicit(&ring[i++ & (FL_RUN_RING - 1)],
						     memory_order_relaxed), from, to;

		if (__builtin_expect(word == FL_RUN_ESCAPE, 0)) {
			from = ring_word(r, i++);
			to = ring_word(r, i++);
			unsorted |= from < last; /* may start before a run kept earlier */
		} else {
			from = last + (word >> 32);
			to = from + (word & UINT32_MAX);
		}
		last = to;
		from = from < watermark ? watermark : from;
		if (to > from) {
			out->start = from;
			out->end = to;
			out++;
		}
	}
	if (out != first) {
		unsorted |= sc->n && first->start < sc->last_start;
		sc->last_start = out[-1].start;
	}
	sc->unsorted |= unsorted;
	*r_last = last;
	return out;
}

size_t fl_union_take(struct fl_union *u, struct fl_run_scratch *sc, struct fl_runs *r)
{
	/* The open run first: a run closed after this read is then in the ring. */
	uint64_t end = atomic_load_explicit(&r->open_end, memory_order_acquire);
	uint64_t start = atomic_load_explicit(&r->open_start, memory_order_acquire);
	uint64_t head = atomic_load_explicit(&r->head, memory_order_acquire);
	uint64_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);

	/* Sizes the scratch once for the batch (a run takes at least one word, plus the open run). */
	if (scratch_room(sc, (size_t)(head - tail) + 1)) {
		sc->n = (size_t)(take_runs(sc, sc->runs + sc->n, r, tail, head, u->watermark,
					   &r->r_last) - sc->runs);
	} else {
		/* no memory: fl_union_add copes with each run, and counts what it must */
		uint64_t last = r->r_last;

		for (uint64_t i = tail; i != head;) {
			uint64_t word = ring_word(r, i++), from, to;

			if (word == FL_RUN_ESCAPE) {
				from = ring_word(r, i++);
				to = ring_word(r, i++);
			} else {
				from = last + (word >> 32);
				to = from + (word & UINT32_MAX);
			}
			last = to;
			fl_union_add(u, sc, from, to);
		}
		r->r_last = last;
	}
	/* read first, added last: the runs stay in time order, and settle skips its sort */
	if (end > start)
		fl_union_add(u, sc, start, end);
	atomic_store_explicit(&r->tail, head, memory_order_release);
	return (size_t)(head - tail);
}

/* [start, end) into the total, a busy stretch of its own (coalesce_fold corrects the first). */
static void fold_part(struct fl_union *u, uint64_t start, uint64_t end)
{
	u->folded_ns += end - start;
	u->runs_folded++;
	u->folded_end = end;
}

/* One run of a sorted, coalesced list, folded against floor (> the watermark) into runs[k]. */
static size_t fold_one(struct fl_union *u, struct fl_run *runs, size_t k, struct fl_run run,
		       uint64_t floor)
{
	if (run.end <= floor) {
		fold_part(u, run.start, run.end);
		return k;
	}
	if (run.start < floor) {
		fold_part(u, run.start, floor);
		run.start = floor;
	}
	runs[k] = run;
	return k + 1;
}

/*
 * coalesce(), then everything before floor folded into the total, in one pass over sorted
 * runs (the rest stays sorted): each merged run is folded as soon as
 * the next one starts after it. Writes only slots already read.
 */
static size_t coalesce_fold(struct fl_union *u, struct fl_run *runs, size_t n, uint64_t floor)
{
	struct fl_run cur;
	size_t k = 0;
	/*
	 * A run the floor cut before, or one the writer extended after a copy of it was folded,
	 * comes back starting where the part folded last ended: the same busy stretch.
	 */
	int continues;

	if (floor <= u->watermark)
		return coalesce(runs, n);
	if (!n) {
		u->watermark = floor;
		return 0;
	}
	continues = runs[0].start == u->folded_end && runs[0].start < floor;
	cur = runs[0];
	for (size_t i = 1; i < n; i++) {
		if (runs[i].start <= cur.end) {
			if (runs[i].end > cur.end)
				cur.end = runs[i].end;
			continue;
		}
		k = fold_one(u, runs, k, cur, floor);
		cur = runs[i];
	}
	k = fold_one(u, runs, k, cur, floor);
	u->runs_folded -= (uint64_t)continues;
	u->watermark = floor;
	return k;
}

/* Counts runs it cannot keep as possibly redundant (out of memory). */
static void fold_all_as_bridged(struct fl_union *u, const struct fl_run *runs, size_t n)
{
	u->bridges += n != 0;
	for (size_t i = 0; i < n; i++) {
		u->folded_ns += runs[i].end - runs[i].start;
		u->bridged_ns += runs[i].end - runs[i].start;
	}
}

/* Runs already clipped to u's watermark into sc after what it holds; counted in u without memory. */
static void scratch_append(struct fl_union *u, struct fl_run_scratch *sc, const struct fl_run *runs,
			   size_t n, int unsorted)
{
	if (!n)
		return;
	if (!scratch_room(sc, n)) {
		for (size_t i = 0; i < n; i++)
			fl_union_add(u, sc, runs[i].start, runs[i].end); /* counts what it drops */
		return;
	}
	sc->unsorted |= unsorted || (sc->n && runs[0].start < sc->last_start);
	memcpy(sc->runs + sc->n, runs, n * sizeof(*runs));
	sc->n += n;
	sc->last_start = runs[n - 1].start;
}

size_t fl_union_take_both(struct fl_union *u, struct fl_run_scratch *sc, struct fl_union *u2,
			  struct fl_run_scratch *sc2, struct fl_runs *r)
{
	uint64_t folded = u->folded_ns, bridged = u->bridged_ns, bridges = u->bridges;
	size_t from = sc->n, words;
	int unsorted = sc->unsorted;

	sc->unsorted = 0;
	words = fl_union_take(u, sc, r);
	/* what u could not place for want of memory was counted there: the same in u2 */
	u2->folded_ns += u->folded_ns - folded;
	u2->bridged_ns += u->bridged_ns - bridged;
	u2->bridges += u->bridges - bridges;
	scratch_append(u2, sc2, sc->runs + from, sc->n - from, sc->unsorted);
	sc->unsorted |= unsorted;
	return words;
}

void fl_union_copy(struct fl_union *dst, const struct fl_union *src)
{
	struct fl_run *pending = src->npending ? malloc(src->npending * sizeof(*pending)) : NULL;

	free(dst->pending);
	*dst = *src;
	dst->pending = pending;
	dst->pending_cap = dst->npending = pending ? src->npending : 0;
	if (pending)
		memcpy(pending, src->pending, src->npending * sizeof(*pending));
	else
		fold_all_as_bridged(dst, src->pending, src->npending);
}

static int pending_room(struct fl_union *u, size_t n)
{
	struct fl_run *p;

	if (n <= u->pending_cap)
		return 1;
	p = realloc(u->pending, n * sizeof(*p));
	if (!p)
		return 0;
	u->pending = p;
	u->pending_cap = n;
	return 1;
}

/*
 * What lies after the watermark is kept up to FL_UNION_PENDING runs, or as
 * many as were just taken: runs that came in while the floor was read are
 * merged exactly; only a watermark pinned for many drains makes them pile up.
 */
void fl_union_settle(struct fl_union *u, struct fl_run_scratch *sc, uint64_t floor)
{
	size_t taken = sc->n, limit = taken > FL_UNION_PENDING ? taken : FL_UNION_PENDING, n;
	/* pending is sorted; the scratch knows whether it is, and where it starts */
	int sorted = !sc->unsorted && (!u->npending || !sc->n ||
				       u->pending[u->npending - 1].start <= sc->runs[0].start);

	sc->unsorted = 0;
	if (!scratch_room(sc, u->npending)) {
		fold_all_as_bridged(u, sc->runs, sc->n);
		sc->n = 0;
		return;
	}
	/* The older runs in front: one connection's drain then arrives sorted. */
	if (u->npending) {
		memmove(sc->runs + u->npending, sc->runs, sc->n * sizeof(*sc->runs));
		memcpy(sc->runs, u->pending, u->npending * sizeof(*u->pending));
	}
	n = sc->n + u->npending;
	sc->n = 0;
	if (n && !sorted)
		sort_stretches(sc, n);
	n = coalesce_fold(u, sc->runs, n, floor);
	if (n > limit) {
		u->bridges++;
		n = bridge_smallest_gaps(u, sc->runs, n, limit * 3 / 4);
	}
	if (!pending_room(u, n)) {
		fold_all_as_bridged(u, sc->runs, n);
		u->npending = 0;
		return;
	}
	if (n)
		memcpy(u->pending, sc->runs, n * sizeof(*u->pending));
	u->npending = n;
}

uint64_t fl_union_runs(const struct fl_union *u)
{
	return u->runs_folded + u->npending -
	       (u->npending && u->pending[0].start == u->folded_end);
}

uint64_t fl_union_ns(const struct fl_union *u)
{
	uint64_t ns = u->folded_ns;

	for (size_t i = 0; i < u->npending; i++)
		ns += u->pending[i].end - u->pending[i].start;
	return ns;
}
