/* What flsock built with FLSOCK_RECORDS was called with (flsock_record, exported); tests read it. */
#ifndef FLSOCK_RECORD_H
#define FLSOCK_RECORD_H

#include <stdint.h>

#include "plugin/abi/nccl_abi.h"

#define FLSOCK_RECORD_INITS 8

struct flsock_record {
	int inits;                                   /* v11+: every init, first ones kept */
	int finalizes;                               /* v11+: every finalize (inits - finalizes
							live, as aws-ofi-nccl counts them) */
	uint64_t init_comm[FLSOCK_RECORD_INITS];
	int init_tc[FLSOCK_RECORD_INITS];
	int connects;                                /* v10: the config each connect had */
	const void *connect_config;
	int connect_tc;
	int irecvs;
	void *irecv_request_in;                      /* what *request held when irecv began */
	int attr_calls;                              /* v11+: setNetAttr */
	int attr_ctx_ok;                             /* with the ctx its init gave */
	struct fl_abi_net_attr attr;
};

#endif
