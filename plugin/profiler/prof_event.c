/*
 * ProxyOp and ProxyStep events on NCCL's proxy thread: a pool pop at op
 * start, a slot in the op at step start, a timestamp per state, the step's
 * figures at its stop. No lock, and no allocation once the pool has grown.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "prof_internal.h"

/* A chunk more of ops while warming up; the pool never exceeds FL_PROF_MAX_OPS. */
static int pool_grow(struct fl_prof_ctx *c)
{
	struct fl_prof_op *ops;

	if (c->nchunks == FL_PROF_MAX_OPS / FL_PROF_OP_CHUNK)
		return -1;
	ops = calloc(FL_PROF_OP_CHUNK, sizeof(*ops));
	if (!ops)
		return -1;
	c->chunks[c->nchunks++] = ops;
	for (int i = 0; i < FL_PROF_OP_CHUNK; i++) {
		ops[i].next_free = c->free_ops;
		c->free_ops = &ops[i];
	}
	c->nops_allocated += FL_PROF_OP_CHUNK;
	return 0;
}

static struct fl_prof_op *op_alloc(struct fl_prof_ctx *c)
{
	struct fl_prof_op *op;

	if (!c->free_ops && pool_grow(c))
		return NULL;
	op = c->free_ops;
	c->free_ops = op->next_free;
	return op;
}

static void op_free(struct fl_prof_op *op)
{
	struct fl_prof_ctx *c = op->ctx;

	op->kind = FL_PROF_KIND_FREE;
	op->next_free = c->free_ops;
	c->free_ops = op;
}

int fl_prof_op_start(void *ctx, void **handle, const struct fl_prof_op_descr *d)
{
	struct fl_prof_ctx *c = ctx;
	struct fl_prof_link *l;
	struct fl_prof_op *op;

	*handle = NULL;
	c->counts.ops++;
	/* PXN: another process's op run here; its parentObj is not ours, its rank is. */
	if (d->pid != c->pid)
		c->counts.pxn_ops++;
	if (d->pid == c->pid && __atomic_load_n(&c->rank, __ATOMIC_RELAXED) < 0)
		fl_prof_learn_comm(c, 0, d->rank);
	l = d->peer >= 0 ? fl_prof_link_get(c, d->rank, d->peer, d->is_send != 0, d->channel)
			 : NULL;
	op = l ? op_alloc(c) : NULL;
	if (!op) {
		c->counts.dropped_ops++;
		return 0;
	}
	op->kind = FL_PROF_KIND_OP;
	op->stopped = 0;
	op->live_steps = 0;
	op->ctx = c;
	op->link = l;
	*handle = op;
	return 0;
}

/* A slot still held by a step that never stopped: its stats slot goes back unused. */
static void abandon(struct fl_prof_step *s)
{
	fl_prof_slot_give(s->op->link, s->slot);
	s->op->live_steps--;
	s->op->ctx->counts.abandoned_steps++;
	s->kind = FL_PROF_KIND_FREE;
}

int fl_prof_step_start(void *ctx, void **handle, void *parent, int step)
{
	struct fl_prof_op *op = parent;
	struct fl_prof_step *s;
	int slot;

	(void)ctx;
	*handle = NULL;
	/* NCCL starts steps under a NULL op too (it only skips their states). */
	if (!op || op->kind != FL_PROF_KIND_OP)
		return 0;
	s = &op->steps[(unsigned)step % FL_PROF_STEP_SLOTS];
	if (s->kind == FL_PROF_KIND_STEP)
		abandon(s);
	slot = fl_prof_slot_take(op->link);
	if (slot < 0)
		return 0;
	memset(s, 0, sizeof(*s));
	s->kind = FL_PROF_KIND_STEP;
	s->op = op;
	s->slot = (unsigned)slot;
	s->start_ns = fl_prof_now();
	fl_stats_post(&op->link->stats, s->slot, s->start_ns);
	op->live_steps++;
	op->ctx->counts.steps++;
	*handle = s;
	return 0;
}

int fl_prof_record(void *handle, enum fl_prof_state state, const size_t *trans_size)
{
	struct fl_prof_step *s = handle;

	/* Op states (deprecated, or v4's with uninitialised args) carry nothing we use. */
	if (!s || s->kind != FL_PROF_KIND_STEP || (unsigned)state >= FL_PROF_STATES)
		return 0;
	/* SendPeerWait comes again on every isend retry: the first one counts. */
	if (!s->at[state])
		s->at[state] = fl_prof_now();
	if (trans_size)
		s->bytes = *trans_size;
	return 0;
}

static void step_stop(struct fl_prof_step *s)
{
	struct fl_prof_op *op = s->op;

	fl_prof_step_account(s, fl_prof_now());
	s->kind = FL_PROF_KIND_FREE;
	if (--op->live_steps == 0 && op->stopped)
		op_free(op);
}

int fl_prof_stop(void *handle)
{
	uint32_t kind = handle ? *(const uint32_t *)handle : FL_PROF_KIND_FREE;

	if (kind == FL_PROF_KIND_STEP) {
		step_stop(handle);
	} else if (kind == FL_PROF_KIND_OP) {
		struct fl_prof_op *op = handle;

		/* Steps may stop after their op: the op waits for the last one. */
		op->stopped = 1;
		if (op->live_steps == 0)
			op_free(op);
	}
	return 0;
}

/* Group and Coll come on the application's thread, NetPlugin on the proxy's. */
void fl_prof_note_other(void *ctx)
{
	__atomic_fetch_add(&((struct fl_prof_ctx *)ctx)->counts.other_events, 1, __ATOMIC_RELAXED);
}

void fl_prof_pool_free(struct fl_prof_ctx *c)
{
	for (int i = 0; i < c->nchunks; i++)
		free(c->chunks[i]);
	c->nchunks = 0;
	c->free_ops = NULL;
}
