/* Where the running fabriclab binary lives, and where it looks for the plugin. */
#ifndef FABRICLAB_TOOL_PATH_H
#define FABRICLAB_TOOL_PATH_H

#include <stddef.h>

#define TOOL_PLUGIN_FILE "libnccl-net-fabriclab.so"

/* The folder of /proc/self/exe; 0 on success, -1 (buf = "") when unknown. */
int tool_dir(char *buf, size_t len);

/*
 * The folder to look in for the plugin when its plain name does not load: the binary's own
 * folder when the plugin is there (the build folder), else ../lib beside it when the plugin
 * is there (installed: PREFIX/bin/fabriclab, PREFIX/lib/libnccl-net-fabriclab.so), else the
 * binary's folder. 0 on success, -1 (buf = "") when the binary's folder is unknown.
 */
int tool_plugin_dir(char *buf, size_t len);

#endif
