/*
 * The string hash of the tools' open-addressing tables: FNV-1a, then a final
 * mix. The tables take the low bits, and FNV's multiplications carry only
 * upward, so the low bits of its state see only the low bits of the input;
 * the mix (MurmurHash3's finaliser step) brings the high bits down.
 */
#ifndef FABRICLAB_TOOL_HASH_H
#define FABRICLAB_TOOL_HASH_H

#include <stdint.h>

#define TOOL_FNV_OFFSET 1469598103934665603ULL
#define TOOL_FNV_PRIME 1099511628211ULL

/* h continued over s's bytes (start from TOOL_FNV_OFFSET). */
static inline uint64_t tool_fnv1a(uint64_t h, const char *s)
{
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * TOOL_FNV_PRIME;
	return h;
}

static inline uint64_t tool_hash_mix(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	return h ^ (h >> 33);
}

#endif
