/*
 * NCCL's net-plugin ABI, versions v6..v12, in our own names: the structs NCCL
 * reads through ncclNetPlugin_vN and the types their slots take. Written from
 * the ABI facts in reference/nccl-abi.md (sections 1.4-1.7); field order is
 * NCCL's and every size and offset the reference lists is asserted below, so a
 * wrong field fails the build instead of corrupting NCCL's view of us.
 * Slots return ncclResult_t, an enum NCCL passes as int; we use int.
 */
#ifndef FL_NCCL_ABI_H
#define FL_NCCL_ABI_H

#include <stddef.h>
#include <stdint.h>

#define FL_ABI_DEVICE_HOST 0 /* ncclNetDeviceType: host-driven network */
#define FL_ABI_DEVICE_UNPACK 1
#define FL_ABI_DEVICE_INVALID_VERSION 0
#define FL_ABI_VDEVS_V9 4  /* devices one virtual NIC may fuse, v9-v11 */
#define FL_ABI_VDEVS_V12 8
#define FL_ABI_TRAFFIC_CLASS_UNDEF (-1)
#define FL_ABI_ID_UNDEF (-1) /* v12 railId / planeId when unknown */

/* ncclDebugLogger_t; the level enum travels as an int. */
typedef void (*fl_abi_logger_fn)(int level, unsigned long flags, const char *file, int line,
				 const char *fmt, ...);

/* ncclProfilerCallback_t (v10+): lets a net plugin start/stop NCCL profiler events. */
typedef int (*fl_abi_prof_callback_fn)(void **event_handle, int type, void *phandle,
				       int64_t plugin_id, void *ext_data);

/* ncclNetDeviceHandle_v7_t, unchanged through v12. A host-only plugin hands back none. */
struct fl_abi_dev_handle {
	int net_device_type;
	int net_device_version;
	void *handle;
	size_t size;
	int needs_proxy_progress;
};

/* ncclNetVDeviceProps: the physical devices behind one virtual (fused) NIC. */
struct fl_abi_vprops_v9 {
	int ndevs;
	int devs[FL_ABI_VDEVS_V9];
};

struct fl_abi_vprops_v12 {
	int ndevs;
	int devs[FL_ABI_VDEVS_V12];
};

/* ncclNetCommConfig (v10+). */
struct fl_abi_comm_config {
	int traffic_class;
};

/* ncclNetCommAttr / ncclNetAttr (v11+): tuning hints pushed through setNetAttr. */
struct fl_abi_comm_attr {
	int32_t max_concurrent_peers;
	int32_t min_concurrent_peers;
	int32_t max_flows_per_peer;
	int32_t min_flows_per_peer;
};

struct fl_abi_net_attr {
	struct fl_abi_comm_attr send_comm_attr;
	struct fl_abi_comm_attr recv_comm_attr;
	uint32_t op;
	uint32_t algo;
	uint32_t proto;
};

/* ---- properties (speed in Mbps, latency in us) ---- */

struct fl_abi_props_v6 {
	char *name;
	char *pci_path;
	uint64_t guid;
	int ptr_support;
	int speed;
	int port;
	float latency;
	int max_comms;
	int max_recvs;
};

struct fl_abi_props_v7 {
	char *name;
	char *pci_path;
	uint64_t guid;
	int ptr_support;
	int speed;
	int port;
	float latency;
	int max_comms;
	int max_recvs;
	int net_device_type;
	int net_device_version;
};

struct fl_abi_props_v8 {
	char *name;
	char *pci_path;
	uint64_t guid;
	int ptr_support;
	int reg_is_global;
	int speed;
	int port;
	float latency;
	int max_comms;
	int max_recvs;
	int net_device_type;
	int net_device_version;
};

/* v10 kept this layout unchanged, so its table uses this struct too. */
struct fl_abi_props_v9 {
	char *name;
	char *pci_path;
	uint64_t guid;
	int ptr_support;
	int reg_is_global;
	int force_flush;
	int speed;
	int port;
	float latency;
	int max_comms;
	int max_recvs;
	int net_device_type;
	int net_device_version;
	struct fl_abi_vprops_v9 vprops;
	size_t max_p2p_bytes;
	size_t max_coll_bytes;
};

