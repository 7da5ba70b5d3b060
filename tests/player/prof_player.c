/*
 * Running a scenario: one forked process per node, one thread per rank, each
 * thread with its own communicator context(s) and its own virtual clock.
 * Every event is emitted only when NCCL would emit it for the mask the
 * profiler's init wrote (player_mask.c), and every stop and state only on a
 * handle that is not NULL, as NCCL guards them.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "player_internal.h"
#include "plugin/abi/profiler_abi.h"
#include "plugin/base/clock.h"
#include "plugin/profiler/profiler.h"

#define MAX_COMMS 4
#define MAX_OPS 64

static _Thread_local uint64_t virtual_now;
/* NCCL's one activation mask per process: every init writes it (2.30.7 src/plugin/profiler.cc:219, 250). */
static _Atomic int nccl_mask;

static int emits(uint64_t type)
{
	return player_emits(atomic_load(&nccl_mask), type);
}

static uint64_t player_clock(void)
{
	return virtual_now;
}

void player_defaults(struct player_scenario *s, int version, int nranks)
{
	memset(s, 0, sizeof(*s));
	s->version = version;
	s->nranks = nranks;
	s->ranks_per_node = 1;
	s->nchannels = 2;
	s->nsteps = 8;
	s->ops = 4;
	s->chunk = 512 * 1024;
	s->wire_ns = 100000;
	s->comm_hash = 0x5eed000000000000ULL | (uint64_t)nranks << 8 | (uint64_t)version;
	s->slow_src = s->slow_dst = s->slow_nic_rank = s->straggler_rank = -1;
	s->slow_factor = 4.0;
	s->comms = 1;
}

int player_comm_rank(const struct player_scenario *s, int comm, int rank)
{
	return s->split && (comm & 1) ? s->nranks - 1 - rank : rank;
}

void player_node_name(const struct player_scenario *s, int rank, char *buf, unsigned len)
{
	snprintf(buf, len, "node%d", rank / s->ranks_per_node);
}

/* What the rank threads of one process (node) share: their contexts, to relay each other's ops. */
struct node_state {
	int first_rank, nthreads;
	void *ctx[64][MAX_COMMS];
	pthread_barrier_t ready; /* every thread's context exists and is claimed by its thread */
	pthread_barrier_t done;  /* no thread relays a node-mate's ops any more: finalize */
	void *alien;             /* another process's context as we would see it: PROT_NONE */
};

struct rank_job {
	const struct player_scenario *s;
	int rank;
	uint64_t t0;
	int rc;
	struct node_state *node;
	int comm; /* the one being played */
};

/*
 * Handles of one communicator: per link and op, the op, its steps and the
 * kernel's channel event; transSize per op; per task (op number), the Coll, or
 * the P2p send and receive, that its ProxyOps hang under. KernelCh events 2.31
 * emits from a thread of their own wait in `later`.
 */
struct handles {
	void *op[PLAYER_MAX_LINKS][MAX_OPS];
	void *step[PLAYER_MAX_LINKS][MAX_OPS][16];
	void *kch[PLAYER_MAX_LINKS][MAX_OPS];
	uint64_t trans[PLAYER_MAX_LINKS][MAX_OPS];
	void *task[MAX_OPS][2];
	const struct player_event *later[PLAYER_MAX_LINKS * MAX_OPS * 2];
	int nlater;
};

/*
 * The context NCCL passes with a link's events: the originator's (PXN: the
 * op travels with it, 2.30.7 src/proxy.cc:395): the node-mate thread's when
 * it is a thread here, else a page of "another process" that must never be read.
 */
static void *ctx_of(const struct rank_job *job, const struct player_link *l, void *own)
{
	int mate = l->rank - job->node->first_rank;

	if (!l->relayed)
		return own;
	if (job->s->pxn_same_process && mate >= 0 && mate < job->node->nthreads)
		return job->node->ctx[mate][job->comm];
	return job->node->alien;
}

/* A ProxyOp's parent: its task (the Coll, or the P2p of its direction); PXN: the originator's. */
static void *parent_of(const struct rank_job *job, const struct player_link *l, int op,
		       struct handles *h)
{
	int p2p = job->s->p2p && (op & 1);

	if (l->relayed)
		return job->node->alien; /* never ours to read */
	return h->task[op][p2p && !l->is_send];
}

/* A ProxyOp state of v1..v3: the sub's transSize grows around it (player_gen.c). */
static int play_op_state(const struct player_driver *d, const struct player_event *e,
			 struct handles *h)
{
	uint64_t *trans = &h->trans[e->link][e->op];
	int rc;

