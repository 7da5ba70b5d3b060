/*
 * Opening an NCCL plugin library by NAME the way NCCL opens NCCL_NET_PLUGIN
 * (reference nccl-abi.md 1.3): dlopen(NAME) as given, then, when that fails
 * and NAME has no '/' and is not of the form lib*.so, libnccl-KIND-NAME.so.
 * Both the ext transport (the plugin it wraps) and the shim (the plugin it
 * drives) use it, so they find the same file NCCL would.
 */
#ifndef FL_PLUGIN_OPEN_H
#define FL_PLUGIN_OPEN_H

#include <stddef.h>

/*
 * kind: "net" (libnccl-net-NAME.so). Returns the RTLD_NOW | RTLD_LOCAL handle,
 * or NULL with why = "cannot load NAME: <dlerror>" or "cannot load NAME
 * (<dlerror>) nor libnccl-KIND-NAME.so (<dlerror>)", or, for a path naming a
 * FIFO, a directory or a device, "cannot load NAME: it is a FIFO, not a shared
 * object file" without opening it (dlopen would block on a FIFO).
 */
void *fl_plugin_open(const char *name, const char *kind, char *why, size_t why_len);

#endif
