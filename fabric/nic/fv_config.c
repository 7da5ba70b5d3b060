/* The fake fabric's devices and knobs: the description's (fv_describe.c), the environment's over it. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <endian.h>

#include "fv_internal.h"

static struct fv_config config;
static pthread_once_t config_once = PTHREAD_ONCE_INIT;
static int config_err;

struct code_name {
	const char *name;
	uint8_t code;
};

/* active_width encodings */
static const struct code_name widths[] = {
	{ "1x", 1 }, { "4x", 2 }, { "8x", 4 }, { "12x", 8 }, { "2x", 16 }, { NULL, 0 } };

/* active_speed encodings; lane rates name the same codes for Ethernet ports */
static const struct code_name speeds[] = {
	{ "sdr", 1 }, { "ddr", 2 }, { "qdr", 4 }, { "fdr10", 8 }, { "fdr", 16 }, { "edr", 32 },
	{ "hdr", 64 }, { "ndr", 128 }, { "2.5g", 1 }, { "5g", 2 }, { "10g", 4 }, { "14g", 16 },
	{ "25g", 32 }, { "50g", 64 }, { "100g", 128 }, { NULL, 0 } };

static const struct code_name states[] = {
	{ "down", IBV_PORT_DOWN }, { "init", IBV_PORT_INIT }, { "armed", IBV_PORT_ARMED },
	{ "active", IBV_PORT_ACTIVE }, { NULL, 0 } };

static int lookup(const struct code_name *t, const char *s, size_t n, uint8_t *code)
{
	for (; t->name; t++) {
		if (strlen(t->name) == n && strncasecmp(t->name, s, n) == 0) {
			*code = t->code;
			return 0;
		}
	}
	return EINVAL;
}

static void set_gid(union ibv_gid *g, uint64_t prefix, uint64_t iid)
{
	g->global.subnet_prefix = htobe64(prefix);
	g->global.interface_id = htobe64(iid);
}

static void set_ipv4_gid(union ibv_gid *g, uint32_t ip)
{
	memset(g, 0, sizeof(*g));
	g->raw[10] = 0xff;
	g->raw[11] = 0xff;
	g->raw[12] = (uint8_t)(ip >> 24);
	g->raw[13] = (uint8_t)(ip >> 16);
	g->raw[14] = (uint8_t)(ip >> 8);
	g->raw[15] = (uint8_t)ip;
}

/* Addresses follow from node, device and port, so every process computes the same ones. */
static void address_port(struct fv_config *cfg, struct fv_device *d, int p)
{
	struct fv_port *port = &d->port[p];
	uint64_t iid = d->guid + (uint64_t)p;

	if (port->link_layer == IBV_LINK_LAYER_INFINIBAND) {
		port->lid = (uint16_t)(1 + cfg->node * 64 + d->index * FV_MAX_PORTS + p);
		port->ngids = 1;
		set_gid(&port->gid[0], 0xfe80000000000000ull, iid);
		port->gid_type[0] = IBV_GID_TYPE_IB;
		return;
	}
	port->lid = 0;
	port->ngids = 4;
	set_gid(&port->gid[0], 0xfe80000000000000ull, iid);
	set_gid(&port->gid[1], 0xfe80000000000000ull, iid);
	set_ipv4_gid(&port->gid[2], 0x7f000001u);
	set_ipv4_gid(&port->gid[3], 0x7f000001u);
	port->gid_type[0] = IBV_GID_TYPE_ROCE_V1;
	port->gid_type[1] = IBV_GID_TYPE_ROCE_V2;
	port->gid_type[2] = IBV_GID_TYPE_ROCE_V1;
	port->gid_type[3] = IBV_GID_TYPE_ROCE_V2;
}

