/* The wrapped plugin and its devices in words (ext_describe.h). */
#include "ext_describe.h"

#include <stdio.h>
#include <string.h>

#include "abi/nccl_abi.h"

static const char *device_type(int type)
{
	switch (type) {
	case FL_ABI_DEVICE_HOST: return "host";
	case FL_ABI_DEVICE_UNPACK: return "GPU unpack";
	default: return "GPU offload";
	}
}

void ext_describe_plugin(const struct fl_host_net *in, char *out, size_t len)
{
	int any = in->reg_mr_dmabuf || in->make_vdevice || in->get_device_mr ||
		  in->irecv_consumed || in->set_net_attr;

	snprintf(out, len, "%s (ncclNetPlugin_v%d) from %s; optional entries:%s%s%s%s%s%s",
		 in->name ? in->name : "?", in->version, in->path, in->reg_mr_dmabuf ?
		 " regMrDmaBuf" : "", in->make_vdevice ? " makeVDevice" : "",
		 in->get_device_mr ? " getDeviceMr" : "", in->irecv_consumed ? " irecvConsumed" :
		 "", in->set_net_attr ? " setNetAttr" : "", any ? "" : " none");
}

static void ptr_support(int bits, char *out, size_t len)
{
	snprintf(out, len, "0x%x (%s%s%s)", bits, bits & FL_PTR_HOST ? "host" : "",
		 bits & FL_PTR_CUDA ? (bits & FL_PTR_HOST ? ",cuda" : "cuda") : "",
		 bits & FL_PTR_DMABUF ? (bits & (FL_PTR_HOST | FL_PTR_CUDA) ? ",dmabuf" : "dmabuf")
				      : "");
}

void ext_describe_props(const struct fl_props *p, char *out, size_t len)
{
	char ptr[48], vdevs[64] = "";
	size_t used = 0;

	ptr_support(p->ptr_support, ptr, sizeof(ptr));
	for (int i = 0; i < p->vdev_count && used < sizeof(vdevs); i++)
		used += (size_t)snprintf(vdevs + used, sizeof(vdevs) - used, "%s%d", i ? "," : "",
					 p->vdevs[i]);
	snprintf(out, len, "%s: %d Mbps, ptrSupport %s, pciPath %s, guid 0x%llx, port %d, "
		 "latency %.1f us, maxComms %d, maxRecvs %d, regIsGlobal %d, forceFlush %d, "
		 "device type %s (%d, version %d), vdevs [%s], maxP2pBytes %zu, maxCollBytes %zu, "
		 "maxMultiRequestSize %d, railId %d, planeId %d", p->name ? p->name : "?",
		 p->speed_mbps, ptr, p->pci_path ? p->pci_path : "(none)",
		 (unsigned long long)p->guid, p->port, (double)p->latency_us, p->max_comms,
		 p->max_recvs, p->reg_is_global, p->force_flush, device_type(p->net_device_type),
		 p->net_device_type, p->net_device_version, vdevs, p->max_p2p_bytes,
		 p->max_coll_bytes, p->max_multi_request_size, p->rail_id, p->plane_id);
}
