/*
 * The verbs devices the ib transport offers NCCL: one per active port that
 * NCCL_IB_HCA lets through. Ports of one HCA share its context, protection
 * domain and registration cache; an async-event thread per HCA marks ports
 * that go down so connections on them fail instead of hanging.
 */
#ifndef FL_IB_DEVICE_H
#define FL_IB_DEVICE_H

#include <stdatomic.h>
#include <stdint.h>

#include "base/fl_types.h"
#include "ib_gid.h"
#include "ib_mr.h"
#include "verbs_load.h"

#define IB_MAX_DEVS 32
#define IB_MAX_HCAS 16
#define IB_NAME_LEN 64

struct ib_hca {
	char name[IB_NAME_LEN];
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_device_attr attr;
	struct ib_mr_cache mrs;
	_Atomic int fatal; /* IBV_EVENT_DEVICE_FATAL seen */
};

struct ib_device {
	struct ib_hca *hca;
	char name[IB_NAME_LEN];         /* what NCCL calls it: the HCA's, "<hca>_dma" for DataDirect */
	char dev_name[FL_DEV_NAME_LEN]; /* "mlx5_0:1", for identities and logs */
	int port;
	int link_layer; /* IBV_LINK_LAYER_* */
	uint16_t lid;
	int mtu;        /* enum ibv_mtu */
	int gid_index;
	union ibv_gid gid;
	enum ib_gid_kind gid_kind;
	int speed_mbps;
	int width, lane_speed; /* the codes, for logs */
	char *pci_path; /* malloc'd realpath; NULL when sysfs has none */
	int ptr_support;
	int data_direct; /* mlx5 DataDirect (ib_mlx5.h): NCCL's IB sets forceFlush for it */
	_Atomic int port_down; /* IBV_EVENT_PORT_ERR seen, not yet PORT_ACTIVE */
};

/* The loaded verbs table (set by discovery). */
extern const struct fl_verbs *ib_verbs;

/* Opens every HCA, keeps the active ports the filter lets through. */
int ib_devices_discover(const struct fl_verbs *v, struct ib_device *out, int max, int *count);
/* Closes every HCA discover opened (the plugin is being unloaded). */
void ib_devices_release(struct ib_device *devs, int ndevs);
/* Registration flags for everything the transport registers. */
#define IB_MR_ACCESS                                                                     \
	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ)
/* What data buffers (NCCL's, dma-bufs) are registered with: IB_MR_ACCESS, plus relaxed
 * ordering when it is asked for and the library can pass it (ib_device.c). */
int ib_data_access(void);

/* Prepares the HCA's async events for polling (once per HCA, at discovery). */
void ib_async_watch(struct ib_hca *hca, struct ib_device *ports, int nports);
/* Reads the HCA's pending async events without blocking; marks ports and HCA. */
void ib_async_poll(struct ib_hca *hca);
/* FL_OK, or the failure (with text) when dev's port or HCA went down. */
int ib_device_check(const struct ib_device *dev);

#endif
