/* The NIC: one thread per process that executes requests arriving on this process's ring and
 * keeps the local QPs' send queues moving (acknowledgements, retries, timeouts). */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "fv_internal.h"

#define SPIN_NS		30000		/* polls this long before sleeping */
#define IDLE_SLEEP_NS	100000000L
/* unacknowledged requests: watch the peer's liveness */
#define BUSY_SLEEP_NS	10000000L
#define STUCK_SLEEP_NS	1000000L	/* a full ring or a waiting request: retry soon */
/* a CQ polled this recently counts as an active poller */
#define POLLER_GRACE_NS	2000000ull
#define POLLER_NAP_NS	500000L

static pthread_mutex_t nic_lock = PTHREAD_MUTEX_INITIALIZER;	/* start/stop */
static int nic_users;
static pthread_t nic_thread;
static _Atomic bool nic_running;
static bool atfork_done;

/* Whoever holds work_lock plays the NIC: the thread below, or a thread polling a CQ, so that a
 * busy-polling process needs no thread switch per request. */
static pthread_mutex_t work_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic uint32_t serviced_bell;
/* a thread polling a CQ does the NIC's work meanwhile */
static _Atomic uint64_t last_poll_ns;

static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static struct fv_qp *local_qp[FV_REG_SLOTS];
static struct fv_qp *qp_list;

void fv_nic_register_qp(struct fv_qp *qp)
{
	pthread_mutex_lock(&table_lock);
	local_qp[qp->slot] = qp;
	qp->next_local = qp_list;
	qp_list = qp;
	pthread_mutex_unlock(&table_lock);
}

void fv_nic_unregister_qp(struct fv_qp *qp)
{
	pthread_mutex_lock(&table_lock);
	if (local_qp[qp->slot] == qp)
		local_qp[qp->slot] = NULL;
	for (struct fv_qp **p = &qp_list; *p; p = &(*p)->next_local) {
		if (*p == qp) {
			*p = qp->next_local;
			break;
		}
	}
	pthread_mutex_unlock(&table_lock);
	while (atomic_load(&qp->refs) > 1)
		sched_yield();
}

struct fv_qp *fv_nic_find_qp(uint32_t qpn)
{
	struct fv_qp *qp;

	pthread_mutex_lock(&table_lock);
	qp = local_qp[qpn % FV_REG_SLOTS];
	if (qp && qp->qp.qp_num == qpn)
		atomic_fetch_add(&qp->refs, 1);
	else
		qp = NULL;
	pthread_mutex_unlock(&table_lock);
	return qp;
}

void fv_qp_put(struct fv_qp *qp)
{
	atomic_fetch_sub(&qp->refs, 1);
}

void fv_nic_wake(void)
{
	struct fv_ring *r = fv_own_ring();

	if (r)
		fv_ring_kick(r);
}

static int drain_ring(struct fv_ring *r, uint64_t now)
{
	uint64_t head = atomic_load_explicit(&r->head, memory_order_relaxed);
	uint64_t tail = atomic_load_explicit(&r->tail, memory_order_acquire);
	int n = 0;

	for (; head != tail; head++, n++) {
		const struct fv_msg *m = &r->slot[head % FV_RING_SLOTS];

		atomic_store(&r->executing, 1);
		fv_respond(m, now);
		atomic_store(&r->executing, 0);
		if (m->ready_ns)
			fv_physics_executed(m->ready_ns, m->wire_ns, m->src_pid == r->pid, now);
		atomic_fetch_add(&r->pulse, 1);
		atomic_store_explicit(&r->head, head + 1, memory_order_release);
	}
	return n;
}

/* Moves every local QP along; returns how soon the thread must look again. */
static long service_qps(uint64_t now)
{
	long sleep_ns = IDLE_SLEEP_NS;

	pthread_mutex_lock(&table_lock);
	for (struct fv_qp *qp = qp_list; qp; qp = qp->next_local) {
		pthread_mutex_lock(&qp->lock);
		if (qp->stash_head)
			fv_respond_stash_retry(qp, now);
		if (fv_sq_busy(qp))
			fv_sq_transmit(qp);
		if (qp->stash_head || (fv_sq_busy(qp) && qp->sq_sent < qp->sq_head))
			sleep_ns = STUCK_SLEEP_NS;
		else if (fv_sq_busy(qp) && sleep_ns > BUSY_SLEEP_NS)
			sleep_ns = BUSY_SLEEP_NS;
		pthread_mutex_unlock(&qp->lock);
	}
	pthread_mutex_unlock(&table_lock);
	return sleep_ns;
}

/* fakeverbs_pause_nic: arriving requests wait; the NIC still shows signs of life. */
static _Atomic bool nic_paused;

