/*
 * The addresses this process's profiler layer owns: its contexts, and the
 * aligned chunks its op and step handles live in. NCCL hands the plugin
 * contexts it did not create (PXN: the originating communicator's, from
 * another process; 2.30.7 src/enqueue.cc:1402, src/proxy.cc:395,
 * src/plugin/profiler.cc:582) and may call back on handles of a context
 * already finalized. Every such pointer is looked up here by its value
 * before anything is read through it.
 *
 * Open addressing over atomic words, lock-free on both sides: an insert
 * claims an empty or freed slot with a CAS, a removal leaves a tombstone, a
 * lookup reads at most FL_REG_PROBES slots, so its cost stays bounded however
 * many contexts came and went. The tombstone is the key with its low bit set
 * (every key is even: contexts are malloc'd, chunks 128 KiB-aligned), so until
 * an insert reuses the slot a lookup also tells "was ours" from "never ours":
 * with a next profiler chained, a handle never ours is the next's and goes to
 * it, one of a finalized context of ours never does (prof_next_forward.c).
 */
#include <stdatomic.h>
#include <stdint.h>

#include "prof_internal.h"

#define FL_REG_PROBES 32
#define FL_REG_EMPTY ((uintptr_t)0)
#define FL_REG_DEAD(key) ((key) | 1u) /* a removed key's tombstone; any odd word is free */
#define FL_REG_WAS_OURS (-2)
/*
 * No key below this is ours: nothing is mapped in the first 64 KiB on Linux
 * (vm.mmap_min_addr's default). So 0 or any small integer NCCL or a buggy caller passes, and
 * the chunk base 0 of a handle below 128 KiB, are never found.
 */
#define FL_REG_LOWEST_KEY ((uintptr_t)64 * 1024)

#define FL_REG_CTX_SLOTS 1024u    /* a context per communicator and rank of the process */
#define FL_REG_CHUNK_SLOTS 16384u /* up to 32 chunks per context */

static _Atomic uintptr_t ctx_slots[FL_REG_CTX_SLOTS];
static _Atomic uintptr_t chunk_slots[FL_REG_CHUNK_SLOTS];
static _Atomic uint64_t stale_events, unhomed_ops;

static unsigned home_slot(uintptr_t key, unsigned nslots)
{
	uint64_t h = (uint64_t)key * 0x9e3779b97f4a7c15ULL;

	return (unsigned)(h >> 32) & (nslots - 1);
}

static int reg_add(_Atomic uintptr_t *slots, unsigned nslots, uintptr_t key)
{
	unsigned i = home_slot(key, nslots);

	if (key < FL_REG_LOWEST_KEY || (key & 1))
		return -1;
	for (int n = 0; n < FL_REG_PROBES; n++, i = (i + 1) & (nslots - 1)) {
		uintptr_t cur = atomic_load_explicit(&slots[i], memory_order_relaxed);

		while (cur == FL_REG_EMPTY || (cur & 1)) {
			if (atomic_compare_exchange_weak_explicit(&slots[i], &cur, key,
								  memory_order_release,
								  memory_order_relaxed))
				return 0;
		}
	}
	return -1;
}

/*
 * The slot holding key, -1 when it is not there, FL_REG_WAS_OURS when its
 * tombstone is: an insert takes the first free slot from the home one, so the
 * first of key and its tombstone met is the current truth.
 */
/* even_key: the caller's keys are aligned (chunk bases), so none can equal a tombstone. */
static inline __attribute__((always_inline)) int reg_find_in(_Atomic uintptr_t *slots,
							     unsigned nslots, uintptr_t key,
							     int even_key)
{
	unsigned i = home_slot(key, nslots);

	if (key < FL_REG_LOWEST_KEY || (!even_key && (key & 1)))
		return -1; /* a small or odd integer: never an address we hold */
	for (int n = 0; n < FL_REG_PROBES; n++, i = (i + 1) & (nslots - 1)) {
		uintptr_t cur = atomic_load_explicit(&slots[i], memory_order_acquire);

		if (cur == key)
			return (int)i;
		if (cur == FL_REG_EMPTY)
			return -1;
		if (cur == FL_REG_DEAD(key))
			return FL_REG_WAS_OURS;
	}
	return -1;
}

static int reg_find(_Atomic uintptr_t *slots, unsigned nslots, uintptr_t key)
{
	return reg_find_in(slots, nslots, key, 0);
}

/* A chunk's base is 128 KiB-aligned: the lookup every handle of every event makes. */
static int chunk_find(uintptr_t base)
{
	return reg_find_in(chunk_slots, FL_REG_CHUNK_SLOTS, base, 1);
}

static void reg_del(_Atomic uintptr_t *slots, unsigned nslots, uintptr_t key)
{
	int i = reg_find(slots, nslots, key);

	if (i >= 0)
		atomic_store_explicit(&slots[i], FL_REG_DEAD(key), memory_order_release);
}

int fl_prof_reg_ctx_add(const struct fl_prof_ctx *c)
{
	return reg_add(ctx_slots, FL_REG_CTX_SLOTS, (uintptr_t)c);
}

int fl_prof_reg_ctx_has(const void *p)
{
	return p && reg_find(ctx_slots, FL_REG_CTX_SLOTS, (uintptr_t)p) >= 0;
}

int fl_prof_reg_ctx_dead(const void *p)
{
	return p && reg_find(ctx_slots, FL_REG_CTX_SLOTS, (uintptr_t)p) == FL_REG_WAS_OURS;
}

void fl_prof_reg_ctx_del(const struct fl_prof_ctx *c)
{
	reg_del(ctx_slots, FL_REG_CTX_SLOTS, (uintptr_t)c);
}

int fl_prof_reg_chunk_add(const struct fl_prof_chunk *k)
{
	return reg_add(chunk_slots, FL_REG_CHUNK_SLOTS, (uintptr_t)k);
}

void fl_prof_reg_chunk_del(const struct fl_prof_chunk *k)
{
	reg_del(chunk_slots, FL_REG_CHUNK_SLOTS, (uintptr_t)k);
}

struct fl_prof_chunk *fl_prof_chunk_of(const void *handle)
{
	uintptr_t base = (uintptr_t)handle & ~((uintptr_t)FL_PROF_CHUNK_ALIGN - 1);
	struct fl_prof_chunk *k = (struct fl_prof_chunk *)base;

	if (!handle || chunk_find(base) < 0)
		return NULL;
	/* Found by address: ours to read. A handle past its ops is not one we gave. */
	if ((uintptr_t)handle - base >= k->bytes)
		return NULL;
	return k;
}

int fl_prof_chunk_known(const void *handle)
{
	uintptr_t base = (uintptr_t)handle & ~((uintptr_t)FL_PROF_CHUNK_ALIGN - 1);
	int i = handle ? chunk_find(base) : -1;

	return i >= 0 || i == FL_REG_WAS_OURS;
}

void fl_prof_note_stale(void)
{
	atomic_fetch_add_explicit(&stale_events, 1, memory_order_relaxed);
}

uint64_t fl_prof_stale_events(void)
{
	return atomic_load_explicit(&stale_events, memory_order_relaxed);
}

void fl_prof_note_unhomed(void)
{
	atomic_fetch_add_explicit(&unhomed_ops, 1, memory_order_relaxed);
}

uint64_t fl_prof_unhomed_ops(void)
{
	return atomic_load_explicit(&unhomed_ops, memory_order_relaxed);
}
