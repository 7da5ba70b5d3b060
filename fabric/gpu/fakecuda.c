/*
 * A fake CUDA runtime and driver for the tests and the lab (never part of the
 * plugin or the tools): the calls the shim and the doctor make, with "device
 * memory" that the host cannot touch except through cudaMemcpy where the GPU
 * protects it (pages kept PROT_NONE otherwise), so a test fails with a crash
 * if GPU memory is ever read or written directly.
 *
 * What the GPUs are comes from the fabric's description (FABRICLAB_FABRIC,
 * fabric/README.md: its "gpus", a node's own "gpus" over them), for the node
 * this process is (FABRICLAB_FABRIC_NODE, else FABRICLAB_NODE_NAME, as the
 * emulated NIC picks it); without one, one GPU of compute capability 8.0 with
 * GPUDirect RDMA and dma-buf. These variables override it, per process:
 *
 * FABRICLAB_FAKECUDA_DEVICES    GPUs visible                            gpus.count
 * FABRICLAB_FAKECUDA_PCI        their PCI bus ids, comma separated      gpus.pci
 *                               (made up past the list: 0000:3b:00.0, 0000:5e:00.0, ..)
 * FABRICLAB_FAKECUDA_GDR        cudaDevAttrGPUDirectRDMASupported       gpus.gdr
 * FABRICLAB_FAKECUDA_DMABUF     CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED   gpus.dmabuf
 * FABRICLAB_FAKECUDA_LIMIT      bytes cudaMalloc may hand out in all    gpus.memory_bytes
 *                               (-1 unlimited)
 * FABRICLAB_FAKECUDA_PROTECT    1: device memory unreadable outside     gpus.protect
 *                               cudaMemcpy
 * FABRICLAB_FAKECUDA_CC         compute capability, "8.0" or "9.0" ..   gpus.compute_capability
 * FABRICLAB_FAKECUDA_COPY_RATE  the copy engine's bytes/s (0 unpaced)   gpus.copy_bytes_per_s
 *
 * The copy engine: a cudaMemcpy between host and device memory of N bytes
 * returns no sooner than N / copy_bytes_per_s after it was called, and such
 * copies queue behind one another, one engine each way, as over PCIe; a copy
 * within device memory is not paced. That is the emulated hardware's physics,
 * so that a job staging through host memory without GPUDirect pays what it
 * pays on a node; what calls cudaMemcpy needs no pacing of its own.
 *
 * What a NIC writes into device memory reaches the GPU only when flushed, as
 * over PCIe: the fake verbs tell us of each NIC write into our memory
 * (fakecudaNicWrote), and those bytes stay invisible to cudaMemcpy until a
 * NIC read of device memory (fakecudaNicRead: the RDMA read NCCL's iflush
 * posts) pushes them through. So each allocation has two faces: the pages at
 * its address, which the NIC and the host-side mappings see, and the GPU's
 * own copy, which cudaMemcpy reads. A receive that skips the flush reads what
 * the GPU had before. From compute capability 9.0 on, NIC writes reach the GPU
 * in order with no flush, which is why NCCL stops flushing there (2.30.7
 * src/graph/paths.cc:585-587: "Flush is required on Ampere and earlier").
 */

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fakecuda.h"
#include "fc_internal.h"

#define API __attribute__((visibility("default")))
#define MAX_ALLOCS 4096
#define PCI_LEN 32
/* NIC writes waiting for a flush; more than this and the next flush pushes everything */
#define MAX_PENDING 1024

enum { OK = 0, INVALID_VALUE = 1, NO_MEMORY = 2, INVALID_DEVICE = 101, NO_DEVICE = 100 };
enum { H2H = 0, H2D = 1, D2H = 2, D2D = 3, DEFAULT = 4 };

struct alloc {
	char *base;  /* what the NIC and host-side mappings see */
	char *gpu;   /* what the GPU sees: cudaMemcpy reads here */
	size_t size;
	int fd;
	ino_t ino;   /* of the memfd, to know a dma-buf mapping of it */
};

