/*
 * Fixed little-endian fields for what the socket transport puts on the wire.
 * memcpy + le*toh: one load or store on a little-endian host (the byte loops
 * these replaced cost ~60 instructions per 16-byte header under callgrind).
 */
#ifndef FL_SOCK_BYTES_H
#define FL_SOCK_BYTES_H

#include <endian.h>
#include <stdint.h>
#include <string.h>

static inline void sock_put_u16(uint8_t *p, uint16_t v)
{
	v = htole16(v);
	memcpy(p, &v, sizeof(v));
}

static inline void sock_put_u32(uint8_t *p, uint32_t v)
{
	v = htole32(v);
	memcpy(p, &v, sizeof(v));
}

static inline void sock_put_u64(uint8_t *p, uint64_t v)
{
	v = htole64(v);
	memcpy(p, &v, sizeof(v));
}

static inline uint16_t sock_get_u16(const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, sizeof(v));
	return le16toh(v);
}

static inline uint32_t sock_get_u32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return le32toh(v);
}

static inline uint64_t sock_get_u64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return le64toh(v);
}

#endif
