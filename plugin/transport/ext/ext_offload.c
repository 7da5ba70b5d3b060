/*
 * The inner plugin's optional device-offload entries, forwarded unchanged when
 * it has them: makeVDevice (NIC fusion), getDeviceMr (a GPU-side handle of a
 * registration), irecvConsumed (the GPU has consumed a receive); the device
 * handles of connect/accept are NCCL's own pointer (ext_conn.c). When the
 * inner lacks one, offload() leaves it out and fabriclab's tables keep the slot
 * NULL, so NCCL sees exactly what it would see without fabriclab.
 */
#include "base/error.h"
#include "base/log.h"
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

static int one_vdevice(int *dev, int ndevs, const int *devs)
{
	int rc = ext_inner_make_vdevice(&ext_plugin, dev, ndevs, devs);

	return rc ? fl_fail(rc, "ext: %s makeVDevice of %d device(s) failed (error %d)",
			    ext_plugin.name, ndevs, rc) : FL_OK;
}

/*
 * NIC fusion wider than the inner takes. NCCL's automatic merge hands one
 * makeVDevice up to maxDevsPerNic devices, in index order, stopping at that
 * many (2.30.7 src/graph/topo.cc:1395-1413): 8 for a v12 plugin, 4 for v9-v11
 * (:1852, :1870). fabriclab exports v12, so NCCL may ask 8 of an inner whose
 * vProps hold 4 (v9-v11), where unwrapped it would have asked 4 at a time; a
 * refusal would make NCCL give up fusing the first device of the group and
 * start over (:1421-1437), leaving NICs unfused that NCCL fuses unwrapped.
 * So a wide request is made as NCCL would have made it of the inner: groups
 * of the inner's width in NCCL's order, a vNIC each, a group of one left
 * physical as NCCL leaves it (:1289-1293). NCCL counts every vNIC made
 * (devices() after the merge, :1722-1723) and reads each one's devices from
 * its properties (:1683-1703): it gets the vNICs it would have had unwrapped
 * (where the NICs it grouped were all near each other, as NICs fused by
 * distance to the first are); the index handed back is the first, which NCCL
 * only logs (:1307). A forced merge (NCCL_NET_FORCE_MERGE) wider than the
 * inner, which NCCL refuses unwrapped (:1346-1350), is split the same way.
 */
int ext_make_vdevice(int *dev, int ndevs, const int *devs)
{
	int width = ext_plugin.version >= 12 ? FL_ABI_VDEVS_V12 : FL_ABI_VDEVS_V9;
	int first = -1, rc = FL_OK;

	if (ndevs <= width)
		return one_vdevice(dev, ndevs, devs);
	FL_INFO("ext: NCCL fuses %d devices in one; %s (net ABI v%d) takes %d: made as NCCL would "
		"make them of it, %d at a time", ndevs, ext_plugin.name, ext_plugin.version, width,
		width);
	for (int at = 0; at < ndevs && !rc; at += width) {
		int n = ndevs - at < width ? ndevs - at : width, made = -1;

		if (n == 1)
			continue;
		rc = one_vdevice(&made, n, devs + at);
		if (!rc && first < 0)
			first = made;
	}
	if (!rc)
		*dev = first;
	return rc;
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
	int rc;

	if (!ext_plugin.irecv_consumed)
		return fl_fail(FL_ERR_INTERNAL, "ext: %s has no irecvConsumed", ext_plugin.name);
	rc = ext_plugin.irecv_consumed(c->inner, n, request);
	return rc ? fl_fail(rc, "ext: %s irecvConsumed failed (error %d) on ext connection %u",
			    ext_plugin.name, rc, c->id) : FL_OK;
}
