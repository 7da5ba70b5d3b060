/* NCCL's two-step lookup of a plugin library (plugin_open.h). */
#include "plugin_open.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

static int is_soname(const char *name)
{
	size_t len = strlen(name);

	return len > 6 && !strncmp(name, "lib", 3) && !strcmp(name + len - 3, ".so");
}

static const char *kind_of(mode_t mode)
{
	return S_ISDIR(mode) ? "a directory" : S_ISFIFO(mode) ? "a FIFO" :
	       S_ISCHR(mode) ? "a character device" : S_ISBLK(mode) ? "a block device" :
	       S_ISSOCK(mode) ? "a socket" : "not a regular file";
}

/*
 * dlopen() open()s the path before it reads a byte: a FIFO with no writer
 * blocks it for ever, a device may too. A path that names something other
 * than a regular file (after symlinks) is refused before that call; a missing
 * one is left to dlopen, whose message says so.
 */
static int refuse_non_file(const char *name, char *why, size_t why_len)
{
	struct stat st;

	if (!strchr(name, '/') || stat(name, &st) != 0 || S_ISREG(st.st_mode))
		return 0;
	snprintf(why, why_len, "cannot load %s: it is %s, not a shared object file", name,
		 kind_of(st.st_mode));
	return 1;
}

void *fl_plugin_open(const char *name, const char *kind, char *why, size_t why_len)
{
	char first[256], alt[320];
	void *lib;

	if (refuse_non_file(name, why, why_len))
		return NULL;
	dlerror();
	lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
	if (lib)
		return lib;
	snprintf(first, sizeof(first), "%s", dlerror());
	if (strchr(name, '/') || is_soname(name)) {
		snprintf(why, why_len, "cannot load %s: %s", name, first);
		return NULL;
	}
	snprintf(alt, sizeof(alt), "libnccl-%s-%s.so", kind, name);
	lib = dlopen(alt, RTLD_NOW | RTLD_LOCAL);
	if (!lib)
		snprintf(why, why_len, "cannot load %s (%s) nor %s (%s)", name, first, alt,
			 dlerror());
	return lib;
}
