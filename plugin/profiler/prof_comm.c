/*
 * Contexts: one per communicator and rank (NCCL calls init per communicator,
 * on the thread creating it). The first one starts the report machinery when
 * the net role has not; each tells the report who it is ({commHash, rank,
 * node, pid}) so `fabriclab report` can name the nodes behind peer ranks.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/config.h"
#include "base/error.h"
#include "base/identity.h"
#include "prof_internal.h"
#include "report/report.h"
#include "stats/hop_names.h"
#include "trace/trace.h"

static uint64_t real_clock(void)
{
	return fl_clock_ns();
}

uint64_t (*fl_prof_now)(void) = real_clock;
static _Atomic int live_ctxs; /* for the log: communicators measured now */

void fl_prof_set_clock(uint64_t (*now)(void))
{
	fl_prof_now = now ? now : real_clock;
}

/* FABRICLAB_PROFILER=off: the profiler role asks NCCL for no events at all. */
static int profiler_wanted(int *on)
{
	static const char *const names[] = { "off", "on", NULL };

	return fl_env_choice("FABRICLAB_PROFILER", names, 1, on);
}

/* One WARN per process for the reasons that leave every communicator unmeasured. */
static void warn_once(const char *what)
{
	static _Atomic int warned;

	if (!atomic_exchange(&warned, 1))
		FL_WARN("profiler role measures nothing (NCCL keeps running, with no profiler "
			"events asked for): %s", what);
}

static void trace_stop_hook(void)
{
	fl_trace_stop();
}

static const struct fl_report_hooks report_hooks = {
	.built = fl_trace_report, .tick = fl_trace_tick, .stop = trace_stop_hook,
};

static void tell_report(const struct fl_prof_ctx *c)
{
	uint64_t hash = __atomic_load_n(&c->comm_hash, __ATOMIC_RELAXED);
	int rank = __atomic_load_n(&c->rank, __ATOMIC_RELAXED);

	if (hash && rank >= 0) {
		fl_report_note_rank(hash, rank, c->nranks, c->nnodes, c->comm_name);
		fl_names_prof_init(hash, rank); /* the net role's ctx of this thread learns it */
	}
}

static void ctx_free(struct fl_prof_ctx *c)
{
	fl_prof_links_free(c);
	free(c);
}

/* After its grace (prof_grave.c): no registry names it or its chunks any more. */
void fl_prof_ctx_destroy(struct fl_prof_ctx *c)
{
	fl_prof_pool_free(c);
	ctx_free(c);
}

int fl_prof_live_contexts(void)
{
	return atomic_load(&live_ctxs);
}

static struct fl_prof_ctx *ctx_new(const struct fl_prof_comm_info *info, int max_links)
{
	struct fl_prof_ctx *c = calloc(1, sizeof(*c));
	struct fl_endpoint self;

	if (!c)
		return NULL;
	if (fl_prof_links_alloc(c, max_links)) {
		free(c);
		return NULL;
	}
	c->magic = FL_PROF_CTX_MAGIC;
	c->comm_hash = info->comm_hash;
	c->rank = info->rank;
	c->nranks = info->nranks;
	c->nnodes = info->nnodes;
	c->abi_version = info->abi_version;
	c->pid = getpid();
	fl_identity_local(&self, 0, "", info->comm_hash);
	snprintf(c->node, sizeof(c->node), "%s", self.node);
	snprintf(c->comm_name, sizeof(c->comm_name), "%s", info->comm_name ? info->comm_name : "");
	if (fl_prof_reg_ctx_add(c)) {
		ctx_free(c);
		return NULL;
	}
	return c;
}

/* FABRICLAB_PROFILER_MAX_LINKS: links per context (an all-to-all over 1024 peers needs 2048+). */
static int max_links_wanted(long *n)
{
	return fl_env_long("FABRICLAB_PROFILER_MAX_LINKS", FL_PROF_MAX_LINKS, 1,
			   FL_PROF_LINKS_LIMIT, n);
}

int fl_prof_init(void **ctx, const struct fl_prof_comm_info *info, fl_logger_fn logger)
{
	struct fl_prof_ctx *c;
	int on = 1;
	long max_links;

	*ctx = NULL;
	if (logger)
		fl_log_set_logger(logger);
	if (profiler_wanted(&on)) {
		warn_once(fl_error_text());
		return FL_OK;
	}
	if (!on) {
		FL_INFO("profiler role off (FABRICLAB_PROFILER=off)");
		return FL_OK;
	}
	if (max_links_wanted(&max_links)) {
		FL_WARN("%s; %d links per communicator instead", fl_error_text(), FL_PROF_MAX_LINKS);
		max_links = FL_PROF_MAX_LINKS;
	}
	fl_clock_init();
	fl_trace_start();
	if (fl_report_start(NULL, &report_hooks)) {
		warn_once(fl_error_text());
		return FL_OK;
	}
	c = ctx_new(info, (int)max_links);
	if (!c) {
		FL_WARN("profiler: comm %016llx rank %d not measured: no memory, or no free slot "
			"in the registry of this process's contexts (1024 slots)",
			(unsigned long long)info->comm_hash, info->rank);
		return FL_OK;
	}
	tell_report(c);
	FL_INFO("profiler: NCCL took ncclProfiler_v%d; comm %016llx rank %d of %d measured from "
		"ProxyOp/ProxyStep events (%d communicator(s) in this process)", c->abi_version,
		(unsigned long long)c->comm_hash, c->rank, c->nranks,
		atomic_fetch_add(&live_ctxs, 1) + 1);
	*ctx = c;
	return FL_OK;
}

