/*
 * The run projected to the field guide's job, a model and not a measurement
 * (docs/lab.md): 70B parameters in bf16 all-reduced every step by a ring of
 * 16 nodes x 8 GPUs, each GPU with 400 Gb/s of IB or RoCE (100 Gb/s for plain
 * TCP), and the compute that makes the healthy step 9 s on IB. The lab's
 * measured all-reduce time over what its link rate allows (the effect ratio)
 * stretches the field job's communication by the same factor.
 */
#include "lab.h"

#define FIELD_PARAMS 70e9
#define FIELD_BYTES_PER_PARAM 2.0 /* bf16 gradients */
#define FIELD_GPUS 128.0
#define FIELD_RDMA_BYTES_PER_S (400e9 / 8)
#define FIELD_TCP_BYTES_PER_S (100e9 / 8)
#define FIELD_COMPUTE_S 3.4 /* with 5.6 s of ring all-reduce at 400 Gb/s: a 9 s step */

static double field_comm_s(enum lab_fabric f)
{
	double bytes = FIELD_PARAMS * FIELD_BYTES_PER_PARAM;
	double rate = f == LAB_TCP ? FIELD_TCP_BYTES_PER_S : FIELD_RDMA_BYTES_PER_S;

	return 2.0 * (FIELD_GPUS - 1) / FIELD_GPUS * bytes / rate;
}

void lab_print_projection(const struct lab_opts *o, double reduce_ms, double ideal_ms,
			  FILE *out)
{
	double ratio, healthy, projected;

	if (ideal_ms <= 0 || reduce_ms <= 0)
		return;
	ratio = reduce_ms / ideal_ms;
	healthy = FIELD_COMPUTE_S + field_comm_s(o->fabric);
	projected = FIELD_COMPUTE_S + field_comm_s(o->fabric) * ratio;
	fprintf(out, "projection (a model, docs/lab.md): the all-reduce took %.2fx what the link "
		"rate allows; at the field guide's scale (70B model, 16 nodes x 8 GPUs, %s) that "
		"turns a %.1f s step into %.1f s\n", ratio,
		o->fabric == LAB_TCP ? "100 Gb/s TCP per GPU" : "400 Gb/s per GPU", healthy,
		projected);
}
