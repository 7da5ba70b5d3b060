/* A node's emulated GPUs: the defaults, a node's own fields over the description's, checks. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "topo.h"

void ft_gpus_default(struct ft_gpus *g)
{
	memset(g, 0, sizeof(*g));
	g->count = 1;
	g->gdr = true;
	g->dmabuf = true;
	g->cc = 80;
}

void ft_node_gpus(const struct ft_topo *t, int n, struct ft_gpus *out)
{
	const struct ft_node *node = &t->nodes[n];
	const struct ft_gpus *own = &node->gpus;
	unsigned set = node->gpus_set;

	*out = t->gpus;
	if (set & FT_GPU_COUNT)
		out->count = own->count;
	if (set & FT_GPU_PCI) {
		out->npci = own->npci;
		memcpy(out->pci, own->pci, sizeof(out->pci));
	}
	if (set & FT_GPU_GDR)
		out->gdr = own->gdr;
	if (set & FT_GPU_DMABUF)
		out->dmabuf = own->dmabuf;
	if (set & FT_GPU_MEMORY)
		out->memory_bytes = own->memory_bytes;
	if (set & FT_GPU_PROTECT)
		out->protect = own->protect;
	if (set & FT_GPU_CC)
		out->cc = own->cc;
	if (set & FT_GPU_COPY)
		out->copy_bytes_per_s = own->copy_bytes_per_s;
}

/* n hexadecimal digits at s; the first character after them. */
static const char *hex(const char *s, int n)
{
	for (int i = 0; i < n; i++)
		if (!isxdigit((unsigned char)s[i]))
			return NULL;
	return s + n;
}

bool ft_pci_ok(const char *id)
{
	const char *p = hex(id, 4);

	if (p && *p != ':')
		p = hex(id, 8); /* nvidia-smi's 8-digit domain */
	if (!p || *p++ != ':' || !(p = hex(p, 2)) || *p++ != ':' || !(p = hex(p, 2)) ||
	    *p++ != '.')
		return false;
	return *p >= '0' && *p <= '7' && !p[1];
}

int ft_cc_parse(const char *text)
{
	int major, minor, used = 0;

	if (sscanf(text, "%2d.%1d%n", &major, &minor, &used) != 2 || text[used] || major < 1 ||
	    minor < 0 || !isdigit((unsigned char)text[0]))
		return -1;
	return major * 10 + minor;
}