/* A NIC write not yet flushed to the GPU: [off, off+len) of allocs[slot]. */
struct pending {
	int slot;
	size_t off, len;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct alloc allocs[MAX_ALLOCS];
static int slots_used; /* allocs[slots_used..] are all free */
static size_t in_use;
static struct pending pending[MAX_PENDING];
static int npending;
static int pending_overflow;
static __thread int current;

/* The compute capability as major * 10 + minor */
static int compute_capability(void)
{
	return fc_gpus()->cc;
}

static int devices(void)
{
	return fc_gpus()->count;
}

static int protecting(void)
{
	return fc_gpus()->protect;
}

static struct alloc *find(const void *p, size_t len)
{
	for (int i = 0; i < slots_used; i++) {
		struct alloc *a = &allocs[i];

		if (a->base && (const char *)p >= a->base &&
		    (const char *)p + len <= a->base + a->size)
			return a;
	}
	return NULL;
}

API int cudaGetDeviceCount(int *count)
{
	*count = devices();
	return *count > 0 ? OK : NO_DEVICE;
}

API int cudaSetDevice(int dev)
{
	if (dev < 0 || dev >= devices())
		return INVALID_DEVICE;
	current = dev;
	return OK;
}

static size_t round_page(size_t n)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	return (n + page - 1) / page * page;
}

/*
 * Backed by a memfd so a dma-buf export can hand out the same pages. Faulted in
 * at once, as cudaMalloc's memory is ready: page faults of the first copies
 * otherwise ran beside the emulated fabric's first messages (lab --like xdr -n 8:
 * 161-173 late messages in the first 0.5 s, 62-88 populated).
 */
static int map_new(struct alloc *a, size_t size)
{
	struct stat st;

	a->fd = memfd_create("fakecuda", MFD_CLOEXEC);
	if (a->fd < 0 || ftruncate(a->fd, (off_t)size) || fstat(a->fd, &st))
		return -1;
	a->gpu = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE,
		      -1, 0);
	if (a->gpu == MAP_FAILED) {
		a->gpu = NULL;
		return -1;
	}
	a->base = mmap(NULL, size, protecting() ? PROT_NONE : PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_POPULATE, a->fd, 0);
	if (a->base == MAP_FAILED) {
		a->base = NULL;
		munmap(a->gpu, size);
		return -1;
	}
	a->size = size;
	a->ino = st.st_ino;
	return 0;
}

API int cudaMalloc(void **ptr, size_t size)
{
	size_t bytes = round_page(size ? size : 1);
	long long limit = fc_memory_limit();
	int rc = NO_MEMORY;

	*ptr = NULL;
	if (devices() < 1)
		return NO_DEVICE;
	pthread_mutex_lock(&lock);
	for (int i = 0; i < MAX_ALLOCS && rc; i++) {
		if (allocs[i].base || (limit >= 0 && in_use + bytes > (size_t)limit))
			continue;
		if (map_new(&allocs[i], bytes)) {
			if (allocs[i].fd >= 0)
				close(allocs[i].fd);
			memset(&allocs[i], 0, sizeof(allocs[i]));
			break;
		}
		in_use += bytes;
		slots_used = i + 1 > slots_used ? i + 1 : slots_used;
		*ptr = allocs[i].base;
		rc = OK;
	}
	pthread_mutex_unlock(&lock);
	return rc;
}

static void forget_pending(int slot)
{
	int kept = 0;

	for (int i = 0; i < npending; i++)
		if (pending[i].slot != slot)
			pending[kept++] = pending[i];
	npending = kept;
}

API int cudaFree(void *ptr)
{
	struct alloc *a;
	int rc = INVALID_VALUE;

	if (!ptr)
		return OK;
	pthread_mutex_lock(&lock);
	a = find(ptr, 1);
	if (a && a->base == ptr) {
		forget_pending((int)(a - allocs));
		munmap(a->base, a->size);
		munmap(a->gpu, a->size);
		close(a->fd);
		in_use -= a->size;
		memset(a, 0, sizeof(*a));
		rc = OK;
	}
	pthread_mutex_unlock(&lock);
	return rc;
}

static void open_for_copy(struct alloc *a, int prot)
{
	if (a && protecting())
		mprotect(a->base, a->size, prot);
}

