/*
 * Finalized contexts, kept a while before their memory goes. NCCL finalizes
 * a communicator's profiler once its proxy work is over (commFree in
 * src/init.cc, 2.23 to 2.30), so no event of it should come after. If one
 * does on another thread anyway, it may have found the context or a handle in
 * a registry just before the finalize took them out; it then reads and
 * writes a context that must still be memory of ours. So the finalize only
 * unregisters and detaches, and the memory is freed by a later finalize once
 * FL_PROF_GRACE_NS have passed: a call into the profiler is a few hundred
 * nanoseconds, the grace is a second. What a late event writes there counts
 * nowhere (the links left the hop table at finalize).
 */
#include <pthread.h>

#include "base/clock.h"
#include "prof_internal.h"

#define FL_PROF_GRACE_NS 1000000000ULL

static pthread_mutex_t grave_lock = PTHREAD_MUTEX_INITIALIZER;
static struct fl_prof_ctx *oldest, *newest; /* in the order they were finalized */

/* Under grave_lock: frees every context whose grace is over (the oldest come first). */
static void reap(uint64_t now)
{
	while (oldest && now - oldest->dead_at_ns >= FL_PROF_GRACE_NS) {
		struct fl_prof_ctx *c = oldest;

		oldest = c->next_dead;
		if (!oldest)
			newest = NULL;
		fl_prof_ctx_destroy(c);
	}
}

void fl_prof_bury(struct fl_prof_ctx *c)
{
	uint64_t now = fl_clock_ns();

	pthread_mutex_lock(&grave_lock);
	reap(now);
	c->next_dead = NULL;
	c->dead_at_ns = now;
	if (newest)
		newest->next_dead = c;
	else
		oldest = c;
	newest = c;
	pthread_mutex_unlock(&grave_lock);
}

/*
 * The library unloading (NCCL unloads the profiler after its last finalize,
 * 2.30.7 src/plugin/profiler.cc:263-269) or the process ending: no event of
 * a finalized context can come any more, and after a dlclose nothing could
 * free what is left here.
 */
__attribute__((destructor)) static void grave_at_unload(void)
{
	pthread_mutex_lock(&grave_lock);
	while (oldest) {
		struct fl_prof_ctx *c = oldest;

		oldest = c->next_dead;
		fl_prof_ctx_destroy(c);
	}
	newest = NULL;
	pthread_mutex_unlock(&grave_lock);
}
