/*
 * The next profiler's handles and contexts, kept beside ours (chaining,
 * profiler.h). Where fabriclab measures an event (a ProxyOp, a ProxyStep) NCCL
 * holds our handle and the next's rides in our object: an op's or a step's
 * `next`, written once at its start by the thread that started it, read by the
 * same proxy thread at its states and stop; no allocation, no lock. Where
 * fabriclab does not, NCCL holds the next's handle itself, which our
 * registries do not know (FOREIGN): passed back to the next as it is. So a
 * child's parent is translated only when it is ours: a step's op, a NetPlugin
 * event's step; a Coll under a CollApi handle already stopped (2.30.7
 * src/plugin/profiler.cc:487, src/enqueue.cc:2750) or a PXN op under another
 * process's task is the next's own pointer, or another process's, as NCCL
 * would have passed it to the next alone.
 */
#include "prof_internal.h"

void fl_prof_keep_next(void *ours, void *next)
{
	uint32_t kind = *(const uint32_t *)ours;

	if (kind == FL_PROF_KIND_STEP)
		((struct fl_prof_step *)ours)->next = next;
	else if (kind == FL_PROF_KIND_OP)
		((struct fl_prof_op *)ours)->next = next;
}

void *fl_prof_kept_next(void *obj)
{
	uint32_t kind = *(const uint32_t *)obj;

	return kind == FL_PROF_KIND_STEP ? ((struct fl_prof_step *)obj)->next
	       : kind == FL_PROF_KIND_OP ? ((struct fl_prof_op *)obj)->next
					 : NULL;
}

void *fl_prof_next_of(void *handle, int for_record)
{
	void *obj;
	enum fl_prof_whose w = handle ? fl_prof_whose(handle, &obj) : FL_PROF_OURS_STALE;

	if (w == FL_PROF_FOREIGN)
		return handle;
	if (w != FL_PROF_OURS)
		return NULL;
	if (for_record && *(const uint32_t *)obj == FL_PROF_KIND_STEP)
		return fl_prof_step_next(obj);
	return fl_prof_kept_next(obj);
}

void *fl_prof_next_parent(void *handle)
{
	return fl_prof_next_of(handle, 0);
}

/* At init, before NCCL has the context: no event can read it yet. */
void fl_prof_keep_next_ctx(void *ctx, void *next_ctx)
{
	if (fl_prof_reg_ctx_has(ctx))
		((struct fl_prof_ctx *)ctx)->next_ctx = next_ctx;
}

void *fl_prof_next_ctx(void *ctx)
{
	if (fl_prof_reg_ctx_has(ctx))
		return ((struct fl_prof_ctx *)ctx)->next_ctx;
	return fl_prof_reg_ctx_dead(ctx) ? NULL : ctx;
}

int fl_prof_ctx_ours(const void *ctx)
{
	return fl_prof_reg_ctx_has(ctx);
}
