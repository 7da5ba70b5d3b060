#include "interval.h"

#include <stdlib.h>
#include <string.h>

/* ---- writer side: the slow paths of fl_runs_add ---- */

static int ring_push(struct fl_runs *r, uint64_t s, uint64_t e)
{
	struct fl_run_slot *slot;

	if (r->head_w - r->tail_seen >= FL_RUN_RING) {
		r->tail_seen = atomic_load_explicit(&r->tail, memory_order_acquire);
		if (r->head_w - r->tail_seen >= FL_RUN_RING)
			return 0;
	}
	slot = &r->ring[r->head_w & (FL_RUN_RING - 1)];
	atomic_store_explicit(&slot->start, s, memory_order_relaxed);
	atomic_store_explicit(&slot->end, e, memory_order_relaxed);
	r->head_w++;
	atomic_store_explicit(&r->head, r->head_w, memory_order_release);
	return 1;
}

static void add_relaxed(_Atomic uint64_t *c, uint64_t v)
{
	atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + v,
			      memory_order_relaxed);
}

void fl_runs_close(struct fl_runs *r, uint64_t s, uint64_t e)
{
	if (r->w_end) {
		if (!ring_push(r, r->w_start, r->w_end)) {
			/* Nobody drained the ring: cover the gap rather than lose the run. */
			add_relaxed(&r->bridged_ns, s - r->w_end);
			r->w_end = e;
			atomic_store_explicit(&r->open_end, e, memory_order_release);
			return;
		}
		add_relaxed(&r->closed_ns, r->w_end - r->w_start);
	}
	r->w_start = s;
	r->w_end = e;
	fl_runs_publish(r);
}

void fl_runs_push_early(struct fl_runs *r, uint64_t s, uint64_t e)
{
	if (ring_push(r, s, e)) {
		add_relaxed(&r->closed_ns, e - s);
		return;
	}
	add_relaxed(&r->bridged_ns, r->w_start - e);
	r->w_start = s;
	atomic_store_explicit(&r->open_start, s, memory_order_release);
}

uint64_t fl_runs_own_ns(const struct fl_runs *r)
{
	uint64_t end = atomic_load_explicit(&r->open_end, memory_order_acquire);
	uint64_t start = atomic_load_explicit(&r->open_start, memory_order_acquire);

	return atomic_load_explicit(&r->closed_ns, memory_order_relaxed) +
	       (end > start ? end - start : 0);
}

/* ---- reader side ---- */

void fl_union_init(struct fl_union *u)
{
	memset(u, 0, sizeof(*u));
}

void fl_union_free(struct fl_union *u)
{
	free(u->runs);
	fl_union_init(u);
}

static int by_start(const void *a, const void *b)
{
	const struct fl_run *x = a, *y = b;

	return (x->start > y->start) - (x->start < y->start);
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
 * joined as possible overstatement, until `keep` runs remain.
 */
static size_t bridge_smallest_gaps(struct fl_union *u, size_t n, size_t keep)
{
	uint64_t gaps[FL_UNION_PENDING + FL_UNION_INTAKE];
	size_t joins = n - keep, k = 0, over = 0;
	uint64_t limit;

	for (size_t i = 1; i < n; i++)
		gaps[i - 1] = u->runs[i].start - u->runs[i - 1].end;
	qsort(gaps, n - 1, sizeof(gaps[0]), by_gap);
	limit = gaps[joins - 1];
	/* Gaps equal to the limit are joined only as long as joins remain. */
	for (size_t i = 0; i < joins; i++)
		over += gaps[i] == limit;
	for (size_t i = 0; i < n; i++) {
		uint64_t gap = i ? u->runs[i].start - u->runs[k - 1].end : 0;

		if (i && (gap < limit || (gap == limit && over))) {
			over -= gap == limit;
			u->bridged_ns += gap;
			u->runs[k - 1].end = u->runs[i].end;
		} else {
			u->runs[k++] = u->runs[i];
		}
	}
	return k;
}

static void merge_intake(struct fl_union *u)
{
	size_t n = u->npending + u->nintake;

	if (!u->nintake)
		return;
	qsort(u->runs, n, sizeof(u->runs[0]), by_start);
	n = coalesce(u->runs, n);
	if (n > FL_UNION_PENDING)
		n = bridge_smallest_gaps(u, n, FL_UNION_PENDING * 3 / 4);
	u->npending = n;
	u->nintake = 0;
}

void fl_union_add(struct fl_union *u, uint64_t start, uint64_t end)
{
	if (start < u->watermark)
		start = u->watermark;
	if (end <= start)
		return;
	if (!u->runs) {
		u->runs = malloc((FL_UNION_PENDING + FL_UNION_INTAKE) * sizeof(u->runs[0]));
		if (!u->runs) {
			/* No memory to place it: count it, and say it may be redundant. */
			u->folded_ns += end - start;
			u->bridged_ns += end - start;
			return;
		}
	}
	if (u->nintake == FL_UNION_INTAKE)
		merge_intake(u);
	u->runs[u->npending + u->nintake++] = (struct fl_run){ start, end };
}

size_t fl_union_take(struct fl_union *u, struct fl_runs *r)
{
	/* The open run first: a run closed after this read is then in the ring. */
	uint64_t end = atomic_load_explicit(&r->open_end, memory_order_acquire);
	uint64_t start = atomic_load_explicit(&r->open_start, memory_order_acquire);
	uint64_t head = atomic_load_explicit(&r->head, memory_order_acquire);
	uint64_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);

	if (end > start)
		fl_union_add(u, start, end);
	for (uint64_t i = tail; i != head; i++) {
		struct fl_run_slot *slot = &r->ring[i & (FL_RUN_RING - 1)];

		fl_union_add(u, atomic_load_explicit(&slot->start, memory_order_relaxed),
			     atomic_load_explicit(&slot->end, memory_order_relaxed));
	}
	atomic_store_explicit(&r->tail, head, memory_order_release);
	return (size_t)(head - tail);
}

void fl_union_settle(struct fl_union *u, uint64_t floor)
{
	size_t k = 0;

	merge_intake(u);
	if (floor <= u->watermark)
		return;
	for (size_t i = 0; i < u->npending; i++) {
		struct fl_run run = u->runs[i];

		if (run.end <= floor) {
			u->folded_ns += run.end - run.start;
			continue;
		}
		if (run.start < floor) {
			u->folded_ns += floor - run.start;
			run.start = floor;
		}
		u->runs[k++] = run;
	}
	u->npending = k;
	u->watermark = floor;
}

uint64_t fl_union_ns(const struct fl_union *u)
{
	uint64_t ns = u->folded_ns;

	for (size_t i = 0; i < u->npending; i++)
		ns += u->runs[i].end - u->runs[i].start;
	return ns;
}