/* PORT = LINK:WIDTH:SPEED[:STATE] */
static int parse_port(const char *s, size_t n, struct fv_port *port)
{
	const char *field[5];
	size_t len[5];
	int nf = 0;
	const char *p = s, *end = s + n;
	uint8_t state = IBV_PORT_ACTIVE;

	while (nf < 5) {
		const char *c = memchr(p, ':', (size_t)(end - p));

		field[nf] = p;
		len[nf] = (size_t)((c ? c : end) - p);
		nf++;
		if (!c)
			break;
		p = c + 1;
	}
	if (nf < 3 || nf > 4)
		return EINVAL;
	if (len[0] == 2 && strncasecmp(field[0], "ib", 2) == 0)
		port->link_layer = IBV_LINK_LAYER_INFINIBAND;
	else if ((len[0] == 3 && strncasecmp(field[0], "eth", 3) == 0) ||
		 (len[0] == 4 && strncasecmp(field[0], "roce", 4) == 0))
		port->link_layer = IBV_LINK_LAYER_ETHERNET;
	else
		return EINVAL;
	if (lookup(widths, field[1], len[1], &port->width) ||
	    lookup(speeds, field[2], len[2], &port->speed) ||
	    (nf == 4 && lookup(states, field[3], len[3], &state)))
		return EINVAL;
	atomic_store(&port->state, state);
	return 0;
}

/* NAME=PORT[+PORT] */
static int parse_device(struct fv_config *cfg, const char *s, size_t n)
{
	const char *eq = memchr(s, '=', n), *p, *end = s + n;
	struct fv_device *d;

	if (!eq || eq == s || (size_t)(eq - s) >= IBV_SYSFS_NAME_MAX || cfg->ndevs == FV_MAX_DEVS)
		return EINVAL;
	d = &cfg->dev[cfg->ndevs];
	memset(d, 0, sizeof(*d));
	memcpy(d->ibdev.name, s, (size_t)(eq - s));
	for (p = eq + 1; p < end;) {
		const char *plus = memchr(p, '+', (size_t)(end - p));
		size_t len = (size_t)((plus ? plus : end) - p);

		if (d->nports == FV_MAX_PORTS || parse_port(p, len, &d->port[d->nports]))
			return EINVAL;
		d->nports++;
		p += len + (plus ? 1 : 0);
	}
	if (d->nports == 0)
		return EINVAL;
	d->index = cfg->ndevs++;
	return 0;
}

int fv_config_parse_devices(struct fv_config *cfg, const char *spec)
{
	const char *p = spec;

	cfg->ndevs = 0;
	while (*p) {
		size_t len = strcspn(p, ",");

		if (parse_device(cfg, p, len))
			return EINVAL;
		p += len;
		if (*p == ',')
			p++;
	}
	if (cfg->ndevs == 0)
		return EINVAL;
	for (int i = 0; i < cfg->ndevs; i++) {
		struct fv_device *d = &cfg->dev[i];
		char name[IBV_SYSFS_NAME_MAX];

		memcpy(name, d->ibdev.name, sizeof(name));
		d->guid = 0x0c42a10300000000ull | ((uint64_t)cfg->node << 16) | ((uint64_t)i << 4);
		d->ibdev.node_type = IBV_NODE_CA;
		d->ibdev.transport_type = IBV_TRANSPORT_IB;
		snprintf(d->ibdev.dev_name, sizeof(d->ibdev.dev_name), "uverbs%d", i);
		/* the tree fv_sysfs_tree.c publishes (or /sys before the root is known) */
		snprintf(d->ibdev.dev_path, sizeof(d->ibdev.dev_path),
			 "%.160s/class/infiniband_verbs/uverbs%d",
			 cfg->sysfs_root[0] ? cfg->sysfs_root : "/sys", i);
		snprintf(d->ibdev.ibdev_path, sizeof(d->ibdev.ibdev_path),
			 "%.160s/class/infiniband/%.60s",
			 cfg->sysfs_root[0] ? cfg->sysfs_root : "/sys", name);
		for (int p2 = 0; p2 < d->nports; p2++)
			address_port(cfg, d, p2);
	}
	return 0;
}

static long env_long(const char *name, long def, long lo, long hi)
{
	const char *v = getenv(name);
	char *end;
	long x;

	if (!v || !*v)
		return def;
	errno = 0;
	x = strtol(v, &end, 10);
	if (errno || *end || x < lo || x > hi) {
		fprintf(stderr, "fakeverbs: %s=%s: expected an integer in [%ld, %ld]\n", name, v,
			lo, hi);
		config_err = EINVAL;
		return def;
	}
	return x;
}

/* A setting from the environment over the description's (or the default) in *out. */
static void env_over(const char *name, long lo, long hi, long *out)
{
	*out = env_long(name, *out, lo, hi);
}

