/*
 * The optional device-offload entries, for a transport that forwards to a
 * plugin which has them (ext): the wrap only finds its own objects' transport
 * comm and request and hands the call on; and setNetAttr's hints, for a
 * transport that forwards them. Nothing here is counted: the data calls
 * (isend/irecv/test) stay measured as always.
 */
#include "base/error.h"
#include "wrap.h"
#include "wrap_internal.h"

static unsigned offload_bits;

unsigned fl_wrap_offload(unsigned callable)
{
	const struct fl_transport *tp = fl_wrap_transport();
	const struct fl_forward *fwd = tp ? tp->forward : NULL;

	offload_bits = fwd && fwd->offload ? fwd->offload(callable) : 0;
	return offload_bits;
}

int fl_wrap_holds_for_consumed(void)
{
	return !!(offload_bits & FL_OFFLOAD_RECV_CONSUMED);
}

int fl_wrap_make_vdevice(int *dev, int ndevs, const int *devs)
{
	const struct fl_transport *tp = fl_wrap_transport();
	int rc;

	if (!(offload_bits & FL_OFFLOAD_VDEVICE))
		return fl_wrap_report_error(NULL, "makeVDevice",
					    fl_fail(FL_ERR_INTERNAL, "no makeVDevice here"));
	rc = tp->forward->make_vdevice(dev, ndevs, devs);
	return rc ? fl_wrap_report_error(NULL, "makeVDevice", rc) : FL_OK;
}

int fl_wrap_get_device_mr(void *comm, void *mhandle, void **dptr_mhandle)
{
	struct fl_wcomm *c = comm;
	int rc;

	if (!c || !(offload_bits & FL_OFFLOAD_DEVICE_MR))
		return FL_ERR_INTERNAL;
	rc = c->tp->forward->get_device_mr(c->tcomm, mhandle, dptr_mhandle);
	return rc ? fl_wrap_report_error(c, "getDeviceMr", rc) : FL_OK;
}

/* The request test said done stayed out of the pool until now (fl_wrap_test). */
int fl_wrap_irecv_consumed(void *recv_comm, int n, void *request)
{
	struct fl_wcomm *c = recv_comm;
	struct fl_wreq *r = request;
	int rc;

	if (!c || !r || r->comm != c || !(offload_bits & FL_OFFLOAD_RECV_CONSUMED))
		return FL_ERR_INTERNAL;
	rc = c->tp->forward->irecv_consumed(c->tcomm, n, r->treq);
	fl_wrap_req_put(c, r);
	return rc ? fl_wrap_report_error(c, "irecvConsumed", rc) : FL_OK;
}

/* v11+ tuning hints, for a transport that forwards them (ext); the others ignore them. */
int fl_wrap_set_net_attr(void *ctx, void *attr)
{
	const struct fl_wrap_ctx *c = ctx;
	const struct fl_transport *tp = fl_wrap_transport();
	int rc;

	if (!tp || !tp->forward || !tp->forward->set_net_attr)
		return FL_OK;
	rc = tp->forward->set_net_attr(c ? c->tctx : NULL, attr);
	return rc ? fl_wrap_report_error(NULL, "setNetAttr", rc) : FL_OK;
}
