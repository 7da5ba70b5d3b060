/*
 * `ibnetdiscover` output (rdma-core's infiniband-diags, its topology file) as
 * a topology. Its form, as the tool prints it (rdma-core
 * infiniband-diags/ibnetdiscover.c, out_switch, out_ca, out_switch_port and
 * out_ca_port): one block per node,
 *
 *   vendid=0x2c9 / devid=0x.. / sysimgguid=0x.. / switchguid=0xGUID(PORTGUID) or caguid=0xGUID
 *   Switch  NPORTS "S-GUID"   # "DESCRIPTION" enhanced port 0 lid LID lmc 0
 *   [PORT]  "H-GUID"[RPORT](RPORTGUID)   # "REMOTE DESCRIPTION" lid LID 4xNDR
 *   [PORT]  "S-GUID"[RPORT]              # "REMOTE DESCRIPTION" lid LID 4xNDR
 *   Ca      NPORTS "H-GUID"   # "DESCRIPTION"
 *   [PORT](PORTGUID)  "S-GUID"[RPORT]    # lid LID lmc 0 "REMOTE DESCRIPTION" lid LID 4xNDR
 *
 * and comment lines (#). A switch with HCAs behind it is a leaf, one with
 * switches only a spine. An HCA's description is its host's name and its
 * device ("node3 mlx5_0", as rdma-ndd sets it by default), which is how the
 * reports name a hop's ends.
 */
#include <ctype.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topology.h"

#include "topo_ibnet.h"

int ibnet_fail(struct ib *p, int line, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (line > 0)
		snprintf(p->why, p->len, "%s:%d: %s (ibnetdiscover's topology format)", p->name,
			 line, msg);
	else
		snprintf(p->why, p->len, "%s: %s", p->name, msg);
	return -1;
}

static void *more(void *v, size_t n, size_t *cap, size_t sz)
{
	void *q;

	if (n < *cap)
		return v;
	q = realloc(v, (*cap ? *cap * 2 : 16) * sz);
	if (q)
		*cap = *cap ? *cap * 2 : 16;
	return q;
}

/* The first quoted string at or after s into out; the text after it, NULL when none. */
static const char *quoted(const char *s, char *out, size_t n)
{
	const char *a = strchr(s, '"'), *b = a ? strchr(a + 1, '"') : NULL;

	if (!b)
		return NULL;
	snprintf(out, n, "%.*s", (int)(b - a - 1), a + 1);
	return b + 1;
}

static int node_line(struct ib *p, const char *s, bool sw, int line)
{
	const char *hash = strchr(s, '#'), *rest;
	unsigned long long guid;
	struct ib_node *nd;
	int nports;
	char kind;

	if (sscanf(s + (sw ? 6 : 2), "%d \"%c-%llx\"", &nports, &kind, &guid) != 3 || !hash)
		return ibnet_fail(p, line, "expected %s NPORTS \"%c-GUID\" # \"DESCRIPTION\"",
			    sw ? "Switch" : "Ca", sw ? 'S' : 'H');
	p->nodes = more(p->nodes, p->n, &p->cap, sizeof(*p->nodes));
	if (!p->nodes)
		return ibnet_fail(p, line, "out of memory");
	nd = &p->nodes[p->n++];
	memset(nd, 0, sizeof(*nd));
	nd->guid = guid;
	nd->sw = sw;
	nd->index = -1;
	rest = quoted(hash, nd->desc, sizeof(nd->desc));
	if (!rest)
		return ibnet_fail(p, line, "expected the node's description in quotes after #");
	if (sw && (rest = strstr(rest, " lid ")))
		nd->lid = atoi(rest + 5);
	return 0;
}

/* [PORT](GUID) "X-GUID"[RPORT] # ...: one cabled port of the current node. */
static int port_line(struct ib *p, const char *s, int line)
{
	const char *q = strchr(s, '"'), *hash = strchr(s, '#'), *at;
	unsigned long long guid;
	struct ib_link *l;
	char kind, desc[FT_NAME_LEN];

	if (!p->n)
		return ibnet_fail(p, line, "a port before any Switch or Ca line");
	p->links = more(p->links, p->nl, &p->lcap, sizeof(*p->links));
	if (!p->links)
		return ibnet_fail(p, line, "out of memory");
	l = &p->links[p->nl];
	memset(l, 0, sizeof(*l));
	l->a = p->nodes[p->n - 1].guid;
	if (sscanf(s, "[%d]", &l->ap) != 1 || !q || sscanf(q, "\"%c-%llx\"[%d]", &kind, &guid,
							     &l->bp) != 3)
		return ibnet_fail(p, line, "expected [PORT] \"S-GUID\"[PORT] or [PORT](GUID) \"S-GUID\"[PORT]");
	l->b = guid;
	if (hash && !p->nodes[p->n - 1].sw && (at = strstr(hash, "lid ")))
		l->lid = atoi(at + 4);
	/* the link's width and speed: the word after the remote end's lid */
	if (hash && (at = quoted(hash, desc, sizeof(desc))) && (at = strstr(at, "lid ")))
		sscanf(at + 4, "%*d %15s", l->speed);
	p->nl++;
	return 0;
}

static int parse_line(struct ib *p, const char *s, int line)
{
	while (*s == ' ' || *s == '\t')
		s++;
	if (!*s || *s == '#' || *s == '\n')
		return 0;
	if (!strncmp(s, "vendid=", 7) || !strncmp(s, "devid=", 6) || !strncmp(s, "sysimgguid=", 11) ||
	    !strncmp(s, "switchguid=", 11) || !strncmp(s, "caguid=", 7) ||
	    !strncmp(s, "rtguid=", 7) || !strncmp(s, "Chassis ", 8) || !strncmp(s, "Hostname:", 9))
		return 0;
	if (!strncmp(s, "Switch", 6) && isspace((unsigned char)s[6]))
		return node_line(p, s, true, line);
	if (!strncmp(s, "Ca", 2) && isspace((unsigned char)s[2]))
		return node_line(p, s, false, line);
	if (*s == '[')
		return port_line(p, s, line);
	return ibnet_fail(p, line, "expected a Switch, Ca or [PORT] line, a NAME=VALUE or a # comment");
}


int topo_read_ibnet(const char *text, const char *name, struct ft_topo *t, char *why, size_t len)
{
	struct ib p = { .name = name, .why = why, .len = len };
	int rc = 0, line = 0;

	ft_init(t);
	for (const char *s = text; *s && !rc;) {
		size_t n = strcspn(s, "\n");
		char buf[1024];

		line++;
		snprintf(buf, sizeof(buf), "%.*s", (int)(n < sizeof(buf) ? n : sizeof(buf) - 1), s);
		rc = parse_line(&p, buf, line);
		s += n + (s[n] == '\n');
	}
	if (!rc && !p.n)
		rc = ibnet_fail(&p, line, "no Switch or Ca line: not ibnetdiscover's output");
	if (!rc)
		rc = ibnet_build(&p, t);
	free(p.nodes);
	free(p.links);
	return rc;
}
