#include "identity.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"

static void copy_name(char *dst, size_t len, const char *src)
{
	size_t n = src ? strnlen(src, len - 1) : 0;

	memcpy(dst, src ? src : "", n);
	dst[n] = '\0';
}

/* The first of the variables that is set, as a non-negative int; -1 when none or malformed. */
static int int_from_env(const char *const *names)
{
	const char *v = fl_env_first(names);
	char *end;
	long r;

	if (!v)
		return -1;
	r = strtol(v, &end, 10);
	return (*end || end == v || r < 0 || r > 0x7fffffff) ? -1 : (int)r;
}

static int rank_from_env(void)
{
	static const char *const names[] = { "FABRICLAB_RANK", "RANK", "OMPI_COMM_WORLD_RANK",
					     "SLURM_PROCID", NULL };

	return int_from_env(names);
}

int fl_identity_world_size(void)
{
	static const char *const names[] = { "FABRICLAB_WORLD_SIZE", "WORLD_SIZE",
					     "OMPI_COMM_WORLD_SIZE", "SLURM_NTASKS", NULL };
	int n = int_from_env(names);

	return n > 0 ? n : -1;
}

void fl_identity_local(struct fl_endpoint *ep, int dev, const char *dev_name, uint64_t comm_hash)
{
	static const char *const names[] = { "FABRICLAB_NODE_NAME", "NODE_NAME", NULL };
	const char *node = fl_env_first(names);
	char host[256];

	memset(ep, 0, sizeof(*ep));
	if (!node) {
		if (gethostname(host, sizeof(host)) != 0)
			strcpy(host, "unknown");
		host[sizeof(host) - 1] = '\0';
		node = host;
	}
	copy_name(ep->node, sizeof(ep->node), node);
	copy_name(ep->dev_name, sizeof(ep->dev_name), dev_name);
	ep->dev = dev;
	ep->rank = rank_from_env();
	ep->comm_hash = comm_hash;
}