/* Where a copy reads: the GPU's copy of device memory, or the host pointer itself. */
static const char *read_at(const struct alloc *a, const void *p)
{
	return a ? a->gpu + ((const char *)p - a->base) : p;
}

/* The GPU's own writes are visible at once, to the GPU and to the NIC alike. */
static void write_at(struct alloc *a, void *p, const void *from, size_t size)
{
	if (!a) {
		memmove(p, from, size);
		return;
	}
	memmove(a->gpu + ((char *)p - a->base), from, size);
	open_for_copy(a, PROT_READ | PROT_WRITE);
	memcpy(p, a->gpu + ((char *)p - a->base), size);
	open_for_copy(a, PROT_NONE);
}

/* The direction must match where the pointers are, as on a real device without UVA tricks. */
API int cudaMemcpy(void *dst, const void *src, size_t size, int kind)
{
	uint64_t called = fc_now_ns(), done = 0;
	struct alloc *d, *s;

	pthread_mutex_lock(&lock);
	d = find(dst, size);
	s = find(src, size);
	if ((kind == H2D && (!d || s)) || (kind == D2H && (!s || d)) ||
	    (kind == D2D && (!s || !d)) || (kind == H2H && (s || d)) || kind > DEFAULT) {
		pthread_mutex_unlock(&lock);
		return INVALID_VALUE;
	}
	write_at(d, dst, read_at(s, src), size);
	pthread_mutex_unlock(&lock);
	if ((d != NULL) != (s != NULL)) /* between host and device: the copy engine's */
		done = fc_engine_take(s != NULL, size, called);
	fc_hold_until(done); /* outside the lock: the NIC's hooks must not wait on it */
	return OK;
}

/*
 * The GPU's reduction kernel, which no CUDA call offers (NCCL's reduction is a kernel of its
 * own): dst = mine + theirs over n floats of device memory, as the GPU sees them, no copy
 * engine involved. The shim runs it where the runtime has it (shim/cuda_load.c); on a real
 * runtime it moves the floats through the host instead.
 */
API int fakecudaKernelSum(float *dst, const float *mine, const float *theirs, size_t n)
{
	size_t bytes = n * sizeof(float);
	struct alloc *d, *m, *t;
	int rc = INVALID_VALUE;

	pthread_mutex_lock(&lock);
	d = find(dst, bytes);
	m = find(mine, bytes);
	t = find(theirs, bytes);
	if (d && m && t) {
		float *out = (float *)(d->gpu + ((char *)dst - d->base));
		const float *a = (const float *)read_at(m, mine);
		const float *b = (const float *)read_at(t, theirs);

		for (size_t i = 0; i < n; i++)
			out[i] = a[i] + b[i];
		open_for_copy(d, PROT_READ | PROT_WRITE);
		memcpy(dst, out, bytes);
		open_for_copy(d, PROT_NONE);
		rc = OK;
	}
	pthread_mutex_unlock(&lock);
	return rc;
}

/* The allocation a NIC access lands in: by address, or by the memfd behind a dma-buf mapping. */
static struct alloc *nic_target(const void *addr, unsigned long long ino, size_t off, size_t len,
				size_t *at)
{
	struct alloc *a = NULL;

	for (int i = 0; ino && !a && i < slots_used; i++)
		if (allocs[i].base && allocs[i].ino == ino && off <= allocs[i].size &&
		    len <= allocs[i].size - off)
			a = &allocs[i];
	if (!ino && (a = find(addr, len ? len : 1)))
		off = (size_t)((const char *)addr - a->base);
	*at = off;
	return a;
}

static void push_to_gpu(struct alloc *a, size_t off, size_t len)
{
	open_for_copy(a, PROT_READ);
	memcpy(a->gpu + off, a->base + off, len);
	open_for_copy(a, PROT_NONE);
}

/*
 * The fake NIC wrote [addr, addr+len) (ino 0), or [off, off+len) of the memfd
 * with inode ino through a dma-buf mapping. Not for the GPU's eyes yet.
 */
