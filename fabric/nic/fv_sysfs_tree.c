/* The configured devices as a sysfs tree, laid out as the kernel lays out /sys, so that programs
 * reading sysfs beside verbs (NCCL's net_ib: the PCI path and RoCE GID types; fabriclab with
 * FABRICLAB_SYSFS_ROOT; ibv_devinfo) see the devices the fake serves:
 *   devices/pci0000:00/0000:BB:00.0/{vendor,device,class,numa_node}
 *   devices/pci0000:00/0000:BB:00.0/infiniband/<dev>/{node_guid,fw_ver,hca_type,...}
 *       ports/<n>/{state,phys_state,rate,link_layer,lid,gids/<i>,gid_attrs/types/<i>,pkeys/0}
 *   class/infiniband/<dev> -> the device's folder above; class/infiniband_verbs/uverbs<i>;
 *   bus/pci/devices/0000:BB:00.0 -> the PCI function
 * Files are replaced by rename, so processes that publish the same tree at once never show a
 * reader half a file. Port counters are left out: the fake does not count. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fv_internal.h"

#define PATH_LEN 512

static void join(char *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A path of at most PATH_LEN - 1 bytes (names here are short: nothing is cut in practice). */
static void join(char *out, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(out, PATH_LEN, fmt, ap);
	va_end(ap);
}

static int mkdirs(const char *path)
{
	char p[PATH_LEN];

	snprintf(p, sizeof(p), "%s", path);
	for (char *s = p + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(p, 0755) && errno != EEXIST)
			return errno;
		*s = '/';
	}
	return mkdir(p, 0755) && errno != EEXIST ? errno : 0;
}

static int put(const char *dir, const char *name, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* dir/name gets one line of text. */
static int put(const char *dir, const char *name, const char *fmt, ...)
{
	char path[PATH_LEN], tmp[PATH_LEN + 32];
	va_list ap;
	FILE *f;
	int err;

	join(path, "%s/%s", dir, name);
	snprintf(tmp, sizeof(tmp), "%s.%d.tmp", path, (int)getpid());
	f = fopen(tmp, "w");
	if (!f)
		return errno;
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fputc('\n', f);
	err = fclose(f) ? errno : 0;
	if (!err && rename(tmp, path))
		err = errno;
	if (err)
		unlink(tmp);
	return err;
}

static int put_link(const char *path, const char *target)
{
	char tmp[PATH_LEN + 32];

	snprintf(tmp, sizeof(tmp), "%s.%d.tmp", path, (int)getpid());
	unlink(tmp);
	if (symlink(target, tmp))
		return errno;
	if (rename(tmp, path)) {
		unlink(tmp);
		return errno;
	}
	return 0;
}

/* Lane rate in Gb/s times 10 and the kernel's name for each active_speed code. */
static void speed_of(uint8_t code, int *gbps10, const char **name)
{
	static const struct { uint8_t code; int gbps10; const char *name; } t[] = {
		{ 1, 25, "" }, { 2, 50, " DDR" }, { 4, 100, " QDR" }, { 8, 100, " FDR10" },
		{ 16, 140, " FDR" }, { 32, 250, " EDR" }, { 64, 500, " HDR" },
		{ 128, 1000, " NDR" },
	};

	*gbps10 = 25;
	*name = "";
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		if (t[i].code == code) {
			*gbps10 = t[i].gbps10;
			*name = t[i].name;
		}
	}
}

static int width_of(uint8_t code)
{
	switch (code) {
	case 2: return 4;
	case 4: return 8;
	case 8: return 12;
	case 16: return 2;
	default: return 1;
	}
}

/* "200 Gb/sec (4X HDR)", as the kernel's rate attribute reads. */
static void rate_text(const struct fv_port *p, char *out, size_t len)
{
	int width = width_of(p->width), gbps10;
	const char *name;
	int total;

	speed_of(p->speed, &gbps10, &name);
	total = gbps10 * width;
	if (total % 10)
		snprintf(out, len, "%d.%d Gb/sec (%dX%s)", total / 10, total % 10, width, name);
	else
		snprintf(out, len, "%d Gb/sec (%dX%s)", total / 10, width, name);
}

static const char *state_text(int state)
{
	switch (state) {
	case IBV_PORT_DOWN: return "1: DOWN";
	case IBV_PORT_INIT: return "2: INIT";
	case IBV_PORT_ARMED: return "3: ARMED";
	default: return "4: ACTIVE";
	}
}

static void gid_text(const union ibv_gid *g, char *out, size_t len)
{
	const uint8_t *r = g->raw;

	size_t used = 0;

	for (int i = 0; i < 16 && used < len; i += 2)
		used += (size_t)snprintf(out + used, len - used, "%s%02x%02x", i ? ":" : "", r[i],
					 r[i + 1]);
}

