/*
 * Pacing: a token bucket on bytes put on the wire, plus optional stall windows,
 * so a throttled hop is slow on the wire itself, as on a slower cable, and never
 * by sleeping on the thread that moves the bytes.
 *
 * The bucket is kept as a "theoretical arrival time" (GCRA): tat_ns is when the
 * bytes granted so far will have drained at the configured rate. A chunk may go
 * when tat_ns <= now (so at most one chunk of debt is ever outstanding), and
 * idle time earns credit up to the burst. A stall window (for_ns out of every
 * every_ns, counted from an origin) allows nothing.
 *
 * Idle is not the same as starved: when bytes were refused (they wait) and
 * the thread that moves them comes back late because the machine is busy, the
 * bucket lets it catch up on up to FL_PACE_CATCHUP_NS of missed wire time, so
 * a loaded machine does not make a paced hop slower than its rate.
 *
 * A connection's pacer may also consult shared pacers: a device's line rate, a
 * device-wide or hop-wide throttle, shared by every connection they cover.
 * All must allow; all are charged. tat_ns is updated with compare-and-swap, so
 * a shared bucket is lock-free and helper threads of one comm may consult the
 * same pacer.
 */
#ifndef FL_PACE_H
#define FL_PACE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Built with -DFABRICLAB_NO_FAULTS: no pacing hook is compiled in (for `make bench`). */
#ifdef FABRICLAB_NO_FAULTS
#define FL_PACING 0
#else
#define FL_PACING 1
#endif

/*
 * Bytes a paced writer or reader moves per pacer check, so they leave at the
 * rate, not in bursts. A receiver times a message from its first byte, so it
 * misses one slice's wire time per message: with 64 KiB slices 512 KiB steps read
 * 114-140% of the line rate in the lab, with 16 KiB 107-112%.
 */
#define FL_PACE_SLICE (16u << 10)

/* Credit an idle bucket may build up: one slice... */
#define FL_PACE_DEFAULT_BURST FL_PACE_SLICE
/*
 * ...but never less than this much wire time: the thread that moves the bytes
 * polls late when the machine is busy, and a bucket that forgets the time it
 * was not asked would fall short of its rate.
 */
#define FL_PACE_MIN_BURST_NS 500000u
/* Wire time a refused, then descheduled, mover may make up for at once. */
#define FL_PACE_CATCHUP_NS 100000000u

#define FL_PACE_MAX_SHARED 6

struct fl_pacer {
	_Atomic uint64_t tat_ns;   /* when the bytes granted so far have drained */
	_Atomic uint64_t refused_ns; /* bytes have waited since then; 0 = none refused */
	uint64_t ns_per_byte_q32;  /* ns per byte << 32; 0 = no rate limit */
	uint64_t burst_ns;         /* credit an idle bucket may hold, in ns of wire time */
	uint64_t rate_bytes_per_s; /* 0 = no rate limit */
	uint64_t stall_for_ns;     /* 0 = no stall windows */
	uint64_t stall_every_ns;
	uint64_t stall_origin_ns;
	unsigned nshared;
	struct fl_pacer *shared[FL_PACE_MAX_SHARED]; /* consulted too; never themselves sharing */
	/*
	 * This bucket is the cable itself (the lab's link rate over a NIC that
	 * moves bytes at once), not a limit in front of a NIC that keeps its
	 * own time: a transport may then date its wire on the bucket alone.
	 */
	bool is_cable;
};

/* p, or a bucket it shares, is the cable itself (see is_cable). */
bool fl_pace_is_cable(const struct fl_pacer *p);

/* rate 0 = unlimited (stall windows only). burst 0 = FL_PACE_DEFAULT_BURST; see above. */
void fl_pace_init(struct fl_pacer *p, uint64_t rate_bytes_per_s, size_t burst_bytes,
		  uint64_t now_ns);
/* Nothing may go during [origin + k*every, origin + k*every + for). for < every. */
void fl_pace_set_stall(struct fl_pacer *p, uint64_t for_ns, uint64_t every_ns, uint64_t origin_ns);
/* Allocated and initialised; NULL when out of memory. */
struct fl_pacer *fl_pace_create(uint64_t rate_bytes_per_s, size_t burst_bytes, uint64_t now_ns);
void fl_pace_destroy(struct fl_pacer *p);
/* p also obeys `shared` (which must not share in turn); false when p has no room left. */
bool fl_pace_share(struct fl_pacer *p, struct fl_pacer *shared);

/* Wire time of `bytes` at p's rate, in ns. */
static inline uint64_t fl_pace_cost_ns(const struct fl_pacer *p, size_t bytes)
{
	return (uint64_t)(((unsigned __int128)bytes * p->ns_per_byte_q32) >> 32);
}

