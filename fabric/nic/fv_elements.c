/*
 * The schedule's shared elements: one direction of one link each (a NIC's
 * cable out and in, a leaf-spine cable up and down: fabric/topo/topo_path.c),
 * in one memory-mapped file every process of the fabric shares, as it shares
 * the registry. A message's bytes take their turn on every element of its
 * path, so that an element's capacity is shared by every hop through it,
 * whichever processes post them.
 *
 * Without a description each NIC is an element of its own node's (a place
 * fixed by node and device index), and a message crosses two: the sender's
 * NIC out and the receiver's NIC in, the emulation as it was before switches.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fv_internal.h"

#define ELEMENTS_MAGIC 0x4656454cu /* "FVEL" */

struct fv_elements {
	_Atomic uint32_t magic;
	uint32_t pad;
	struct fv_element e[FV_MAX_ELEMENTS];
};

static struct fv_elements *table;
static double *rate;                 /* described elements' healthy rates, bytes per ns */
static struct ft_fault *fault;       /* ... and the faults the description gives them */
static pthread_once_t derive_once = PTHREAD_ONCE_INIT;

int fv_elements_attach(const char *dir)
{
	char path[256];
	struct stat st;
	int fd;

	if (table)
		return 0;
	/* the layout version is in the name: an old file is never read with a new layout */
	snprintf(path, sizeof(path), "%s/elements.v1", dir);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return errno;
	flock(fd, LOCK_EX); /* whoever sizes it first leaves it zeroed: every link idle */
	if (fstat(fd, &st) || (st.st_size != (off_t)sizeof(*table) &&
			       ftruncate(fd, (off_t)sizeof(*table)))) {
		int err = errno;

		flock(fd, LOCK_UN);
		close(fd);
		return err;
	}
	table = mmap(NULL, sizeof(*table), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	flock(fd, LOCK_UN);
	close(fd);
	if (table == MAP_FAILED) {
		table = NULL;
		return errno;
	}
	atomic_store(&table->magic, ELEMENTS_MAGIC);
	return 0;
}

struct fv_element *fv_element(int i)
{
	return table && i >= 0 && i < FV_MAX_ELEMENTS ? &table->e[i] : NULL;
}

/* Once per process: each described element's rate and fault, which never change. */
static void derive(void)
{
	struct fv_config *cfg = fv_config_get();
	const struct ft_topo *t = cfg ? &cfg->topo : NULL;
	int n = t && cfg->described ? ft_elements(t) : 0;

	if (!n)
		return;
	rate = calloc((size_t)n, sizeof(*rate));
	fault = calloc((size_t)n, sizeof(*fault));
	if (!rate || !fault) {
		free(rate);
		rate = NULL;
		return;
	}
	for (int e = 0; e < n; e++) {
		rate[e] = ft_element_mbps(t, e) * 1e6 / 8.0 / 1e9;
		ft_element_fault(t, e, &fault[e]);
	}
}

static const struct ft_topo *described(int e)
{
	struct fv_config *cfg = fv_config_get();

	pthread_once(&derive_once, derive);
	return cfg && cfg->described && rate && e < ft_elements(&cfg->topo) ? &cfg->topo : NULL;
}

int fv_elements_path(int a, int b, uint64_t hash, int *path)
{
	const struct ft_topo *t = described(0);

	if (b < 0) { /* the responder's NIC not known yet: ours only */
		path[0] = 2 * a;
		return 1;
	}
	if (t && ft_path(t, a, b, hash, path) >= 2)
		return ft_path(t, a, b, hash, path);
	/* no description, or no switch between them: NIC to NIC */
	path[0] = 2 * a;
	path[1] = 2 * b + 1;
	return 2;
}

double fv_element_rate(int e, const struct fv_port *port)
{
	return described(e) && rate[e] > 0 ? rate[e] : fv_port_bytes_per_ns(port);
}

/* A NIC's faults from its process's environment replace the description's. */
void fv_element_fault(int e, struct ft_fault *out)
{
	struct fv_element *el = fv_element(e);
	uint32_t pct = el ? atomic_load(&el->hw_rate_pct) : 0;
	uint64_t every = el ? atomic_load(&el->hw_pause_every_ns) : 0;
	uint64_t add = el ? atomic_load(&el->hw_add_ns) : 0;

	if (described(e))
		*out = fault[e];
	else
		*out = (struct ft_fault){ 0 };
	if (pct)
		out->rate_pct = (int)pct;
	if (every) {
		out->pause_every_ns = every;
		out->pause_for_ns = atomic_load(&el->hw_pause_for_ns);
	}
	if (add)
		out->add_ns = add;
}