static int publish_port(const char *ibdir, int num, const struct fv_port *p)
{
	char dir[PATH_LEN], sub[PATH_LEN], text[64], name[16];
	bool ib = p->link_layer == IBV_LINK_LAYER_INFINIBAND;
	int state = atomic_load(&p->state), err;

	join(dir, "%s/ports/%d", ibdir, num);
	rate_text(p, text, sizeof(text));
	err = mkdirs(dir) ?: put(dir, "state", "%s", state_text(state)) ?:
	      put(dir, "phys_state", "%s", state == IBV_PORT_DOWN ? "3: Disabled" : "5: LinkUp") ?:
	      put(dir, "rate", "%s", text) ?:
	      put(dir, "link_layer", "%s", ib ? "InfiniBand" : "Ethernet") ?:
	      put(dir, "lid", "0x%x", p->lid) ?: put(dir, "sm_lid", "0x%x", ib ? 1 : 0) ?:
	      put(dir, "lid_mask_count", "0");
	for (int i = 0; !err && i < FV_GID_TBL_LEN; i++) {
		union ibv_gid zero = { .raw = { 0 } };
		bool used = i < p->ngids;
		bool v2 = used && p->gid_type[i] == IBV_GID_TYPE_ROCE_V2;

		snprintf(name, sizeof(name), "%d", i);
		gid_text(used ? &p->gid[i] : &zero, text, sizeof(text));
		join(sub, "%s/gids", dir);
		err = mkdirs(sub) ?: put(sub, name, "%s", text);
		/* the kernel fails reads of an empty entry's type: such files are left out */
		join(sub, "%s/gid_attrs/types", dir);
		if (!err && used)
			err = mkdirs(sub) ?: put(sub, name, "%s", v2 ? "RoCE v2" : "IB/RoCE v1");
	}
	join(sub, "%s/pkeys", dir);
	return err ?: mkdirs(sub) ?: put(sub, "0", "0xffff");
}

static int publish_device(const char *root, const struct fv_device *d)
{
	char pci[16], devdir[PATH_LEN], ibdir[PATH_LEN], path[PATH_LEN], target[PATH_LEN];
	uint64_t g = d->guid;
	bool ib = d->port[0].link_layer == IBV_LINK_LAYER_INFINIBAND;
	int err;

	snprintf(pci, sizeof(pci), "0000:%02x:00.0", 0x10 + d->index);
	join(devdir, "%s/devices/pci0000:00/%s", root, pci);
	join(ibdir, "%s/infiniband/%s", devdir, d->ibdev.name);
	err = mkdirs(ibdir) ?: put(devdir, "vendor", "0x15b3") ?: put(devdir, "device", "0x101b") ?:
	      put(devdir, "class", "%s", ib ? "0x020700" : "0x020000") ?:
	      put(devdir, "numa_node", "-1") ?:
	      put(ibdir, "node_guid", "%04x:%04x:%04x:%04x", (unsigned)(g >> 48) & 0xffff,
		  (unsigned)(g >> 32) & 0xffff, (unsigned)(g >> 16) & 0xffff,
		  (unsigned)g & 0xffff) ?:
	      put(ibdir, "sys_image_guid", "%04x:%04x:%04x:%04x", (unsigned)(g >> 48) & 0xffff,
		  (unsigned)(g >> 32) & 0xffff, (unsigned)(g >> 16) & 0xffff,
		  (unsigned)g & 0xffff) ?:
	      put(ibdir, "fw_ver", "28.39.1002") ?: put(ibdir, "hca_type", "MT4123") ?:
	      put(ibdir, "board_id", "FABRICLAB_FAKE") ?: put(ibdir, "node_type", "1: CA") ?:
	      put(ibdir, "node_desc", "fabriclab fake %s", d->ibdev.name);
	join(path, "%s/device", ibdir);
	join(target, "../../../%s", pci);
	err = err ?: put_link(path, target);
	for (int p = 0; !err && p < d->nports; p++)
		err = publish_port(ibdir, p + 1, &d->port[p]);
	join(path, "%s/class/infiniband", root);
	err = err ?: mkdirs(path);
	join(path, "%s/class/infiniband/%s", root, d->ibdev.name);
	join(target, "../../devices/pci0000:00/%s/infiniband/%s", pci,
		 d->ibdev.name);
	err = err ?: put_link(path, target);
	join(path, "%s/bus/pci/devices", root);
	err = err ?: mkdirs(path);
	join(path, "%s/bus/pci/devices/%s", root, pci);
	join(target, "../../../devices/pci0000:00/%s", pci);
	err = err ?: put_link(path, target);
	join(path, "%s/class/infiniband_verbs/%s", root, d->ibdev.dev_name);
	return err ?: mkdirs(path) ?: put(path, "ibdev", "%s", d->ibdev.name) ?:
	       put(path, "abi_version", "1");
}

int fv_sysfs_publish(struct fv_config *cfg)
{
	int err = 0;

	for (int i = 0; !err && i < cfg->ndevs; i++)
		err = publish_device(cfg->sysfs_root, &cfg->dev[i]);
	if (err)
		fprintf(stderr, "fakeverbs: cannot publish the sysfs tree under %s: %s\n",
			cfg->sysfs_root, strerror(err));
	return err;
}