/* Whether name is one of list's comma-separated names. */
static bool listed(const char *list, const char *name)
{
	size_t n = strlen(name);

	while (*list) {
		size_t len = strcspn(list, ",");

		if (len == n && !strncmp(list, name, n))
			return true;
		list += len + (list[len] == ',');
	}
	return false;
}

/*
 * FABRICLAB_FAKEVERBS_DATA_DIRECT=NAME[,NAME...] over the description's
 * data_direct: the devices named have a DataDirect engine, the others none
 * ("none" names no device).
 */
static void data_direct_over(struct fv_config *cfg)
{
	const char *list = getenv("FABRICLAB_FAKEVERBS_DATA_DIRECT");

	if (!list || !*list)
		return;
	for (int i = 0; i < cfg->ndevs; i++)
		cfg->dev[i].data_direct = listed(list, cfg->dev[i].ibdev.name);
}

/*
 * The description first (FABRICLAB_FABRIC), then the environment's
 * FABRICLAB_FAKEVERBS_* variables over it, each an override a user may set.
 */
static void config_load(void)
{
	char described[512] = "";
	const char *spec = getenv("FABRICLAB_FAKEVERBS_DEVICES");
	const char *dir = getenv("FABRICLAB_FAKEVERBS_DIR");
	const char *sysfs = getenv("FABRICLAB_FAKEVERBS_SYSFS");
	long node, retry, verbose, dmabuf, sq;

	snprintf(config.dir, sizeof(config.dir), "/dev/shm/fabriclab-fakeverbs-%u",
		 (unsigned)getuid());
	if (fv_describe(&config, described, sizeof(described)))
		config_err = EINVAL;
	node = config.node;
	retry = config.retry_ms;
	verbose = 0;
	dmabuf = config.dmabuf;
	sq = config.sq_alloc;
	env_over("FABRICLAB_FAKEVERBS_NODE", 0, 1000, &node);
	env_over("FABRICLAB_FAKEVERBS_RETRY_MS", 0, 3600000, &retry);
	env_over("FABRICLAB_FAKEVERBS_VERBOSE", 0, 1, &verbose);
	env_over("FABRICLAB_FAKEVERBS_DMABUF", 0, 1, &dmabuf);
	env_over("FABRICLAB_FAKEVERBS_MAX_SEND_WR", 0, FV_MAX_QP_WR, &sq);
	config.node = (int)node;
	config.retry_ms = retry;
	config.verbose = verbose != 0;
	config.dmabuf = dmabuf != 0;
	config.sq_alloc = (uint32_t)sq;
	if (dir && *dir)
		snprintf(config.dir, sizeof(config.dir), "%s", dir);
	/* each "host" has its own /sys */
	if (sysfs && *sysfs)
		snprintf(config.sysfs_root, sizeof(config.sysfs_root), "%.150s", sysfs);
	else
		snprintf(config.sysfs_root, sizeof(config.sysfs_root), "%.130s/sysfs-node%d",
			 config.dir, config.node);
	if (!spec || !*spec)
		spec = described[0] ? described : "mlx5_0=ib:4x:hdr,mlx5_1=eth:4x:25g";
	if (fv_config_parse_devices(&config, spec)) {
		fprintf(stderr, "fakeverbs: FABRICLAB_FAKEVERBS_DEVICES=%s: expected "
			"NAME=LINK:WIDTH:SPEED[:STATE][+PORT...][,NAME=...], e.g. "
			"mlx5_0=ib:4x:hdr,mlx5_1=eth:4x:25g:active\n", spec);
		config_err = EINVAL;
	} else if (fv_describe_nics(&config)) {
		config_err = EINVAL;
	} else {
		data_direct_over(&config);
	}
	fv_inject_env_once(config.described ? config.topo.inject : "");
}

struct fv_config *fv_config_get(void)
{
	pthread_once(&config_once, config_load);
	if (config_err) {
		errno = config_err;
		return NULL;
	}
	return &config;
}

struct fv_port *fv_port_of(struct ibv_context *ctx, uint8_t port_num)
{
	struct fv_device *d = fv_ctx(ctx)->dev;

	if (port_num < 1 || port_num > d->nports)
		return NULL;
	return &d->port[port_num - 1];
}
