/*
 * The fabric's physics: every link sends at its line rate, a message arrives a
 * one-way latency after its last byte left, and each message costs the NIC a
 * fixed time. Off unless the description (FABRICLAB_FABRIC) or
 * FABRICLAB_FAKEVERBS_PHYSICS asks for it, so the fake NIC otherwise moves a
 * posted write at once, as before.
 *
 * Whoever posts (our ib transport, an inner plugin through ext, an rdma-core
 * client) gets the same physics: it sits under the verbs calls. The requester
 * schedules each message's bytes on every element of its path in turn (its
 * NIC out, the leaf's cable up to a spine and the cable down to the other
 * leaf where the description has switches, the responder's NIC in:
 * fv_elements.c), each shared with every hop through it, and stamps when its
 * last byte arrives; the responder's NIC executes it (the data lands, the
 * receive completes) only then, and the requester's completion comes no
 * sooner than a round trip after the message left.
 *
 * Hardware faults are the elements': the description's (any NIC, leaf port,
 * cable or switch) and those this process's environment gives its own NICs,
 * seen by the plugin only through what it measures: a link trained down to a
 * share of its rate, pause windows (a PFC storm: it neither sends nor
 * receives), an added one-way latency.
 *
 * The NIC keeps its schedule if it executes each message when its bytes have
 * arrived; a message executed later than that by more than one message's
 * wire time (and FV_LATE_MIN_NS) is late, and counted: the emulation, not the
 * fabric, set that pace (fakeverbs_schedule, schedule-<pid>.json and a line on
 * stderr at exit).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fv_internal.h"

#define FV_LATE_MIN_NS 200000ull /* a late execution counts beyond this, or one wire time */
/*
 * Counted apart: the first half second of a process's fabric traffic, while
 * the job's processes still map, register and connect beside it (16 lab ranks
 * on 2 cores: about half of the late messages of a run), and reads looped back
 * to the process itself (flushes: PCIe, not the fabric; executed when its
 * thread polls, as a real completion is seen).
 */
#define FV_STARTUP_NS 500000000ull
/*
 * A NIC sends its QPs' packets interleaved, an MTU at a time: a message of one
 * MTU (a clear-to-send, an acknowledgement) goes out between the packets of
 * others and is taken between theirs at the far end, neither waiting behind
 * them nor holding them up. Larger messages share each port in the order they
 * were scheduled (a receiver's CTS must not queue behind 200 ms of data its
 * NIC was told to send to a downgraded peer).
 */
#define FV_INTERLEAVED_MAX 4096u

static struct fv_physics phys;
static pthread_once_t phys_once = PTHREAD_ONCE_INIT;
static _Atomic uint64_t executed, late, worst_late_ns, late_startup, late_loopback;
static _Atomic uint64_t first_executed_ns;

