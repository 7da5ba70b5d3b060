/*
 * Values read from sysfs, whatever a broken driver or fixture writes: an
 * interface speed file and an RDMA port's rate line. The input is written as
 * class/net/f0/speed of a private tree, then parsed as a rate line.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "plugin/base/sysfs_read.h"
#include "plugin/port/port_info.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char root[64], speed_path[128];

static void make_tree(void)
{
	char dir[128];

	snprintf(root, sizeof(root), "/tmp/fabriclab-fuzz-sysfs.%d", (int)getpid());
	snprintf(dir, sizeof(dir), "%s/class/net/f0", root);
	for (char *p = dir + 1; *p; p++)
		if (*p == '/') {
			*p = '\0';
			mkdir(dir, 0700);
			*p = '/';
		}
	mkdir(dir, 0700);
	snprintf(speed_path, sizeof(speed_path), "%s/speed", dir);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char text[256], speed[32];
	double gbps = 0;
	int width = 0;
	FILE *f;

	if (!root[0])
		make_tree();
	f = fopen(speed_path, "w");
	if (!f || (size && fwrite(data, 1, size, f) != size) || fclose(f))
		abort();
	if (fl_netdev_speed_mbps(root, "f0") < 0)
		abort();
	memcpy(text, data, size < sizeof(text) - 1 ? size : sizeof(text) - 1);
	text[size < sizeof(text) - 1 ? size : sizeof(text) - 1] = '\0';
	fl_port_rate_parse(text, &gbps, &width, speed, sizeof(speed));
	if (strlen(speed) >= sizeof(speed))
		abort();
	fl_link_mode_mbps(text);
	return 0;
}
