/* The inner's inits: once for the process, once per communicator (ext_inner.h). */
#include "ext_inner.h"

#include <string.h>

int ext_inner_init(const struct fl_host_net *in, fl_logger_fn logger, fl_prof_fn prof,
		   struct ext_ctx *ctx)
{
	memset(ctx, 0, sizeof(*ctx));
	ctx->config.traffic_class = FL_ABI_TRAFFIC_CLASS_UNDEF;
	return fl_host_init(in, 0, &ctx->config, logger, prof, &ctx->inner_ctx);
}

int ext_inner_open_ctx(const struct fl_host_net *in, uint64_t comm_id, fl_logger_fn logger,
		       fl_prof_fn prof, struct ext_ctx *ctx)
{
	ctx->inner_ctx = NULL;
	if (in->version < 11) /* before v11 init is per process: done once, by ext_inner_init */
		return FL_OK;
	return fl_host_init(in, comm_id, &ctx->config, logger, prof, &ctx->inner_ctx);
}
