/*
 * Calls into the next profiler in its own version (profiler_next.h). Which
 * events it gets: the ones NCCL would have emitted for its mask alone. NCCL
 * emits an event when the mask holds its type or any type below it in the
 * hierarchy (its children need it as their parent), so with fabriclab's bits
 * ORed into the mask NCCL emits more than the next asked for; each event goes
 * on only when the next's own mask would have made NCCL emit it.
 */
#include <stdatomic.h>

#include "base/log.h"
#include "profiler_next.h"

#define EV(x) FL_PROF_EV_##x
#define BELOW_TASK (EV(PROXY_OP) | EV(PROXY_STEP) | EV(KERNEL_CH) | EV(NET_PLUGIN))
#define CE (EV(CE_COLL) | EV(CE_SYNC) | EV(CE_BATCH))

/* Per event type (its bit's index): the mask bits for which NCCL emits it (2.30.7 src/plugin/profiler.cc). */
static const uint32_t emitted_for[16] = {
	[0] = EV(GROUP) | EV(COLL) | EV(P2P) | BELOW_TASK,             /* :456-457 */
	[1] = EV(COLL) | BELOW_TASK,                                   /* :481-482 */
	[2] = EV(P2P) | BELOW_TASK,                                    /* :521-522 */
	[3] = EV(PROXY_OP) | EV(PROXY_STEP) | EV(NET_PLUGIN),          /* :571 */
	[4] = EV(PROXY_STEP) | EV(NET_PLUGIN),                         /* :605, 624 */
	[5] = EV(PROXY_CTRL),                                          /* :657 */
	/* :682; 2.31.2 adds KernelCh to a mask with KernelPhase (ncclProfilerEnforceMaskDeps) */
	[6] = EV(KERNEL_CH) | EV(KERNEL_PHASE),
	[7] = EV(NET_PLUGIN),                                          /* :788 */
	[8] = EV(GROUP_API) | EV(P2P_API) | EV(COLL_API) | EV(KERNEL_LAUNCH) | EV(GROUP) |
	      EV(COLL) | EV(P2P) | BELOW_TASK | CE,                    /* :281-284 */
	[9] = EV(COLL_API) | EV(COLL) | BELOW_TASK | CE,               /* :366-368 */
	[10] = EV(P2P_API) | EV(P2P) | BELOW_TASK,                     /* :334-335 */
	[11] = EV(KERNEL_LAUNCH),                                      /* :415 */
	[12] = CE,                                                     /* :826-827 */
	[13] = EV(CE_SYNC),                                            /* :873 */
	[14] = EV(CE_BATCH),                                           /* :908 */
	[15] = EV(KERNEL_PHASE),
};

/*
 * The next's activation mask: the word its init writes, as NCCL's one per
 * process (2.30.7 src/plugin/profiler.cc:219). A word of ours that lives as
 * long as the process, never a local: a plugin may keep the pointer and write
 * it later (NCCL's example profiler does, from exampleProfilerStart/Stop:
 * 2.30.7 plugins/profiler/example/plugin.cc:313, 1066, 1073). Read at every
 * event, so such a change takes effect for the events NCCL still emits.
 */
static int next_mask_word;
static _Atomic int next_bits = ~0; /* the bits its version has (NCCL's adapters strip others) */
/*
 * A next that gives no handle for anything records nothing: legal for NCCL (a
 * NULL handle means "not tracked"), so it keeps getting its events, but said
 * once, at its first finalize or after NULL_WARN_AFTER starts. Counted only
 * until it gives its first handle.
 */
#define NULL_WARN_AFTER 1024
static _Atomic int gave_handle, null_warned;
static _Atomic unsigned null_starts;

static void warn_null_handles(void)
{
	unsigned n = atomic_load_explicit(&null_starts, memory_order_relaxed);

	if (n && !atomic_load_explicit(&gave_handle, memory_order_relaxed) &&
	    !atomic_exchange(&null_warned, 1))
		FL_WARN("profiler: the next profiler %s gave no handle for any of its first %u "
			"events: it records nothing for them (NCCL allows it, so it keeps getting "
			"them); fabriclab measures on", fl_prof_next_label(), n);
}

static void note_handle(const void *nh)
{
	if (atomic_load_explicit(&gave_handle, memory_order_relaxed))
		return;
	if (nh)
		atomic_store_explicit(&gave_handle, 1, memory_order_relaxed);
	else if (atomic_fetch_add_explicit(&null_starts, 1, memory_order_relaxed) + 1 ==
		 NULL_WARN_AFTER)
		warn_null_handles();
}

static int next_wants(uint64_t type)
{
	int bit;

	if (!type || (type & (type - 1)) || type > EV(KERNEL_PHASE))
		return 0;
	bit = __builtin_ctzll(type);
	return (__atomic_load_n(&next_mask_word, __ATOMIC_RELAXED) &
		atomic_load_explicit(&next_bits, memory_order_relaxed) & (int)emitted_for[bit]) != 0;
}

/* Every table's slots after the name: init differs, the other four are the same in each version. */
#define T(ver, t) ((const struct fl_abi_profiler_##ver *)(t))

