/*
 * Ranks of names (verdict_names.h): the distinct names found through a hash
 * table, sorted alone, their ranks given back to every name. On 10^6 hops
 * that is 10^5 node names sorted instead of 2 x 10^6 endpoints compared by
 * name, each comparison two cache misses into the hop array.
 */
#include "verdict_names.h"

#include <stdlib.h>
#include <string.h>

/* FNV-1a (Fowler, Noll, Vo): any spread of the bytes serves; only speed matters. */
static uint64_t name_hash(const char *p)
{
	uint64_t h = 14695981039346656037ULL;

	for (; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ULL;
	return h;
}

static int cmp_name(const void *pa, const void *pb, void *arg)
{
	const char *const *names = arg;

	return strcmp(names[*(const uint32_t *)pa], names[*(const uint32_t *)pb]);
}

/*
 * Each name's first occurrence into first[], and into id[i] the number of the
 * name's first occurrence among them; how many distinct, or -1.
 */
static long distinct(const char *const *names, size_t n, uint32_t *first, uint32_t *id)
{
	size_t size = 16, nu = 0;
	uint32_t *slot; /* 1 + the index of a first occurrence; 0 empty */

	while (size < 2 * n)
		size *= 2;
	slot = calloc(size, sizeof(*slot));
	if (!slot)
		return -1;
	for (size_t i = 0; i < n; i++) {
		size_t j = name_hash(names[i]) & (size - 1);

		while (slot[j] && strcmp(names[slot[j] - 1], names[i]))
			j = (j + 1) & (size - 1);
		if (!slot[j]) {
			slot[j] = (uint32_t)i + 1;
			first[nu] = (uint32_t)i;
			id[i] = (uint32_t)nu++;
		} else {
			id[i] = id[slot[j] - 1];
		}
	}
	free(slot);
	return (long)nu;
}

int vm_name_ranks(const char *const *names, size_t n, uint32_t *rank)
{
	uint32_t *first = malloc((n ? n : 1) * sizeof(*first)), *order = NULL;
	long nu = first ? distinct(names, n, first, rank) : -1;

	if (nu >= 0)
		order = malloc(((size_t)nu + 1) * sizeof(*order));
	if (!order) {
		free(first);
		return -1;
	}
	qsort_r(first, (size_t)nu, sizeof(*first), cmp_name, (void *)names);
	for (size_t k = 0; k < (size_t)nu; k++)
		order[rank[first[k]]] = (uint32_t)k;
	for (size_t i = 0; i < n; i++)
		rank[i] = order[rank[i]];
	free(order);
	free(first);
	return 0;
}
