/* Knobs of the ib transport, read once at init; a bad value fails init naming the variable. */
#ifndef FL_IB_CONFIG_H
#define FL_IB_CONFIG_H

#include <limits.h>

struct ib_config {
	int nqps;       /* FABRICLAB_IB_QPS, else NCCL_IB_QPS_PER_CONNECTION: QPs per connection */
	int gid_index;  /* NCCL_IB_GID_INDEX; -1 = choose (RoCE v2 first) */
	int tc;         /* NCCL_IB_TC: traffic class of RoCE packets */
	int sl;         /* NCCL_IB_SL: service level */
	int timeout;    /* NCCL_IB_TIMEOUT: ACK timeout exponent (4.096 us << n) */
	int retry_cnt;  /* NCCL_IB_RETRY_CNT */
	int disabled;   /* NCCL_IB_DISABLE=1 */
	int relaxed_ordering; /* NCCL_IB_PCI_RELAXED_ORDERING: 0 off, 1 or 2 (default): if usable */
	int pace_piece_us; /* FABRICLAB_IB_PACE_PIECE_US: wire time of a paced piece (100) */
	int data_direct; /* NCCL_IB_DATA_DIRECT: 0 off, 1 (default) the DataDirect device only,
			  * 2 both (ib_mlx5.h) */
	char sysfs_root[PATH_MAX]; /* FABRICLAB_SYSFS_ROOT, default /sys */
};

/* The configuration init loaded; read-only afterwards. */
extern struct ib_config ib_cfg;

int ib_config_load(struct ib_config *cfg);

#endif
