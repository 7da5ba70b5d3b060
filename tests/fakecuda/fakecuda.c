/*
 * A fake CUDA runtime and driver for the tests (never part of the plugin or
 * the tools): the calls the shim and the doctor make, with "device memory"
 * that the host cannot touch except through cudaMemcpy when
 * FABRICLAB_FAKECUDA_PROTECT=1 (pages kept PROT_NONE otherwise), so a test
 * fails with a crash if GPU memory is ever read or written directly.
 *
 * FABRICLAB_FAKECUDA_DEVICES  GPUs visible (1)
 * FABRICLAB_FAKECUDA_PCI      their PCI bus ids, comma separated (0000:3b:00.0, 0000:5e:00.0, ..)
 * FABRICLAB_FAKECUDA_GDR      cudaDevAttrGPUDirectRDMASupported (1)
 * FABRICLAB_FAKECUDA_DMABUF   CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED (1)
 * FABRICLAB_FAKECUDA_LIMIT    bytes cudaMalloc may hand out in all (unlimited)
 * FABRICLAB_FAKECUDA_PROTECT  1: device memory unreadable outside cudaMemcpy
 */

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fakecuda.h"

#define API __attribute__((visibility("default")))
#define MAX_ALLOCS 4096
#define PCI_LEN 32

enum { OK = 0, INVALID_VALUE = 1, NO_MEMORY = 2, INVALID_DEVICE = 101, NO_DEVICE = 100 };
enum { H2H = 0, H2D = 1, D2H = 2, D2D = 3, DEFAULT = 4 };

struct alloc {
	char *base;
	size_t size;
	int fd;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct alloc allocs[MAX_ALLOCS];
static size_t in_use;
static __thread int current;

static long env_long(const char *name, long def)
{
	const char *v = getenv(name);

	return v && *v ? strtol(v, NULL, 0) : def;
}

static int devices(void)
{
	return (int)env_long("FABRICLAB_FAKECUDA_DEVICES", 1);
}

static int protecting(void)
{
	return env_long("FABRICLAB_FAKECUDA_PROTECT", 0) != 0;
}

static struct alloc *find(const void *p, size_t len)
{
	for (int i = 0; i < MAX_ALLOCS; i++) {
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

/* Backed by a memfd so a dma-buf export can hand out the same pages. */
static int map_new(struct alloc *a, size_t size)
{
	a->fd = memfd_create("fakecuda", MFD_CLOEXEC);
	if (a->fd < 0 || ftruncate(a->fd, (off_t)size))
		return -1;
	a->base = mmap(NULL, size, protecting() ? PROT_NONE : PROT_READ | PROT_WRITE,
		       MAP_SHARED, a->fd, 0);
	if (a->base == MAP_FAILED) {
		a->base = NULL;
		return -1;
	}
	a->size = size;
	return 0;
}

API int cudaMalloc(void **ptr, size_t size)
{
	size_t bytes = round_page(size ? size : 1);
	long limit = env_long("FABRICLAB_FAKECUDA_LIMIT", -1);
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
		*ptr = allocs[i].base;
		rc = OK;
	}
	pthread_mutex_unlock(&lock);
	return rc;
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
		munmap(a->base, a->size);
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

/* The direction must match where the pointers are, as on a real device without UVA tricks. */
API int cudaMemcpy(void *dst, const void *src, size_t size, int kind)
{
	struct alloc *d, *s;

	pthread_mutex_lock(&lock);
	d = find(dst, size);
	s = find(src, size);
	if ((kind == H2D && (!d || s)) || (kind == D2H && (!s || d)) ||
	    (kind == D2D && (!s || !d)) || (kind == H2H && (s || d)) || kind > DEFAULT) {
		pthread_mutex_unlock(&lock);
		return INVALID_VALUE;
	}
	open_for_copy(d, PROT_READ | PROT_WRITE);
	open_for_copy(s, PROT_READ | PROT_WRITE);
	memmove(dst, src, size);
	open_for_copy(d, PROT_NONE);
	open_for_copy(s, PROT_NONE);
	pthread_mutex_unlock(&lock);
	return OK;
}

static void pci_of(int dev, char *out, size_t len)
{
	const char *list = getenv("FABRICLAB_FAKECUDA_PCI");
	int i = 0;

	snprintf(out, len, "0000:%02x:00.0", (0x3b + 0x23 * dev) & 0xff);
	for (const char *p = list; p && *p; i++) {
		const char *comma = strchr(p, ',');
		size_t n = comma ? (size_t)(comma - p) : strlen(p);

		if (i == dev) {
			snprintf(out, len, "%.*s", (int)n, p);
			return;
		}
		p = comma ? comma + 1 : p + n;
	}
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
	if (attr == 116)
		*value = (int)env_long("FABRICLAB_FAKECUDA_GDR", 1);
	else if (attr == 124)
		*value = (int)env_long("FABRICLAB_FAKECUDA_DMABUF", 1);
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
	if (type != 1 || !env_long("FABRICLAB_FAKECUDA_DMABUF", 1))
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