struct fl_abi_props_v11 {
	char *name;
	char *pci_path;
	uint64_t guid;
	int ptr_support;
	int reg_is_global;
	int force_flush;
	int speed;
	int port;
	float latency;
	int max_comms;
	int max_recvs;
	int net_device_type;
	int net_device_version;
	struct fl_abi_vprops_v9 vprops;
	size_t max_p2p_bytes;
	size_t max_coll_bytes;
	int max_multi_request_size;
};

struct fl_abi_props_v12 {
	char *name;
	char *pci_path;
	uint64_t guid;
	int ptr_support;
	int reg_is_global;
	int force_flush;
	int speed;
	int port;
	float latency;
	int max_comms;
	int max_recvs;
	int net_device_type;
	int net_device_version;
	struct fl_abi_vprops_v12 vprops;
	size_t max_p2p_bytes;
	size_t max_coll_bytes;
	int max_multi_request_size;
	int16_t rail_id;
	int16_t plane_id;
};

/* ---- function tables: ncclNet_vN_t, exported as ncclNetPlugin_vN ---- */

/*
 * v5 (NCCL 2.12; google's fastsocket still exports it): v6 without
 * regMrDmaBuf, so every slot after regMr sits 8 bytes earlier; properties are
 * v6's. fabriclab does not export it (NCCL dropped v5 in 2.26); the ext
 * transport can wrap a plugin that exports nothing newer.
 */
struct fl_abi_net_v5 {
	const char *name;
	int (*init)(fl_abi_logger_fn logger);
	int (*devices)(int *ndev);
	int (*get_properties)(int dev, struct fl_abi_props_v6 *props);
	int (*listen)(int dev, void *handle, void **listen_comm);
	int (*connect)(int dev, void *handle, void **send_comm);
	int (*accept)(void *listen_comm, void **recv_comm);
	int (*reg_mr)(void *comm, void *data, int size, int type, void **mhandle);
	int (*dereg_mr)(void *comm, void *mhandle);
	int (*isend)(void *send_comm, void *data, int size, int tag, void *mhandle, void **request);
	int (*irecv)(void *recv_comm, int n, void **data, int *sizes, int *tags, void **mhandles,
		     void **request);
	int (*iflush)(void *recv_comm, int n, void **data, int *sizes, void **mhandles,
		      void **request);
	int (*test)(void *request, int *done, int *sizes);
	int (*close_send)(void *send_comm);
	int (*close_recv)(void *recv_comm);
	int (*close_listen)(void *listen_comm);
};

struct fl_abi_net_v6 {
	const char *name;
	int (*init)(fl_abi_logger_fn logger);
	int (*devices)(int *ndev);
	int (*get_properties)(int dev, struct fl_abi_props_v6 *props);
	int (*listen)(int dev, void *handle, void **listen_comm);
	int (*connect)(int dev, void *handle, void **send_comm);
	int (*accept)(void *listen_comm, void **recv_comm);
	int (*reg_mr)(void *comm, void *data, int size, int type, void **mhandle);
	int (*reg_mr_dmabuf)(void *comm, void *data, size_t size, int type, uint64_t offset, int fd,
			     void **mhandle);
	int (*dereg_mr)(void *comm, void *mhandle);
	int (*isend)(void *send_comm, void *data, int size, int tag, void *mhandle, void **request);
	int (*irecv)(void *recv_comm, int n, void **data, int *sizes, int *tags, void **mhandles,
		     void **request);
	int (*iflush)(void *recv_comm, int n, void **data, int *sizes, void **mhandles,
		      void **request);
	int (*test)(void *request, int *done, int *sizes);
	int (*close_send)(void *send_comm);
	int (*close_recv)(void *recv_comm);
	int (*close_listen)(void *listen_comm);
};

struct fl_abi_net_v7 {
	const char *name;
	int (*init)(fl_abi_logger_fn logger);
	int (*devices)(int *ndev);
	int (*get_properties)(int dev, struct fl_abi_props_v7 *props);
	int (*listen)(int dev, void *handle, void **listen_comm);
	int (*connect)(int dev, void *handle, void **send_comm,
		       struct fl_abi_dev_handle **send_dev_comm);
	int (*accept)(void *listen_comm, void **recv_comm,
		      struct fl_abi_dev_handle **recv_dev_comm);
	int (*reg_mr)(void *comm, void *data, int size, int type, void **mhandle);
	int (*reg_mr_dmabuf)(void *comm, void *data, size_t size, int type, uint64_t offset, int fd,
			     void **mhandle);
	int (*dereg_mr)(void *comm, void *mhandle);
	int (*isend)(void *send_comm, void *data, int size, int tag, void *mhandle, void **request);
	int (*irecv)(void *recv_comm, int n, void **data, int *sizes, int *tags, void **mhandles,
		     void **request);
	int (*iflush)(void *recv_comm, int n, void **data, int *sizes, void **mhandles,
		      void **request);
	int (*test)(void *request, int *done, int *sizes);
	int (*close_send)(void *send_comm);
	int (*close_recv)(void *recv_comm);
	int (*close_listen)(void *listen_comm);
	int (*get_device_mr)(void *comm, void *mhandle, void **dptr_mhandle);
	int (*irecv_consumed)(void *recv_comm, int n, void *request);
};

