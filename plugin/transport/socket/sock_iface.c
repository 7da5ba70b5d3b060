#include "sock_iface.h"

#include <errno.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/fl_types.h"
#include "base/sysfs_read.h"

int sock_ifilter_parse(const char *spec, struct sock_ifilter *filter)
{
	const char *p = spec;

	memset(filter, 0, sizeof(*filter));
	if (*p == '^') {
		filter->exclude = 1;
		p++;
	}
	if (*p == '=') {
		filter->exact = 1;
		p++;
	}
	while (*p) {
		size_t len = strcspn(p, ",");

		if (len >= IFNAMSIZ)
			return fl_fail(FL_ERR_USAGE,
				       "interface list \"%s\": name \"%.*s\" is too long", spec,
				       (int)len, p);
		if (len) {
			if (filter->n == SOCK_IFILTER_MAX)
				return fl_fail(FL_ERR_USAGE,
					       "interface list \"%s\": more than %d names", spec,
					       SOCK_IFILTER_MAX);
			memcpy(filter->names[filter->n], p, len);
			filter->names[filter->n++][len] = '\0';
		}
		p += len;
		if (*p == ',')
			p++;
	}
	return FL_OK;
}

static int name_listed(const struct sock_ifilter *filter, const char *ifname)
{
	for (int i = 0; i < filter->n; i++) {
		const char *want = filter->names[i];

		if (filter->exact ? !strcmp(ifname, want) : !strncmp(ifname, want, strlen(want)))
			return 1;
	}
	return 0;
}

int sock_ifilter_match(const struct sock_ifilter *filter, const char *ifname)
{
	return name_listed(filter, ifname) != filter->exclude;
}

static int select_with(const struct sock_candidate *cands, int ncands, const char *spec,
		       int *picked, int max)
{
	struct sock_ifilter filter;
	int n = 0;

	if (sock_ifilter_parse(spec, &filter))
		return -1;
	for (int i = 0; i < ncands && n < max; i++)
		if (sock_ifilter_match(&filter, cands[i].name))
			picked[n++] = i;
	return n;
}

int sock_iface_select(const struct sock_candidate *cands, int ncands, const char *spec,
		      int *picked, int max)
{
	static const char *const fallbacks[] = { "ib", "^docker,lo,virbr", "lo" };
	int n = 0;

	if (spec && *spec)
		return select_with(cands, ncands, spec, picked, max);
	for (size_t i = 0; i < sizeof(fallbacks) / sizeof(fallbacks[0]) && n <= 0; i++)
		n = select_with(cands, ncands, fallbacks[i], picked, max);
	return n < 0 ? 0 : n;
}

int sock_iface_speed(const char *sysfs_root, const char *ifname)
{
	long mbps = fl_netdev_speed_mbps(sysfs_root, ifname);

	return mbps > 0 && mbps <= 0x7fffffff ? (int)mbps : SOCK_DEFAULT_SPEED_MBPS;
}

char *sock_iface_pci_path(const char *sysfs_root, const char *ifname)
{
	return fl_sysfs_device_path(sysfs_root, "net", ifname);
}

static int usable_address(const struct ifaddrs *ifa, int family)
{
	int af;

	if (!ifa->ifa_addr || !(ifa->ifa_flags & IFF_UP))
		return 0;
	af = ifa->ifa_addr->sa_family;
	if (af != AF_INET && af != AF_INET6)
		return 0;
	if (family != AF_UNSPEC && af != family)
		return 0;
	/* a link-local address needs a scope the peer cannot know */
	if (af == AF_INET6 &&
	    IN6_IS_ADDR_LINKLOCAL(&((const struct sockaddr_in6 *)ifa->ifa_addr)->sin6_addr))
		return 0;
	return 1;
}

static int already_listed(const struct sock_candidate *cands, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(cands[i].name, name))
			return 1;
	return 0;
}

/* One candidate per interface: its first usable address (getifaddrs lists IPv4 first). */
static int list_candidates(int family, struct sock_candidate *cands, int max, int *count)
{
	struct ifaddrs *all, *ifa;
	int n = 0;

	if (getifaddrs(&all))
		return fl_fail(FL_ERR_SYSTEM, "getifaddrs: %s", strerror(errno));
	for (ifa = all; ifa && n < max; ifa = ifa->ifa_next) {
		if (!usable_address(ifa, family) || strlen(ifa->ifa_name) >= IFNAMSIZ ||
		    already_listed(cands, n, ifa->ifa_name))
			continue;
		strcpy(cands[n].name, ifa->ifa_name);
		cands[n].addrlen = ifa->ifa_addr->sa_family == AF_INET ?
					   sizeof(struct sockaddr_in) :
					   sizeof(struct sockaddr_in6);
		memset(&cands[n].addr, 0, sizeof(cands[n].addr));
		memcpy(&cands[n].addr, ifa->ifa_addr, cands[n].addrlen);
		n++;
	}
	freeifaddrs(all);
	*count = n;
	return FL_OK;
}

/*
 * A selection that matches nothing is a typo NCCL users expect to hear of:
 * name the variable, its value and what there is to choose from.
 */
static int no_match(const char *spec, const struct sock_candidate *cands, int ncands)
{
	char names[256] = "";
	size_t off = 0;

	for (int i = 0; i < ncands && off < sizeof(names); i++)
		off += (size_t)snprintf(names + off, sizeof(names) - off, "%s%s", i ? ", " : "",
					cands[i].name);
	return fl_fail(FL_ERR_USAGE, "%s=%s matches no network interface; interfaces with an "
		       "address: %s", sock_ifspec_variable(), spec, ncands ? names : "none");
}

int sock_iface_discover(const struct sock_config *cfg, struct sock_iface *out, int max,
			int *count)
{
	struct sock_candidate cands[64];
	int picked[SOCK_MAX_DEVS];
	struct sock_ifilter check;
	int ncands = 0, n, rc;

	*count = 0;
	if (max > SOCK_MAX_DEVS)
		max = SOCK_MAX_DEVS;
	if (cfg->ifspec[0] && (rc = sock_ifilter_parse(cfg->ifspec, &check)))
		return rc;
	rc = list_candidates(cfg->family, cands, 64, &ncands);
	if (rc)
		return rc;
	n = sock_iface_select(cands, ncands, cfg->ifspec, picked, max);
	if (!n && cfg->ifspec[0])
		return no_match(cfg->ifspec, cands, ncands);
	for (int i = 0; i < n; i++) {
		const struct sock_candidate *c = &cands[picked[i]];

		memset(&out[i], 0, sizeof(out[i]));
		strcpy(out[i].name, c->name);
		out[i].addr = c->addr;
		out[i].addrlen = c->addrlen;
		out[i].speed_mbps = sock_iface_speed(cfg->sysfs_root, c->name);
		out[i].pci_path = sock_iface_pci_path(cfg->sysfs_root, c->name);
	}
	*count = n;
	return FL_OK;
}
