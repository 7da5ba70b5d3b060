/* The shared fabric: a registry of every QP of the processes sharing one state folder (the
 * description's, or FABRICLAB_FAKEVERBS_DIR), one inbound message ring per process and the
 * schedule's elements (fv_elements.c), all memory-mapped files. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "fv_internal.h"

#define REG_MAGIC	0x46565247u	/* "FVRG" */
#define RING_MAGIC	0x46565249u
#define PEER_CACHE	64

struct peer {
	pid_t pid;
	uint64_t incarnation;
	struct fv_ring *ring;
};

static struct fv_registry *registry;
static struct fv_ring *own_ring;
static char own_ring_path[256];
static pthread_mutex_t peers_lock = PTHREAD_MUTEX_INITIALIZER;
static struct peer peers[PEER_CACHE];
static int npeers;

struct fv_registry *fv_registry(void)
{
	return registry;
}

struct fv_ring *fv_own_ring(void)
{
	return own_ring;
}

bool fv_pid_alive(pid_t pid)
{
	return pid > 0 && (kill(pid, 0) == 0 || errno != ESRCH);
}

static void *map_file(const char *path, size_t size, bool *created)
{
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	struct stat st;
	void *p = MAP_FAILED;

	if (fd < 0)
		return NULL;
	/* whoever grows the file first initialises it; the lock orders concurrent starters */
	flock(fd, LOCK_EX);
	if (fstat(fd, &st) == 0 && (st.st_size == (off_t)size || ftruncate(fd, (off_t)size) == 0)) {
		*created = st.st_size == 0;
		p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	}
	flock(fd, LOCK_UN);
	close(fd);
	return p == MAP_FAILED ? NULL : p;
}

static void reap_stale_rings(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *ent;
	char path[512];

	if (!d)
		return;
	while ((ent = readdir(d))) {
		int pid;

		if (sscanf(ent->d_name, "nic-%d", &pid) == 1 && !fv_pid_alive(pid)) {
			snprintf(path, sizeof(path), "%s/%s", dir, ent->d_name);
			unlink(path);
		}
	}
	closedir(d);
}

static int init_ring(struct fv_ring *r)
{
	pthread_mutexattr_t a;
	struct timespec ts;

	pthread_mutexattr_init(&a);
	pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
	pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
	pthread_mutex_init(&r->lock, &a);
	pthread_mutexattr_destroy(&a);
	clock_gettime(CLOCK_REALTIME, &ts);
	r->pid = getpid();
	r->incarnation = ((uint64_t)ts.tv_sec << 32) ^ (uint64_t)ts.tv_nsec ^ (uint64_t)getpid();
	atomic_store(&r->head, 0);
	atomic_store(&r->tail, 0);
	atomic_store(&r->magic, RING_MAGIC);
	return 0;
}

int fv_fabric_attach(void)
{
	struct fv_config *cfg = fv_config_get();
	char path[256];
	bool created;
	int err;

	if (!cfg)
		return errno;
	if (mkdir(cfg->dir, 0700) && errno != EEXIST)
		return errno;
	if (!registry) {
		/* the layout version is in the name: an old file is never read with a new layout */
		snprintf(path, sizeof(path), "%s/registry.v2", cfg->dir);
		registry = map_file(path, sizeof(*registry), &created);
		if (!registry)
			return errno ? errno : EIO;
		atomic_store(&registry->magic, REG_MAGIC);
		reap_stale_rings(cfg->dir);
	}
	if ((err = fv_elements_attach(cfg->dir)))
		return err;
	snprintf(own_ring_path, sizeof(own_ring_path), "%s/nic-%d", cfg->dir, (int)getpid());
	unlink(own_ring_path);	/* a dead process with our pid may have left one */
	own_ring = map_file(own_ring_path, sizeof(*own_ring), &created);
	if (!own_ring)
		return errno ? errno : EIO;
	return init_ring(own_ring);
}

void fv_fabric_detach(void)
{
	pthread_mutex_lock(&peers_lock);
	for (int i = 0; i < npeers; i++)
		munmap(peers[i].ring, sizeof(struct fv_ring));
	npeers = 0;
	pthread_mutex_unlock(&peers_lock);
	if (own_ring) {
		munmap(own_ring, sizeof(*own_ring));
		unlink(own_ring_path);
		own_ring = NULL;
	}
}

/* After fork() the child keeps the registry mapping but none of the parent's NIC state. */
void fv_fabric_forget(void)
{
	own_ring = NULL;
	npeers = 0;
	pthread_mutex_init(&peers_lock, NULL);
}

static struct fv_ring *map_peer(pid_t pid, uint64_t incarnation)
{
	struct fv_config *cfg = fv_config_get();
	char path[256];
	struct fv_ring *r;
	int fd;

	snprintf(path, sizeof(path), "%s/nic-%d", cfg->dir, (int)pid);
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	r = mmap(NULL, sizeof(*r), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (r == MAP_FAILED)
		return NULL;
	if (atomic_load(&r->magic) != RING_MAGIC || r->incarnation != incarnation) {
		munmap(r, sizeof(*r));
		return NULL;
	}
	return r;
}

struct fv_ring *fv_peer_ring(const struct fv_reg_entry *e)
{
	pid_t pid = atomic_load(&e->pid);
	struct fv_ring *r = NULL;
	int i;

