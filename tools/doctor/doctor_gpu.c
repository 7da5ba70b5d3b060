/*
 * The doctor's GPU checks: GPUDirect RDMA readiness (a peer memory client, or
 * dma-buf) and where GPUs sit on the PCI tree relative to the NICs, read from
 * sysfs the way `nvidia-smi topo -m` classifies it.
 */
#include <dirent.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "plugin/transport/ib/gdr_detect.h"
#include "plugin/base/sysfs_read.h"
#include "doctor.h"

#define MAX_PCI 64
#define MAX_DEPTH 16

/* A PCI function: its name and the chain from the host bridge down ("pci0000:00", bdfs...). */
struct pci_fn {
	char name[FL_PORT_NAME_LEN]; /* "0000:04:00.0" for a GPU, "mlx5_0" for a NIC */
	char bdf[16];
	int numa;
	int depth;
	char chain[MAX_DEPTH][16];
};

enum placement { SAME_SWITCH_PIX, SAME_SWITCH_PXB, SAME_HOST_BRIDGE, SAME_NUMA, CROSS_NUMA };

static const char *const placement_names[] = { "PIX", "PXB", "PHB", "NODE", "SYS" };

static bool exists(const char *root, const char *rel)
{
	char path[PATH_MAX + 64];

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	return !access(path, F_OK);
}

/* The chain of a device's real path, from the "pciDDDD:BB" host bridge down. */
static int fill_chain(const char *real, struct pci_fn *fn)
{
	char copy[PATH_MAX], *save = NULL;
	bool in = false;

	snprintf(copy, sizeof(copy), "%s", real);
	fn->depth = 0;
	for (char *c = strtok_r(copy, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
		in |= !strncmp(c, "pci", 3) && strchr(c, ':');
		if (in && fn->depth < MAX_DEPTH && strlen(c) < sizeof(fn->chain[0]))
			snprintf(fn->chain[fn->depth++], sizeof(fn->chain[0]), "%s", c);
	}
	if (fn->depth < 2)
		return -1;
	snprintf(fn->bdf, sizeof(fn->bdf), "%s", fn->chain[fn->depth - 1]);
	return 0;
}

static int load_fn(const char *real, const char *name, struct pci_fn *fn)
{
	char buf[32];

	memset(fn, 0, sizeof(*fn));
	if (fill_chain(real, fn))
		return -1;
	snprintf(fn->name, sizeof(fn->name), "%s", name ? name : fn->bdf);
	fn->numa = fl_read_first_line(buf, sizeof(buf), "%s/numa_node", real) ? -1 : atoi(buf);
	return 0;
}

static bool is_nvidia_gpu(const char *dir)
{
	char vendor[16], cls[16];

	if (fl_read_first_line(vendor, sizeof(vendor), "%s/vendor", dir) ||
	    strcmp(vendor, "0x10de"))
		return false;
	return !fl_read_first_line(cls, sizeof(cls), "%s/class", dir) &&
	       (!strncmp(cls, "0x0300", 6) || !strncmp(cls, "0x0302", 6));
}

static int cmp_fn(const void *a, const void *b)
{
	return strcmp(((const struct pci_fn *)a)->name, ((const struct pci_fn *)b)->name);
}

static int find_gpus(const char *root, struct pci_fn *gpus)
{
	char dir[PATH_MAX + 32], path[PATH_MAX + 300], *real;
	struct dirent *e;
	int n = 0;
	DIR *d;

	snprintf(dir, sizeof(dir), "%s/bus/pci/devices", root);
	d = opendir(dir);
	if (!d)
		return 0;
	while ((e = readdir(d)) && n < MAX_PCI) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		real = realpath(path, NULL);
		if (real && is_nvidia_gpu(real) && !load_fn(real, NULL, &gpus[n]))
			n++;
		free(real);
	}
	closedir(d);
	qsort(gpus, (size_t)n, sizeof(*gpus), cmp_fn);
	return n;
}