	if (!e->grow_after)
		*trans += e->grow;
	rc = d->record_op(h->op[e->link][e->op], e->state, *trans);
	if (e->grow_after)
		*trans += e->grow;
	return rc;
}

/* Stops only what NCCL holds a handle of, and forgets it (2.30.7 profiler.cc:589-650). */
static int stop_held(const struct player_driver *d, void **held)
{
	void *h = *held;

	*held = NULL;
	return h ? d->stop(h) : 0;
}

/* The kernel of a channel: started with its task as parent, stopped with a KernelChStop. */
static int play_kernel(const struct rank_job *job, void *ctx, const struct player_thread *th,
		       const struct player_event *e, struct handles *h)
{
	const struct player_driver *d = player_driver(job->s->version);
	struct player_descr pd = { .type = FL_PROF_EV_KERNEL_CH, .rank = th->rank };
	void **kch = &h->kch[e->link][e->op];
	int rc = 0;

	virtual_now = e->t;
	if (e->kind == EV_KCH_START) {
		if (!emits(FL_PROF_EV_KERNEL_CH))
			return 0;
		pd.parent = parent_of(job, &th->links[e->link], e->op, h);
		pd.channel = (uint8_t)th->links[e->link].channel;
		pd.p_timer = e->t;
		return d->start(ctx, kch, &pd);
	}
	if (*kch)
		rc = d->record_arg(*kch, FL_PROF_ST_KERNEL_CH_STOP, e->t);
	return rc | stop_held(d, kch);
}

static int play_proxy_start(const struct rank_job *job, void *ctx,
			    const struct player_thread *th, const struct player_event *e,
			    struct handles *h)
{
	const struct player_scenario *s = job->s;
	const struct player_driver *d = player_driver(s->version);
	const struct player_link *l = &th->links[e->link];
	struct player_descr pd = { .rank = l->rank, .link = l };

	if (e->kind == EV_START_OP) {
		if (!emits(FL_PROF_EV_PROXY_OP))
			return 0;
		pd.type = FL_PROF_EV_PROXY_OP;
		pd.parent = parent_of(job, l, e->op, h);
		pd.nsteps = s->nsteps;
		pd.chunk = (int)s->chunk;
		return d->start(ctx_of(job, l, ctx), &h->op[e->link][e->op], &pd);
	}
	/* Started under a NULL op too (2.30.7 profiler.cc:600-611). */
	if (!emits(FL_PROF_EV_PROXY_STEP))
		return 0;
	pd.type = FL_PROF_EV_PROXY_STEP;
	pd.parent = h->op[e->link][e->op];
	pd.step = e->step;
	return d->start(ctx_of(job, l, ctx), &h->step[e->link][e->op][e->step], &pd);
}

static int play_event(const struct rank_job *job, void *ctx, const struct player_thread *th,
		      const struct player_event *e, struct handles *h)
{
	const struct player_scenario *s = job->s;
	const struct player_driver *d = player_driver(s->version);
	void *step = h->step[e->link][e->op][e->step];
	int fresh;

	virtual_now = e->t;
	switch (e->kind) {
	case EV_START_OP:
	case EV_START_STEP:
		return play_proxy_start(job, ctx, th, e, h);
	case EV_STATE:
		/* NCCL records step and op states only under a non-NULL op handle. */
		if (!h->op[e->link][e->op])
			return 0;
		if (e->on_op)
			return play_op_state(d, e, h);
		fresh = e->state == 9 || e->state == 11;
		return step ? d->record(step, e->state, e->size, fresh) : 0;
	case EV_STOP_STEP:
		return stop_held(d, &h->step[e->link][e->op][e->step]);
	case EV_STOP_OP:
		return stop_held(d, &h->op[e->link][e->op]);
	case EV_KCH_START:
	case EV_KCH_STOP:
		/* 2.31 decoupled them from the proxy: its own thread emits them (below). */
		if (s->version >= 7) {
			h->later[h->nlater++] = e;
			return 0;
		}
		return play_kernel(job, ctx, th, e, h);
	}
	return -1;
}

/*
 * The odd calls NCCL makes too: a step under a NULL op, and the unguarded stop
 * of a NetPlugin event (2.30.7 profiler.cc:799), NULL when none was started.
 */
static int odd_calls(const struct player_driver *d, void *ctx, int rank)
{
	struct player_descr pd = { .type = FL_PROF_EV_PROXY_STEP, .rank = rank };
	void *step = NULL;
	int rc = 0;

	if (emits(FL_PROF_EV_PROXY_STEP)) {
		step = (void *)1;
		rc = d->start(ctx, &step, &pd);
		rc |= stop_held(d, &step);
	}
	if (emits(FL_PROF_EV_NET_PLUGIN))
		rc |= d->stop(NULL);
	return rc;
}

