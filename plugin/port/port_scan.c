/*
 * Every RDMA port of the node, from sysfs as the kernel lays it out:
 * class/infiniband/<dev>/ports/<n>/{state,phys_state,rate,link_layer,...}.
 * The highest rate a port could run at is not in sysfs; docs/doctor.md says
 * how it is decided here (decide_max_rates).
 */
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "port_info.h"
#include "base/sysfs_read.h"

/* Copies what fits; names were length-checked where it matters. */
static void set_text(char *dst, size_t len, const char *src)
{
	size_t n = strnlen(src, len - 1);

	memcpy(dst, src, n);
	dst[n] = '\0';
}

static int read_port_file(const char *root, const struct fl_port *p, const char *file, char *buf,
			  size_t len)
{
	return fl_read_first_line(buf, len, "%s/class/infiniband/%s/ports/%d/%s", root, p->dev,
				  p->num, file);
}

/* "4: ACTIVE" -> 4 and "ACTIVE". */
static void parse_numbered(const char *text, int *num, char *name, size_t len)
{
	const char *colon = strchr(text, ':');

	*num = atoi(text);
	set_text(name, len, colon ? colon + 1 + strspn(colon + 1, " ") : text);
}

/* The interface that carries the port's RoCE traffic: the one its GIDs belong to. */
static void gid_netdev(const char *root, struct fl_port *p)
{
	char dir[PATH_MAX + 128], name[IFNAMSIZ + 8];
	struct dirent *e;
	long best = LONG_MAX;
	DIR *d;

	snprintf(dir, sizeof(dir), "%s/class/infiniband/%s/ports/%d/gid_attrs/ndevs", root, p->dev,
		 p->num);
	d = opendir(dir);
	if (!d)
		return;
	while ((e = readdir(d))) {
		long index = strtol(e->d_name, NULL, 10);

		if (e->d_name[0] == '.' || index >= best)
			continue;
		if (fl_read_first_line(name, sizeof(name), "%s/%s", dir, e->d_name) || !name[0] ||
		    strlen(name) >= IFNAMSIZ)
			continue;
		best = index;
		set_text(p->netdev, sizeof(p->netdev), name);
	}
	closedir(d);
}

/* Without GIDs: the device's interfaces; on a two-port device dev_port tells them apart. */
static void device_netdev(const char *root, struct fl_port *p)
{
	char dir[PATH_MAX + 128], line[32];
	struct dirent *e;
	DIR *d;

	snprintf(dir, sizeof(dir), "%s/class/infiniband/%s/device/net", root, p->dev);
	d = opendir(dir);
	if (!d)
		return;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.' || strlen(e->d_name) >= IFNAMSIZ)
			continue;
		if (!fl_read_first_line(line, sizeof(line), "%s/%s/dev_port", dir, e->d_name) &&
		    atoi(line) != p->num - 1)
			continue;
		set_text(p->netdev, sizeof(p->netdev), e->d_name);
		break;
	}
	closedir(d);
}

static void read_state(const char *root, struct fl_port *p)
{
	char buf[64];
	long netdev_mbps = p->netdev[0] ? fl_netdev_speed_mbps(root, p->netdev) : 0;

	p->state = p->phys_state = 0;
	p->state_name[0] = p->phys_name[0] = '\0';
	p->active_gbps = 0.0;
	if (!read_port_file(root, p, "state", buf, sizeof(buf)))
		parse_numbered(buf, &p->state, p->state_name, sizeof(p->state_name));
	if (!read_port_file(root, p, "phys_state", buf, sizeof(buf)))
		parse_numbered(buf, &p->phys_state, p->phys_name, sizeof(p->phys_name));
	read_port_file(root, p, "rate", p->rate_text, sizeof(p->rate_text));
	fl_port_rate_parse(p->rate_text, &p->active_gbps, NULL, NULL, 0);
	if (netdev_mbps)
		p->active_gbps = (double)netdev_mbps / 1000.0;
}

static void read_device_facts(const char *root, struct fl_port *p)
{
	char *real = fl_sysfs_device_path(root, "infiniband", p->dev);

	fl_read_first_line(p->hca_type, sizeof(p->hca_type), "%s/class/infiniband/%s/hca_type",
			   root, p->dev);
	if (real && strlen(real) < sizeof(p->pci_path))
		strcpy(p->pci_path, real);
	free(real);
}

