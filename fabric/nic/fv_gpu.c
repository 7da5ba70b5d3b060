/*
 * GPU memory behind the NIC. Over PCIe a NIC's writes into GPU memory are
 * posted: they become visible to the GPU only once a later read by the NIC
 * (NCCL's flush: an RDMA read of the buffer on a loopback QP) has pushed them
 * through. The fake CUDA runtime, when this process has it loaded, keeps that
 * state; here we only tell it of each write and read the NIC serves locally.
 * Without the fake CUDA nothing happens.
 */
#include <dlfcn.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>

#include "fv_internal.h"

#define MAX_OBJECTS 512

typedef void (*fv_gpu_hook)(const void *addr, unsigned long long ino, size_t off, size_t len);

struct fv_gpu_hooks {
	fv_gpu_hook wrote, read;
};

struct object_names {
	char *name[MAX_OBJECTS];
	int n;
};

static pthread_mutex_t hooks_lock = PTHREAD_MUTEX_INITIALIZER;
static struct fv_gpu_hooks found;
static _Atomic bool have_hooks;
static unsigned long long looked_at_adds = ~0ULL;

static int count_loads(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	*(unsigned long long *)arg = info->dlpi_adds;
	return 1; /* the same count for every object */
}

static int collect(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct object_names *names = arg;

	(void)size;
	if (info->dlpi_name && *info->dlpi_name && names->n < MAX_OBJECTS)
		names->name[names->n++] = strdup(info->dlpi_name);
	return 0;
}

/* The loader's lock is held inside dl_iterate_phdr, so the objects are opened after it. */
static void look_for_hooks(void)
{
	struct object_names names = { .n = 0 };

	dl_iterate_phdr(collect, &names);
	for (int i = 0; i < names.n; i++) {
		void *lib = names.name[i] ? dlopen(names.name[i], RTLD_NOW | RTLD_NOLOAD) : NULL;
		struct fv_gpu_hooks h = { 0 };

		if (lib && !atomic_load(&have_hooks)) {
			h.wrote = (fv_gpu_hook)(uintptr_t)dlsym(lib, "fakecudaNicWrote");
			h.read = (fv_gpu_hook)(uintptr_t)dlsym(lib, "fakecudaNicRead");
		}
		if (h.wrote && h.read) {
			found = h; /* lib stays open: the hooks outlive whoever loaded it */
			atomic_store(&have_hooks, true);
		} else if (lib) {
			dlclose(lib);
		}
		free(names.name[i]);
	}
}

/* Looked for again whenever an object was loaded since the last look. */
static const struct fv_gpu_hooks *hooks(void)
{
	unsigned long long adds = 0;

	if (atomic_load(&have_hooks))
		return &found;
	dl_iterate_phdr(count_loads, &adds);
	pthread_mutex_lock(&hooks_lock);
	if (!atomic_load(&have_hooks) && adds != looked_at_adds) {
		looked_at_adds = adds;
		look_for_hooks();
	}
	pthread_mutex_unlock(&hooks_lock);
	return atomic_load(&have_hooks) ? &found : NULL;
}

static void tell(fv_gpu_hook hook, const struct fv_mr *mr, uint64_t local, size_t len)
{
	if (mr->dmabuf_map)
		hook(NULL, mr->dmabuf_ino, mr->dmabuf_offset + (local - (uintptr_t)mr->mr.addr),
		     len);
	else
		hook((const void *)(uintptr_t)local, 0, 0, len);
}

void fv_gpu_wrote(const struct fv_mr *mr, uint64_t local, size_t len)
{
	const struct fv_gpu_hooks *h = len ? hooks() : NULL;

	if (h)
		tell(h->wrote, mr, local, len);
}

void fv_gpu_read(const struct fv_mr *mr, uint64_t local, size_t len)
{
	const struct fv_gpu_hooks *h = hooks();

	if (h)
		tell(h->read, mr, local, len);
}