/* Lane rate in Mbit/s per active_speed code, lanes per active_width code (IBTA names). */
static int lane_mbps(uint8_t speed)
{
	static const struct { uint8_t code; int mbps; } t[] = {
		{ 1, 2500 }, { 2, 5000 }, { 4, 10000 }, { 8, 10000 }, { 16, 14000 },
		{ 32, 25000 }, { 64, 50000 }, { 128, 100000 },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (t[i].code == speed)
			return t[i].mbps;
	return 0;
}

static int lanes(uint8_t width)
{
	return width == 1 ? 1 : width == 16 ? 2 : width == 2 ? 4 : width == 4 ? 8 :
	       width == 8 ? 12 : 0;
}

double fv_port_bytes_per_ns(const struct fv_port *p)
{
	return (double)lanes(p->width) * lane_mbps(p->speed) * 1e6 / 8.0 / 1e9;
}

static int env_u64(const char *name, uint64_t max, uint64_t *out)
{
	const char *v = getenv(name);
	char *end;
	unsigned long long x;

	*out = 0;
	if (!v || !*v)
		return 0;
	errno = 0;
	x = strtoull(v, &end, 10);
	if (errno || *end || x > max || *v == '-') {
		fprintf(stderr, "fakeverbs: %s=%s: expected an integer in [0, %llu]\n", name, v,
			(unsigned long long)max);
		return EINVAL;
	}
	*out = x;
	return 0;
}

static void report_at_exit(void)
{
	uint64_t n = atomic_load(&executed), l = atomic_load(&late);

	if (!phys.on)
		return;
	/* machine-readable, for the lab: the schedule and the elements' counters */
	fv_counters_write(n, l, atomic_load(&late_startup), atomic_load(&late_loopback),
			  atomic_load(&worst_late_ns));
	if (!n)
		return;
	fprintf(stderr,
		"fakeverbs: schedule: %llu messages executed, %llu late (%.2f%%), worst %.3f ms "
		"behind; of the late, %llu in the first 0.5 s and %llu loopback reads\n",
		(unsigned long long)n, (unsigned long long)l, 100.0 * (double)l / (double)n,
		(double)atomic_load(&worst_late_ns) / 1e6,
		(unsigned long long)atomic_load(&late_startup),
		(unsigned long long)atomic_load(&late_loopback));
}

/*
 * The description's physics (FABRICLAB_FABRIC), with the environment over it
 * (all in ns of this machine's clock, the lab scales them):
 *   FABRICLAB_FAKEVERBS_PHYSICS        1 on, 0 off
 *   FABRICLAB_FAKEVERBS_LATENCY_NS     one-way latency
 *   FABRICLAB_FAKEVERBS_MSG_COST_NS    per message: on the port, and before its completion
 *   FABRICLAB_FAKEVERBS_RATE_DIV       links move bytes at 1/DIV of the rate they report
 *                                      (1-1000: slower than 1x SDR, the slowest code)
 *   FABRICLAB_FAKEVERBS_HW_RATE_PCT    this process's NICs trained down to this share (1-100)
 *   FABRICLAB_FAKEVERBS_HW_PAUSE_NS    EVERY:FOR, its NICs paused FOR of every EVERY
 *   FABRICLAB_FAKEVERBS_HW_ADD_NS      one-way latency added on its NICs
 * The faults of the description's elements (switches, cables, any NIC) are in
 * the description, which every process reads: fv_elements.c.
 */
static int env_over(const char *name, uint64_t max, uint64_t *out)
{
	uint64_t v;
	int err;

	if (!getenv(name) || !*getenv(name))
		return 0;
	err = env_u64(name, max, &v);
	if (!err)
		*out = v;
	return err;
}

static int hw_pause(struct ft_fault *hw)
{
	const char *pause = getenv("FABRICLAB_FAKEVERBS_HW_PAUSE_NS");
	unsigned long long every, dur;
	char tail;

	if (!pause || !*pause)
		return 0;
	if (sscanf(pause, "%llu:%llu%c", &every, &dur, &tail) != 2 || !every || dur >= every) {
		fprintf(stderr, "fakeverbs: FABRICLAB_FAKEVERBS_HW_PAUSE_NS=%s: expected "
			"EVERY:FOR in ns, FOR < EVERY, e.g. 100000000:40000000\n", pause);
		return EINVAL;
	}
	hw->pause_every_ns = every;
	hw->pause_for_ns = dur;
	return 0;
}

static void physics_load(void)
{
	struct fv_config *cfg = fv_config_get();
	const struct ft_topo *t = cfg && cfg->described ? &cfg->topo : NULL;
	uint64_t on = t && t->physics, pct = 0, div = t ? (uint64_t)t->rate_div : 1;
	int err = 0;

	phys.latency_ns = t ? t->latency_ns : 0;
	phys.cost_ns = t ? t->msg_cost_ns : 0;
	err |= env_over("FABRICLAB_FAKEVERBS_PHYSICS", 1, &on);
	err |= env_over("FABRICLAB_FAKEVERBS_LATENCY_NS", 10000000000ull, &phys.latency_ns);
	err |= env_over("FABRICLAB_FAKEVERBS_MSG_COST_NS", 10000000000ull, &phys.cost_ns);
	err |= env_over("FABRICLAB_FAKEVERBS_HW_ADD_NS", 10000000000ull, &phys.hw.add_ns);
	err |= env_over("FABRICLAB_FAKEVERBS_HW_RATE_PCT", 100, &pct);
	err |= env_over("FABRICLAB_FAKEVERBS_RATE_DIV", 1000, &div);
	if (getenv("FABRICLAB_FAKEVERBS_HW_RATE_PCT") && *getenv("FABRICLAB_FAKEVERBS_HW_RATE_PCT") &&
	    !pct) {
		fprintf(stderr, "fakeverbs: FABRICLAB_FAKEVERBS_HW_RATE_PCT=0: expected 1-100\n");
		err = EINVAL;
	}
	err |= hw_pause(&phys.hw);
	phys.hw.rate_pct = (int)pct;
	phys.rate_div = div ? (double)div : 1.0;
	phys.on = on && !err;
	if (err)
		fprintf(stderr, "fakeverbs: physics off: bad settings above\n");
	if (phys.on)
		atexit(report_at_exit);
}

const struct fv_physics *fv_physics(void)
{
	pthread_once(&phys_once, physics_load);
	return &phys;
}

/* The first time at or after t when an element paused for_ns of every every_ns is not. */
static uint64_t unpaused(const struct ft_fault *f, uint64_t t)
{
	uint64_t in;

	if (!f->pause_every_ns)
		return t;
	in = t % f->pause_every_ns;
	return in < f->pause_for_ns ? t - in + f->pause_for_ns : t;
}

/* Bytes at an element's rate times its share, plus cost: ns on the element. */
static uint64_t element_time(const struct fv_physics *p, int e, const struct fv_port *port,
			     const struct ft_fault *f, uint64_t len, uint64_t cost)
{
	double share = f->rate_pct ? f->rate_pct / 100.0 : 1.0;
	double rate = fv_element_rate(e, port) * share / p->rate_div;

	return (rate > 0.0 ? (uint64_t)((double)len / rate) : 0) + cost;
}

void fv_physics_publish(void)
{
	struct fv_config *cfg = fv_config_get();
	const struct fv_physics *p = fv_physics();

	if (!cfg) /* none set is published too: a process before us may have left its own */
		return;
	for (int i = 0; i < cfg->ndevs; i++)
		for (int dir = 0; dir < 2; dir++) {
			struct fv_element *el = fv_element(2 * cfg->dev[i].nic + dir);

			if (!el)
				continue;
			atomic_store(&el->hw_rate_pct, (uint32_t)p->hw.rate_pct);
			atomic_store(&el->hw_pause_every_ns, p->hw.pause_every_ns);
			atomic_store(&el->hw_pause_for_ns, p->hw.pause_for_ns);
			atomic_store(&el->hw_add_ns, p->hw.add_ns);
		}
}

/*
 * One element takes the bytes that reach it from first to last (cut-through):
 * from when it is free and not paused, for their time at its rate, never
 * before the last byte came in. Its first byte goes on from when it started.
 * Requesters of many processes schedule on it at once (compare and swap).
 * One-MTU messages slip between the packets of others and hold nobody up.
 */
static void pass(struct fv_element *el, const struct ft_fault *f, uint64_t len, uint64_t dur,
		 uint64_t *first, uint64_t *last)
{
	uint64_t cur, start, done;

	if (len <= FV_INTERLEAVED_MAX || !el) {
		start = unpaused(f, *first);
		done = start + dur > *last ? start + dur : *last;
	} else {
		cur = atomic_load(&el->free_ns);
		do {
			start = unpaused(f, cur > *first ? cur : *first);
			done = start + dur > *last ? start + dur : *last;
		} while (!atomic_compare_exchange_weak(&el->free_ns, &cur, done));
		atomic_fetch_add(&el->queued_ns, start - *first);
	}
	if (el) {
		atomic_fetch_add(&el->bytes, len);
		atomic_fetch_add(&el->messages, 1);
		atomic_fetch_add(&el->busy_ns, dur);
	}
	*first = start;
	*last = done;
}

void fv_physics_schedule(const struct fv_port *port, int src, int dst, uint64_t hash,
			 bool loopback, struct fv_swr *w, uint64_t now)
{
	const struct fv_physics *p = fv_physics();
	struct ft_fault f[FT_PATH_MAX];
	int path[FT_PATH_MAX], n;
	uint64_t out, first = now, last = now;

	if (!p->on || !port) {
		w->push_ns = now;
		w->due_ns = 0;
		return;
	}
	n = loopback ? 0 : fv_elements_path(src, dst, hash, path);
	if (n < 1) {
		/* a QP looped back to this process (a flush's read) crosses PCIe, not the fabric:
		 * it does not wait behind the port's transmit queue */
		fv_element_fault(2 * src, &f[0]);
		w->push_ns = now + element_time(p, 2 * src, port, &f[0], w->len, p->cost_ns);
		w->due_ns = w->push_ns + p->cost_ns;
		return;
	}
	out = p->latency_ns;
	for (int i = 0; i < n; i++) {
		fv_element_fault(path[i], &f[i]);
		out += f[i].add_ns;
	}
	/* out of the NIC, one way across (every added latency on the path), then each element
	 * after; the NICs pay the per-message cost, the switches' cables do not */
	pass(fv_element(path[0]), &f[0], w->len,
	     element_time(p, path[0], port, &f[0], w->len, p->cost_ns), &first, &last);
	first += out;
	last += out;
	for (int i = 1; i < n; i++)
		pass(fv_element(path[i]), &f[i], w->len,
		     element_time(p, path[i], port, &f[i], w->len, i == n - 1 ? p->cost_ns : 0),
		     &first, &last);
	if (n == 1) /* no receiving NIC known: its cost, as if it took the bytes at once */
		last += p->cost_ns;
	/* the acknowledgement comes back the same way */
	w->push_ns = last;
	w->due_ns = last + out + p->cost_ns;
}

void fv_physics_executed(uint64_t ready_ns, uint64_t wire_ns, bool loopback, uint64_t now)
{
	uint64_t behind = now > ready_ns ? now - ready_ns : 0;
	uint64_t bound = wire_ns > FV_LATE_MIN_NS ? wire_ns : FV_LATE_MIN_NS, first = 0;

	atomic_fetch_add(&executed, 1);
	if (!loopback)
		atomic_compare_exchange_strong(&first_executed_ns, &first, now);
	if (behind > bound) {
		atomic_fetch_add(&late, 1);
		if (loopback)
			atomic_fetch_add(&late_loopback, 1);
		else if (now - atomic_load(&first_executed_ns) < FV_STARTUP_NS)
			atomic_fetch_add(&late_startup, 1);
	}
	if (behind > atomic_load(&worst_late_ns))
		atomic_store(&worst_late_ns, behind);
}

void fakeverbs_schedule(uint64_t *n_executed, uint64_t *n_late, uint64_t *worst_ns)
{
	*n_executed = atomic_load(&executed);
	*n_late = atomic_load(&late) - atomic_load(&late_startup) - atomic_load(&late_loopback);
	*worst_ns = atomic_load(&worst_late_ns);
}

static _Atomic uint64_t next_due = UINT64_MAX;

void fv_physics_due_at(uint64_t t)
{
	uint64_t cur = atomic_load(&next_due);

	while (t < cur && !atomic_compare_exchange_weak(&next_due, &cur, t))
		;
}

uint64_t fv_physics_next_due(void)
{
	return atomic_load(&next_due);
}

void fv_physics_due_reset(void)
{
	atomic_store(&next_due, UINT64_MAX);
}
