/*
 * A view's message size histogram, kept out of the view (report.h): most
 * views fill one or two of the 48 buckets, and a joined hop holding two full
 * arrays was 768 of its 1.4 KB (2.1 GB for 10^6 hops, most of it zeroes). The
 * non-empty buckets' counts live in an arena freed with the set; the view
 * keeps a mask of which buckets they are. The ports' text of rising counters
 * lives there too.
 */
#include <stdlib.h>
#include <string.h>

#include "report.h"

#define CHUNK_COUNTS (64 * 1024) /* 512 KiB: the arena asks malloc rarely */

struct report_arena_chunk {
	struct report_arena_chunk *next;
	size_t used, cap;
	uint64_t counts[];
};

static uint64_t *arena_take(struct report_arena *a, size_t n)
{
	struct report_arena_chunk *c = a->head;

	if (!c || c->cap - c->used < n) {
		size_t cap = n > CHUNK_COUNTS ? n : CHUNK_COUNTS;

		c = malloc(sizeof(*c) + cap * sizeof(c->counts[0]));
		if (!c)
			return NULL;
		c->next = a->head;
		c->used = 0;
		c->cap = cap;
		a->head = c;
	}
	c->used += n;
	return &c->counts[c->used - n];
}

int report_sizes_store(struct report_arena *a, struct report_view *v,
		       const uint64_t counts[REPORT_SIZE_BUCKETS])
{
	uint64_t mask = 0, *out;
	size_t n = 0;

	for (int b = 0; b < REPORT_SIZE_BUCKETS; b++) {
		if (counts[b]) {
			mask |= 1ULL << b;
			n++;
		}
	}
	v->size_mask = mask;
	v->size_counts = NULL;
	if (!n)
		return 0;
	if (!(out = arena_take(a, n)))
		return -1;
	for (int b = 0; b < REPORT_SIZE_BUCKETS; b++) {
		if (counts[b])
			*out++ = counts[b];
	}
	v->size_counts = out - n;
	return 0;
}

const char *report_arena_text(struct report_arena *a, const char *s)
{
	size_t len = strlen(s) + 1;
	uint64_t *out = arena_take(a, (len + sizeof(*out) - 1) / sizeof(*out));

	return out ? memcpy(out, s, len) : NULL;
}

void report_sizes_get(const struct report_view *v, uint64_t counts[REPORT_SIZE_BUCKETS])
{
	const uint64_t *c = v->size_counts;

	for (int b = 0; b < REPORT_SIZE_BUCKETS; b++)
		counts[b] = (v->size_mask >> b) & 1 ? *c++ : 0;
}

void report_arena_free(struct report_arena *a)
{
	while (a->head) {
		struct report_arena_chunk *next = a->head->next;

		free(a->head);
		a->head = next;
	}
}
