/* Where the running fabriclab binary lives: the build folder holding the plugin next to it. */
#ifndef FABRICLAB_TOOL_PATH_H
#define FABRICLAB_TOOL_PATH_H

#include <stddef.h>

/* The folder of /proc/self/exe; 0 on success, -1 (buf = "") when unknown. */
int tool_dir(char *buf, size_t len);

#endif
