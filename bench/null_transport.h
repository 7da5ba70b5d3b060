/*
 * A transport that moves nothing and completes every request at once: what the
 * wrap layer and its hooks cost per request is measured over it (wrap_cost,
 * trace_cost). Each benchmark is one .c file, so this header defines it.
 */
#ifndef FL_BENCH_NULL_TRANSPORT_H
#define FL_BENCH_NULL_TRANSPORT_H

#include <string.h>

#include "plugin/transport/transport.h"

static int null_req;

static int n_init(void) { return FL_OK; }
static int n_devices(int *n) { *n = 1; return FL_OK; }
static int n_props(int dev, struct fl_props *p)
{
	(void)dev;
	memset(p, 0, sizeof(*p));
	p->name = "null";
	return FL_OK;
}

static int n_listen(int dev, const struct fl_endpoint *s, void *h, void **lc)
{
	(void)dev, (void)s, (void)h;
	*lc = &null_req;
	return FL_OK;
}

static int n_connect(int dev, const struct fl_endpoint *s, void *h, void **sc)
{
	(void)dev, (void)s, (void)h;
	*sc = &null_req;
	return FL_OK;
}

static int n_accept(void *lc, void **rc) { *rc = lc; return FL_OK; }
static int n_peer(void *c, struct fl_endpoint *p)
{
	(void)c;
	memset(p, 0, sizeof(*p));
	return FL_OK;
}

static int n_reg(void *c, void *d, size_t s, int t, void **mh)
{
	(void)c, (void)d, (void)s, (void)t;
	*mh = NULL;
	return FL_OK;
}

static int n_dereg(void *c, void *mh) { (void)c, (void)mh; return FL_OK; }
static int n_close(void *c) { (void)c; return FL_OK; }

static int n_isend(void *sc, void *data, size_t size, int tag, void *mh, void **req)
{
	(void)sc, (void)data, (void)tag, (void)mh;
	null_req = (int)size;
	*req = &null_req;
	return FL_OK;
}

static int n_irecv(void *rc, int n, void **d, size_t *s, int *t, void **mh, void **req)
{
	(void)rc, (void)n, (void)d, (void)s, (void)t, (void)mh;
	*req = &null_req;
	return FL_OK;
}

static int n_iflush(void *rc, int n, void **d, int *s, void **mh, void **req)
{
	(void)rc, (void)n, (void)d, (void)s, (void)mh;
	*req = &null_req;
	return FL_OK;
}

static int n_test(void *req, int *done, int *sizes, struct fl_xfer_times *t)
{
	(void)t;
	*done = 1;
	sizes[0] = *(int *)req;
	return FL_OK;
}

static const struct fl_transport null_transport = {
	.name = "null", .init = n_init, .devices = n_devices, .get_properties = n_props,
	.listen = n_listen, .connect = n_connect, .accept = n_accept, .peer = n_peer,
	.reg_mr = n_reg, .dereg_mr = n_dereg, .isend = n_isend, .irecv = n_irecv,
	.iflush = n_iflush, .test = n_test, .close_send = n_close, .close_recv = n_close,
	.close_listen = n_close,
};

#endif