API void fakecudaNicWrote(const void *addr, unsigned long long ino, size_t off, size_t len)
{
	struct alloc *a;
	size_t at = 0;

	if (!len)
		return;
	pthread_mutex_lock(&lock);
	a = nic_target(addr, ino, off, len, &at);
	if (a && compute_capability() >= 90) {
		push_to_gpu(a, at, len);
	} else if (a && npending == MAX_PENDING) {
		pending_overflow = 1;
	} else if (a) {
		struct pending *last = npending ? &pending[npending - 1] : NULL;

		if (last && last->slot == (int)(a - allocs) && last->off + last->len == at)
			last->len += len;
		else
			pending[npending++] = (struct pending){ (int)(a - allocs), at, len };
	}
	pthread_mutex_unlock(&lock);
}

/* A NIC read of device memory: every earlier NIC write reaches the GPU before it completes. */
API void fakecudaNicRead(const void *addr, unsigned long long ino, size_t off, size_t len)
{
	size_t at;

	pthread_mutex_lock(&lock);
	if (nic_target(addr, ino, off, len, &at)) {
		for (int i = 0; i < npending; i++)
			push_to_gpu(&allocs[pending[i].slot], pending[i].off, pending[i].len);
		for (int i = 0; pending_overflow && i < slots_used; i++)
			if (allocs[i].base)
				push_to_gpu(&allocs[i], 0, allocs[i].size);
		npending = 0;
		pending_overflow = 0;
	}
	pthread_mutex_unlock(&lock);
}

/* GPU dev's bus id: the description's or FABRICLAB_FAKECUDA_PCI's, else one made up from dev. */
static void pci_of(int dev, char *out, size_t len)
{
	const struct ft_gpus *g = fc_gpus();

	if (dev < g->npci)
		snprintf(out, len, "%s", g->pci[dev]);
	else
		snprintf(out, len, "0000:%02x:00.0", (0x3b + 0x23 * dev) & 0xff);
}

API int cudaDeviceGetPCIBusId(char *id, int len, int dev)
{
	char bus[PCI_LEN];

	if (dev < 0 || dev >= devices())
		return INVALID_DEVICE;
	pci_of(dev, bus, sizeof(bus));
	snprintf(id, (size_t)len, "%s", bus);
	return OK;
}

static int attribute(int *value, int attr, int dev)
{
	if (dev < 0 || dev >= devices())
		return INVALID_DEVICE;
	if (attr == 75 || attr == 76) /* cudaDevAttrComputeCapabilityMajor, Minor */
		*value = attr == 75 ? compute_capability() / 10 : compute_capability() % 10;
	else if (attr == 116)
		*value = fc_gpus()->gdr;
	else if (attr == 124)
		*value = fc_gpus()->dmabuf;
	else
		return INVALID_VALUE;
	return OK;
}

API int cudaDeviceGetAttribute(int *value, int attr, int dev)
{
	return attribute(value, attr, dev);
}

API const char *cudaGetErrorString(int err)
{
	switch (err) {
	case OK: return "no error";
	case INVALID_VALUE: return "invalid argument";
	case NO_MEMORY: return "out of memory";
	case NO_DEVICE: return "no CUDA-capable device is detected";
	case INVALID_DEVICE: return "invalid device ordinal";
	default: return "unknown error";
	}
}

API int cuInit(unsigned flags)
{
	(void)flags;
	return OK;
}

API int cuDeviceGetAttribute(int *value, int attr, int dev)
{
	return attribute(value, attr, dev);
}

/* A dma-buf fd of a whole allocation: the memfd behind it. */
API int cuMemGetHandleForAddressRange(void *handle, unsigned long long dptr, size_t size, int type,
				      unsigned long long flags)
{
	struct alloc *a;
	int fd = -1;

	(void)flags;
	if (type != 1 || !fc_gpus()->dmabuf)
		return INVALID_VALUE;
	pthread_mutex_lock(&lock);
	a = find((void *)(uintptr_t)dptr, size);
	if (a)
		fd = dup(a->fd);
	pthread_mutex_unlock(&lock);
	if (fd < 0)
		return INVALID_VALUE;
	*(int *)handle = fd;
	return OK;
}