/* The RDMA devices' PCI functions; without any, the PCI network interfaces. */
static int find_nics(const struct doctor *d, struct pci_fn *nics)
{
	char dir[PATH_MAX + 32], path[PATH_MAX + 300], *real;
	struct dirent *e;
	int n = 0;
	DIR *dp;

	for (int i = 0; i < d->ports->n && n < MAX_PCI; i++) {
		const struct fl_port *p = &d->ports->p[i];

		if (p->pci_path[0] && (i == 0 || strcmp(p->dev, d->ports->p[i - 1].dev)))
			n += !load_fn(p->pci_path, p->dev, &nics[n]);
	}
	if (n)
		return n;
	snprintf(dir, sizeof(dir), "%s/class/net", d->root);
	dp = opendir(dir);
	while (dp && (e = readdir(dp)) && n < MAX_PCI) {
		snprintf(path, sizeof(path), "%s/%s/device", dir, e->d_name);
		real = e->d_name[0] != '.' ? realpath(path, NULL) : NULL;
		if (real && strlen(e->d_name) < FL_PORT_NAME_LEN)
			n += !load_fn(real, e->d_name, &nics[n]);
		free(real);
	}
	if (dp)
		closedir(dp);
	return n;
}

/* How far apart two functions are, as nvidia-smi topo names it; *via: the common bridge. */
static enum placement place(const struct pci_fn *a, const struct pci_fn *b, const char **via)
{
	int common = 0;

	while (common < a->depth - 1 && common < b->depth - 1 &&
	       !strcmp(a->chain[common], b->chain[common]))
		common++;
	*via = common ? a->chain[common - 1] : "";
	if (common >= 2)
		return common == a->depth - 1 && common == b->depth - 1 ? SAME_SWITCH_PIX
									: SAME_SWITCH_PXB;
	if (common == 1)
		return SAME_HOST_BRIDGE;
	return a->numa >= 0 && a->numa == b->numa ? SAME_NUMA : CROSS_NUMA;
}

static const char *distance_words(enum placement p)
{
	switch (p) {
	case SAME_HOST_BRIDGE: return "only behind the same CPU host bridge";
	case SAME_NUMA: return "on another host bridge of the same NUMA node";
	case CROSS_NUMA: return "on another CPU socket";
	default: return "under the same PCIe switch";
	}
}

static void gpu_placement(struct doctor *d, const struct pci_fn *gpu, const struct pci_fn *nics,
			  int nnics)
{
	const char *via = "", *best_via = "";
	enum placement best = CROSS_NUMA;
	int pick = 0;

	for (int i = 0; i < nnics; i++) {
		enum placement p = place(gpu, &nics[i], &via);

		if (i == 0 || p < best) {
			best = p;
			pick = i;
			best_via = via;
		}
	}
	if (best <= SAME_SWITCH_PXB)
		doctor_add(d, DOCTOR_PASS, "placement", gpu->bdf, "nvidia-smi topo -m",
			   "GPU and %s (%s) under the same PCIe switch (%s, below %s)",
			   nics[pick].name, nics[pick].bdf, placement_names[best], best_via);
	else
		doctor_add(d, DOCTOR_WARN, "placement", gpu->bdf, "nvidia-smi topo -m",
			   "the nearest NIC, %s (%s), is %s (%s): GPUDirect RDMA is slow or off "
			   "there (NCCL_NET_GDR_LEVEL defaults to PXB)",
			   nics[pick].name, nics[pick].bdf, distance_words(best),
			   placement_names[best]);
}

void doctor_check_placement(struct doctor *d)
{
	struct pci_fn *gpus = calloc(2 * MAX_PCI, sizeof(*gpus)), *nics = gpus + MAX_PCI;
	int ngpus, nnics;

	if (!gpus)
		return;
	ngpus = find_gpus(d->root, gpus);
	nnics = find_nics(d, nics);
	if (!ngpus)
		doctor_add(d, DOCTOR_INFO, "placement", "", "nvidia-smi topo -m",
			   "no NVIDIA GPU (vendor 0x10de, class 0x0300/0x0302) under "
			   "%s/bus/pci/devices: GPU placement does not apply",
			   d->root);
	else if (!nnics)
		doctor_add(d, DOCTOR_INFO, "placement", "", "nvidia-smi topo -m",
			   "%d GPU%s but no PCI network device to place them against", ngpus,
			   ngpus == 1 ? "" : "s");
	for (int i = 0; nnics && i < ngpus; i++)
		gpu_placement(d, &gpus[i], nics, nnics);
	free(gpus);
}