/*
 * A ProxyCtrl event on the proxy's own context with two states: Sleep and
 * Wakeup when the idle proxy wakes (2.30.7 src/proxy.cc:852-856), Append and
 * AppendEnd with the ops appended (:864-865, 912-913).
 */
static int proxy_ctrl(const struct player_driver *d, void *ctx, int first, int second,
		      int appended)
{
	struct player_descr pd = { .type = FL_PROF_EV_PROXY_CTRL };
	void *h = NULL;
	int rc;

	if (!emits(FL_PROF_EV_PROXY_CTRL))
		return 0;
	rc = d->start(ctx, &h, &pd);
	if (h) {
		rc |= d->record_arg(h, first, 0);
		rc |= d->record_arg(h, second, (uint64_t)appended);
	}
	return rc | stop_held(d, &h);
}

/* transSize of a sub is a running total never reset (2.26.2 src/proxy.cc:364): ops start mid-way. */
static void stale_totals(struct handles *h)
{
	for (int l = 0; l < PLAYER_MAX_LINKS; l++)
		for (int o = 0; o < MAX_OPS; o++)
			h->trans[l][o] = (uint64_t)(l + 1) * 1000003u + (uint64_t)o * 524288u;
}

/* 2.31's profiler thread: the KernelCh events of a communicator, in their order. */
struct later_job {
	const struct rank_job *job;
	void *ctx;
	const struct player_thread *th;
	struct handles *h;
	int rc;
};

static void *play_later(void *arg)
{
	struct later_job *lj = arg;

	for (int i = 0; i < lj->h->nlater; i++)
		lj->rc |= play_kernel(lj->job, lj->ctx, lj->th, lj->h->later[i], lj->h);
	return NULL;
}

/*
 * 2.31 emits KernelCh from a profiler thread of its own, no longer the proxy's
 * (NVIDIA/nccl 889806836097 src/plugin/profiler.cc, ncclProfilerThreadFunc and
 * profilerProgressOps): played there, after the proxy's events.
 */
static int kernel_thread(const struct rank_job *job, void *ctx, const struct player_thread *th,
			 struct handles *h)
{
	struct later_job lj = { job, ctx, th, h, 0 };
	pthread_t t;

	if (!h->nlater)
		return 0;
	if (pthread_create(&t, NULL, play_later, &lj))
		return -1;
	pthread_join(t, NULL);
	return lj.rc;
}

static int play_comm(const struct rank_job *job, const struct player_thread *th, void *ctx,
		     struct handles *h)
{
	const struct player_scenario *s = job->s;
	const struct player_driver *d = player_driver(s->version);
	int rc;

	memset(h, 0, sizeof(*h));
	stale_totals(h);
	/* The application thread enqueues its tasks; NCCL stops each before its ProxyOps start. */
	rc = player_tasks(s, ctx, th->rank, atomic_load(&nccl_mask), h->task);
	/* This communicator's proxy appends its ops (ProxyCtrl, 2.30.7 src/proxy.cc:864, 912). */
	rc |= proxy_ctrl(d, ctx, 17, 18, th->nlinks * s->ops);
	rc |= odd_calls(d, ctx, th->rank);
	for (size_t i = 0; !rc && i < th->nev; i++)
		rc = play_event(job, ctx, th, &th->ev[i], h);
	return rc ? rc : kernel_thread(job, ctx, th, h);
}

/* The profiler's init; what it wrote is NCCL's mask for the whole process. */
static int init_one(const struct player_scenario *s, const struct player_driver *d, void **ctx,
		    uint64_t hash, int rank)
{
	int mask = atomic_load(&nccl_mask);
	int rc = d->init_mask(ctx, s, hash, rank, &mask);

	atomic_store(&nccl_mask, mask);
	/* fabriclab asks for ProxyStep unless told not to (FABRICLAB_PROFILER=off). */
	return rc ? rc : s->profiler_lib || (mask & FL_PROF_EV_PROXY_STEP) ? 0 : -1;
}