	if (pid == getpid())
		return own_ring;
	if (!fv_pid_alive(pid))
		return NULL;
	pthread_mutex_lock(&peers_lock);
	for (i = 0; i < npeers; i++) {
		if (peers[i].pid == pid && peers[i].incarnation == e->incarnation) {
			r = peers[i].ring;
			break;
		}
	}
	if (!r) {
		r = map_peer(pid, e->incarnation);
		if (r) {
			if (npeers == PEER_CACHE) {
				munmap(peers[0].ring, sizeof(*r));
				memmove(peers, peers + 1, sizeof(peers[0]) * (PEER_CACHE - 1));
				npeers--;
			}
			peers[npeers++] = (struct peer){ pid, e->incarnation, r };
		}
	}
	pthread_mutex_unlock(&peers_lock);
	return r;
}

int fv_reg_alloc_qpn(uint32_t *qpn, int *slot)
{
	pid_t me = getpid();

	for (int tries = 0; tries < 4 * FV_REG_SLOTS; tries++) {
		uint32_t n = 0x100 + atomic_fetch_add(&registry->next_qpn, 1) % 0xfffe00;
		struct fv_reg_entry *e = &registry->e[n % FV_REG_SLOTS];
		int32_t owner = atomic_load(&e->pid);

		if (owner && fv_pid_alive(owner))
			continue;
		if (!atomic_compare_exchange_strong(&e->pid, &owner, me))
			continue;
		e->incarnation = own_ring->incarnation;
		atomic_store(&e->acked, 0);
		atomic_store(&e->nak_status, 0);
		atomic_store(&e->nak_index, 0);
		e->link_layer = 0;
		e->lid = 0;
		e->nic = 0;
		e->ngids = 0;
		atomic_store(&e->qpn, n);
		*qpn = n;
		*slot = (int)(n % FV_REG_SLOTS);
		return 0;
	}
	return ENOMEM;
}

void fv_reg_reset(int slot)
{
	struct fv_reg_entry *e = &registry->e[slot];

	atomic_store(&e->nak_status, 0);
	atomic_store(&e->nak_index, 0);
	atomic_store(&e->acked, 0);
}

void fv_reg_free(int slot)
{
	struct fv_reg_entry *e = &registry->e[slot];

	atomic_store(&e->qpn, 0);
	atomic_store(&e->pid, 0);
}

bool fv_ring_has_room(struct fv_ring *r)
{
	return atomic_load(&r->tail) - atomic_load(&r->head) < FV_RING_SLOTS;
}

int fv_ring_push(struct fv_ring *r, const struct fv_msg *m)
{
	uint64_t tail;
	int rc = pthread_mutex_lock(&r->lock);

	if (rc == EOWNERDEAD)
		pthread_mutex_consistent(&r->lock);	/* a producer died: the ring is intact */
	tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
	if (tail - atomic_load(&r->head) >= FV_RING_SLOTS) {
		pthread_mutex_unlock(&r->lock);
		return EAGAIN;
	}
	r->slot[tail % FV_RING_SLOTS] = *m;
	atomic_store_explicit(&r->tail, tail + 1, memory_order_release);
	pthread_mutex_unlock(&r->lock);
	return 0;
}

static long futex(_Atomic uint32_t *word, int op, uint32_t val, const struct timespec *ts)
{
	return syscall(SYS_futex, (uint32_t *)word, op, val, ts, NULL, 0);
}

void fv_ring_kick(struct fv_ring *r)
{
	atomic_fetch_add(&r->doorbell, 1);
	if (atomic_load(&r->sleeping))
		futex(&r->doorbell, FUTEX_WAKE, 1, NULL);
}

void fv_ring_wait(struct fv_ring *r, uint32_t seen, long timeout_ns)
{
	struct timespec ts = { timeout_ns / 1000000000L, timeout_ns % 1000000000L };

	atomic_store(&r->sleeping, 1);
	if (atomic_load(&r->doorbell) == seen && atomic_load(&r->tail) == atomic_load(&r->head))
		futex(&r->doorbell, FUTEX_WAIT, seen, &ts);
	atomic_store(&r->sleeping, 0);
}

static int dma(pid_t pid, const struct iovec *local, int nlocal, const struct iovec *remote,
	       int nremote, bool to_remote)
{
	size_t want = 0;
	ssize_t n;

	for (int i = 0; i < nlocal; i++)
		want += local[i].iov_len;
	if (want == 0)
		return 0;
	n = to_remote ? process_vm_writev(pid, local, (unsigned long)nlocal, remote,
					  (unsigned long)nremote, 0)
		      : process_vm_readv(pid, local, (unsigned long)nlocal, remote,
					 (unsigned long)nremote, 0);
	if (n < 0)
		return errno;
	return (size_t)n == want ? 0 : EFAULT;
}

int fv_dma_read(pid_t pid, const struct iovec *dst, int ndst, const struct iovec *src, int nsrc)
{
	return dma(pid, dst, ndst, src, nsrc, false);
}

int fv_dma_write(pid_t pid, const struct iovec *src, int nsrc, const struct iovec *dst, int ndst)
{
	return dma(pid, src, nsrc, dst, ndst, true);
}
