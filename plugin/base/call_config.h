/*
 * What NCCL passes with one call that the wrap layer's own interface does not
 * carry, kept for the thread making that call so that a transport forwarding
 * to another plugin (ext) can hand it on unchanged: the communicator's config
 * NCCL v10 passes with every connect (2.27.7 src/transport/net.cc:714; NCCL
 * 2.28+'s v10 adapter passes the one it keeps per communicator,
 * src/plugin/net/net_v10.cc:53-54). NULL outside such a call.
 */
#ifndef FL_CALL_CONFIG_H
#define FL_CALL_CONFIG_H

struct fl_abi_comm_config;

void fl_call_set_connect_config(struct fl_abi_comm_config *config);
struct fl_abi_comm_config *fl_call_connect_config(void);

#endif
