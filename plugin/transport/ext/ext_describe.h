/*
 * What a wrapped plugin is and advertises, in words, for the INFO lines at
 * init (ext_transport.c) and for `fabriclab doctor` (tools/doctor/doctor_ext.c),
 * so both say the same thing.
 */
#ifndef FL_EXT_DESCRIBE_H
#define FL_EXT_DESCRIBE_H

#include <stddef.h>

#include "base/fl_types.h"
#include "ext_inner.h"

/* "flsock (ncclNetPlugin_v10) from /path/libnccl-net-flsock-v10.so; offload: none" */
void ext_describe_plugin(const struct fl_host_net *in, char *out, size_t len);
/* Every field getProperties reported (after NCCL's defaults for those its version lacks). */
void ext_describe_props(const struct fl_props *p, char *out, size_t len);

#endif
