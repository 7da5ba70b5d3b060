#include "ll_lines.h"

#include <string.h>

#include "nccl_rules.h"

#define LL_LINE_DATA 8
#define LL128_LINE_WORDS 16
#define LL128_LINE_DATA (8 * (LL128_LINE_WORDS - 1))

/* One LL line: data, flag, data, flag (NCCL's union ncclLLFifoLine). */
struct ll_line {
	uint32_t data1, flag1, data2, flag2;
};

static size_t ll_pack(struct ll_line *lines, const unsigned char *payload, size_t bytes,
		      uint32_t flag)
{
	size_t n = (bytes + LL_LINE_DATA - 1) / LL_LINE_DATA;

	for (size_t i = 0; i < n; i++) {
		uint32_t d[2] = { 0, 0 };
		size_t off = i * LL_LINE_DATA, take = bytes - off < LL_LINE_DATA ? bytes - off
										: LL_LINE_DATA;

		memcpy(d, payload + off, take);
		lines[i] = (struct ll_line){ d[0], flag, d[1], flag };
	}
	return n * sizeof(struct ll_line);
}

static size_t ll128_pack(uint64_t *words, const unsigned char *payload, size_t bytes,
			 uint64_t flag)
{
	size_t wire = shim_rules_wire_bytes(SHIM_PROTO_LL128, bytes);
	size_t lines = wire / (8 * LL128_LINE_WORDS);

	memset(words, 0, wire);
	for (size_t i = 0; i < lines; i++) {
		size_t off = i * LL128_LINE_DATA;

		if (off < bytes)
			memcpy(&words[i * LL128_LINE_WORDS], payload + off,
			       bytes - off < LL128_LINE_DATA ? bytes - off : LL128_LINE_DATA);
		words[i * LL128_LINE_WORDS + LL128_LINE_WORDS - 1] = flag;
	}
	return wire;
}

size_t shim_lines_pack(int proto, void *wire, const void *payload, size_t bytes, uint64_t flag)
{
	if (proto == SHIM_PROTO_LL)
		return ll_pack(wire, payload, bytes, (uint32_t)flag);
	return ll128_pack(wire, payload, bytes, flag);
}

/*
 * The GPU polls the flags, then reads the data (2.30.7 src/device/prims_ll.h:108-122 readLL,
 * both flags of a line; prims_ll128.h:184-203 recvReduceSendCopy, each line's last word):
 * each flag is read with acquire, so the data beside it is read after it (an acquire fence
 * after plain volatile loads says the same, but ThreadSanitizer does not model fences).
 */
int shim_lines_ready(int proto, const void *wire, size_t bytes, uint64_t flag)
{
	size_t wire_bytes = shim_rules_wire_bytes(proto, bytes);

	if (proto == SHIM_PROTO_LL) {
		const struct ll_line *l = wire;

		for (size_t i = 0; i < wire_bytes / sizeof(*l); i++)
			if (__atomic_load_n(&l[i].flag1, __ATOMIC_ACQUIRE) != (uint32_t)flag ||
			    __atomic_load_n(&l[i].flag2, __ATOMIC_ACQUIRE) != (uint32_t)flag)
				return 0;
	} else {
		const uint64_t *w = wire;

		for (size_t i = 0; i < wire_bytes / 8; i += LL128_LINE_WORDS)
			if (__atomic_load_n(&w[i + LL128_LINE_WORDS - 1], __ATOMIC_ACQUIRE) != flag)
				return 0;
	}
	return 1;
}

void shim_lines_unpack(int proto, void *payload, const void *wire, size_t bytes)
{
	unsigned char *out = payload;

	if (proto == SHIM_PROTO_LL) {
		const struct ll_line *l = wire;

		for (size_t off = 0, i = 0; off < bytes; off += LL_LINE_DATA, i++) {
			uint32_t d[2] = { l[i].data1, l[i].data2 };
			size_t take = bytes - off < LL_LINE_DATA ? bytes - off : LL_LINE_DATA;

			memcpy(out + off, d, take);
		}
		return;
	}
	for (size_t off = 0, i = 0; off < bytes; off += LL128_LINE_DATA, i++)
		memcpy(out + off, (const uint64_t *)wire + i * LL128_LINE_WORDS,
		       bytes - off < LL128_LINE_DATA ? bytes - off : LL128_LINE_DATA);
}
