/*
 * Running a scenario: one forked process per node, one thread per rank, each
 * thread with its own communicator context(s) and its own virtual clock.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "player_internal.h"
#include "plugin/base/clock.h"
#include "plugin/profiler/profiler.h"

#define MAX_COMMS 4
#define MAX_OPS 64

static _Thread_local uint64_t virtual_now;

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

/* Handles of one communicator: per link and op, the op and its steps; transSize per op. */
struct handles {
	void *op[PLAYER_MAX_LINKS][MAX_OPS];
	void *step[PLAYER_MAX_LINKS][MAX_OPS][16];
	uint64_t trans[PLAYER_MAX_LINKS][MAX_OPS];
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

static void *parent_of(const struct rank_job *job, const struct player_link *l, void *coll)
{
	/* A PXN op's parent is the originator's task event: never ours to read. */
	return l->relayed ? job->node->alien : coll;
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

static int play_event(const struct rank_job *job, void *ctx, const struct player_thread *th,
		      const struct player_event *e, struct handles *h, void *coll)
{
	const struct player_scenario *s = job->s;
	const struct player_driver *d = player_driver(s->version);
	const struct player_link *l = &th->links[e->link];
	int fresh;

	virtual_now = e->t;
	switch (e->kind) {
	case EV_START_OP:
		return d->start_op(ctx_of(job, l, ctx), &h->op[e->link][e->op],
				   parent_of(job, l, coll), l, s->nsteps, (int)s->chunk);
	case EV_START_STEP:
		return d->start_step(ctx_of(job, l, ctx), &h->step[e->link][e->op][e->step],
				     h->op[e->link][e->op], l->rank, e->step);
	case EV_STATE:
		/* NCCL records step and op states only under a non-NULL op handle. */
		if (!h->op[e->link][e->op])
			return 0;
		if (e->on_op)
			return play_op_state(d, e, h);
		fresh = e->state == 9 || e->state == 11;
		return d->record(h->step[e->link][e->op][e->step], e->state, e->size, fresh);
	case EV_STOP_STEP:
		return d->stop(h->step[e->link][e->op][e->step]);
	case EV_STOP_OP:
		return d->stop(h->op[e->link][e->op]);
	}
	return -1;
}

/* The odd calls NCCL makes too: a step under a NULL op, a stop of NULL. */
static int odd_calls(const struct player_driver *d, void *ctx, int rank)
{
	void *step = (void *)1;
	int rc = d->start_step(ctx, &step, NULL, rank, 0);

	rc |= step != NULL;
	rc |= d->stop(step);
	rc |= d->stop(NULL);
	return rc;
}

/* transSize of a sub is a running total never reset (2.26.2 src/proxy.cc:364): ops start mid-way. */
static void stale_totals(struct handles *h)
{
	for (int l = 0; l < PLAYER_MAX_LINKS; l++)
		for (int o = 0; o < MAX_OPS; o++)
			h->trans[l][o] = (uint64_t)(l + 1) * 1000003u + (uint64_t)o * 524288u;
}

static int play_comm(const struct rank_job *job, const struct player_thread *th, void *ctx,
		     struct handles *h)
{
	const struct player_scenario *s = job->s;
	const struct player_driver *d = player_driver(s->version);
	void *coll = NULL;
	int rc;

	memset(h, 0, sizeof(*h));
	stale_totals(h);
	rc = d->start_coll(ctx, &coll, s->comm_hash, th->rank);
	rc |= d->stop(coll); /* NCCL stops the Coll before its ProxyOps start */
	/* This communicator's proxy appends its ops (ProxyCtrl, 2.30.7 src/proxy.cc:864). */
	rc |= d->proxy_ctrl(ctx);
	rc |= odd_calls(d, ctx, th->rank);
	for (size_t i = 0; !rc && i < th->nev; i++)
		rc = play_event(job, ctx, th, &th->ev[i], h, coll);
	return rc;
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
		job->rc = job->rc ? job->rc : d->init(&ctx[c], s, hash, rank);
		if (!job->rc && hk && hk->after_init)
			job->rc = hk->after_init(hook_state[c]);
		/* The proxy thread starts idle and says so (ProxyCtrl Sleep, 2.30.7 src/proxy.cc:852). */
		if (!job->rc)
			job->rc = d->proxy_ctrl(ctx[c]);
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
