/* Protection domains and memory regions: the keys and access rights every transfer is checked
 * against. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fv_internal.h"

#undef ibv_reg_mr
#undef ibv_reg_mr_iova

#define MR_SLOTS 65536

static pthread_rwlock_t mr_lock = PTHREAD_RWLOCK_INITIALIZER;
static struct fv_mr *mr_table[MR_SLOTS];
static uint8_t mr_tag[MR_SLOTS];
static uint32_t mr_next;
static _Atomic uint32_t pd_handles;

struct ibv_pd *ibv_alloc_pd(struct ibv_context *context)
{
	struct fv_pd *pd = calloc(1, sizeof(*pd));

	if (!pd) {
		errno = ENOMEM;
		return NULL;
	}
	pd->pd.context = context;
	pd->pd.handle = atomic_fetch_add(&pd_handles, 1) + 1;
	return &pd->pd;
}

int ibv_dealloc_pd(struct ibv_pd *ibpd)
{
	struct fv_pd *pd = fv_pd_of(ibpd);

	if (atomic_load(&pd->users))
		return EBUSY;
	free(pd);
	return 0;
}

static unsigned int known_access(void)
{
	return IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
	       IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_MW_BIND | IBV_ACCESS_ZERO_BASED |
	       IBV_ACCESS_ON_DEMAND | IBV_ACCESS_HUGETLB | IBV_ACCESS_OPTIONAL_RANGE;
}

/* Registration pins pages, which fails on addresses with no mapping. */
static bool mapped(void *addr, size_t length)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t start = (uintptr_t)addr & ~(page - 1);
	uintptr_t end = ((uintptr_t)addr + length + page - 1) & ~(page - 1);

	/* MS_ASYNC has no effect on the pages; it fails with ENOMEM on unmapped ones */
	return msync((void *)start, end - start, MS_ASYNC) == 0;
}

static int table_insert(struct fv_mr *mr)
{
	int err = ENOMEM;

	pthread_rwlock_wrlock(&mr_lock);
	for (uint32_t n = 0; n < MR_SLOTS - 1; n++) {
		/* slot 0 stays unused so that key 0 is never valid */
		uint32_t i = 1 + (mr_next + n) % (MR_SLOTS - 1);

		if (mr_table[i])
			continue;
		mr_tag[i] = (uint8_t)(mr_tag[i] + 1);
		mr->mr.lkey = mr->mr.rkey = i << 8 | mr_tag[i];
		mr->mr.handle = i;
		mr_table[i] = mr;
		mr_next = i;
		err = 0;
		break;
	}
	pthread_rwlock_unlock(&mr_lock);
	return err;
}

static struct ibv_mr *reg(struct ibv_pd *pd, void *addr, size_t length, uint64_t iova,
			  unsigned int access, bool dmabuf_map)
{
	struct fv_mr *mr;
	int err;

	/* remote write and atomics need local write, as the verbs specification demands */
	if (!pd || (access & ~known_access()) || length == 0 ||
	    ((access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) &&
	     !(access & IBV_ACCESS_LOCAL_WRITE))) {
		errno = EINVAL;
		return NULL;
	}
	if ((access & IBV_ACCESS_ZERO_BASED) && iova != 0) {
		errno = EINVAL;
		return NULL;
	}
	if (!mapped(addr, length)) {
		errno = EFAULT;	/* pinning would fail */
		return NULL;
	}
	mr = calloc(1, sizeof(*mr));
	if (!mr) {
		errno = ENOMEM;
		return NULL;
	}
	mr->mr.context = pd->context;
	mr->mr.pd = pd;
	mr->mr.addr = addr;
	mr->mr.length = length;
	mr->pd = fv_pd_of(pd);
	mr->iova = iova;
	mr->access = access;
	mr->dmabuf_map = dmabuf_map;
	err = table_insert(mr);
	if (err) {
		free(mr);
		errno = err;
		return NULL;
	}
	atomic_fetch_add(&mr->pd->users, 1);
	return &mr->mr;
}

