/* NCCL's two-step lookup of a plugin library (plugin_open.h). */
#include "plugin_open.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

static int is_soname(const char *name)
{
	size_t len = strlen(name);

	return len > 6 && !strncmp(name, "lib", 3) && !strcmp(name + len - 3, ".so");
}

void *fl_plugin_open(const char *name, const char *kind, char *why, size_t why_len)
{
	char first[256], alt[320];
	void *lib;

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