struct fl_abi_net_v8 {
	const char *name;
	int (*init)(fl_abi_logger_fn logger);
	int (*devices)(int *ndev);
	int (*get_properties)(int dev, struct fl_abi_props_v8 *props);
	int (*listen)(int dev, void *handle, void **listen_comm);
	int (*connect)(int dev, void *handle, void **send_comm,
		       struct fl_abi_dev_handle **send_dev_comm);
	int (*accept)(void *listen_comm, void **recv_comm,
		      struct fl_abi_dev_handle **recv_dev_comm);
	int (*reg_mr)(void *comm, void *data, size_t size, int type, void **mhandle);
	int (*reg_mr_dmabuf)(void *comm, void *data, size_t size, int type, uint64_t offset, int fd,
			     void **mhandle);
	int (*dereg_mr)(void *comm, void *mhandle);
	int (*isend)(void *send_comm, void *data, int size, int tag, void *mhandle, void **request);
	int (*irecv)(void *recv_comm, int n, void **data, int *sizes, int *tags, void **mhandles,
		     void **request);
	int (*iflush)(void *recv_comm, int n, void **data, int *sizes, void **mhandles,
		      void **request);
	int (*test)(void *request, int *done, int *sizes);
	int (*close_send)(void *send_comm);
	int (*close_recv)(void *recv_comm);
	int (*close_listen)(void *listen_comm);
	int (*get_device_mr)(void *comm, void *mhandle, void **dptr_mhandle);
	int (*irecv_consumed)(void *recv_comm, int n, void *request);
};

struct fl_abi_net_v9 {
	const char *name;
	int (*init)(fl_abi_logger_fn logger);
	int (*devices)(int *ndev);
	int (*get_properties)(int dev, struct fl_abi_props_v9 *props);
	int (*listen)(int dev, void *handle, void **listen_comm);
	int (*connect)(int dev, void *handle, void **send_comm,
		       struct fl_abi_dev_handle **send_dev_comm);
	int (*accept)(void *listen_comm, void **recv_comm,
		      struct fl_abi_dev_handle **recv_dev_comm);
	int (*reg_mr)(void *comm, void *data, size_t size, int type, void **mhandle);
	int (*reg_mr_dmabuf)(void *comm, void *data, size_t size, int type, uint64_t offset, int fd,
			     void **mhandle);
	int (*dereg_mr)(void *comm, void *mhandle);
	int (*isend)(void *send_comm, void *data, size_t size, int tag, void *mhandle,
		     void **request);
	int (*irecv)(void *recv_comm, int n, void **data, size_t *sizes, int *tags, void **mhandles,
		     void **request);
	int (*iflush)(void *recv_comm, int n, void **data, int *sizes, void **mhandles,
		      void **request);
	int (*test)(void *request, int *done, int *sizes);
	int (*close_send)(void *send_comm);
	int (*close_recv)(void *recv_comm);
	int (*close_listen)(void *listen_comm);
	int (*get_device_mr)(void *comm, void *mhandle, void **dptr_mhandle);
	int (*irecv_consumed)(void *recv_comm, int n, void *request);
	int (*make_vdevice)(int *dev, struct fl_abi_vprops_v9 *props);
};

