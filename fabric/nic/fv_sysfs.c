/* The sysfs side of libibverbs: where the device tree is and how its files are read. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fv_internal.h"

const char *ibv_get_sysfs_path(void)
{
	struct fv_config *cfg = fv_config_get();

	return cfg ? cfg->sysfs_root : "/sys";
}

/* One value: at most size-1 bytes, the trailing newline dropped; its length, or -1 (errno). */
int ibv_read_sysfs_file(const char *dir, const char *file, char *buf, size_t size)
{
	char path[512];
	ssize_t n;
	int fd;

	if (size == 0 || snprintf(path, sizeof(path), "%s/%s", dir, file) >= (int)sizeof(path)) {
		errno = EINVAL;
		return -1;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	do
		n = read(fd, buf, size - 1);
	while (n < 0 && errno == EINTR);
	close(fd);
	if (n < 0)
		return -1;
	if (n > 0 && buf[n - 1] == '\n')
		n--;
	buf[n] = '\0';
	return (int)n;
}
