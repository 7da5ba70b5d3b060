/* Elements by name, for faults: a NIC, a leaf port, the cables of a leaf and a spine, a switch. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topo.h"

bool ft_fault_set(const struct ft_fault *f)
{
	return f->rate_pct || f->pause_every_ns || f->add_ns;
}

/* "leaf0:5": what is cabled to port 5 of leaf0, a NIC or one of its uplinks. */
static struct ft_fault *leaf_port(struct ft_topo *t, const char *name, const char *colon)
{
	char sw[FT_NAME_LEN], *end;
	long port = strtol(colon + 1, &end, 10);
	int s;

	if ((size_t)(colon - name) >= sizeof(sw) || *end || end == colon + 1)
		return NULL;
	snprintf(sw, sizeof(sw), "%.*s", (int)(colon - name), name);
	s = ft_find_switch(t, sw);
	if (s < 0)
		return NULL;
	for (int i = 0; i < t->nnics; i++)
		if (t->nics[i].leaf == s && t->nics[i].leaf_port == port)
			return &t->nics[i].fault;
	for (int u = 0; u < t->nup; u++)
		if (t->up[u].leaf == s && port >= t->up[u].leaf_port &&
		    port < t->up[u].leaf_port + t->up[u].cables)
			return &t->up[u].fault;
	return NULL;
}

/* "leaf0-spine1": the cables between them. */
static struct ft_fault *uplink(struct ft_topo *t, const char *name)
{
	for (int u = 0; u < t->nup; u++) {
		const char *l = t->sw[t->up[u].leaf].name, *s = t->sw[t->up[u].spine].name;
		size_t n = strlen(l);

		if (!strncmp(name, l, n) && name[n] == '-' && !strcmp(name + n + 1, s))
			return &t->up[u].fault;
	}
	return NULL;
}

struct ft_fault *ft_fault_of(struct ft_topo *t, const char *element)
{
	const char *slash = strchr(element, '/'), *colon = strchr(element, ':');
	int i;

	if (slash) {
		char node[FT_NAME_LEN];

		snprintf(node, sizeof(node), "%.*s", (int)(slash - element), element);
		i = ft_find_nic(t, node, slash + 1);
		return i < 0 ? NULL : &t->nics[i].fault;
	}
	if (colon)
		return leaf_port(t, element, colon);
	i = ft_find_switch(t, element);
	if (i >= 0)
		return &t->sw[i].fault;
	return uplink(t, element);
}
