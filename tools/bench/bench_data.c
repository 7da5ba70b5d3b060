/*
 * What each rank sends and what it must get back. All-reduce inputs are small
 * integers, so every partial sum is exact in float whatever the order, and
 * results can be compared with ==. The period (251, prime) does not line up
 * with chunk or step boundaries, so a slice landing at the wrong offset shows.
 */
#include "bench.h"

#include <stdint.h>
#include <string.h>

#define PERIOD 251

/* Rank r contributes scale(r) * wave(i) + shift(r); small enough for ~29000 ranks. */
static int scale(int rank)
{
	return rank % 8 + 1;
}

static int shift(int rank)
{
	return rank % 16;
}

static int wave(size_t i)
{
	return (int)(i % PERIOD) - PERIOD / 2;
}

static float float_input(int rank, size_t i)
{
	return (float)(scale(rank) * wave(i) + shift(rank));
}

static uint8_t byte_input(int rank, size_t i)
{
	return (uint8_t)(i % PERIOD + 7u * (unsigned)rank + 1u);
}

static int prev_rank(int rank, int nranks)
{
	return (rank + nranks - 1) % nranks;
}

void bench_fill(enum bench_op op, int rank, void *send, size_t bytes)
{
	if (op == BENCH_ALL_REDUCE) {
		float *f = send;

		for (size_t i = 0; i < bytes / sizeof(float); i++)
			f[i] = float_input(rank, i);
	} else {
		uint8_t *b = send;

		for (size_t i = 0; i < bytes; i++)
			b[i] = byte_input(rank, i);
	}
}

void bench_poison(enum bench_op op, int rank, int nranks, void *recv, size_t bytes)
{
	if (op == BENCH_ALL_REDUCE) {
		memset(recv, 0xff, bytes); /* NaN: equal to nothing */
	} else {
		uint8_t *b = recv;
		int from = prev_rank(rank, nranks);

		for (size_t i = 0; i < bytes; i++)
			b[i] = (uint8_t)~byte_input(from, i);
	}
}

size_t bench_count_wrong(enum bench_op op, int rank, int nranks, const void *recv, size_t count)
{
	size_t wrong = 0;

	if (op == BENCH_ALL_REDUCE) {
		const float *f = recv;
		long scales = 0, shifts = 0;

		for (int r = 0; r < nranks; r++) {
			scales += scale(r);
			shifts += shift(r);
		}
		for (size_t i = 0; i < count; i++)
			wrong += f[i] != (float)(scales * wave(i) + shifts);
	} else {
		const uint8_t *b = recv;
		int from = prev_rank(rank, nranks);

		for (size_t i = 0; i < count; i++)
			wrong += b[i] != byte_input(from, i);
	}
	return wrong;
}
