/*
 * Reading sysfs attributes (sysfs_read.h). Each is a one-line text file;
 * every reader goes through fl_read_first_line so that a missing, unreadable
 * or oversized path means the same thing everywhere: unknown.
 */
#include "sysfs_read.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <errno.h>

#include "error.h"
#include "file_read.h"
#include "fl_types.h"

const char *fl_sysfs_root(void)
{
	const char *root = getenv("FABRICLAB_SYSFS_ROOT");

	return root && *root ? root : "/sys";
}

int fl_sysfs_root_copy(char *out, size_t len)
{
	if (snprintf(out, len, "%s", fl_sysfs_root()) >= (int)len)
		return fl_fail(FL_ERR_USAGE, "FABRICLAB_SYSFS_ROOT is longer than %zu characters",
			       len - 1);
	return FL_OK;
}

int fl_read_first_line(char *buf, size_t len, const char *fmt, ...)
{
	char path[PATH_MAX];
	const char *why;
	va_list ap;
	ssize_t got;
	int n, fd;

	buf[0] = '\0';
	va_start(ap, fmt);
	n = vsnprintf(path, sizeof(path), fmt, ap);
	va_end(ap);
	/* a path longer than PATH_MAX could not be opened anyway */
	if (n < 0 || (size_t)n >= sizeof(path) || len < 2)
		return -1;
	/* a FIFO or device in the tree (a test fixture gone wrong) must not hang init */
	fd = fl_open_regular(path, &why);
	if (fd < 0)
		return -1;
	do
		got = read(fd, buf, len - 1);
	while (got < 0 && errno == EINTR);
	close(fd);
	if (got <= 0)
		return -1;
	buf[got] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

char *fl_sysfs_device_path(const char *root, const char *cls, const char *name)
{
	char path[PATH_MAX];

	if (snprintf(path, sizeof(path), "%s/class/%s/%s/device", root, cls, name) >=
	    (int)sizeof(path))
		return NULL;
	return realpath(path, NULL);
}

long fl_netdev_speed_mbps(const char *root, const char *ifname)
{
	char line[32];
	long mbps;

	if (fl_read_first_line(line, sizeof(line), "%s/class/net/%s/speed", root, ifname) ||
	    sscanf(line, "%ld", &mbps) != 1)
		return 0;
	return mbps > 0 ? mbps : 0;
}
