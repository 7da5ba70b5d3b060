/*
 * The next profiler, called in its own version (chaining, docs/profiler.md):
 * the ncclProfiler_vN adapters (profiler_abi.c) hand it every event NCCL gives
 * fabriclab that NCCL would have given it alone, converted to its version
 * (profiler_convert.c), its parents and contexts translated to its own
 * (profiler/prof_next_forward.c). Nothing here runs while none is chained.
 */
#ifndef FL_PROFILER_NEXT_H
#define FL_PROFILER_NEXT_H

#include <stdint.h>

#include "abi/profiler_abi.h"
#include "abi/profiler_convert.h"
#include "profiler/profiler.h"

/*
 * After fabriclab's own init (NCCL took ncclProfiler_v<n>): the next's init with
 * NCCL's arguments, its context kept beside *ctx, or returned in *ctx when
 * fabriclab made none. Returns the event bits it asked for, to OR into the mask
 * NCCL keeps; 0 when none is chained (or it failed: one WARN, dropped).
 */
int fl_abi_next_init(int n, void **ctx, const struct fl_prof_comm_info *info,
		     fl_abi_logger_fn logger);
/*
 * An event NCCL started with fabriclab's table v<n> (d: NCCL's descriptor of that
 * version, type its type): to the next when its own mask would have had NCCL
 * emit it, with parent as the next knows d's parent. *handle: fabriclab's
 * handle (the next's is kept beside it), or NULL (the next's is returned in it).
 */
void fl_abi_next_start(int n, void *ctx, void **handle, const void *d, uint64_t type,
		       void *parent);
/* A state recorded on an event whose handle the next knows as next_handle (NULL: none). */
void fl_abi_next_record(int n, void *next_handle, int state, const void *args);
/* A stop; nccl_null: NCCL stopped NULL (a NetPlugin event, whose stop is unguarded). */
void fl_abi_next_stop(void *next_handle, int nccl_null);
void fl_abi_next_finalize(void *next_ctx);

#endif
