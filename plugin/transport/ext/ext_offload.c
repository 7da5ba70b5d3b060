/*
 * The inner plugin's optional device-offload entries, forwarded unchanged when
 * it has them: makeVDevice (NIC fusion), getDeviceMr (a GPU-side handle of a
 * registration), irecvConsumed (the GPU has consumed a receive); the device
 * handles of connect/accept are NCCL's own pointer (ext_conn.c). When the
 * inner lacks one, offload() leaves it out and fabriclab's tables keep the slot
 * NULL, so NCCL sees exactly what it would see without fabriclab.
 */
#include "base/error.h"
#include "ext_internal.h"

int ext_hold_for_consumed;

unsigned ext_offload(unsigned callable)
{
	unsigned has = (ext_plugin.make_vdevice ? FL_OFFLOAD_VDEVICE : 0) |
		       (ext_plugin.get_device_mr ? FL_OFFLOAD_DEVICE_MR : 0) |
		       (ext_plugin.irecv_consumed ? FL_OFFLOAD_RECV_CONSUMED : 0);

	/* An NCCL that cannot call irecvConsumed (v6) must not leave requests waiting for it. */
	ext_hold_for_consumed = !!(callable & has & FL_OFFLOAD_RECV_CONSUMED);
	return callable & has;
}

int ext_make_vdevice(int *dev, int ndevs, const int *devs)
{
	int rc = ext_inner_make_vdevice(&ext_plugin, dev, ndevs, devs);

	return rc ? fl_fail(rc, "ext: %s makeVDevice of %d device(s) failed (error %d)",
			    ext_plugin.name, ndevs, rc) : FL_OK;
}

int ext_get_device_mr(void *comm, void *mhandle, void **dptr_mhandle)
{
	struct ext_comm *c = comm;
	int rc;

	if (!ext_plugin.get_device_mr)
		return fl_fail(FL_ERR_INTERNAL, "ext: %s has no getDeviceMr", ext_plugin.name);
	rc = ext_plugin.get_device_mr(c->inner, mhandle, dptr_mhandle);
	return rc ? fl_fail(rc, "ext: %s getDeviceMr failed (error %d) on ext connection %u",
			    ext_plugin.name, rc, c->id) : FL_OK;
}

int ext_irecv_consumed(void *recv_comm, int n, void *request)
{
	struct ext_comm *c = recv_comm;
	struct ext_req *r = request;
	int rc;

	if (!ext_plugin.irecv_consumed)
		return fl_fail(FL_ERR_INTERNAL, "ext: %s has no irecvConsumed", ext_plugin.name);
	rc = ext_plugin.irecv_consumed(c->inner, n, r->inner);
	ext_req_release(c, r);
	return rc ? fl_fail(rc, "ext: %s irecvConsumed failed (error %d) on ext connection %u",
			    ext_plugin.name, rc, c->id) : FL_OK;
}
