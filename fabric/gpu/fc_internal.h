/* Inside the fake CUDA library: its configuration and its copy engine (fakecuda.c's helpers). */
#ifndef FAKECUDA_INTERNAL_H
#define FAKECUDA_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "fabric/topo/topo.h"

/* ---- fc_config.c ---- */

/* This process's GPUs: its node's in the description, the FABRICLAB_FAKECUDA_* variables over
 * them; read once. A refused description (its reason on stderr) leaves no GPU. */
const struct ft_gpus *fc_gpus(void);
/* Bytes cudaMalloc may hand out in all; -1 unlimited. */
long long fc_memory_limit(void);

/* ---- fc_engine.c ---- */

uint64_t fc_now_ns(void);
/*
 * A copy of size bytes between host and device memory (to_host: device to host) called at
 * `at`: when the copy engine is done with it (CLOCK_MONOTONIC ns), or 0 when unpaced.
 */
uint64_t fc_engine_take(int to_host, size_t size, uint64_t at);
/* Sleeps until done (0: not at all). */
void fc_hold_until(uint64_t done);

#endif
