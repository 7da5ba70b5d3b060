/*
 * Small text files of sysfs (and /proc), read the one way the transports, the
 * port counters and the doctor all need. The sysfs root is FABRICLAB_SYSFS_ROOT
 * (default /sys) so that tests read fixture trees instead of this machine's.
 */
#ifndef FL_SYSFS_READ_H
#define FL_SYSFS_READ_H

#include <stddef.h>

/* FABRICLAB_SYSFS_ROOT, default "/sys". */
const char *fl_sysfs_root(void);
/* The same, copied into a config's buffer: FL_ERR_USAGE when it does not fit. */
int fl_sysfs_root_copy(char *out, size_t len);

/*
 * The first line of the file at the path fmt formats, without its newline:
 * 0, or -1 when it cannot be opened or read (sysfs fails reads of attributes a
 * device does not have, with EINVAL); buf is then "".
 */
int fl_read_first_line(char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * The real path of the device behind <root>/class/<cls>/<name> (its PCI
 * function, for a NIC); NULL when it has none. The caller frees it.
 */
char *fl_sysfs_device_path(const char *root, const char *cls, const char *name);

/* An Ethernet interface's speed file in Mbit/s; 0 unknown (down links read -1, lo fails). */
long fl_netdev_speed_mbps(const char *root, const char *ifname);

#endif
