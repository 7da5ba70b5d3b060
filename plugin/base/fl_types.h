/* Types shared by every layer of the plugin: results, properties, identity, timings. */
#ifndef FL_TYPES_H
#define FL_TYPES_H

#include <stddef.h>
#include <stdint.h>

/* Same numbering as ncclResult_t (0..7 are valid in every NCCL we support). */
enum fl_result {
	FL_OK = 0,
	FL_ERR_CUDA = 1,
	FL_ERR_SYSTEM = 2,   /* kernel or hardware failure, dead peer */
	FL_ERR_INTERNAL = 3, /* NCCL misused the API */
	FL_ERR_ARGUMENT = 4,
	FL_ERR_USAGE = 5,    /* user or configuration error */
	FL_ERR_REMOTE = 6,
	FL_IN_PROGRESS = 7,
};

#define FL_HANDLE_SIZE 128
#define FL_MAX_REQUESTS 32 /* NCCL_NET_MAX_REQUESTS since 2.19 */
#define FL_MAX_RECVS 8     /* most buffers one irecv may post */
#define FL_MAX_VDEVS 8
/*
 * NCCL_NET_OPTIONAL_RECV_COMPLETION: what NCCL (v9+ plugins) leaves in *request
 * before an LL/LL128 irecv whose completion the plugin may skip reporting
 * (2.30.7 src/transport/net.cc:1585-1589; its v6-v8 adapters clear it,
 * src/plugin/net/net_v6.cc:82). A transport that forwards (ext) passes it on.
 */
#define FL_OPTIONAL_RECV_COMPLETION ((void *)0x1)
#define FL_PTR_HOST 0x1
#define FL_PTR_CUDA 0x2
#define FL_PTR_DMABUF 0x4
#define FL_MAX_NET_BYTES (1ULL << 40) /* NCCL_MAX_NET_SIZE_BYTES */
#define FL_MAX_COLL_BYTES (512ULL << 20)
#define FL_NODE_NAME_LEN 48
#define FL_DEV_NAME_LEN 16
/* A verbs port's link layer (ibv_port_attr.link_layer), spelt as sysfs does: RoCE or IB. */
#define FL_LINK_ETHERNET "Ethernet"
#define FL_LINK_INFINIBAND "InfiniBand"
#define FL_LINK_LAYER_LEN 16
/*
 * A hop's rate measures its wire only where its typical request (the size that
 * carries its median byte) would spend at least this long on the wire at line
 * rate; shorter ones are paced by latency.
 * Verbs, ext and NCCL's own transports (seen through the profiler) time a
 * request from its post to its completion, a round trip included, so a healthy
 * hop moving one request at a time reads t / (t + rtt) of its line rate: 0.6x
 * where t is 1.5 round trips, 7.5 us allowing 5 us (IB or RoCE with its
 * completion). A 512 KiB request (NCCL's step on IB) is 21 us at 200 Gb/s and
 * 10.5 us at 400 Gb/s, 5.2 us at 800 Gb/s: there a hop is judged for the
 * requests it keeps in flight (fl_wire_bound, verdict.h).
 */
#define FL_MIN_WIRE_BOUND_NS 7500.0

/* Properties of one device, in the richest (v12) shape; adapters narrow it. */
struct fl_props {
	const char *name;
	const char *pci_path; /* NULL when the device has no PCI parent */
	uint64_t guid;
	int ptr_support;
	int reg_is_global;
	int force_flush;
	int speed_mbps;
	int port;
	float latency_us;
	int max_comms;
	int max_recvs;
	int vdev_count;
	int vdevs[FL_MAX_VDEVS];
	size_t max_p2p_bytes;
	size_t max_coll_bytes;
	int max_multi_request_size;
	int16_t rail_id;
	int16_t plane_id;
	const char *link_layer; /* FL_LINK_*, NULL unknown (sockets; NCCL's props carry none) */
	/* ncclNetDeviceType / version: 0 (host-driven) unless a wrapped plugin offloads to the GPU */
	int net_device_type;
	int net_device_version;
};

/* Who sits at one end of a connection. Travels in the handle and the hello. */
struct fl_endpoint {
	char node[FL_NODE_NAME_LEN];
	char dev_name[FL_DEV_NAME_LEN];
	int32_t dev;
	int32_t rank; /* -1 where unknown */
	uint64_t comm_hash;
};

/*
 * Phases of one completed request, CLOCK_MONOTONIC ns, filled by the transport
 * from the side that sees them. 0 means "not observed".
 */
struct fl_xfer_times {
	uint64_t ready_ns;      /* the transfer could start: receiver ready, header seen */
	uint64_t wire_start_ns; /* first payload byte moved */
	uint64_t wire_end_ns;   /* last payload byte moved */
	uint64_t wire_bytes;    /* bytes the wire interval covers; 0 = all of them */
	/*
	 * The transport sees only posted -> done (ext): the wrap dates the wire with
	 * its own post and done times, so the transport reads no clock of its own.
	 */
	int whole_request;
	/*
	 * The transport's done does not date the data (a receive the plugin behind completed
	 * early, under NCCL's optional-completion hint): the request is counted, not timed.
	 */
	int untimed;
	/*
	 * The wire interval ends when the peer acknowledged the last byte (a verbs write's
	 * completion): a request that found its connection's wire idle pays that round trip.
	 */
	int acked;
};

#endif
