/*
 * jansson's trees built in a bump arena instead of one malloc per value.
 * Reading 131 072 small reports made a quarter of `fabriclab report`'s time
 * glibc's malloc and its fastbin consolidation (each report's ~100 values
 * freed, then a larger buffer asked for): a tree that lives only while one
 * file is read needs none of that. While an arena is on (on this thread
 * only), jansson's allocations are carved from it and freeing them costs
 * nothing; off, and on other threads, jansson uses malloc and free as ever.
 * Every tree built while it was on must be freed while it is still on.
 */
#ifndef FABRICLAB_TOOL_JSON_ARENA_H
#define FABRICLAB_TOOL_JSON_ARENA_H

#include <stddef.h>

struct tool_json_chunk;

struct tool_json_arena {
	struct tool_json_chunk *first, *cur; /* chunks are kept and reused until _free */
};

/* A position to go back to: what was carved after it is given back at once. */
struct tool_json_mark {
	struct tool_json_chunk *chunk;
	size_t used;
};

/* Turns a (zeroed) arena on for this thread's jansson calls; one at a time per thread. */
void tool_json_arena_on(struct tool_json_arena *a);
/* Turns it off; its memory is kept for the next _on, which starts it empty. */
void tool_json_arena_off(struct tool_json_arena *a);
struct tool_json_mark tool_json_arena_mark(const struct tool_json_arena *a);
/* Gives back all carved since m: the trees made since then must be freed already. */
void tool_json_arena_release(struct tool_json_arena *a, struct tool_json_mark m);
/* Its memory back to the system; the arena must be off. */
void tool_json_arena_free(struct tool_json_arena *a);
/* Bytes of this thread's arena now carved (0 when none is on), for tests. */
size_t tool_json_arena_used(void);

#endif
