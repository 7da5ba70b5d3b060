/*
 * Which network interfaces the socket transport offers as devices, chosen the
 * way NCCL chooses them, and what sysfs says about each.
 */
#ifndef FL_SOCK_IFACE_H
#define FL_SOCK_IFACE_H

#include <net/if.h>
#include <sys/socket.h>

#include "sock_config.h"

#define SOCK_IFILTER_MAX 32
#define SOCK_DEFAULT_SPEED_MBPS 10000 /* when sysfs has no speed (lo, veth, VMs) */

/*
 * An NCCL_SOCKET_IFNAME list: "eth,ib" are name prefixes, "^docker,lo"
 * excludes prefixes, "=eth0" (or "^=eth0") compares whole names.
 */
struct sock_ifilter {
	int exclude;
	int exact;
	int n;
	char names[SOCK_IFILTER_MAX][IFNAMSIZ];
};

/* One address-carrying interface as getifaddrs reported it. */
struct sock_candidate {
	char name[IFNAMSIZ];
	struct sockaddr_storage addr;
	socklen_t addrlen;
};

struct sock_iface {
	char name[IFNAMSIZ];
	struct sockaddr_storage addr;
	socklen_t addrlen;
	int speed_mbps;
	char *pci_path; /* malloc'd; NULL when the interface has no device behind it */
};

/* FL_ERR_USAGE when a name is too long or there are too many. */
int sock_ifilter_parse(const char *spec, struct sock_ifilter *filter);
int sock_ifilter_match(const struct sock_ifilter *filter, const char *ifname);

/*
 * Picks devices among candidates (in their order) into picked[] as indices:
 * with a spec, those it matches; without, ib* first, else anything but
 * docker*, lo* and virbr*, else lo. Returns how many (at most max).
 */
int sock_iface_select(const struct sock_candidate *cands, int ncands, const char *spec,
		      int *picked, int max);

int sock_iface_speed(const char *sysfs_root, const char *ifname);
char *sock_iface_pci_path(const char *sysfs_root, const char *ifname);

/* The devices for cfg on this host; *count may be 0. They live as long as the process. */
int sock_iface_discover(const struct sock_config *cfg, struct sock_iface *out, int max,
			int *count);

#endif
