/*
 * The joined hops' names, each distinct one kept once (report_hop_key): a
 * report of 10^6 hops names some 10^5 nodes and a few devices, where every
 * hop held four fixed-size copies.
 */
#ifndef FABRICLAB_REPORT_NAMES_H
#define FABRICLAB_REPORT_NAMES_H

#include <stddef.h>

#include "report.h"

/* An open-addressing set of names; zeroed, it is empty. The text lives in an arena. */
struct report_names {
	const char **slots; /* NULL empty */
	size_t nslots, n;
};

/* s's one copy (in a, freed with it), added when new; NULL out of memory. */
const char *report_names_intern(struct report_names *t, struct report_arena *a, const char *s);
/* The set itself; the names stay in their arena. */
void report_names_free(struct report_names *t);

#endif