/* ns until one pacer (not those it shares) allows bytes again. */
static inline uint64_t fl_pace_wait_one_ns(const struct fl_pacer *p, uint64_t now_ns)
{
	uint64_t tat = atomic_load_explicit(&p->tat_ns, memory_order_relaxed);
	uint64_t wait = tat > now_ns ? tat - now_ns : 0;

	if (p->stall_every_ns && now_ns >= p->stall_origin_ns) {
		uint64_t phase = (now_ns - p->stall_origin_ns) % p->stall_every_ns;

		if (phase < p->stall_for_ns && p->stall_for_ns - phase > wait)
			wait = p->stall_for_ns - phase;
	}
	return wait;
}

/* ns until the pacer (and those it shares) may allow bytes again; 0 = now. */
uint64_t fl_pace_wait_ns(const struct fl_pacer *p, uint64_t now_ns);

/* When p's last stall window ended (<= now), 0 without stall windows. */
static inline uint64_t fl_pace_resumed_ns(const struct fl_pacer *p, uint64_t now_ns)
{
	uint64_t phase;

	if (!p->stall_every_ns || now_ns < p->stall_origin_ns)
		return 0;
	phase = (now_ns - p->stall_origin_ns) % p->stall_every_ns;
	return phase >= p->stall_for_ns ? now_ns - phase + p->stall_for_ns : 0;
}

/*
 * Takes bytes from one bucket, whatever its state (the caller checked it).
 * resumed_ns: when the last pause of any bucket the mover obeys ended.
 */
static inline void fl_pace_charge_one(struct fl_pacer *p, uint64_t now_ns, size_t bytes,
				      uint64_t resumed_ns)
{
	uint64_t cost, tat, base, floor, refused;

	if (!p->ns_per_byte_q32)
		return;
	cost = fl_pace_cost_ns(p, bytes);
	tat = atomic_load_explicit(&p->tat_ns, memory_order_relaxed);
	refused = atomic_exchange_explicit(&p->refused_ns, 0, memory_order_relaxed);
	/* bytes have waited since the last charge: the mover was starved, not idle */
	if (refused)
		floor = now_ns > FL_PACE_CATCHUP_NS ? now_ns - FL_PACE_CATCHUP_NS : 0;
	else
		floor = now_ns > p->burst_ns ? now_ns - p->burst_ns : 0;
	/* A paused link earns no credit: it resumes at its rate, as after a pause frame. */
	if (resumed_ns > floor)
		floor = resumed_ns;
	do {
		base = tat < floor ? floor : tat;
	} while (!atomic_compare_exchange_weak_explicit(&p->tat_ns, &tat, base + cost,
							 memory_order_relaxed,
							 memory_order_relaxed));
}

static inline void fl_pace_refused_one(struct fl_pacer *p, uint64_t now_ns)
{
	uint64_t none = 0;

	atomic_compare_exchange_strong_explicit(&p->refused_ns, &none, now_ns ? now_ns : 1,
						memory_order_relaxed, memory_order_relaxed);
}

/*
 * Says that more bytes wait behind those just taken: if the mover is then
 * descheduled, the bucket lets it make up for the lost time (up to
 * FL_PACE_CATCHUP_NS) instead of treating the gap as idle. A refusal says so
 * by itself.
 */
static inline void fl_pace_backlog(struct fl_pacer *p, uint64_t now_ns)
{
	if (!p)
		return;
	fl_pace_refused_one(p, now_ns);
	for (unsigned i = 0; i < p->nshared; i++)
		fl_pace_refused_one(p->shared[i], now_ns);
}

/*
 * For callers that write first and learn how much went (then fl_pace_take()):
 * true when bytes may go now; false records that bytes wait.
 */
static inline bool fl_pace_try(struct fl_pacer *p, uint64_t now_ns)
{
	bool ok = !fl_pace_wait_ns(p, now_ns);

	if (!ok)
		fl_pace_backlog(p, now_ns);
	return ok;
}

/*
 * Takes bytes that went on the wire from every bucket p obeys: for callers
 * that learn only after a non-blocking write how much went (checked with
 * fl_pace_wait_ns() == 0 before it).
 */
static inline void fl_pace_take(struct fl_pacer *p, uint64_t now_ns, size_t bytes)
{
	uint64_t resumed;

	if (!p)
		return;
	resumed = fl_pace_resumed_ns(p, now_ns);
	for (unsigned i = 0; i < p->nshared; i++) {
		uint64_t r = fl_pace_resumed_ns(p->shared[i], now_ns);

		resumed = r > resumed ? r : resumed;
	}
	fl_pace_charge_one(p, now_ns, bytes, resumed);
	for (unsigned i = 0; i < p->nshared; i++)
		fl_pace_charge_one(p->shared[i], now_ns, bytes, resumed);
}

/*
 * true: `bytes` may go on the wire now and were taken from the bucket(s) (one
 * chunk of debt allowed). Never blocks, never makes a syscall.
 */
static inline bool fl_pace_allows(struct fl_pacer *p, uint64_t now_ns, size_t bytes)
{
	if (!p)
		return true;
	if (!fl_pace_try(p, now_ns))
		return false;
	fl_pace_take(p, now_ns, bytes);
	return true;
}

#endif