static int call_init(const void *t, int m, void **nctx, int *mask,
		     const struct fl_prof_comm_info *info, fl_abi_logger_fn logger)
{
	if (m <= 3)
		return T(v1, t)->init(nctx, mask);
	if (m == 4)
		return T(v4, t)->init(nctx, mask, info->comm_name, info->comm_hash, info->nnodes,
				      info->nranks, info->rank, logger);
	return T(v5, t)->init(nctx, info->comm_hash, mask, info->comm_name, info->nnodes,
			      info->nranks, info->rank, logger);
}

int fl_abi_next_init(int n, void **ctx, const struct fl_prof_comm_info *info,
		     fl_abi_logger_fn logger)
{
	int m = 0, rc;
	const void *t = fl_prof_next_open(n, &m);
	void *nctx = NULL;

	if (!t)
		return 0;
	if (!T(v1, t)->init || !T(v1, t)->start_event || !T(v1, t)->stop_event ||
	    !T(v1, t)->record_event_state || !T(v1, t)->finalize) {
		fl_prof_next_drop("its ncclProfiler_v%d table has a NULL function", m);
		return 0;
	}
	rc = call_init(t, m, &nctx, &next_mask_word, info, logger);
	if (rc) {
		/* NCCL alone would run without it (2.30.7 src/plugin/profiler.cc:252-254). */
		fl_prof_next_drop("its init returned %d for communicator %016llx rank %d", rc,
				  (unsigned long long)info->comm_hash, info->rank);
		return 0;
	}
	/* NCCL's adapters strip the bits an older plugin cannot have asked for. */
	atomic_store(&next_bits, (int)FL_PROF_EV_BITS(m));
	if (*ctx)
		fl_prof_keep_next_ctx(*ctx, nctx);
	else
		*ctx = nctx;
	return __atomic_load_n(&next_mask_word, __ATOMIC_RELAXED) & (int)FL_PROF_EV_BITS(m);
}

static void call_start(const void *t, int m, void *nctx, void **nh, const void *d)
{
	/* Each version's startEvent takes its own descriptor type: the same call through its slot. */
	switch (m) {
	case 1: T(v1, t)->start_event(nctx, nh, (struct fl_prof_abi_descr_v1 *)d); break;
	case 2: T(v2, t)->start_event(nctx, nh, (struct fl_prof_abi_descr_v2 *)d); break;
	case 3: T(v3, t)->start_event(nctx, nh, (struct fl_prof_abi_descr_v3 *)d); break;
	case 4: T(v4, t)->start_event(nctx, nh, (struct fl_prof_abi_descr_v4 *)d); break;
	case 5: T(v5, t)->start_event(nctx, nh, (struct fl_prof_abi_descr_v5 *)d); break;
	case 6: T(v6, t)->start_event(nctx, nh, (struct fl_prof_abi_descr_v6 *)d); break;
	default: T(v7, t)->start_event(nctx, nh, (struct fl_prof_abi_descr_v7 *)d); break;
	}
}

void fl_abi_next_start(int n, void *ctx, void **handle, const void *d, uint64_t type,
		       void *parent)
{
	union fl_abi_descr_buf buf;
	const void *t, *nd;
	void *nh = NULL;
	int m = 0;

	t = fl_prof_next_live(&m);
	if (!t || !next_wants(type))
		return;
	nd = fl_abi_descr_for(n, d, m, parent, &buf);
	if (!nd)
		return;
	/* NCCL ignores what startEvent returns (2.30.7 src/plugin/profiler.cc:290-688). */
	call_start(t, m, fl_prof_next_ctx(ctx), &nh, nd);
	note_handle(nh);
	if (*handle)
		fl_prof_keep_next(*handle, nh);
	else
		*handle = nh;
}

void fl_abi_next_record(int n, void *next_handle, int state, const void *args)
{
	union fl_abi_args_buf buf;
	const void *t, *a;
	int m = 0;

	t = fl_prof_next_live(&m);
	if (!t || !next_handle || fl_abi_args_for(n, state, args, m, &buf, &a))
		return;
	if (m <= 3)
		T(v1, t)->record_event_state(next_handle, state,
					     (union fl_prof_abi_state_args_v1 *)a);
	else
		T(v4, t)->record_event_state(next_handle, state,
					     (union fl_prof_abi_state_args_v4 *)a);
}

void fl_abi_next_stop(void *next_handle, int nccl_null)
{
	int m = 0;
	const void *t = fl_prof_next_live(&m);

	if (!t)
		return;
	/* NCCL stops a NetPlugin event unguarded (2.30.7 profiler.cc:799): NULL too, when it asked. */
	if (next_handle || (nccl_null && next_wants(EV(NET_PLUGIN))))
		T(v1, t)->stop_event(next_handle);
}

void fl_abi_next_finalize(void *next_ctx)
{
	int m = 0;
	const void *t = fl_prof_next_live(&m);

	if (t)
		warn_null_handles();
	/* NCCL finalizes only a context that is not NULL (2.30.7 profiler.cc:265). */
	if (t && next_ctx)
		T(v1, t)->finalize(next_ctx);
}
