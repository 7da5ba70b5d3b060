/* jansson's values carved from a bump arena while one file is read (tool_json_arena.h). */
#include "tool_json_arena.h"

#include <jansson.h>
#include <pthread.h>
#include <stdalign.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

/*
 * Under AddressSanitizer what is not carved is poisoned: a value read after
 * its file's arena went off or after a release is reported, as a freed one
 * would be without the arena.
 */
#if defined(__SANITIZE_ADDRESS__)
#define ARENA_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ARENA_ASAN 1
#endif
#endif
#ifdef ARENA_ASAN
#include <sanitizer/asan_interface.h>
#define POISON(p, n) ASAN_POISON_MEMORY_REGION((p), (n))
#define UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#else
#define POISON(p, n) ((void)(p), (void)(n))
#define UNPOISON(p, n) ((void)(p), (void)(n))
#endif

#define FIRST_CHUNK (64UL << 10) /* a 2 KB report's tree is ~10 KB; a hop's ~2 KB */
#define LARGEST_CHUNK (16UL << 20)

struct tool_json_chunk {
	struct tool_json_chunk *next;
	size_t size, used;
	alignas(max_align_t) unsigned char mem[];
};

static _Thread_local struct tool_json_arena *current;
static pthread_once_t installed = PTHREAD_ONCE_INIT;

static bool owns(const struct tool_json_arena *a, const void *p)
{
	uintptr_t at = (uintptr_t)p;

	for (const struct tool_json_chunk *c = a->first; c; c = c->next) {
		if (at >= (uintptr_t)c->mem && at < (uintptr_t)c->mem + c->size)
			return true;
	}
	return false;
}

static struct tool_json_chunk *new_chunk(size_t size, struct tool_json_chunk *next)
{
	struct tool_json_chunk *c = malloc(sizeof(*c) + size);

	if (c) {
		*c = (struct tool_json_chunk){ next, size, 0 };
		POISON(c->mem, size);
	}
	return c;
}

/* The chunk after cur, emptied, or a new one there when it is missing or too small. */
static struct tool_json_chunk *next_chunk(struct tool_json_arena *a, size_t n)
{
	struct tool_json_chunk *c = a->cur ? a->cur->next : a->first;

	if (!c || c->size < n) {
		size_t size = a->cur ? 2 * a->cur->size : FIRST_CHUNK;

		size = size > LARGEST_CHUNK ? LARGEST_CHUNK : size;
		if (!(c = new_chunk(size < n ? n : size, c)))
			return NULL;
		if (a->cur)
			a->cur->next = c;
		else
			a->first = c;
	}
	c->used = 0;
	return c;
}

/* From chunk c at offset used on: no longer carved. */
static void poison_from(struct tool_json_chunk *c, size_t used)
{
	for (; c; c = c->next, used = 0)
		POISON(c->mem + used, c->size - used);
}

static void *arena_malloc(size_t n)
{
	struct tool_json_arena *a = current;
	size_t asked = n;
	void *p;

	if (!a)
		return malloc(n);
	n = n ? (n + alignof(max_align_t) - 1) & ~(alignof(max_align_t) - 1) : alignof(max_align_t);
	if (!a->cur || a->cur->size - a->cur->used < n) {
		struct tool_json_chunk *c = next_chunk(a, n);

		if (!c)
			return NULL;
		a->cur = c;
	}
	p = a->cur->mem + a->cur->used;
	a->cur->used += n;
	UNPOISON(p, asked);
	return p;
}

/* A value made before the arena was on (or by malloc on another thread) is really freed. */
static void arena_free(void *p)
{
	struct tool_json_arena *a = current;

	if (p && !(a && owns(a, p)))
		free(p);
}

static void install(void)
{
	json_set_alloc_funcs(arena_malloc, arena_free);
}

void tool_json_arena_on(struct tool_json_arena *a)
{
	pthread_once(&installed, install);
	a->cur = a->first;
	if (a->cur)
		a->cur->used = 0;
	poison_from(a->first, 0);
	current = a;
}

void tool_json_arena_off(struct tool_json_arena *a)
{
	if (current == a)
		current = NULL;
	poison_from(a->first, 0);
}

struct tool_json_mark tool_json_arena_mark(const struct tool_json_arena *a)
{
	return (struct tool_json_mark){ a->cur, a->cur ? a->cur->used : 0 };
}

void tool_json_arena_release(struct tool_json_arena *a, struct tool_json_mark m)
{
	a->cur = m.chunk ? m.chunk : a->first;
	if (a->cur)
		a->cur->used = m.chunk ? m.used : 0;
	poison_from(a->cur, a->cur ? a->cur->used : 0);
}

void tool_json_arena_free(struct tool_json_arena *a)
{
	while (a->first) {
		struct tool_json_chunk *next = a->first->next;

		UNPOISON(a->first->mem, a->first->size);
		free(a->first);
		a->first = next;
	}
	a->cur = NULL;
}

size_t tool_json_arena_used(void)
{
	size_t used = 0;

	if (!current)
		return 0;
	for (const struct tool_json_chunk *c = current->first; c; c = c->next) {
		used += c->used;
		if (c == current->cur)
			break;
	}
	return used;
}
