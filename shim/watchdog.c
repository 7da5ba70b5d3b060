/* One watchdog thread per rank process, started at its first watched call (shim/watchdog.h). */
#include "watchdog.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "boot_socket.h"

#define WATCH_PERIOD_NS 100000000L /* how often the thread looks: 0.1 s */

static _Atomic uint64_t since_ns;   /* 0: no plugin call in flight */
static _Atomic(const char *) what;
static _Atomic int what_peer, what_rank, limit_ms;
static _Atomic pid_t watching_pid;  /* a forked rank starts its own thread */

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

	(void)arg;
	for (;;) {
		uint64_t since = atomic_load(&since_ns), now;

		nanosleep(&period, NULL);
		now = shim_now_ns();
		if (since && since == atomic_load(&since_ns) &&
		    now - since > (uint64_t)atomic_load(&limit_ms) * 1000000ULL)
			give_up(now - since);
	}
	return NULL;
}

static void start_once(void)
{
	pid_t self = getpid();
	pthread_attr_t attr;
	pthread_t t;

	if (atomic_load(&watching_pid) == self)
		return;
	atomic_store(&watching_pid, self);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&t, &attr, watch, NULL))
		atomic_store(&watching_pid, 0); /* no watchdog: the loops' timeouts still apply */
	pthread_attr_destroy(&attr);
}

void shim_call_begin(int rank, int timeout_ms, const char *call, int peer)
{
	if (timeout_ms <= 0)
		return;
	start_once();
	atomic_store(&what, call);
	atomic_store(&what_peer, peer);
	atomic_store(&what_rank, rank);
	atomic_store(&limit_ms, timeout_ms);
	atomic_store(&since_ns, shim_now_ns());
}

int shim_call_end(int rc)
{
	atomic_store(&since_ns, 0);
	return rc;
}
