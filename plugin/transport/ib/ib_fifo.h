/*
 * The clear-to-send FIFO. The sender owns a registered ring of slots; for each
 * irecv the receiver RDMA-writes one slot, one 64-byte entry per buffer it
 * posted (address, rkey, size, tag), each stamped with the receive's sequence
 * number (counted from 1, so zeroed memory is never a valid entry). The
 * sender trusts a slot only when every entry carries the sequence it expects
 * next: an entry left from the previous lap, or half written, is ignored.
 *
 * Lapping is impossible by construction: the receiver has at most
 * IB_FIFO_DEPTH receives outstanding, and a receive completes only after the
 * sender consumed its slot.
 */
#ifndef FL_IB_FIFO_H
#define FL_IB_FIFO_H

#include <stdatomic.h>
#include <stdint.h>

#include "base/fl_types.h"

#define IB_FIFO_DEPTH 64 /* receives in flight per connection (NCCL posts <= 32) */

/* One posted buffer. 64 bytes so an entry never straddles a cache line. */
struct ib_cts {
	uint64_t addr;
	uint64_t size;
	uint32_t rkey;
	int32_t tag;
	uint32_t nreqs;       /* buffers in this receive */
	uint32_t rx_rate_kib; /* the receiver's pacing rate (KiB/s), 0 = unpaced: ib_pace.c */
	uint64_t seq; /* the receive's number, from 1 */
	uint8_t pad[24];
} __attribute__((aligned(64)));

_Static_assert(sizeof(struct ib_cts) == 64, "one CTS entry per cache line");

struct ib_fifo_slot {
	struct ib_cts e[FL_MAX_RECVS];
};

/* Slot of the receive numbered `count` (from 0). */
static inline unsigned ib_fifo_index(uint64_t count)
{
	return (unsigned)(count % IB_FIFO_DEPTH);
}

/* Fills entry i of the receiver's shadow slot for receive `count` (from 0). */
static inline void ib_cts_fill(struct ib_cts *e, uint64_t count, int nreqs, uint64_t addr,
			       uint64_t size, uint32_t rkey, int tag, uint32_t rx_rate_kib)
{
	e->rx_rate_kib = rx_rate_kib;
	e->addr = addr;
	e->size = size;
	e->rkey = rkey;
	e->tag = tag;
	e->nreqs = (uint32_t)nreqs;
	e->seq = count + 1;
}

/*
 * The sender's check of slot `s` for receive `count`: its number of entries
 * when all of them arrived, 0 while any is missing or stale, -1 when the
 * slot is malformed (a count out of range).
 */
static inline int ib_fifo_arrived(const struct ib_fifo_slot *s, uint64_t count)
{
	const struct ib_cts *e = s->e;
	uint32_t n;

	/* Acquire loads of each sequence number rather than fences: TSan cannot model fences. */
	if (__atomic_load_n(&e[0].seq, __ATOMIC_ACQUIRE) != count + 1)
		return 0;
	n = __atomic_load_n(&e[0].nreqs, __ATOMIC_RELAXED);
	if (n < 1 || n > FL_MAX_RECVS)
		return -1;
	for (uint32_t i = 1; i < n; i++)
		if (__atomic_load_n(&e[i].seq, __ATOMIC_ACQUIRE) != count + 1)
			return 0;
	return (int)n;
}

#endif
