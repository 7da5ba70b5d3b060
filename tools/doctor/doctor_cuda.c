/*
 * The doctor's view through the CUDA runtime, loaded now if the node has it:
 * every GPU with its PCI bus id, whether the driver reports GPUDirect RDMA and
 * dma-buf for it, and whether the PCI tree in sysfs knows the same function
 * (the placement check measures its distance to the NICs from there).
 */
#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "doctor.h"
#include "shim/cuda_load.h"
#include "shim/shim_error.h"

#define CUDA_COMMAND "nvidia-smi -q | grep -i -e 'bus id' -e rdma"

static void lower(char *s)
{
	for (; *s; s++)
		*s = (char)tolower((unsigned char)*s);
}

/* dma-buf export is the driver API's; -1 when only the runtime is there. */
static int dmabuf_attr(const struct shim_cuda *cu, int dev)
{
	int v = 0;

	if (!cu->driver_attribute ||
	    cu->driver_attribute(&v, SHIM_CUDA_ATTR_DMABUF_SUPPORTED, dev))
		return -1;
	return v;
}

static void one_gpu(struct doctor *d, const struct shim_cuda *cu, int dev)
{
	char bus[64] = "", path[PATH_MAX + 96];
	int gdr = 0, dmabuf = dmabuf_attr(cu, dev);
	int in_sysfs;

	if (cu->pci_bus_id(bus, (int)sizeof(bus), dev))
		snprintf(bus, sizeof(bus), "GPU %d", dev);
	lower(bus);
	if (cu->attribute(&gdr, SHIM_CUDA_ATTR_GDR_SUPPORTED, dev))
		gdr = -1;
	snprintf(path, sizeof(path), "%s/bus/pci/devices/%s", d->root, bus);
	in_sysfs = !access(path, F_OK);
	doctor_add(d, gdr > 0 ? DOCTOR_PASS : DOCTOR_WARN, "cuda", bus, CUDA_COMMAND,
		   "GPU %d: the driver reports GPUDirect RDMA %s, dma-buf %s%s", dev,
		   gdr > 0 ? "supported" : gdr == 0 ? "NOT supported (NCCL stages through host "
		   "memory)" : "unknown", dmabuf > 0 ? "supported" : dmabuf == 0 ? "not supported"
		   : "unknown (no driver API)", in_sysfs ? "" : "; not found under "
		   "bus/pci/devices, so its distance to the NICs is not known");
}

void doctor_check_cuda(struct doctor *d)
{
	struct shim_cuda cu;
	int count = 0, err;

	if (shim_cuda_load(&cu)) {
		doctor_add(d, DOCTOR_INFO, "cuda", "", "nvidia-smi",
			   "%s: GPUs and their GPUDirect attributes not read from the driver",
			   shim_error_text());
		return;
	}
	err = cu.get_device_count(&count);
	if (err || count < 1)
		doctor_add(d, DOCTOR_INFO, "cuda", "", "nvidia-smi",
			   "the CUDA runtime sees no GPU (%s)", shim_cuda_error(&cu, err));
	for (int i = 0; !err && i < count; i++)
		one_gpu(d, &cu, i);
	shim_cuda_unload(&cu);
}
