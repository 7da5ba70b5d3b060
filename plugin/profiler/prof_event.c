/*
 * ProxyOp and ProxyStep events on NCCL's proxy thread: a pool pop at op
 * start, a slot in the op at step start, a timestamp per state, the step's
 * figures at its stop. No lock, and no allocation once the pool has grown.
 *
 * Nothing NCCL passes is read before our registries vouch for it: a context
 * by its address (prof_registry.c), a handle by the address of its chunk.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "prof_internal.h"

/*
 * The running thread: a token that tells threads apart (the address of a
 * thread-local), and the context this thread owns, which takes the ops it
 * relays.
 */
static _Thread_local char thread_token;
static _Thread_local struct fl_prof_ctx *home;

static uintptr_t this_thread(void)
{
	return (uintptr_t)&thread_token;
}

/* A chunk more of ops while warming up; the pool never exceeds FL_PROF_MAX_OPS. */
static int pool_grow(struct fl_prof_ctx *c)
{
	size_t bytes = sizeof(struct fl_prof_op) * (FL_PROF_OP_CHUNK + 1);
	struct fl_prof_chunk *k;
	struct fl_prof_op *ops;
	void *mem = NULL;

	_Static_assert(sizeof(struct fl_prof_op) * (FL_PROF_OP_CHUNK + 1) <= FL_PROF_CHUNK_ALIGN,
		       "a chunk fits in its alignment");
	if (c->nchunks == FL_PROF_MAX_OPS / FL_PROF_OP_CHUNK)
		return -1;
	if (posix_memalign(&mem, FL_PROF_CHUNK_ALIGN, bytes))
		return -1;
	memset(mem, 0, bytes);
	k = mem;
	k->magic = FL_PROF_CHUNK_MAGIC;
	k->ctx = c;
	k->bytes = bytes;
	if (fl_prof_reg_chunk_add(k)) {
		free(mem);
		return -1;
	}
	c->chunks[c->nchunks++] = k;
	ops = (struct fl_prof_op *)mem + 1; /* the first op-sized slot holds the header */
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

/*
 * A handle we could have given: in a chunk we hold, exactly where an op or
 * one of its steps begins (a chunk is a header slot, then its ops, each with
 * its steps inline). Anything else, a small integer, a pointer into the
 * middle of an object or a handle of a finalized context, is not an object
 * and nothing is read through it.
 */
static inline __attribute__((always_inline)) enum fl_prof_whose classify(void *handle,
									  void **obj)
{
	uintptr_t base = (uintptr_t)handle & ~((uintptr_t)FL_PROF_CHUNK_ALIGN - 1);
	uintptr_t off = (uintptr_t)handle - base, in_op;

	*obj = NULL;
	if (!fl_prof_chunk_of(handle) || off < sizeof(struct fl_prof_op))
		/* a chunk's header or tail, a finalized context's: ours; else never ours */
		return fl_prof_chunk_known(handle) ? FL_PROF_OURS_STALE : FL_PROF_FOREIGN;
	in_op = off % sizeof(struct fl_prof_op);
	if (in_op == 0) {
		*obj = handle;
		return FL_PROF_OURS;
	}
	if (in_op < offsetof(struct fl_prof_op, steps))
		return FL_PROF_OURS_BAD;
	in_op -= offsetof(struct fl_prof_op, steps);
	if (in_op % sizeof(struct fl_prof_step) ||
	    in_op / sizeof(struct fl_prof_step) >= FL_PROF_STEP_SLOTS)
		return FL_PROF_OURS_BAD;
	*obj = handle;
	return FL_PROF_OURS;
}

enum fl_prof_whose fl_prof_whose(void *handle, void **obj)
{
	return classify(handle, obj);
}

/*
 * An object of ours, or NULL. Events on what is not one are counted stale: a
 * finalized context's, a chunk's header, a pointer we never gave (unless a
 * next profiler is chained: its handles come this way, and are its own).
 */
static void *object_of(void *handle)
{
	enum fl_prof_whose w;
	void *obj;

	if (!handle)
		return NULL;
	w = classify(handle, &obj);
	if (__builtin_expect(w != FL_PROF_OURS, 0) &&
	    (w == FL_PROF_OURS_STALE || (w == FL_PROF_FOREIGN && !fl_prof_next_on())))
		fl_prof_note_stale();
	return obj;
}

/* The object behind a handle we gave out, if its kind is `kind`; else NULL. */
static void *resolve(void *handle, uint32_t kind)
{
	void *obj = object_of(handle);

	return obj && *(const uint32_t *)obj == kind ? obj : NULL;
}

/* Claims an own context for this thread when no thread has yet. */
static int owned_here(struct fl_prof_ctx *c)
{
	uintptr_t none = 0, me = this_thread();

	if (atomic_load_explicit(&c->owner, memory_order_relaxed) == me)
		return 1;
	return atomic_compare_exchange_strong_explicit(&c->owner, &none, me, memory_order_relaxed,
						       memory_order_relaxed);
}

void fl_prof_proxy_ctrl(void *ctx)
{
	struct fl_prof_ctx *c = ctx;

	if (!fl_prof_reg_ctx_has(ctx))
		return;
	if (owned_here(c))
		home = c;
}

/* This thread's own context, if it still is one. */
static struct fl_prof_ctx *home_here(void)
{
	struct fl_prof_ctx *h = home;

	if (h && fl_prof_reg_ctx_has(h) &&
	    atomic_load_explicit(&h->owner, memory_order_relaxed) == this_thread())
		return h;
	home = NULL;
	return NULL;
}

/*
 * The context whose links take this op: its own when it is ours, of this
 * process and of this thread; else (PXN) the running thread's, which moves
 * the bytes. *relayed says which.
 */
static struct fl_prof_ctx *measuring_ctx(void *ctx, const struct fl_prof_op_descr *d,
					 int *relayed)
{
	struct fl_prof_ctx *c = ctx;

	*relayed = 0;
	if (fl_prof_reg_ctx_has(ctx) && d->pid == c->pid && owned_here(c)) {
		if (home != c && !home_here())
			home = c; /* no ProxyCtrl named one (or it is gone): this one serves */
		return c;
	}
	*relayed = 1;
	return home_here();
}

int fl_prof_op_start(void *ctx, void **handle, const struct fl_prof_op_descr *d)
{
	struct fl_prof_link *l = NULL;
	struct fl_prof_op *op;
	struct fl_prof_ctx *c;
	int relayed;

	*handle = NULL;
	c = measuring_ctx(ctx, d, &relayed);
	if (!c) {
		fl_prof_note_unhomed();
		return 0;
	}
	fl_prof_count(&c->counts.ops, 1);
	fl_prof_count(&c->counts.relayed_ops, (uint64_t)relayed);
	/* d->rank is the originating rank (2.30.7 enqueue.cc:647): ours only when not relayed. */
	if (!relayed && __atomic_load_n(&c->rank, __ATOMIC_RELAXED) < 0)
		fl_prof_learn_comm(c, 0, d->rank);
	if (d->peer >= 0) {
		l = fl_prof_link_get(c, d->rank, d->peer, d->is_send != 0, d->channel, relayed);
		if (!l)
			fl_prof_count(&c->counts.dropped_links, 1);
	}
	op = l ? op_alloc(c) : NULL;
	if (!op) {
		fl_prof_count(&c->counts.dropped_ops, 1);
		return 0;
	}
	op->kind = FL_PROF_KIND_OP;
	op->stopped = 0;
	op->live_steps = 0;
	op->sized_by_op = 0;
	op->trans_last = op->pending = 0;
	op->ctx = c;
	op->link = l;
	op->next = NULL;
	*handle = op;
	return 0;
}

/* A slot still held by a step that never stopped: its stats slot goes back unused. */
static void abandon(struct fl_prof_step *s)
{
	fl_prof_slot_give(s->op->link, s->slot);
	s->op->live_steps--;
	fl_prof_count(&s->op->ctx->counts.abandoned_steps, 1);
	s->kind = FL_PROF_KIND_FREE;
}

/*
 * The same step started again before anything was recorded on it: NCCL's
 * receive proxy starts the step's event before it posts the buffer and, when
 * it cannot post yet, leaves it running and starts it again on its next pass,
 * over the handle it kept (2.30.7 src/transport/net.cc:1536 starts it, :1546
 * and :1561 `continue` while a registered buffer waits for the kernel, :1592
 * skips RecvWait while irecv gives no request; 2.28.9 :1432, :1442, :1455,
 * :1483; 2.23.4 :1261). The first RecvWait (:1603) follows the last start.
 * The same step keeps its slot and its first start: nothing was lost.
 */
static int restarted(const struct fl_prof_step *s, int step)
{
	if (s->step != step || s->bytes)
		return 0;
	for (int i = 0; i < FL_PROF_STATES; i++)
		if (s->at[i])
			return 0;
	return 1;
}

/* A step of an op of ours (a restart of the same one keeps its slot and first start). */
static inline __attribute__((always_inline)) int step_under(struct fl_prof_op *op, void **handle, int step)
{
	struct fl_prof_step *s;
	int slot;

	s = &op->steps[(unsigned)step % FL_PROF_STEP_SLOTS];
	if (s->kind == FL_PROF_KIND_STEP && restarted(s, step)) {
		fl_prof_count(&op->ctx->counts.restarted_steps, 1);
		s->next = NULL; /* the next profiler gets this start again too, as NCCL gives it */
		*handle = s;
		return 0;
	}
	if (s->kind == FL_PROF_KIND_STEP)
		abandon(s);
	slot = fl_prof_slot_take(op->link);
	if (slot < 0) {
		fl_prof_count(&op->ctx->counts.dropped_steps, 1); /* this thread's own context */
		return 0;
	}
	memset(s, 0, sizeof(*s));
	s->kind = FL_PROF_KIND_STEP;
	s->step = step;
	s->op = op;
	s->slot = (unsigned)slot;
	s->start_ns = fl_prof_now();
	fl_stats_post(&op->link->stats, s->slot, s->start_ns);
	op->live_steps++;
	fl_prof_count(&op->ctx->counts.steps, 1);
	*handle = s;
	return 0;
}


/* ctx is not read: for PXN it is another process's; the op (ours) knows its context. */
int fl_prof_step_start(void *ctx, void **handle, void *parent, int step)
{
	struct fl_prof_op *op;

	(void)ctx;
	*handle = NULL;
	/* NCCL starts steps under a NULL op too (it only skips their states). */
	op = resolve(parent, FL_PROF_KIND_OP);
	return op ? step_under(op, handle, step) : 0;
}

static inline __attribute__((always_inline)) void record_step(struct fl_prof_step *s, enum fl_prof_state state,
			const size_t *trans_size, int fresh)
{
	/* Op states (deprecated, or v4's with uninitialised args) carry nothing we use here. */
	if (!s || (unsigned)state >= FL_PROF_STATES)
		return;
	/* SendPeerWait comes again on every isend retry: the first one counts. */
	if (!s->at[state])
		s->at[state] = fl_prof_now();
	if (fresh && trans_size) {
		s->bytes = *trans_size;
	} else if (fresh && s->op->sized_by_op) {
		/* 2.24-2.26 grow transSize just before this state (2.26.2 transport/net.cc:1199-1203). */
		s->bytes += s->op->pending;
		s->op->pending = 0;
	}
}

int fl_prof_record(void *handle, enum fl_prof_state state, const size_t *trans_size, int fresh)
{
	record_step(resolve(handle, FL_PROF_KIND_STEP), state, trans_size, fresh);
	return 0;
}

/*
 * transSize of 2.23-2.26: the sub's running total, never reset between ops
 * (2.26.2 src/proxy.cc:364 leaves the memset commented out). The op's first
 * state sets the base; growth waits in `pending` for the next step that
 * reaches its sized state. 2.23 grows it after that state (2.23.4
 * transport/net.cc:1136-1138): the growth then goes to the next step, and the
 * last step's to the op's stop.
 */
static inline __attribute__((always_inline)) void record_op_size(struct fl_prof_op *op, size_t trans_size)
{
	if (!op)
		return;
	if (op->sized_by_op && trans_size >= op->trans_last)
		op->pending += trans_size - op->trans_last;
	op->sized_by_op = 1;
	op->trans_last = trans_size;
}

int fl_prof_record_op(void *handle, size_t trans_size)
{
	record_op_size(resolve(handle, FL_PROF_KIND_OP), trans_size);
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

/* Bytes no step took (2.23's last step): counted on the link, with no interval of their own. */
static void op_stop(struct fl_prof_op *op)
{
	if (op->pending) {
		fl_stats_add(&op->link->stats.bytes, op->pending);
		fl_stats_add(&op->link->stats.wire_bytes, op->pending);
		op->pending = 0;
	}
	/* Steps may stop after their op: the op waits for the last one. */
	op->stopped = 1;
	if (op->live_steps == 0)
		op_free(op);
}

static inline __attribute__((always_inline)) void stop_object(void *obj)
{
	uint32_t kind;

	if (!obj)
		return;
	kind = *(const uint32_t *)obj;
	if (kind == FL_PROF_KIND_STEP)
		step_stop(obj);
	else if (kind == FL_PROF_KIND_OP)
		op_stop(obj);
}

int fl_prof_stop(void *handle)
{
	stop_object(object_of(handle));
	return 0;
}

/*
 * Chained: the same calls, each finding in its one lookup also what the next
 * profiler knows the handle as (profiler.h): ours -> the next's kept beside
 * it (a step's states: only when the next has its op), never ours -> itself,
 * a stale one of ours -> NULL.
 */
static void *object_and_next(void *handle, void **next, int for_record)
{
	enum fl_prof_whose w;
	void *obj;

	*next = NULL;
	if (!handle)
		return NULL;
	w = classify(handle, &obj);
	if (w == FL_PROF_OURS)
		*next = for_record && *(const uint32_t *)obj == FL_PROF_KIND_STEP
				? fl_prof_step_next(obj) : fl_prof_kept_next(obj);
	else if (w == FL_PROF_FOREIGN)
		*next = handle;
	else if (w == FL_PROF_OURS_STALE)
		fl_prof_note_stale();
	return obj;
}

static void *of_kind(void *obj, uint32_t kind)
{
	return obj && *(const uint32_t *)obj == kind ? obj : NULL;
}

int fl_prof_step_start_chained(void *ctx, void **handle, void *parent, int step,
			       void **next_parent)
{
	struct fl_prof_op *op = of_kind(object_and_next(parent, next_parent, 0), FL_PROF_KIND_OP);

	(void)ctx;
	*handle = NULL;
	return op ? step_under(op, handle, step) : 0;
}

int fl_prof_record_chained(void *handle, int state, const size_t *trans_size, int fresh,
			   void **next)
{
	void *obj = object_and_next(handle, next, 1);

	if (state >= 0)
		record_step(of_kind(obj, FL_PROF_KIND_STEP), (enum fl_prof_state)state, trans_size,
			    fresh);
	return 0;
}

int fl_prof_record_op_chained(void *handle, const size_t *trans_size, void **next)
{
	void *obj = object_and_next(handle, next, 1);

	if (trans_size)
		record_op_size(of_kind(obj, FL_PROF_KIND_OP), *trans_size);
	return 0;
}

int fl_prof_stop_chained(void *handle, void **next)
{
	stop_object(object_and_next(handle, next, 0));
	return 0;
}

/* Group and Coll come on the application's thread, NetPlugin on the proxy's. */
void fl_prof_note_other(void *ctx)
{
	if (fl_prof_reg_ctx_has(ctx))
		__atomic_fetch_add(&((struct fl_prof_ctx *)ctx)->counts.other_events, 1,
				   __ATOMIC_RELAXED);
}

void fl_prof_pool_close(struct fl_prof_ctx *c)
{
	for (int i = 0; i < c->nchunks; i++)
		fl_prof_reg_chunk_del(c->chunks[i]);
}

void fl_prof_pool_free(struct fl_prof_ctx *c)
{
	for (int i = 0; i < c->nchunks; i++)
		free(c->chunks[i]);
	c->nchunks = 0;
	c->free_ops = NULL;
}
