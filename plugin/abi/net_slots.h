/*
 * The slots of an ncclNetPlugin_vN table that NCCL calls without checking for
 * NULL, read the way NCCL reads them: after the plugin's init returned. A
 * plugin may export a table holding only name and init and fill the rest
 * inside init (Mellanox nccl-rdma-sharp-plugins, src/p2p_plugin.c); NCCL
 * 2.28.9 calls init and only then devices (src/plugin/net.cc:176-182), its
 * v6-v10 adapters copy the slots after the plugin's init
 * (src/plugin/net/net_v10.cc:81-101), and v11+ read them at each use. Shared
 * by the ext transport (the plugin it wraps) and the shim (the plugin it
 * drives), so both accept and refuse the same tables.
 */
#ifndef FL_NET_SLOTS_H
#define FL_NET_SLOTS_H

/*
 * NULL when every slot NCCL would call unchecked is set in `table` (an
 * ncclNetPlugin_v<version>, 5..12), else the NCCL name of the first that is
 * not: "devices", "getProperties", ..., and "finalize" from v11 (2.28.9
 * net.cc:341 calls it at every communicator's end). iflush, regMrDmaBuf and
 * the device-offload slots are optional: NCCL checks them or calls them only
 * when the plugin's properties ask for them.
 */
const char *fl_abi_missing_slot(const void *table, int version);

#endif
