/*
 * The fabric's physics: a port sends and receives at its line rate, a message
 * arrives a one-way latency after its last byte left, and each message costs
 * the NIC a fixed time. Off unless FABRICLAB_FAKEVERBS_PHYSICS asks for it, so
 * the fake NIC otherwise moves a posted write at once, as before.
 *
 * Whoever posts (our ib transport, an inner plugin through ext, an rdma-core
 * client) gets the same physics: it sits under the verbs calls. The
 * requester's port schedules each message's bytes on its transmit side and
 * stamps when its first and last byte arrive; the responder's NIC executes it
 * (the data lands, the receive completes) only once its own receiving port
 * has taken the bytes at its rate, and the requester's completion comes no
 * sooner than a round trip after the message left.
 *
 * Hardware faults are the port's own, read from this process's environment,
 * seen by the plugin only through what it measures: the port trained down to
 * a share of its rate, pause windows (a PFC storm: the port neither sends nor
 * receives), an added one-way latency.
 *
 * The NIC keeps its schedule if it executes each message when its bytes have
 * arrived; a message executed later than that by more than one message's
 * wire time (and FV_LATE_MIN_NS) is late, and counted: the emulation, not the
 * fabric, set that pace (fakeverbs_schedule, and a line on stderr at exit).
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
static pthread_mutex_t tx_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t tx_free_ns;           /* this process's port: transmit side free from */
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

	if (!phys.on || !n)
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
 * FABRICLAB_FAKEVERBS_PHYSICS=1 turns it on; the other knobs (all in ns of this
 * machine's clock, the lab scales them) default to 0:
 *   FABRICLAB_FAKEVERBS_LATENCY_NS     one-way latency
 *   FABRICLAB_FAKEVERBS_MSG_COST_NS    per message: on the port, and before its completion
 *   FABRICLAB_FAKEVERBS_RATE_DIV       ports move bytes at 1/DIV of the rate they report
 *                                      (1-1000: slower than 1x SDR, the slowest code)
 *   FABRICLAB_FAKEVERBS_HW_RATE_PCT    the port trained down to this share (1-100, default 100)
 *   FABRICLAB_FAKEVERBS_HW_PAUSE_NS    EVERY:FOR, the port paused FOR of every EVERY
 *   FABRICLAB_FAKEVERBS_HW_ADD_NS      one-way latency added on this port
 */
static void physics_load(void)
{
	uint64_t on = 0, pct = 0, div = 0;
	const char *pause = getenv("FABRICLAB_FAKEVERBS_HW_PAUSE_NS");
	int err = 0;

	err |= env_u64("FABRICLAB_FAKEVERBS_PHYSICS", 1, &on);
	err |= env_u64("FABRICLAB_FAKEVERBS_LATENCY_NS", 10000000000ull, &phys.latency_ns);
	err |= env_u64("FABRICLAB_FAKEVERBS_MSG_COST_NS", 10000000000ull, &phys.cost_ns);
	err |= env_u64("FABRICLAB_FAKEVERBS_HW_ADD_NS", 10000000000ull, &phys.add_ns);
	err |= env_u64("FABRICLAB_FAKEVERBS_HW_RATE_PCT", 100, &pct);
	err |= env_u64("FABRICLAB_FAKEVERBS_RATE_DIV", 1000, &div);
	if (pct == 0 && getenv("FABRICLAB_FAKEVERBS_HW_RATE_PCT") &&
	    *getenv("FABRICLAB_FAKEVERBS_HW_RATE_PCT")) {
		fprintf(stderr, "fakeverbs: FABRICLAB_FAKEVERBS_HW_RATE_PCT=0: expected 1-100\n");
		err = EINVAL;
	}
	phys.rate_share = pct ? (double)pct / 100.0 : 1.0;
	phys.rate_div = div ? (double)div : 1.0;
	if (pause && *pause) {
		unsigned long long every, dur;
		char tail;

		if (sscanf(pause, "%llu:%llu%c", &every, &dur, &tail) != 2 || !every ||
		    dur >= every) {
			fprintf(stderr, "fakeverbs: FABRICLAB_FAKEVERBS_HW_PAUSE_NS=%s: expected "
				"EVERY:FOR in ns, FOR < EVERY, e.g. 100000000:40000000\n", pause);
			err = EINVAL;
		} else {
			phys.pause_every_ns = every;
			phys.pause_for_ns = dur;
		}
	}
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

/* The first time at or after t when a port paused for_ns of every every_ns is not. */
static uint64_t unpaused(uint64_t every, uint64_t dur, uint64_t t)
{
	uint64_t in;

	if (!every)
		return t;
	in = t % every;
	return in < dur ? t - in + dur : t;
}

/* Bytes at a port's rate times share, plus the message's fixed cost: ns on the port. */
static uint64_t port_time(const struct fv_physics *p, const struct fv_port *port, double share,
			  uint64_t len)
{
	double rate = fv_port_bytes_per_ns(port) * share / p->rate_div;

	return (rate > 0.0 ? (uint64_t)((double)len / rate) : 0) + p->cost_ns;
}

void fv_physics_publish(struct fv_ring *own)
{
	const struct fv_physics *p = fv_physics();

	if (!own)
		return;
	own->hw_rate_pct = (uint32_t)(p->rate_share * 100.0 + 0.5);
	own->hw_pause_every_ns = p->pause_every_ns;
	own->hw_pause_for_ns = p->pause_for_ns;
	own->hw_add_ns = p->add_ns;
	atomic_store(&own->rx_free_ns, 0);
}

/*
 * The receiving port takes the bytes as they arrive (cut-through), at its own
 * (trained) rate and outside its pause windows: when the last byte is in.
 * Requesters of many processes schedule on it at once (compare and swap).
 */
static uint64_t receive(const struct fv_physics *p, const struct fv_port *port,
			struct fv_ring *peer, uint64_t len, uint64_t first, uint64_t last)
{
	double share = peer->hw_rate_pct ? peer->hw_rate_pct / 100.0 : 1.0;
	uint64_t dur = port_time(p, port, share, len);
	uint64_t cur = atomic_load(&peer->rx_free_ns), start, done;

	if (len <= FV_INTERLEAVED_MAX) {
		start = unpaused(peer->hw_pause_every_ns, peer->hw_pause_for_ns, first);
		return start + dur > last ? start + dur : last;
	}
	do {
		start = unpaused(peer->hw_pause_every_ns, peer->hw_pause_for_ns,
				 cur > first ? cur : first);
		done = start + dur > last ? start + dur : last;
	} while (!atomic_compare_exchange_weak(&peer->rx_free_ns, &cur, done));
	return done;
}

void fv_physics_schedule(const struct fv_port *port, struct fv_ring *peer, bool loopback,
			 struct fv_swr *w, uint64_t now)
{
	const struct fv_physics *p = fv_physics();
	uint64_t start, dur, out, back, in;

	if (!p->on || !port) {
		w->push_ns = now;
		w->due_ns = 0;
		return;
	}
	dur = port_time(p, port, p->rate_share, w->len);
	if (loopback || !peer) {
		/* a QP looped back to this process (a flush's read) crosses PCIe, not the fabric:
		 * it does not wait behind the port's transmit queue */
		w->push_ns = now + dur;
		w->due_ns = w->push_ns + p->cost_ns;
		return;
	}
	if (w->len <= FV_INTERLEAVED_MAX) {
		start = unpaused(p->pause_every_ns, p->pause_for_ns, now);
	} else {
		pthread_mutex_lock(&tx_lock);
		start = unpaused(p->pause_every_ns, p->pause_for_ns,
				 tx_free_ns > now ? tx_free_ns : now);
		tx_free_ns = start + dur;
		pthread_mutex_unlock(&tx_lock);
	}
	/* one way out: our added latency and theirs; the acknowledgement comes back the same way */
	out = p->latency_ns + p->add_ns + peer->hw_add_ns;
	back = out;
	in = receive(p, port, peer, w->len, start + out, start + dur + out);
	w->push_ns = in;
	w->due_ns = in + back + p->cost_ns;
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