struct fl_abi_net_v10 {
	const char *name;
	int (*init)(fl_abi_logger_fn logger, fl_abi_prof_callback_fn prof);
	int (*devices)(int *ndev);
	int (*get_properties)(int dev, struct fl_abi_props_v9 *props);
	int (*listen)(int dev, void *handle, void **listen_comm);
	int (*connect)(int dev, struct fl_abi_comm_config *config, void *handle, void **send_comm,
		       struct fl_abi_dev_handle **send_dev_comm);
	int (*accept)(void *listen_comm, void **recv_comm,
		      struct fl_abi_dev_handle **recv_dev_comm);
	int (*reg_mr)(void *comm, void *data, size_t size, int type, void **mhandle);
	int (*reg_mr_dmabuf)(void *comm, void *data, size_t size, int type, uint64_t offset, int fd,
			     void **mhandle);
	int (*dereg_mr)(void *comm, void *mhandle);
	int (*isend)(void *send_comm, void *data, size_t size, int tag, void *mhandle,
		     void *phandle, void **request);
	int (*irecv)(void *recv_comm, int n, void **data, size_t *sizes, int *tags, void **mhandles,
		     void **phandles, void **request);
	int (*iflush)(void *recv_comm, int n, void **data, int *sizes, void **mhandles,
		      void **request);
	int (*test)(void *request, int *done, int *sizes);
	int (*close_send)(void *send_comm);
	int (*close_recv)(void *recv_comm);
	int (*close_listen)(void *listen_comm);
	int (*get_device_mr)(void *comm, void *mhandle, void **dptr_mhandle);
	int (*irecv_consumed)(void *recv_comm, int n, void *request);
	int (*make_vdevice)(int *dev, struct fl_abi_vprops_v9 *props);
};

struct fl_abi_net_v11 {
	const char *name;
	int (*init)(void **ctx, uint64_t comm_id, struct fl_abi_comm_config *config,
		    fl_abi_logger_fn logger, fl_abi_prof_callback_fn prof);
	int (*devices)(int *ndev);
	int (*get_properties)(int dev, struct fl_abi_props_v11 *props);
	int (*listen)(void *ctx, int dev, void *handle, void **listen_comm);
	int (*connect)(void *ctx, int dev, void *handle, void **send_comm,
		       struct fl_abi_dev_handle **send_dev_comm);
	int (*accept)(void *listen_comm, void **recv_comm,
		      struct fl_abi_dev_handle **recv_dev_comm);
	int (*reg_mr)(void *comm, void *data, size_t size, int type, void **mhandle);
	int (*reg_mr_dmabuf)(void *comm, void *data, size_t size, int type, uint64_t offset, int fd,
			     void **mhandle);
	int (*dereg_mr)(void *comm, void *mhandle);
	int (*isend)(void *send_comm, void *data, size_t size, int tag, void *mhandle,
		     void *phandle, void **request);
	int (*irecv)(void *recv_comm, int n, void **data, size_t *sizes, int *tags, void **mhandles,
		     void **phandles, void **request);
	int (*iflush)(void *recv_comm, int n, void **data, int *sizes, void **mhandles,
		      void **request);
	int (*test)(void *request, int *done, int *sizes);
	int (*close_send)(void *send_comm);
	int (*close_recv)(void *recv_comm);
	int (*close_listen)(void *listen_comm);
	int (*get_device_mr)(void *comm, void *mhandle, void **dptr_mhandle);
	int (*irecv_consumed)(void *recv_comm, int n, void *request);
	int (*make_vdevice)(int *dev, struct fl_abi_vprops_v9 *props);
	int (*finalize)(void *ctx);
	int (*set_net_attr)(void *ctx, struct fl_abi_net_attr *attr);
};

struct fl_abi_net_v12 {
	const char *name;
	int (*init)(void **ctx, uint64_t comm_id, struct fl_abi_comm_config *config,
		    fl_abi_logger_fn logger, fl_abi_prof_callback_fn prof);
	int (*devices)(int *ndev);
	int (*get_properties)(int dev, struct fl_abi_props_v12 *props);
	int (*listen)(void *ctx, int dev, void *handle, void **listen_comm);
	int (*connect)(void *ctx, int dev, void *handle, void **send_comm,
		       struct fl_abi_dev_handle **send_dev_comm);
	int (*accept)(void *listen_comm, void **recv_comm,
		      struct fl_abi_dev_handle **recv_dev_comm);
	int (*reg_mr)(void *comm, void *data, size_t size, int type, void **mhandle);
	int (*reg_mr_dmabuf)(void *comm, void *data, size_t size, int type, uint64_t offset, int fd,
			     void **mhandle);
	int (*dereg_mr)(void *comm, void *mhandle);
	int (*isend)(void *send_comm, void *data, size_t size, int tag, void *mhandle,
		     void *phandle, void **request);
	int (*irecv)(void *recv_comm, int n, void **data, size_t *sizes, int *tags, void **mhandles,
		     void **phandles, void **request);
	int (*iflush)(void *recv_comm, int n, void **data, int *sizes, void **mhandles,
		      void **request);
	int (*test)(void *request, int *done, int *sizes);
	int (*close_send)(void *send_comm);
	int (*close_recv)(void *recv_comm);
	int (*close_listen)(void *listen_comm);
	int (*get_device_mr)(void *comm, void *mhandle, void **dptr_mhandle);
	int (*irecv_consumed)(void *recv_comm, int n, void *request);
	int (*make_vdevice)(int *dev, struct fl_abi_vprops_v12 *props);
	int (*finalize)(void *ctx);
	int (*set_net_attr)(void *ctx, struct fl_abi_net_attr *attr);
};