static void read_port(const char *root, const char *dev, int num, struct fl_port *p)
{
	memset(p, 0, sizeof(*p));
	set_text(p->dev, sizeof(p->dev), dev);
	p->num = num;
	snprintf(p->name, sizeof(p->name), "%.30s/%d", dev, num);
	read_port_file(root, p, "link_layer", p->link_layer, sizeof(p->link_layer));
	if (!strcmp(p->link_layer, "Ethernet")) {
		gid_netdev(root, p);
		if (!p->netdev[0])
			device_netdev(root, p);
		fl_port_read_qos(root, p->netdev, &p->qos);
	}
	read_device_facts(root, p);
	read_state(root, p);
	fl_port_read_counters(root, p);
}

static int cmp_ports(const void *pa, const void *pb)
{
	const struct fl_port *a = pa, *b = pb;
	int c = strverscmp(a->dev, b->dev);

	return c ? c : a->num - b->num;
}

static void scan_device(const char *root, const char *dev, struct fl_port_list *out)
{
	char dir[PATH_MAX + 128];
	struct dirent *e;
	DIR *d;

	snprintf(dir, sizeof(dir), "%s/class/infiniband/%s/ports", root, dev);
	d = opendir(dir);
	if (!d)
		return;
	while ((e = readdir(d)) && out->n < FL_PORT_MAX) {
		int num = atoi(e->d_name);

		if (num > 0 && strlen(dev) < 30)
			read_port(root, dev, num, &out->p[out->n++]);
	}
	closedir(d);
}

bool fl_port_is_active(const struct fl_port *p)
{
	return p->state == FL_PORT_ACTIVE || p->state == FL_PORT_ACTIVE_DEFER;
}

bool fl_port_trained_down(const struct fl_port *p)
{
	return fl_port_is_active(p) && p->max_gbps > 0 && p->active_gbps > 0 &&
	       p->active_gbps < 0.99 * p->max_gbps;
}

/*
 * Ethernet: the interface's fastest supported link mode. InfiniBand (and
 * Ethernet without link modes): sysfs has only the active rate, so the
 * fastest active port of the same HCA model and link layer on this node sets
 * what the others should reach; a model seen once has no reference.
 */
static void decide_max_rates(const char *root, struct fl_port_list *l)
{
	for (int i = 0; i < l->n; i++) {
		struct fl_port *p = &l->p[i];
		long mbps = p->netdev[0] ? fl_ethtool_max_mbps(root, p->netdev) : 0;
		int peers = 0;
		double best = 0.0;

		p->max_gbps = 0.0;
		p->max_from[0] = '\0';
		if (mbps > 0) {
			p->max_gbps = (double)mbps / 1000.0;
			snprintf(p->max_from, sizeof(p->max_from), "link modes");
			continue;
		}
		for (int j = 0; j < l->n; j++) {
			const struct fl_port *q = &l->p[j];

			if (j == i || !fl_port_is_active(q) || strcmp(q->hca_type, p->hca_type) ||
			    strcmp(q->link_layer, p->link_layer))
				continue;
			peers++;
			best = q->active_gbps > best ? q->active_gbps : best;
		}
		if (!peers || !fl_port_is_active(p))
			continue;
		p->max_gbps = best > p->active_gbps ? best : p->active_gbps;
		snprintf(p->max_from, sizeof(p->max_from), "same HCA model");
	}
}

void fl_ports_scan(const char *root, struct fl_port_list *out)
{
	char dir[PATH_MAX + 32];
	struct dirent *e;
	DIR *d;

	out->n = 0;
	snprintf(dir, sizeof(dir), "%s/class/infiniband", root);
	d = opendir(dir);
	if (!d)
		return;
	while ((e = readdir(d)) && out->n < FL_PORT_MAX)
		if (e->d_name[0] != '.')
			scan_device(root, e->d_name, out);
	closedir(d);
	qsort(out->p, (size_t)out->n, sizeof(out->p[0]), cmp_ports);
	decide_max_rates(root, out);
}

void fl_ports_refresh(const char *root, struct fl_port_list *ports)
{
	for (int i = 0; i < ports->n; i++) {
		struct fl_port *p = &ports->p[i];

		read_state(root, p);
		fl_port_read_counters(root, p);
		/* Settings changed while the job runs (a NIC reconfigured) show in the next one. */
		fl_port_read_qos(root, p->netdev, &p->qos);
	}
	decide_max_rates(root, ports);
}

const struct fl_port *fl_ports_first_active(const struct fl_port_list *l)
{
	for (int i = 0; i < l->n; i++)
		if (fl_port_is_active(&l->p[i]))
			return &l->p[i];
	return NULL;
}

const struct fl_port *fl_ports_find(const struct fl_port_list *l, const char *name)
{
	for (int i = 0; i < l->n; i++)
		if (!strcmp(l->p[i].name, name))
			return &l->p[i];
	return NULL;
}
