/*
 * A test and bench artifact: an NCCL net plugin (ncclNetPlugin_v12 only) that
 * moves nothing and completes every request at once, so bench/ext_cost can
 * measure what the ext transport adds per request over calling it directly.
 */
#include <string.h>

#include "plugin/abi/nccl_abi.h"

static int token;

static int n_init(void **ctx, uint64_t id, struct fl_abi_comm_config *cfg, fl_abi_logger_fn log,
		  fl_abi_prof_callback_fn prof)
{
	(void)id, (void)cfg, (void)log, (void)prof;
	*ctx = &token;
	return 0;
}

static int n_devices(int *n)
{
	*n = 1;
	return 0;
}

static int n_props(int dev, struct fl_abi_props_v12 *p)
{
	memset(p, 0, sizeof(*p));
	p->name = "null";
	p->ptr_support = 1;
	p->speed = 100000;
	p->max_comms = 1 << 16;
	p->max_recvs = 1;
	p->vprops.ndevs = 1;
	p->vprops.devs[0] = dev;
	p->max_p2p_bytes = 1ULL << 30;
	p->max_coll_bytes = 1ULL << 29;
	p->max_multi_request_size = 1;
	return 0;
}

static int n_listen(void *ctx, int dev, void *h, void **lc)
{
	(void)ctx, (void)dev, (void)h;
	*lc = &token;
	return 0;
}

static int n_connect(void *ctx, int dev, void *h, void **sc, struct fl_abi_dev_handle **dc)
{
	(void)ctx, (void)dev, (void)h, (void)dc;
	*sc = &token;
	return 0;
}

static int n_accept(void *lc, void **rc, struct fl_abi_dev_handle **dc)
{
	(void)dc;
	*rc = lc;
	return 0;
}

static int n_reg(void *c, void *d, size_t s, int t, void **mh)
{
	(void)c, (void)d, (void)s, (void)t;
	*mh = &token;
	return 0;
}

static int n_dereg(void *c, void *mh)
{
	(void)c, (void)mh;
	return 0;
}

static int n_isend(void *sc, void *d, size_t size, int tag, void *mh, void *ph, void **req)
{
	(void)sc, (void)d, (void)tag, (void)mh, (void)ph;
	token = (int)size;
	*req = &token;
	return 0;
}

static int n_irecv(void *rc, int n, void **d, size_t *s, int *t, void **mh, void **ph, void **req)
{
	(void)rc, (void)n, (void)d, (void)t, (void)mh, (void)ph;
	token = (int)s[0];
	*req = &token;
	return 0;
}

static int n_test(void *req, int *done, int *sizes)
{
	*done = 1;
	if (sizes)
		sizes[0] = *(int *)req;
	return 0;
}

static int n_close(void *c)
{
	(void)c;
	return 0;
}

static int n_finalize(void *ctx)
{
	(void)ctx;
	return 0;
}

__attribute__((visibility("default"))) const struct fl_abi_net_v12 ncclNetPlugin_v12 = {
	.name = "null", .init = n_init, .devices = n_devices, .get_properties = n_props,
	.listen = n_listen, .connect = n_connect, .accept = n_accept, .reg_mr = n_reg,
	.dereg_mr = n_dereg, .isend = n_isend, .irecv = n_irecv, .test = n_test,
	.close_send = n_close, .close_recv = n_close, .close_listen = n_close,
	.finalize = n_finalize,
};
