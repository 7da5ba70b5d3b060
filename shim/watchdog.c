/* One watchdog thread per rank process, started at its first watched call (shim/watchdog.h). */
#include "watchdog.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "boot_socket.h"

#define WATCH_PERIOD_NS 100000000L /* how often the thread looks: 0.1 s */

/* Odd while a plugin call is in flight; each call moves it on twice. The calls
 * read no clock: the thread times how long one odd value stays. */
static _Atomic uint64_t call_seq;
static _Atomic(const char *) what;
static _Atomic int what_peer, what_rank, limit_ms;
static _Atomic bool started;        /* this process's watchdog thread runs */

static _Noreturn void give_up(uint64_t inside_ns)
{
	const char *call = atomic_load(&what);
	int peer = atomic_load(&what_peer);
	char rank[32] = "";

	if (peer >= 0)
		snprintf(rank, sizeof(rank), " rank %d", peer);
	fprintf(stderr, "fabriclab shim: rank %d: %s%s has not returned after %llu s: stuck "
		"inside the plugin (FABRICLAB_SHIM_TIMEOUT=%d s without progress)\n",
		atomic_load(&what_rank), call ? call : "a plugin call", rank,
		(unsigned long long)(inside_ns / 1000000000ULL), atomic_load(&limit_ms) / 1000);
	/* not exit(): the stuck thread holds the plugin, whose exit-time work would hang too */
	_exit(1);
}

static void *watch(void *arg)
{
	struct timespec period = { 0, WATCH_PERIOD_NS };
	uint64_t seen = 0, seen_since = 0;

	(void)arg;
	for (;;) {
		uint64_t seq, now;

		nanosleep(&period, NULL);
		seq = atomic_load_explicit(&call_seq, memory_order_acquire);
		now = shim_now_ns();
		if (!(seq & 1) || seq != seen) {
			seen = seq;
			seen_since = now;
			continue;
		}
		if (now - seen_since > (uint64_t)atomic_load(&limit_ms) * 1000000ULL)
			give_up(now - seen_since);
	}
	return NULL;
}

/* A forked rank has no watchdog thread: it starts its own at its first watched call. */
static void forget_thread_in_child(void)
{
	atomic_store(&started, false);
}

static void register_fork_handler(void)
{
	pthread_atfork(NULL, NULL, forget_thread_in_child);
}

/* Called on every watched call: no system call once the thread runs (getpid is one). */
static void start_once(void)
{
	static pthread_once_t fork_once = PTHREAD_ONCE_INIT;
	pthread_attr_t attr;
	pthread_t t;

	if (atomic_load_explicit(&started, memory_order_relaxed))
		return;
	pthread_once(&fork_once, register_fork_handler);
	atomic_store(&started, true);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&t, &attr, watch, NULL))
		atomic_store(&started, false); /* no watchdog: the loops' timeouts still apply */
	pthread_attr_destroy(&attr);
}

void shim_call_begin(int rank, int timeout_ms, const char *call, int peer)
{
	if (timeout_ms <= 0)
		return;
	start_once();
	atomic_store_explicit(&what, call, memory_order_relaxed);
	atomic_store_explicit(&what_peer, peer, memory_order_relaxed);
	atomic_store_explicit(&what_rank, rank, memory_order_relaxed);
	atomic_store_explicit(&limit_ms, timeout_ms, memory_order_relaxed);
	atomic_store_explicit(&call_seq, atomic_load_explicit(&call_seq, memory_order_relaxed) | 1,
			      memory_order_release);
}

int shim_call_end(int rc)
{
	uint64_t seq = atomic_load_explicit(&call_seq, memory_order_relaxed);

	/* one thread of the rank makes the calls: a plain read-modify-write suffices */
	if (seq & 1)
		atomic_store_explicit(&call_seq, seq + 1, memory_order_release);
	return rc;
}
