/*
 * What each rank puts in its send buffer and what must come back, element by element. The
 * values are small integers held exactly in float32, so a sum over up to 64 ranks is exact in
 * any order NCCL adds them, and they differ by rank and by position, so a chunk that went to
 * the wrong place, a rank's share left out or an element never written (the receive buffer is
 * set to NaN before each call) all count as wrong.
 */
#ifndef FL_GPU_DRIVER_CHECK_H
#define FL_GPU_DRIVER_CHECK_H

#include <stddef.h>

#define DRV_PATTERN_PERIOD 251 /* a prime: element i's value depends on i mod 251 */

/* The value rank puts at element i (1..251). */
float drv_value(int rank, size_t i);

/* count elements of rank's pattern into buf. */
void drv_fill(float *buf, size_t count, int rank);

/* Elements of an all-reduce (sum over nranks) result that are wrong; *first = the first one's
 * index (count when none). */
size_t drv_wrong_all_reduce(const float *buf, size_t count, int nranks, size_t *first);

/* Elements of a buffer received from src_rank that are not its pattern. */
size_t drv_wrong_from(const float *buf, size_t count, int src_rank, size_t *first);

#endif