void fakeverbs_pause_nic(int paused)
{
	atomic_store(&nic_paused, paused != 0);
	fv_nic_wake();
}

/* One pass of NIC work; returns how soon the next pass is due. */
static long nic_pass(struct fv_ring *r)
{
	uint32_t bell = atomic_load(&r->doorbell);
	long sleep_ns;

	uint64_t due, now;

	atomic_fetch_add(&r->pulse, 1);
	fv_physics_due_reset();
	if (!atomic_load(&nic_paused))
		drain_ring(r, fv_now_ns());
	sleep_ns = service_qps(fv_now_ns());
	atomic_store(&serviced_bell, bell);
	/* physics: back when the next message or completion held for it is due */
	due = fv_physics_next_due();
	now = fv_now_ns();
	if (due != UINT64_MAX)
		sleep_ns = due <= now ? 0 : due - now < (uint64_t)sleep_ns ? (long)(due - now)
									 : sleep_ns;
	return sleep_ns;
}

void fv_nic_poll_hook(void)
{
	struct fv_ring *r = fv_own_ring();

	uint64_t now = fv_now_ns();

	atomic_store_explicit(&last_poll_ns, now, memory_order_relaxed);
	if (!r || (atomic_load(&r->doorbell) == atomic_load(&serviced_bell) &&
		   fv_physics_next_due() > now))
		return;
	if (pthread_mutex_trylock(&work_lock))
		return;
	nic_pass(r);
	pthread_mutex_unlock(&work_lock);
}

static void *nic_main(void *arg)
{
	struct fv_ring *r = arg;

	while (atomic_load(&nic_running)) {
		uint32_t seen = atomic_load(&r->doorbell);
		uint64_t spin_end;
		long sleep_ns;

		pthread_mutex_lock(&work_lock);
		sleep_ns = nic_pass(r);
		pthread_mutex_unlock(&work_lock);
		/* while a thread polls a CQ it does this work: stay out of its way, unwakeable, and
		 * look again soon in case it stops */
		if (fv_now_ns() - atomic_load_explicit(&last_poll_ns, memory_order_relaxed) <
		    POLLER_GRACE_NS) {
			/* the poller may stop polling (a step done, compute begun): never nap past
			 * the next message or completion physics holds */
			struct timespec nap = { 0, sleep_ns < POLLER_NAP_NS ? sleep_ns : POLLER_NAP_NS };

			nanosleep(&nap, NULL);
			continue;
		}
		/* brief polling catches the next request without a futex round trip; then sleep so
		 * that other ranks on few cores get the CPU */
		if (sleep_ns <= 0)
			continue;
		spin_end = fv_now_ns() + (sleep_ns < SPIN_NS ? (uint64_t)sleep_ns : SPIN_NS);
		while (atomic_load(&r->doorbell) == seen && fv_now_ns() < spin_end)
			sched_yield();
		if (atomic_load(&r->doorbell) == seen && sleep_ns > SPIN_NS)
			fv_ring_wait(r, seen, sleep_ns - SPIN_NS);
	}
	return NULL;
}

static void after_fork_child(void)
{
	/* threads do not survive fork: the child starts with no NIC and no local QPs */
	nic_users = 0;
	atomic_store(&nic_running, false);
	pthread_mutex_init(&nic_lock, NULL);
	pthread_mutex_init(&table_lock, NULL);
	pthread_mutex_init(&work_lock, NULL);
	memset(local_qp, 0, sizeof(local_qp));
	qp_list = NULL;
	fv_fabric_forget();
}

int fv_nic_start(void)
{
	int err = 0;

	pthread_mutex_lock(&nic_lock);
	if (!atfork_done) {
		pthread_atfork(NULL, NULL, after_fork_child);
		atfork_done = true;
	}
	if (nic_users == 0) {
		err = fv_fabric_attach();
		if (!err)
			fv_physics_publish();
		if (!err) {
			/* lets peers' NIC threads copy into and out of this process (Yama) */
			prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
			atomic_store(&nic_running, true);
			err = pthread_create(&nic_thread, NULL, nic_main, fv_own_ring());
			if (err)
				fv_fabric_detach();
		}
	}
	if (!err)
		nic_users++;
	pthread_mutex_unlock(&nic_lock);
	return err;
}

void fv_nic_stop(void)
{
	pthread_mutex_lock(&nic_lock);
	if (nic_users > 0 && --nic_users == 0) {
		atomic_store(&nic_running, false);
		fv_nic_wake();
		pthread_join(nic_thread, NULL);
		fv_fabric_detach();
	}
	pthread_mutex_unlock(&nic_lock);
}
