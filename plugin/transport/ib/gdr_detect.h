/*
 * GPUDirect RDMA readiness. NIC access to GPU memory by address needs a peer
 * memory client in the kernel (nvidia-peermem, or the older nv_peer_mem);
 * by dma-buf it needs a kernel and libibverbs that register dma-bufs.
 */
#ifndef FL_GDR_DETECT_H
#define FL_GDR_DETECT_H

#include <infiniband/verbs.h>

#include "verbs_load.h"

/* The peer memory client's name when one is loaded under sysfs root, else NULL. */
const char *gdr_peermem_client(const char *sysfs_root);
/*
 * 1 when pd's device registers dma-bufs: a registration of fd -1 fails with
 * EBADF-like errors there, and with EOPNOTSUPP/EPROTONOSUPPORT where the
 * kernel or provider cannot.
 */
int gdr_dmabuf_supported(const struct fl_verbs *v, struct ibv_pd *pd);

#endif