static const char *peer_client(const char *root)
{
	const char *name = gdr_peermem_client(root);

	if (name)
		return name;
	if (exists(root, "module/nvidia_peermem"))
		return "nvidia_peermem";
	return exists(root, "module/nv_peer_mem") ? "nv_peer_mem" : NULL;
}

static bool kernel_has_dmabuf_mr(char *release, size_t len)
{
	struct utsname u;
	int major = 0, minor = 0;

	if (uname(&u)) {
		snprintf(release, len, "unknown");
		return false;
	}
	snprintf(release, len, "%s", u.release);
	sscanf(u.release, "%d.%d", &major, &minor);
	return major > 5 || (major == 5 && minor >= 12);
}

/* 1 open kernel module, 0 proprietary, -1 no nvidia module. */
static int nvidia_open_module(const char *root)
{
	char taint[16];

	if (!exists(root, "module/nvidia"))
		return -1;
	fl_read_first_line(taint, sizeof(taint), "%s/module/nvidia/taint", root);
	return strchr(taint, 'P') ? 0 : 1;
}

/* 1 ready, 0 not; *why says which part is missing. */
static int dmabuf_check(struct doctor *d, int gpus)
{
	const char *cmd =
		"uname -r; modinfo nvidia | grep -i license; cat /sys/module/nvidia/taint";
	char release[128];
	bool kernel_ok = kernel_has_dmabuf_mr(release, sizeof(release));
	int open = nvidia_open_module(d->root);

	if (open < 0) {
		doctor_add(d, gpus ? DOCTOR_WARN : DOCTOR_INFO, "gpudirect", "dma-buf", cmd,
			   "the nvidia kernel module is not loaded%s",
			   gpus ? "" : ": dma-buf of GPU memory does not apply");
		return 0;
	}
	if (!kernel_ok)
		doctor_add(d, DOCTOR_WARN, "gpudirect", "dma-buf", cmd,
			   "kernel %s: registering dma-bufs with a NIC needs 5.12 or later",
			   release);
	else if (!open)
		doctor_add(d, DOCTOR_WARN, "gpudirect", "dma-buf", cmd,
			   "NVIDIA's proprietary kernel module (taint P): exporting GPU memory as "
			   "dma-buf needs the open kernel modules");
	else if (d->dmabuf_probed && !d->dmabuf_probe)
		doctor_add(d, DOCTOR_WARN, "gpudirect", "dma-buf", cmd,
			   "libibverbs or its provider refused the dma-buf registration probe");
	else
		doctor_add(d, DOCTOR_PASS, "gpudirect", "dma-buf", cmd,
			   "kernel %s, NVIDIA open kernel module%s", release,
			   d->dmabuf_probed ? ", verbs accepts dma-buf registration"
					    : " (verbs not probed)");
	return kernel_ok && open == 1 && !(d->dmabuf_probed && !d->dmabuf_probe);
}

void doctor_check_gpudirect(struct doctor *d)
{
	const char *cmd =
		"lsmod | grep -E 'nvidia_peermem|nv_peer_mem'; sudo modprobe nvidia_peermem";
	struct pci_fn *gpus = calloc(MAX_PCI, sizeof(*gpus));
	int ngpus = gpus ? find_gpus(d->root, gpus) : 0;
	const char *client = peer_client(d->root);
	int dmabuf;

	free(gpus);
	dmabuf = dmabuf_check(d, ngpus);
	if (client)
		doctor_add(d, DOCTOR_PASS, "gpudirect", "peermem", cmd,
			   "peer memory client %s loaded: NICs can read and write GPU memory",
			   client);
	else if (!ngpus || !d->ports->n)
		doctor_add(d, DOCTOR_INFO, "gpudirect", "peermem", cmd,
			   "no peer memory module; GPUDirect RDMA does not apply (%s)",
			   !ngpus ? "no NVIDIA GPU" : "no RDMA device");
	else if (dmabuf)
		doctor_add(
			d, DOCTOR_WARN, "gpudirect", "peermem", cmd,
			"no peer memory module (nvidia_peermem): GPUDirect RDMA relies on dma-buf "
			"alone (NCCL_DMABUF_ENABLE)");
	else
		doctor_add(d, DOCTOR_FAIL, "gpudirect", "peermem", cmd,
			   "no peer memory module and no dma-buf: every GPU transfer is staged "
			   "through host memory");
}