/* ---- layout checks (x86-64 / LP64, as measured in the reference) ---- */

#define FL_ABI_AT(type, field, off) \
	_Static_assert(offsetof(struct type, field) == (off), #type "." #field " offset")
#define FL_ABI_SIZE(type, size) _Static_assert(sizeof(struct type) == (size), #type " size")

FL_ABI_SIZE(fl_abi_dev_handle, 32);
FL_ABI_AT(fl_abi_dev_handle, net_device_version, 4);
FL_ABI_AT(fl_abi_dev_handle, handle, 8);
FL_ABI_AT(fl_abi_dev_handle, size, 16);
FL_ABI_AT(fl_abi_dev_handle, needs_proxy_progress, 24);
FL_ABI_SIZE(fl_abi_vprops_v9, 20);
FL_ABI_SIZE(fl_abi_vprops_v12, 36);
FL_ABI_SIZE(fl_abi_comm_config, 4);
FL_ABI_SIZE(fl_abi_comm_attr, 16);
FL_ABI_SIZE(fl_abi_net_attr, 44);
FL_ABI_AT(fl_abi_net_attr, recv_comm_attr, 16);
FL_ABI_AT(fl_abi_net_attr, op, 32);
FL_ABI_AT(fl_abi_net_attr, proto, 40);

FL_ABI_SIZE(fl_abi_props_v6, 48);
FL_ABI_AT(fl_abi_props_v6, pci_path, 8);
FL_ABI_AT(fl_abi_props_v6, guid, 16);
FL_ABI_AT(fl_abi_props_v6, ptr_support, 24);
FL_ABI_AT(fl_abi_props_v6, speed, 28);
FL_ABI_AT(fl_abi_props_v6, port, 32);
FL_ABI_AT(fl_abi_props_v6, latency, 36);
FL_ABI_AT(fl_abi_props_v6, max_comms, 40);
FL_ABI_AT(fl_abi_props_v6, max_recvs, 44);

FL_ABI_SIZE(fl_abi_props_v7, 56);
FL_ABI_AT(fl_abi_props_v7, max_recvs, 44);
FL_ABI_AT(fl_abi_props_v7, net_device_type, 48);
FL_ABI_AT(fl_abi_props_v7, net_device_version, 52);

FL_ABI_SIZE(fl_abi_props_v8, 64);
FL_ABI_AT(fl_abi_props_v8, ptr_support, 24);
FL_ABI_AT(fl_abi_props_v8, reg_is_global, 28);
FL_ABI_AT(fl_abi_props_v8, speed, 32);
FL_ABI_AT(fl_abi_props_v8, net_device_version, 56);

FL_ABI_SIZE(fl_abi_props_v9, 104);
FL_ABI_AT(fl_abi_props_v9, reg_is_global, 28);
FL_ABI_AT(fl_abi_props_v9, force_flush, 32);
FL_ABI_AT(fl_abi_props_v9, speed, 36);
FL_ABI_AT(fl_abi_props_v9, net_device_version, 60);
FL_ABI_AT(fl_abi_props_v9, vprops, 64);
FL_ABI_AT(fl_abi_props_v9, max_p2p_bytes, 88);
FL_ABI_AT(fl_abi_props_v9, max_coll_bytes, 96);

FL_ABI_SIZE(fl_abi_props_v11, 112);
FL_ABI_AT(fl_abi_props_v11, vprops, 64);
FL_ABI_AT(fl_abi_props_v11, max_p2p_bytes, 88);
FL_ABI_AT(fl_abi_props_v11, max_coll_bytes, 96);
FL_ABI_AT(fl_abi_props_v11, max_multi_request_size, 104);

FL_ABI_SIZE(fl_abi_props_v12, 128);
FL_ABI_AT(fl_abi_props_v12, vprops, 64);
FL_ABI_AT(fl_abi_props_v12, max_p2p_bytes, 104);
FL_ABI_AT(fl_abi_props_v12, max_coll_bytes, 112);
FL_ABI_AT(fl_abi_props_v12, max_multi_request_size, 120);
FL_ABI_AT(fl_abi_props_v12, rail_id, 124);
FL_ABI_AT(fl_abi_props_v12, plane_id, 126);

/* Every version keeps the slots it shares with v6 at the same place. */
#define FL_ABI_NET_V6_SLOTS(type)                 \
	FL_ABI_AT(type, init, 8);                 \
	FL_ABI_AT(type, devices, 16);             \
	FL_ABI_AT(type, get_properties, 24);      \
	FL_ABI_AT(type, listen, 32);              \
	FL_ABI_AT(type, connect, 40);             \
	FL_ABI_AT(type, accept, 48);              \
	FL_ABI_AT(type, reg_mr, 56);              \
	FL_ABI_AT(type, reg_mr_dmabuf, 64);       \
	FL_ABI_AT(type, dereg_mr, 72);            \
	FL_ABI_AT(type, isend, 80);               \
	FL_ABI_AT(type, irecv, 88);               \
	FL_ABI_AT(type, iflush, 96);              \
	FL_ABI_AT(type, test, 104);               \
	FL_ABI_AT(type, close_send, 112);         \
	FL_ABI_AT(type, close_recv, 120);         \
	FL_ABI_AT(type, close_listen, 128)
#define FL_ABI_NET_V7_SLOTS(type)            \
	FL_ABI_NET_V6_SLOTS(type);           \
	FL_ABI_AT(type, get_device_mr, 136); \
	FL_ABI_AT(type, irecv_consumed, 144)
#define FL_ABI_NET_V9_SLOTS(type)  \
	FL_ABI_NET_V7_SLOTS(type); \
	FL_ABI_AT(type, make_vdevice, 152)
#define FL_ABI_NET_V11_SLOTS(type)      \
	FL_ABI_NET_V9_SLOTS(type);      \
	FL_ABI_AT(type, finalize, 160); \
	FL_ABI_AT(type, set_net_attr, 168)

FL_ABI_SIZE(fl_abi_net_v5, 128);
FL_ABI_AT(fl_abi_net_v5, reg_mr, 56);
FL_ABI_AT(fl_abi_net_v5, dereg_mr, 64);
FL_ABI_AT(fl_abi_net_v5, isend, 72);
FL_ABI_AT(fl_abi_net_v5, irecv, 80);
FL_ABI_AT(fl_abi_net_v5, iflush, 88);
FL_ABI_AT(fl_abi_net_v5, test, 96);
FL_ABI_AT(fl_abi_net_v5, close_listen, 120);
FL_ABI_SIZE(fl_abi_net_v6, 136);
FL_ABI_NET_V6_SLOTS(fl_abi_net_v6);
FL_ABI_SIZE(fl_abi_net_v7, 152);
FL_ABI_NET_V7_SLOTS(fl_abi_net_v7);
FL_ABI_SIZE(fl_abi_net_v8, 152);
FL_ABI_NET_V7_SLOTS(fl_abi_net_v8);
FL_ABI_SIZE(fl_abi_net_v9, 160);
FL_ABI_NET_V9_SLOTS(fl_abi_net_v9);
FL_ABI_SIZE(fl_abi_net_v10, 160);
FL_ABI_NET_V9_SLOTS(fl_abi_net_v10);
FL_ABI_SIZE(fl_abi_net_v11, 176);
FL_ABI_NET_V11_SLOTS(fl_abi_net_v11);
FL_ABI_SIZE(fl_abi_net_v12, 176);
FL_ABI_NET_V11_SLOTS(fl_abi_net_v12);

#undef FL_ABI_NET_V11_SLOTS
#undef FL_ABI_NET_V9_SLOTS
#undef FL_ABI_NET_V7_SLOTS
#undef FL_ABI_NET_V6_SLOTS
#undef FL_ABI_SIZE
#undef FL_ABI_AT

#endif
