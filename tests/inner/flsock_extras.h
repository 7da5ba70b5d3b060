/*
 * FLSOCK_EXTRAS: flsock also exports, from the same library, the other tables
 * NCCL looks up in a net plugin's library, as real plugins do: aws-ofi-nccl
 * v1.21.1 builds its tuner into libnccl-net-ofi.so on AWS (Makefile.am:67-73)
 * and exports ncclGinPlugin_v11/v13; Mellanox/nccl-rdma-sharp-plugins exports
 * ncclCollNetPlugin_vN (SHARP) from libnccl-net.so when built with SHARP.
 * - ncclTunerPlugin_v5 (plugin/abi/tuner_abi.h): a tuner whose decisions depend
 *   on every input, so a test can tell whether NCCL's call reached it unchanged
 *   and whether its answer came back unchanged;
 * - ncclCollNetPlugin_v11, ncclGinPlugin_v11: tables whose init fails (NCCL then
 *   leaves CollNet and GIN disabled, 2.28.9 src/plugin/net.cc:190-192), here only
 *   so that a test can check they are forwarded by address. Never installed.
 */
#ifndef FLSOCK_EXTRAS_H
#define FLSOCK_EXTRAS_H

#include "plugin/abi/tuner_abi.h"

#define TUNER_CTX_MAGIC 0x7475ull

struct tuner_ctx {
	uint64_t magic, comm_id;
	size_t nranks, nnodes;
};

static struct tuner_ctx tuner_ctxs[16];

static int tuner_init(void **ctx, uint64_t comm_id, size_t nranks, size_t nnodes,
		      fl_abi_logger_fn logger, struct fl_abi_nvl_domain_v5 *nvl,
		      struct fl_abi_tuner_constants_v5 *constants)
{
	struct tuner_ctx *c = &tuner_ctxs[comm_id % 16];

	(void)logger, (void)nvl, (void)constants;
	*c = (struct tuner_ctx){ TUNER_CTX_MAGIC, comm_id, nranks, nnodes };
	*ctx = c;
	return FL_OK;
}

/* One (algo, proto) made cheapest and a channel count, both from every input. */
static int tuner_get_coll_info(void *ctx, int coll_type, size_t nbytes, int num_pipe_ops,
			       float **cost_table, int num_algo, int num_proto, int reg_buff,
			       int *nchannels)
{
	const struct tuner_ctx *c = ctx;
	uint64_t mix;

	if (!c || c->magic != TUNER_CTX_MAGIC || num_algo < 1 || num_proto < 1)
		return FL_ERR_INTERNAL;
	mix = (uint64_t)coll_type * 31 + nbytes / 1024 + (uint64_t)num_pipe_ops * 7 +
	      (uint64_t)reg_buff * 3 + c->nranks * 5 + c->nnodes * 11 + c->comm_id;
	cost_table[mix % (uint64_t)num_algo][(mix / 7) % (uint64_t)num_proto] = 0.0f;
	*nchannels = 1 + (int)(mix % 13);
	return FL_OK;
}

static int tuner_finalize(void *ctx)
{
	struct tuner_ctx *c = ctx;

	if (!c || c->magic != TUNER_CTX_MAGIC)
		return FL_ERR_INTERNAL;
	c->magic = 0;
	return FL_OK;
}

EXPORT const struct fl_abi_tuner_v5 ncclTunerPlugin_v5 = {
	.name = "flsock-tuner",
	.init = tuner_init,
	.get_coll_info = tuner_get_coll_info,
	.finalize = tuner_finalize,
};

static int extras_init_fails(void)
{
	return FL_ERR_INTERNAL;
}

/* Name and init first, as in every CollNet and GIN table; the rest is never reached. */
struct extras_table {
	const char *name;
	int (*init)(void);
	void *rest[32];
};

EXPORT const struct extras_table ncclCollNetPlugin_v11 = { "flsock-collnet", extras_init_fails,
							  { 0 } };
EXPORT const struct extras_table ncclGinPlugin_v11 = { "flsock-gin", extras_init_fails, { 0 } };

#endif