/*
 * v1..v3: the hash comes with the first Coll or P2p (on the application's
 * thread), the rank with any event (the proxy thread's too): first one wins.
 */
void fl_prof_learn_comm(void *ctx, uint64_t comm_hash, int rank)
{
	struct fl_prof_ctx *c = ctx;
	uint64_t no_hash = 0;
	int no_rank = -1, changed = 0;

	if (!fl_prof_reg_ctx_has(ctx))
		return; /* not ours: never read */
	if (comm_hash)
		changed |= __atomic_compare_exchange_n(&c->comm_hash, &no_hash, comm_hash, 0,
						       __ATOMIC_RELAXED, __ATOMIC_RELAXED);
	if (rank >= 0)
		changed |= __atomic_compare_exchange_n(&c->rank, &no_rank, rank, 0,
						       __ATOMIC_RELAXED, __ATOMIC_RELAXED);
	if (changed)
		tell_report(c);
}

/*
 * What the report lists beside the rank: ops measured, relayed, and everything seen but not
 * measured, which also makes the report say it is incomplete. Read at finalize, on the
 * finalizing thread, once the context left the registry: no event writes these any more.
 */
static void report_counts(const struct fl_prof_ctx *c)
{
	const struct fl_prof_counts *n = &c->counts;
	const struct fl_report_prof_counts told = {
		.ops = fl_prof_counted(&n->ops),
		.relayed_ops = fl_prof_counted(&n->relayed_ops),
		.dropped_ops = fl_prof_counted(&n->dropped_ops),
		.dropped_links = fl_prof_counted(&n->dropped_links),
		.dropped_steps = fl_prof_counted(&n->dropped_steps),
		.abandoned_steps = fl_prof_counted(&n->abandoned_steps),
	};

	uint64_t restarted = fl_prof_counted(&n->restarted_steps);

	if (c->comm_hash && c->rank >= 0)
		fl_report_note_prof_counts(c->comm_hash, c->rank, &told);
	if (told.dropped_ops || told.dropped_steps || told.abandoned_steps || told.relayed_ops ||
	    restarted)
		FL_INFO("profiler: comm %016llx rank %d: %llu ops, %llu relayed (PXN), %llu not "
			"measured (%llu past the links cap), %llu steps not measured (no free "
			"stats slot), %llu steps never stopped, %llu receive steps started again "
			"before they were posted (NCCL's retries, not a loss)",
			(unsigned long long)c->comm_hash, c->rank, (unsigned long long)told.ops,
			(unsigned long long)told.relayed_ops, (unsigned long long)told.dropped_ops,
			(unsigned long long)told.dropped_links,
			(unsigned long long)told.dropped_steps,
			(unsigned long long)told.abandoned_steps, (unsigned long long)restarted);
}

/*
 * Process-wide counts, said once each time they grew. Unhomed ops were NCCL traffic we did not
 * measure: the report carries them (and says it is incomplete). Stale events are not a loss of
 * measured data, so they stay an INFO line: they name a context or handle no longer ours, and
 * NCCL finalizes a communicator's profiler as the last step of freeing it (commFree in
 * src/init.cc, 2.23 to 2.30, after its proxy resources are gone), so no op or step of it that we
 * measure is still running then. What is left is a second finalize, a pointer we never gave
 * out, or a late event NCCL should not send: none carries bytes of a hop we report.
 */
static void log_process_counts(void)
{
	static _Atomic uint64_t said_unhomed, said_stale;
	uint64_t unhomed = fl_prof_unhomed_ops(), stale = fl_prof_stale_events();

	fl_report_note_prof_unhomed(unhomed);
	if (unhomed != atomic_exchange(&said_unhomed, unhomed))
		FL_INFO("profiler: %llu relayed (PXN) ops came to a proxy thread with no context of "
			"its own yet: not measured", (unsigned long long)unhomed);
	if (stale != atomic_exchange(&said_stale, stale))
		FL_INFO("profiler: %llu events on contexts or handles no longer ours (after their "
			"finalize): ignored", (unsigned long long)stale);
}

int fl_prof_finalize(void *ctx)
{
	struct fl_prof_ctx *c = ctx;

	if (!c)
		return FL_OK;
	/* A second finalize, or a context that was never ours: nothing to read or free. */
	if (!fl_prof_reg_ctx_has(c)) {
		fl_prof_note_stale();
		return FL_OK;
	}
	fl_prof_reg_ctx_del(c);
	report_counts(c);
	log_process_counts();
	fl_prof_links_close(c);
	fl_prof_pool_close(c); /* handles of its ops and steps are no longer found */
	c->magic = 0;
	fl_prof_bury(c); /* freed after a grace: an event that found it just before still may write */
	/*
	 * No final report here: another communicator of this process may still
	 * come (threads create theirs one by one). NCCL unloads a profiler-only
	 * library after the last finalize, and the unload (or the process exit)
	 * writes it; with the net role loaded too, its finalize does.
	 */
	atomic_fetch_sub(&live_ctxs, 1);
	return FL_OK;
}
