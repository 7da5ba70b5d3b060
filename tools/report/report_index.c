/* Entry indices by hash (report_index.h). */
#include "report_index.h"

#include <stdlib.h>

#include "tools/common/tool_hash.h"

int report_index_init(struct report_index *x, size_t n)
{
	size_t size = 16;

	while (size < 2 * n)
		size *= 2;
	x->slots = calloc(size, sizeof(*x->slots));
	x->mask = size - 1;
	return x->slots ? 0 : -1;
}

void report_index_free(struct report_index *x)
{
	free(x->slots);
	x->slots = NULL;
}

size_t *report_index_slot(struct report_index *x, uint64_t hash,
			  bool (*same)(const void *ctx, size_t entry), const void *ctx)
{
	size_t s = (size_t)hash & x->mask;

	while (x->slots[s] && !same(ctx, x->slots[s] - 1))
		s = (s + 1) & x->mask;
	return &x->slots[s];
}

uint64_t report_index_hash(const char *a, const char *b, uint64_t n)
{
	uint64_t h = tool_fnv1a(TOOL_FNV_OFFSET ^ n, a);

	h = (h ^ 0xff) * TOOL_FNV_PRIME; /* "ab"+"c" apart from "a"+"bc" */
	return tool_hash_mix(tool_fnv1a(h, b));
}
