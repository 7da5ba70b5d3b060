/*
 * The ncclNetPlugin_v6..v12 tables fabriclab exports (net_abi.c). They are not
 * const: the optional device-offload slots (getDeviceMr, irecvConsumed,
 * makeVDevice) are filled during the first init when the transport is ext and
 * the plugin it wraps has them, and stay NULL otherwise. NCCL reads those
 * slots only after init returns (its v6-v10 adapters copy them then; v11+ read
 * them at each use). Kept apart from nccl_abi.h so that test inner plugins,
 * which export tables of their own under the same names, can use its types.
 */
#ifndef FL_NET_ABI_H
#define FL_NET_ABI_H

#include "abi/nccl_abi.h"

extern struct fl_abi_net_v6 ncclNetPlugin_v6;
extern struct fl_abi_net_v7 ncclNetPlugin_v7;
extern struct fl_abi_net_v8 ncclNetPlugin_v8;
extern struct fl_abi_net_v9 ncclNetPlugin_v9;
extern struct fl_abi_net_v10 ncclNetPlugin_v10;
extern struct fl_abi_net_v11 ncclNetPlugin_v11;
extern struct fl_abi_net_v12 ncclNetPlugin_v12;

#endif
