/*
 * An open-addressing table of entry indices, for the merge's look-ups by name
 * (a rank's node, a port already listed, a RoCE interface already seen): a
 * scan of everything seen so far per look-up is quadratic, and a fleet has
 * 10^5 reports, each with the ports of its node.
 */
#ifndef FABRICLAB_REPORT_INDEX_H
#define FABRICLAB_REPORT_INDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct report_index {
	size_t *slots; /* entry + 1; 0 is empty */
	size_t mask;
};

/* Room for n entries (the table is at least twice that); -1 out of memory. */
int report_index_init(struct report_index *x, size_t n);
void report_index_free(struct report_index *x);

/*
 * The slot of the entry with this hash that same(ctx, entry) accepts, or the
 * empty slot where it goes (*slot == 0: store entry + 1 there).
 */
size_t *report_index_slot(struct report_index *x, uint64_t hash,
			  bool (*same)(const void *ctx, size_t entry), const void *ctx);

/* The hash of two names and a number (either name may be ""). */
uint64_t report_index_hash(const char *a, const char *b, uint64_t n);

#endif
