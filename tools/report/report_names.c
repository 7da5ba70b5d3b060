/* The joined hops' names, each kept once (report_names.h). */
#include "report_names.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tools/common/tool_hash.h"

static size_t slot_of(const struct report_names *t, const char *s)
{
	size_t at = tool_hash_mix(tool_fnv1a(TOOL_FNV_OFFSET, s)) & (t->nslots - 1);

	while (t->slots[at] && strcmp(t->slots[at], s))
		at = (at + 1) & (t->nslots - 1);
	return at;
}

/* Twice the slots, at most half full after: a lookup stays a probe or two. */
static int grow(struct report_names *t)
{
	struct report_names bigger = { NULL, t->nslots ? 2 * t->nslots : 1024, t->n };

	if (!(bigger.slots = calloc(bigger.nslots, sizeof(*bigger.slots))))
		return -1;
	for (size_t i = 0; i < t->nslots; i++) {
		if (t->slots[i])
			bigger.slots[slot_of(&bigger, t->slots[i])] = t->slots[i];
	}
	free(t->slots);
	*t = bigger;
	return 0;
}

const char *report_names_intern(struct report_names *t, struct report_arena *a, const char *s)
{
	size_t at;

	if (2 * (t->n + 1) > t->nslots && grow(t))
		return NULL;
	at = slot_of(t, s);
	if (!t->slots[at]) {
		if (!(t->slots[at] = report_arena_text(a, s)))
			return NULL;
		t->n++;
	}
	return t->slots[at];
}

void report_names_free(struct report_names *t)
{
	free(t->slots);
	memset(t, 0, sizeof(*t));
}
