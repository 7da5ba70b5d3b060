/* Which node of the description a process is: the NIC and the GPU of one process pick alike. */
#include <stdlib.h>

#include "topo.h"

static const char *env(const char *name)
{
	const char *v = getenv(name);

	return v && *v ? v : NULL;
}

int ft_process_node(const struct ft_topo *t)
{
	const char *named = env("FABRICLAB_FABRIC_NODE");
	const char *plugin = env("FABRICLAB_NODE_NAME");
	int n;

	if (named)
		return ft_find_node(t, named);
	/* a node name the plugin uses for another purpose than this fabric: the first node */
	n = plugin ? ft_find_node(t, plugin) : 0;
	return n < 0 ? 0 : n;
}
