/*
 * Where nccl-log keeps the ranks: an array found through a hash of the keys
 * (a line's rank costs the same with ten ranks or a million: a linear scan
 * made 10^6 lines of distinct ranks take hours), and an arena for their
 * strings, freed at once.
 */
#include "nccllog.h"

#include <stdlib.h>
#include <string.h>

#include "tools/common/tool_hash.h"

#define BLOCK_BYTES (64u << 10)
#define ALIGN 8 /* every piece suits any struct of the ranks (nl_dev) */

struct nl_block {
	struct nl_block *next;
	char data[];
};

const char *nl_keep(struct nl_log *log, const char *s, size_t n)
{
	struct nl_arena *a = &log->arena;
	char *out;

	if (!a->blocks || n + 1 > a->cap - a->used) {
		size_t cap = n + 1 > BLOCK_BYTES ? n + 1 : BLOCK_BYTES;
		struct nl_block *b = malloc(sizeof(*b) + cap);

		if (!b)
			return NULL;
		b->next = a->blocks;
		a->blocks = b;
		a->used = 0;
		a->cap = cap;
	}
	out = a->blocks->data + a->used;
	memcpy(out, s, n);
	out[n] = '\0';
	a->used += (n + 1 + ALIGN - 1) & ~(size_t)(ALIGN - 1);
	return out;
}

/* The slot that holds key, or the empty slot where it would go. */
static size_t slot_of(const struct nl_log *log, const char *key)
{
	size_t s = tool_hash_mix(tool_fnv1a(TOOL_FNV_OFFSET, key)) & (log->nslots - 1);

	while (log->slots[s] && strcmp(log->ranks[log->slots[s] - 1].key, key))
		s = (s + 1) & (log->nslots - 1);
	return s;
}

/* Keeps the table at most half full. */
static int grow_index(struct nl_log *log)
{
	size_t nslots = log->nslots ? 2 * log->nslots : 64;
	uint32_t *old = log->slots;

	if (2 * (log->n + 1) <= log->nslots)
		return 0;
	if (log->n + 1 >= UINT32_MAX)
		return -1;
	log->slots = calloc(nslots, sizeof(*log->slots));
	if (!log->slots) {
		log->slots = old;
		return -1;
	}
	log->nslots = nslots;
	for (size_t i = 0; i < log->n; i++)
		log->slots[slot_of(log, log->ranks[i].key)] = (uint32_t)(i + 1);
	free(old);
	return 0;
}

static int grow_ranks(struct nl_log *log)
{
	size_t cap = log->cap ? 2 * log->cap : 16;
	struct nl_rank *more;

	if (log->n < log->cap)
		return 0;
	more = realloc(log->ranks, cap * sizeof(*more));
	if (!more)
		return -1;
	log->ranks = more;
	log->cap = cap;
	return 0;
}

struct nl_rank *nl_find_or_add(struct nl_log *log, const char *key)
{
	size_t s;
	const char *kept;

	if (grow_index(log) || grow_ranks(log))
		return NULL;
	s = slot_of(log, key);
	if (log->slots[s])
		return &log->ranks[log->slots[s] - 1];
	kept = nl_keep(log, key, strlen(key));
	if (!kept)
		return NULL;
	log->ranks[log->n] = (struct nl_rank){ .key = kept, .rank = -1, .nranks = -1 };
	log->slots[s] = (uint32_t)++log->n;
	return &log->ranks[log->n - 1];
}

void nl_log_free(struct nl_log *log)
{
	while (log->arena.blocks) {
		struct nl_block *next = log->arena.blocks->next;

		free(log->arena.blocks);
		log->arena.blocks = next;
	}
	free(log->ranks);
	free(log->slots);
	*log = (struct nl_log){ 0 };
}
