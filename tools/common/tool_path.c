#include "tool_path.h"

#include <string.h>
#include <unistd.h>

int tool_dir(char *buf, size_t len)
{
	ssize_t n;
	char *slash;

	buf[0] = '\0';
	n = readlink("/proc/self/exe", buf, len - 1);
	if (n <= 0) {
		buf[0] = '\0';
		return -1;
	}
	buf[n] = '\0';
	slash = strrchr(buf, '/');
	if (!slash) {
		buf[0] = '\0';
		return -1;
	}
	*slash = '\0';
	return 0;
}
