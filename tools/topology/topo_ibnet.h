/* The ibnetdiscover reader's state, shared by its parser and its builder (topo_ibnet*.c). */
#ifndef FABRICLAB_TOPO_IBNET_H
#define FABRICLAB_TOPO_IBNET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fabric/topo/topo.h"

struct ib_node {
	uint64_t guid;
	bool sw;
	char desc[FT_NAME_LEN];
	int lid;
	bool leaf;
	int index; /* in the topology, once placed */
};

struct ib_link {
	uint64_t a, b; /* a's port ap to b's port bp, as a's block lists it */
	int ap, bp;
	int lid;       /* a CA's own LID (its block's port line) */
	char speed[16];
};

struct ib {
	struct ib_node *nodes;
	size_t n, cap;
	struct ib_link *links;
	size_t nl, lcap;
	const char *name;
	char *why;
	size_t len;
};

/* Says why at line in p->why; -1. */
int ibnet_fail(struct ib *p, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* The parsed nodes and links as a topology. 0 or -1 (p->why). */
int ibnet_build(struct ib *p, struct ft_topo *t);

#endif
