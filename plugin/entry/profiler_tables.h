/*
 * The ncclProfiler_v1..v7 tables fabriclab exports (profiler_abi.c): the top
 * floor. Their types are NCCL's ABI (abi/profiler_abi.h, the ground floor), which
 * test profilers and the player use without these.
 */
#ifndef FL_PROFILER_TABLES_H
#define FL_PROFILER_TABLES_H

#include "abi/profiler_abi.h"

extern const struct fl_abi_profiler_v1 ncclProfiler_v1;
extern const struct fl_abi_profiler_v2 ncclProfiler_v2;
extern const struct fl_abi_profiler_v3 ncclProfiler_v3;
extern const struct fl_abi_profiler_v4 ncclProfiler_v4;
extern const struct fl_abi_profiler_v5 ncclProfiler_v5;
extern const struct fl_abi_profiler_v6 ncclProfiler_v6;
extern const struct fl_abi_profiler_v7 ncclProfiler_v7;

#endif
