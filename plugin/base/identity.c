#include "identity.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "error.h"
#include "fl_text.h"

/*
 * Names enter here (a transport's or an inner plugin's device name): escaped
 * (base/fl_text.h) and cut between whole characters, never inside an escape
 * ("\x1" would be no escape at all), so every report and log shows the same
 * printable name and the merge reads back what was written.
 */
static void copy_name(char *dst, size_t len, const char *src)
{
	size_t n;
	char *slash;

	if (fl_text_escape(dst, len, src ? src : "") < len)
		return;
	n = strlen(dst);
	slash = strrchr(dst, '\\');
	if (slash && dst + n - slash < FL_TEXT_ESCAPE_LEN)
		*slash = '\0';
}

static const char *const rank_names[] = { "FABRICLAB_RANK", "RANK", "OMPI_COMM_WORLD_RANK",
					  "SLURM_PROCID", NULL };
static const char *const node_names[] = { "FABRICLAB_NODE_NAME", "NODE_NAME", NULL };

/* Digits only, 0 to INT_MAX; -1 for anything else. */
static int parse_rank(const char *v)
{
	long long r = 0;
	const char *s = v;

	for (; *s >= '0' && *s <= '9' && r <= 0x7fffffff; s++)
		r = r * 10 + (*s - '0');
	return (s == v || *s || r > 0x7fffffff) ? -1 : (int)r;
}

static int rank_from_env(void)
{
	const char *v = fl_env_first(rank_names);

	return v ? parse_rank(v) : -1;
}

static const char *const world_names[] = { "FABRICLAB_WORLD_SIZE", "WORLD_SIZE",
					   "OMPI_COMM_WORLD_SIZE", "SLURM_NTASKS", NULL };

/* 1 to FL_WORLD_SIZE_MAX; -1 for anything else (fl_identity_check refuses it at init). */
static int parse_world_size(const char *v)
{
	int n = parse_rank(v);

	return n >= 1 && n <= FL_WORLD_SIZE_MAX ? n : -1;
}

int fl_identity_world_size(void)
{
	const char *v = fl_env_first(world_names);

	return v ? parse_world_size(v) : -1;
}

/* The variable of names whose value v is (fl_env_first returned it). */
static const char *name_of(const char *const *names, const char *v)
{
	for (; names[1]; names++)
		if (getenv(*names) == v)
			break;
	return *names;
}

/* Node names travel in handles, file names, reports and fault selectors. */
static int valid_node_name(const char *v)
{
	size_t n = strspn(v, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.");

	return !v[n] && n < FL_NODE_NAME_LEN;
}

int fl_identity_check(void)
{
	const char *rank = fl_env_first(rank_names), *node = fl_env_first(node_names);
	const char *world = fl_env_first(world_names);
	char q[FL_QUOTE_LEN];

	if (rank && parse_rank(rank) < 0)
		return fl_fail(FL_ERR_USAGE, "%s=\"%s\": expected a rank from 0 to 2147483647",
			       name_of(rank_names, rank), fl_quote_value(rank, q, sizeof(q)));
	if (world && parse_world_size(world) < 0)
		return fl_fail(FL_ERR_USAGE, "%s=\"%s\": expected a number of ranks from 1 to %d",
			       name_of(world_names, world), fl_quote_value(world, q, sizeof(q)),
			       FL_WORLD_SIZE_MAX);
	if (node && !valid_node_name(node))
		return fl_fail(FL_ERR_USAGE, "%s=\"%s\" (%zu characters): expected at most %d "
			       "letters, digits, '-', '_' or '.'", name_of(node_names, node),
			       fl_quote_value(node, q, sizeof(q)), strlen(node),
			       FL_NODE_NAME_LEN - 1);
	return FL_OK;
}

void fl_identity_local(struct fl_endpoint *ep, int dev, const char *dev_name, uint64_t comm_hash)
{
	const char *node = fl_env_first(node_names);
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
