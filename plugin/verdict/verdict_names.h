/*
 * Names as numbers: each distinct name its rank in strcmp order, so that
 * hops sort by integers rather than by reading their names in every
 * comparison (verdict_candidates.c).
 */
#ifndef FL_VERDICT_NAMES_H
#define FL_VERDICT_NAMES_H

#include <stddef.h>
#include <stdint.h>

/*
 * rank[i] for names[i], i < n (n < 2^32): equal names equal ranks, in strcmp
 * order from 0. 0, or -1 when out of memory (rank then unset).
 */
int vm_name_ranks(const char *const *names, size_t n, uint32_t *rank);

#endif
