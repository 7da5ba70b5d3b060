#include "tool_path.h"

#include <stdio.h>
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

static int holds_plugin(const char *dir)
{
	char path[4096];

	if (snprintf(path, sizeof(path), "%s/%s", dir, TOOL_PLUGIN_FILE) >= (int)sizeof(path))
		return 0;
	return access(path, R_OK) == 0;
}

int tool_plugin_dir(char *buf, size_t len)
{
	char lib[4096];

	if (tool_dir(buf, len))
		return -1;
	if (holds_plugin(buf))
		return 0;
	if (snprintf(lib, sizeof(lib), "%s/../lib", buf) < (int)sizeof(lib) && holds_plugin(lib) &&
	    strlen(lib) < len)
		strcpy(buf, lib);
	return 0;
}