struct ibv_mr *ibv_reg_mr(struct ibv_pd *pd, void *addr, size_t length, int access)
{
	return reg(pd, addr, length, (uintptr_t)addr, (unsigned int)access, false);
}

struct ibv_mr *ibv_reg_mr_iova(struct ibv_pd *pd, void *addr, size_t length, uint64_t iova,
			       int access)
{
	return reg(pd, addr, length, iova, (unsigned int)access, false);
}

struct ibv_mr *ibv_reg_mr_iova2(struct ibv_pd *pd, void *addr, size_t length, uint64_t iova,
				unsigned int access)
{
	return reg(pd, addr, length, iova, access, false);
}

/* dma-buf: by default the kernel "has no importer" (EOPNOTSUPP, what NCCL's probe reads as
 * unsupported). With FABRICLAB_FAKEVERBS_DMABUF=1 any mappable fd (a memfd standing in for a GPU
 * buffer's dma-buf) is registered through its own mapping of [offset, offset+length). */
struct ibv_mr *ibv_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset, size_t length,
				 uint64_t iova, int fd, int access)
{
	struct fv_config *cfg = fv_config_get();
	struct ibv_mr *mr;
	struct stat st;
	void *map;

	if (!cfg || !cfg->dmabuf) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (fd < 0 || fstat(fd, &st)) {
		errno = EBADF;
		return NULL;
	}
	if (!pd || length == 0 || (offset & ((uint64_t)sysconf(_SC_PAGESIZE) - 1))) {
		errno = EINVAL;
		return NULL;
	}
	map = mmap(NULL, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)offset);
	if (map == MAP_FAILED) {
		errno = EBADF;
		return NULL;
	}
	mr = reg(pd, map, length, iova, (unsigned int)access, true);
	if (!mr) {
		int err = errno;

		munmap(map, length);
		errno = err;
		return NULL;
	}
	fv_mr_of(mr)->dmabuf_ino = (unsigned long long)st.st_ino;
	fv_mr_of(mr)->dmabuf_offset = offset;
	return mr;
}

int ibv_dereg_mr(struct ibv_mr *ibmr)
{
	struct fv_mr *mr = fv_mr_of(ibmr);
	uint32_t i = ibmr->lkey >> 8;

	pthread_rwlock_wrlock(&mr_lock);
	if (i >= MR_SLOTS || mr_table[i] != mr) {
		pthread_rwlock_unlock(&mr_lock);
		return EINVAL;
	}
	mr_table[i] = NULL;
	pthread_rwlock_unlock(&mr_lock);
	atomic_fetch_sub(&mr->pd->users, 1);
	if (mr->dmabuf_map)
		munmap(mr->mr.addr, mr->mr.length);
	free(mr);
	return 0;
}

bool fv_mr_find_held(uint32_t key, struct fv_mr *out)
{
	uint32_t i = key >> 8;

	if (i == 0 || i >= MR_SLOTS || !mr_table[i] || mr_table[i]->mr.lkey != key)
		return false;
	*out = *mr_table[i];
	return true;
}

bool fv_mr_lookup(uint32_t key, struct fv_mr *out)
{
	bool found;

	pthread_rwlock_rdlock(&mr_lock);
	found = fv_mr_find_held(key, out);
	pthread_rwlock_unlock(&mr_lock);
	return found;
}

void fv_mr_hold(void)
{
	pthread_rwlock_rdlock(&mr_lock);
}

void fv_mr_release(void)
{
	pthread_rwlock_unlock(&mr_lock);
}

int fakeverbs_mr_access(const struct ibv_mr *mr)
{
	struct fv_mr m;

	if (!mr || !fv_mr_lookup(mr->lkey, &m) || m.mr.addr != mr->addr)
		return -1;
	return (int)m.access;
}
