/* The driver's data pattern and its element-by-element check (driver_check.h). */
#include "driver_check.h"

float drv_value(int rank, size_t i)
{
	return (float)((i % DRV_PATTERN_PERIOD * 7 + (size_t)rank * 13) % DRV_PATTERN_PERIOD + 1);
}

void drv_fill(float *buf, size_t count, int rank)
{
	for (size_t i = 0; i < count; i++)
		buf[i] = drv_value(rank, i);
}

/* A result depends on i only through i mod the period: one table of expected values. */
static size_t count_wrong(const float *buf, size_t count, const float *expect, size_t *first)
{
	size_t wrong = 0;

	*first = count;
	for (size_t i = 0, k = 0; i < count; i++) {
		/* != is false for NaN on both sides only if expect were NaN, which it never is. */
		if (!(buf[i] == expect[k])) {
			if (!wrong)
				*first = i;
			wrong++;
		}
		if (++k == DRV_PATTERN_PERIOD)
			k = 0;
	}
	return wrong;
}

size_t drv_wrong_all_reduce(const float *buf, size_t count, int nranks, size_t *first)
{
	float expect[DRV_PATTERN_PERIOD];

	for (size_t k = 0; k < DRV_PATTERN_PERIOD; k++) {
		float sum = 0;

		for (int r = 0; r < nranks; r++)
			sum += drv_value(r, k);
		expect[k] = sum;
	}
	return count_wrong(buf, count, expect, first);
}

size_t drv_wrong_from(const float *buf, size_t count, int src_rank, size_t *first)
{
	float expect[DRV_PATTERN_PERIOD];

	for (size_t k = 0; k < DRV_PATTERN_PERIOD; k++)
		expect[k] = drv_value(src_rank, k);
	return count_wrong(buf, count, expect, first);
}
