/*
 * NCCL's tuner plugin table as of tuner ABI v5 (NCCL 2.28, 2.29), written from
 * NCCL 2.28.9 src/include/plugin/tuner/tuner_v5.h. fabriclab forwards a wrapped
 * plugin's tuner (and CollNet, GIN, RMA) tables by address
 * (transport/ext/ext_forward.c), so it never calls one itself; this declaration
 * is for the test plugin that exports a tuner and the test that drives it as
 * NCCL does (init once per communicator, getCollInfo per collective).
 * The NVLink-domain and constants structs stay opaque: a tuner receives NCCL's.
 */
#ifndef FL_TUNER_ABI_H
#define FL_TUNER_ABI_H

#include <stddef.h>
#include <stdint.h>

#include "abi/nccl_abi.h"

#define FL_TUNER_ALGOS_V5 7  /* Tree, Ring, CollNetDirect, CollNetChain, NVLS, NVLSTree, PAT */
#define FL_TUNER_PROTOS_V5 3 /* Simple, LL, LL128 */

struct fl_abi_nvl_domain_v5;
struct fl_abi_tuner_constants_v5;

struct fl_abi_tuner_v5 {
	const char *name;
	int (*init)(void **ctx, uint64_t comm_id, size_t nranks, size_t nnodes,
		    fl_abi_logger_fn logger, struct fl_abi_nvl_domain_v5 *nvl_domains,
		    struct fl_abi_tuner_constants_v5 *constants);
	/* coll_type: ncclFunc_t; cost_table[algo][proto], -1 = not available; may set *nchannels */
	int (*get_coll_info)(void *ctx, int coll_type, size_t nbytes, int num_pipe_ops,
			     float **cost_table, int num_algo, int num_proto, int reg_buff,
			     int *nchannels);
	int (*finalize)(void *ctx);
};

#endif
