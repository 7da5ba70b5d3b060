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

static struct fv_physics phys;
static pthread_once_t phys_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t tx_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t tx_free_ns;           /* this process's port: transmit side free from */
static uint64_t rx_free_ns;           /* receive side (the NIC thread only) */
static _Atomic uint64_t executed, late, worst_late_ns;

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
		"behind\n",
		(unsigned long long)n, (unsigned long long)l, 100.0 * (double)l / (double)n,
		(double)atomic_load(&worst_late_ns) / 1e6);
}

/*
 * FABRICLAB_FAKEVERBS_PHYSICS=1 turns it on; the other knobs (all in ns of this
 * machine's clock, the lab scales them) default to 0:
 *   FABRICLAB_FAKEVERBS_LATENCY_NS     one-way latency
 *   FABRICLAB_FAKEVERBS_MSG_COST_NS    per message: on the port, and before its completion
 *   FABRICLAB_FAKEVERBS_HW_RATE_PCT    the port trained down to this share (1-100, default 100)
 *   FABRICLAB_FAKEVERBS_HW_PAUSE_NS    EVERY:FOR, the port paused FOR of every EVERY
 *   FABRICLAB_FAKEVERBS_HW_ADD_NS      one-way latency added on this port
 */
static void physics_load(void)
{
	uint64_t on = 0, pct = 0;
	const char *pause = getenv("FABRICLAB_FAKEVERBS_HW_PAUSE_NS");
	int err = 0;

	err |= env_u64("FABRICLAB_FAKEVERBS_PHYSICS", 1, &on);
	err |= env_u64("FABRICLAB_FAKEVERBS_LATENCY_NS", 10000000000ull, &phys.latency_ns);
	err |= env_u64("FABRICLAB_FAKEVERBS_MSG_COST_NS", 10000000000ull, &phys.cost_ns);
	err |= env_u64("FABRICLAB_FAKEVERBS_HW_ADD_NS", 10000000000ull, &phys.add_ns);
	err |= env_u64("FABRICLAB_FAKEVERBS_HW_RATE_PCT", 100, &pct);
	if (pct == 0 && getenv("FABRICLAB_FAKEVERBS_HW_RATE_PCT") &&
	    *getenv("FABRICLAB_FAKEVERBS_HW_RATE_PCT")) {
		fprintf(stderr, "fakeverbs: FABRICLAB_FAKEVERBS_HW_RATE_PCT=0: expected 1-100\n");
		err = EINVAL;
	}
	phys.rate_share = pct ? (double)pct / 100.0 : 1.0;
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

/* The first time at or after t when the port is not paused. */
static uint64_t unpaused(const struct fv_physics *p, uint64_t t)
{
	uint64_t in;

	if (!p->pause_every_ns)
		return t;
	in = t % p->pause_every_ns;
	return in < p->pause_for_ns ? t - in + p->pause_for_ns : t;
}

/* Bytes at this port's (trained) rate, plus the message's fixed cost: ns on the port. */
static uint64_t port_time(const struct fv_physics *p, const struct fv_port *port, uint64_t len)
{
	double rate = fv_port_bytes_per_ns(port) * p->rate_share;

	return (rate > 0.0 ? (uint64_t)((double)len / rate) : 0) + p->cost_ns;
}

void fv_physics_send(const struct fv_port *port, uint64_t len, uint64_t now, struct fv_msg *m,
		     struct fv_swr *w)
{
	const struct fv_physics *p = fv_physics();
	uint64_t start, dur, one_way;

	if (!p->on)
		return;
	dur = port_time(p, port, len);
	/* a QP looped back to this process (a flush's read) crosses PCIe, not the fabric */
	one_way = m->dst_pid == m->src_pid ? 0 : p->latency_ns + p->add_ns;
	pthread_mutex_lock(&tx_lock);
	start = unpaused(p, tx_free_ns > now ? tx_free_ns : now);
	tx_free_ns = start + dur;
	pthread_mutex_unlock(&tx_lock);
	m->first_ns = start + one_way;
	m->last_ns = start + dur + one_way;
	/* the acknowledgement comes back the same way, then the completion is written */
	w->due_ns = m->last_ns + one_way + p->cost_ns;
}

uint64_t fv_physics_ready(const struct fv_msg *m, const struct fv_port *port)
{
	const struct fv_physics *p = fv_physics();
	uint64_t start, done, dur;

	if (!p->on || !m->last_ns)
		return 0;
	/* cut-through: the receiving port takes the bytes as they arrive, at its own pace */
	dur = port ? port_time(p, port, m->len) : 0;
	start = unpaused(p, rx_free_ns > m->first_ns ? rx_free_ns : m->first_ns);
	done = start + dur > m->last_ns ? start + dur : m->last_ns;
	rx_free_ns = done;
	return done + p->add_ns;
}

void fv_physics_executed(uint64_t ready_ns, uint64_t wire_ns, uint64_t now)
{
	uint64_t behind = now > ready_ns ? now - ready_ns : 0;
	uint64_t bound = wire_ns > FV_LATE_MIN_NS ? wire_ns : FV_LATE_MIN_NS;

	atomic_fetch_add(&executed, 1);
	if (behind > bound)
		atomic_fetch_add(&late, 1);
	if (behind > atomic_load(&worst_late_ns))
		atomic_store(&worst_late_ns, behind);
}

void fakeverbs_schedule(uint64_t *n_executed, uint64_t *n_late, uint64_t *worst_ns)
{
	*n_executed = atomic_load(&executed);
	*n_late = atomic_load(&late);
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