static void *rank_main(void *arg)
{
	struct rank_job *job = arg;
	const struct player_scenario *s = job->s;
	const struct player_driver *d = player_driver(s->version);
	struct handles *h = malloc(sizeof(*h));
	void *ctx[MAX_COMMS] = { NULL };
	int comms = s->comms < MAX_COMMS ? s->comms : MAX_COMMS;

	void *hook_state[MAX_COMMS] = { NULL };
	const struct player_rank_hooks *hk = s->hooks;

	job->rc = !h || !d;
	for (int c = 0; !job->rc && c < comms; c++) {
		uint64_t hash = s->comm_hash + (uint64_t)c;
		int rank = player_comm_rank(s, c, job->rank);

		if (hk && hk->before_init)
			job->rc = hk->before_init(hk->arg, hash, rank, &hook_state[c]);
		job->rc = job->rc ? job->rc : init_one(s, d, &ctx[c], hash, rank);
		if (!job->rc && hk && hk->after_init)
			job->rc = hk->after_init(hook_state[c]);
		/* The proxy thread starts idle and says so (ProxyCtrl Sleep, 2.30.7 src/proxy.cc:852). */
		if (!job->rc)
			job->rc = proxy_ctrl(d, ctx[c], 15, 16, 0);
		job->node->ctx[job->rank - job->node->first_rank][c] = ctx[c];
	}
	pthread_barrier_wait(&job->node->ready);
	for (int c = 0; !job->rc && c < comms; c++) {
		struct player_scenario one = *s;
		struct player_thread th = { .rank = player_comm_rank(s, c, job->rank) };

		one.comm_hash = s->comm_hash + (uint64_t)c;
		one.pxn = s->pxn && th.rank == job->rank; /* node-mates are neighbours only there */
		job->comm = c;
		job->s = &one;
		job->rc = player_generate(&one, &th, job->t0);
		job->rc = job->rc ? job->rc : play_comm(job, &th, ctx[c], h);
		job->s = s;
		player_thread_free(&th);
	}
	/* NCCL destroys a communicator only once its ops, relayed ones too, are done. */
	pthread_barrier_wait(&job->node->done);
	/* NCCL finalizes a context that is not NULL (2.30.7 src/plugin/profiler.cc:265). */
	for (int c = 0; c < comms; c++)
		if (ctx[c])
			job->rc |= d->finalize(ctx[c]);
	for (int c = 0; hk && hk->after_finalize && c < comms; c++)
		if (hook_state[c])
			job->rc |= hk->after_finalize(hook_state[c]);
	free(h);
	return NULL;
}

static int node_main(const struct player_scenario *s, int node, const char *dir, uint64_t t0)
{
	static struct node_state ns;
	struct rank_job jobs[64];
	pthread_t threads[64];
	char name[32];
	int n = s->ranks_per_node, rc = 0;

	ns.first_rank = node * n;
	ns.nthreads = n;
	ns.alien = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (ns.alien == MAP_FAILED || pthread_barrier_init(&ns.ready, NULL, (unsigned)n) ||
	    pthread_barrier_init(&ns.done, NULL, (unsigned)n))
		return 1;
	player_node_name(s, node * s->ranks_per_node, name, sizeof(name));
	setenv("FABRICLAB_NODE_NAME", name, 1);
	setenv("FABRICLAB_REPORT_DIR", dir, 1);
	setenv("FABRICLAB_REPORT", "brief", 1);
	fl_prof_set_clock(player_clock);
	if (player_load(s))
		return 1;
	for (int i = 0; i < n; i++) {
		jobs[i] = (struct rank_job){ s, node * n + i, t0, 0, &ns, 0 };
		if (pthread_create(&threads[i], NULL, rank_main, &jobs[i]))
			return 1;
	}
	for (int i = 0; i < n; i++) {
		pthread_join(threads[i], NULL);
		rc |= jobs[i].rc;
	}
	return rc ? 1 : 0;
}

int player_run(const struct player_scenario *s, const char *dir)
{
	int nodes = s->nranks / s->ranks_per_node, failed = 0;
	pid_t pids[64];
	uint64_t t0;

	/* Restarts come p/64 apart, inside the 8 periods between an op's start and its first step. */
	if (nodes > 64 || s->ranks_per_node > 64 || s->ops > MAX_OPS || s->nsteps > 16 ||
	    s->recv_reg_passes < 0 || s->recv_not_now < 0 ||
	    s->recv_reg_passes + s->recv_not_now > 256)
		return -1;
	/* Far ahead of the real clock, so no watermark the report thread sets overtakes it. */
	fl_clock_init();
	t0 = fl_clock_ns() + 3600ULL * 1000000000ULL;
	fflush(NULL);
	for (int k = 0; k < nodes; k++) {
		pids[k] = fork();
		if (pids[k] < 0)
			return -1;
		if (pids[k] == 0)
			exit(node_main(s, k, dir, t0));
	}
	for (int k = 0; k < nodes; k++) {
		int status;

		if (waitpid(pids[k], &status, 0) < 0 || !WIFEXITED(status) ||
		    WEXITSTATUS(status))
			failed++;
	}
	return failed ? -1 : 0;
}
