/*
 * The emulated fabric's one typed description (fabric/README.md): nodes, the
 * NICs of each node, leaf and spine switches, which NIC hangs off which leaf
 * port, the leaf-spine cables, rates, latencies, oversubscription and the
 * hardware faults of any of them; each node's emulated GPUs and their copy
 * engine; and how the emulation runs it (its state folder, its slowdown).
 *
 * The lab writes it (topology.json in the run folder), a user may write one,
 * the emulated NIC and GPU read it in every process (FABRICLAB_FABRIC), and
 * `fabriclab report --topology` reads it to name the element slow hops share.
 * Everything here is plain computation on the struct: no I/O but topo_json.c.
 */
#ifndef FABRIC_TOPO_H
#define FABRIC_TOPO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FT_NAME_LEN 64
#define FT_DEV_LEN 32
#define FT_PORT_LEN 32
#define FT_PATH_MAX 4      /* NIC out, leaf up, spine down, NIC in */
#define FT_MAX_CABLES 64   /* parallel cables between one leaf and one spine */
#define FT_VERSION 1
#define FT_MAX_GPUS 16     /* emulated GPUs of one node */
#define FT_PCI_LEN 20      /* a PCI bus id, "0000:3b:00.0" or "00000000:3b:00.0" */

/* A hardware fault of one element, unknown to the plugin. */
struct ft_fault {
	int rate_pct;            /* trained down to this share of its rate, 1-100; 0: none */
	uint64_t pause_every_ns; /* paused pause_for_ns of every pause_every_ns (PFC) */
	uint64_t pause_for_ns;
	uint64_t add_ns;         /* one-way latency added to everything through it */
};

struct ft_nic {
	char name[FT_DEV_LEN];   /* the RDMA device as the node names it: mlx5_0 */
	int node;
	char port[FT_PORT_LEN];  /* LINK:WIDTH:SPEED, what its port reports: ib:4x:ndr */
	uint64_t guid;           /* node GUID; 0 unknown */
	int leaf;                /* switch index of its leaf; -1 none known */
	int leaf_port;           /* that leaf's port number; 0 unknown */
	char port_name[32];      /* the leaf's name for that port ("Ethernet12"), "" unknown */
	int lid;                 /* its port's LID (InfiniBand), 0 unknown */
	bool data_direct;        /* an mlx5 NIC with a DataDirect DMA engine: libmlx5 names its
				  * device, and NCCL's IB then flushes GPUDirect receives */
	struct ft_fault fault;   /* its port, its cable and the leaf port behind it: one link */
};

/*
 * A node's emulated GPUs (fabric/gpu/fakecuda.c): what the CUDA runtime and
 * driver report of them, and their copy engine. One set for every node (the
 * description's "gpus"), which a node's own "gpus" overrides field by field.
 */
struct ft_gpus {
	int count;               /* GPUs visible (1); 0: none */
	int npci;                /* bus ids given: GPU i's is pci[i] for i < npci, else made up */
	char pci[FT_MAX_GPUS][FT_PCI_LEN];
	bool gdr;                /* cudaDevAttrGPUDirectRDMASupported (true) */
	bool dmabuf;             /* CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED (true) */
	uint64_t memory_bytes;   /* what cudaMalloc may hand out in all; 0 unlimited */
	bool protect;            /* device memory unreadable outside cudaMemcpy (false) */
	int cc;                  /* compute capability, major * 10 + minor (80: 8.0) */
	uint64_t copy_bytes_per_s; /* the copy engine: a host<->device cudaMemcpy of N bytes
				    * takes at least N / this (PCIe); 0 unpaced */
};

/* Which fields of a node's "gpus" it gives itself (struct ft_node.gpus_set). */
enum {
	FT_GPU_COUNT = 1 << 0, FT_GPU_PCI = 1 << 1, FT_GPU_GDR = 1 << 2, FT_GPU_DMABUF = 1 << 3,
	FT_GPU_MEMORY = 1 << 4, FT_GPU_PROTECT = 1 << 5, FT_GPU_CC = 1 << 6, FT_GPU_COPY = 1 << 7,
};

struct ft_node {
	char name[FT_NAME_LEN];
	int first_nic, nnics;    /* nics[first_nic .. first_nic + nnics) */
	struct ft_gpus gpus;     /* its own GPU fields, those gpus_set names; the rest: ft_topo's */
	unsigned gpus_set;
};

enum ft_role { FT_LEAF, FT_SPINE };

struct ft_switch {
	char name[FT_NAME_LEN];  /* leaf0.., spine0.. in the layouts we generate */
	enum ft_role role;
	uint64_t guid;           /* 0 unknown */
	int lid;                 /* 0 unknown */
	struct ft_fault fault;   /* every port of the switch */
};

/* The cables between one leaf and one spine: `cables` alike, each used both ways. */
struct ft_uplink {
	int leaf, spine;         /* switch indices */
	int cables;
	int leaf_port;           /* the first cable's port on the leaf, the others follow; 0 unknown */
	int spine_port;          /* ... and on the spine */
	double mbps;             /* each cable's rate in the ports' reported units; 0: its NICs' */
	struct ft_fault fault;
};

struct ft_topo {
	char layout[96];         /* how it was made: "fat-tree:leaves=4,spines=2", "rail", "flat" */
	struct ft_node *nodes;
	int nnodes;
	struct ft_nic *nics;
	int nnics;
	struct ft_switch *sw;
	int nsw;
	struct ft_uplink *up;
	int nup;
	double oversubscription; /* downlinks over uplinks where cables are not given (1) */
	/* The physics, in ns of the emulation's clock (the lab writes them scaled). */
	bool physics;
	uint64_t latency_ns;     /* one way, NIC to NIC */
	uint64_t msg_cost_ns;    /* per message, on the NIC */
	int rate_div;            /* every link moves its bytes this many times slower (1-1000) */
	struct ft_gpus gpus;     /* every node's GPUs, unless the node says otherwise */
	/* How the emulation runs: where its shared state lives, its NIC's knobs. */
	char state_dir[200];     /* "" for the default */
	bool dmabuf;             /* the NIC takes dma-buf registrations */
	long retry_ms;           /* QP retry window; 0 from the QP's timeout */
	long max_send_wr;        /* the least send queue a QP gets; 0 as asked */
	char inject[256];        /* error injection rules (docs/fakeverbs.md) */
};

/* ---- building (topo_model.c) ---- */

void ft_init(struct ft_topo *t);
void ft_free(struct ft_topo *t);
/* Appends; -1 on allocation failure. Returns the new index. */
int ft_add_node(struct ft_topo *t, const char *name);
int ft_add_nic(struct ft_topo *t, int node, const char *name, const char *port);
int ft_add_switch(struct ft_topo *t, const char *name, enum ft_role role);
int ft_add_uplink(struct ft_topo *t, int leaf, int spine, int cables);
int ft_find_node(const struct ft_topo *t, const char *name);
int ft_find_switch(const struct ft_topo *t, const char *name);
/* The NIC named dev on the node named node; -1 when none. */
int ft_find_nic(const struct ft_topo *t, const char *node, const char *dev);
int ft_find_uplink(const struct ft_topo *t, int leaf, int spine);
/* Fills what a description may leave out: cables from the oversubscription, ports. */
void ft_complete(struct ft_topo *t);
/* Checks what readers rely on; 0, or -1 with the reason in why. */
int ft_check(const struct ft_topo *t, char *why, size_t len);

/* ---- GPUs (topo_gpu.c) ---- */

/* A GPU set as a node gets it when the description says nothing: one GPU, as fakecuda's default. */
void ft_gpus_default(struct ft_gpus *g);
/* Node n's GPUs: the description's, with the fields the node gives itself over them. */
void ft_node_gpus(const struct ft_topo *t, int n, struct ft_gpus *out);
/* "0000:3b:00.0" (or an 8-digit domain): a PCI bus id as cudaDeviceGetPCIBusId writes one. */
bool ft_pci_ok(const char *id);
/* "8.0", "9.0", "10.0": major * 10 + minor; -1 malformed. */
int ft_cc_parse(const char *text);

/* ---- this process (topo_node.c) ---- */

/*
 * Which node of t this process is: FABRICLAB_FABRIC_NODE, else FABRICLAB_NODE_NAME
 * (the plugin's and the shim's node name) where t has a node of that name, else the
 * first. -1 when FABRICLAB_FABRIC_NODE names a node t lacks.
 */
int ft_process_node(const struct ft_topo *t);

/* ---- layouts (topo_build.c) ---- */

/*
 * SPEC: "flat" (no switches), "fat-tree:leaves=L,spines=S[,oversub=X]" (nodes
 * in order over the leaves, every leaf cabled to every spine) or
 * "rail[:spines=S][,oversub=X]" (NIC k of every node on leaf k). Builds the
 * switches over t's nodes and NICs (already there); 0, or -1 with the reason.
 */
int ft_build_layout(struct ft_topo *t, const char *spec, char *why, size_t len);
/* Whether spec names a generated layout rather than a file. */
bool ft_is_layout_spec(const char *spec);

/* ---- faults by element name (topo_fault.c) ---- */

/*
 * Element names: "nodeK/mlx5_0" (a NIC, its cable and leaf port), "leaf0:5"
 * (a leaf port; the same link as what is cabled to it), "leaf0-spine1" (the
 * cables between them), "spine1" or "leaf0" (every port of the switch).
 * The fault of the element named; NULL when no element has that name.
 */
struct ft_fault *ft_fault_of(struct ft_topo *t, const char *element);
bool ft_fault_set(const struct ft_fault *f);

/* ---- paths (topo_path.c) ---- */

/*
 * Every direction of every link is one element of the emulation's schedule:
 * NIC i sends on 2i and receives on 2i + 1; cable c of uplink u carries leaf
 * to spine on ft_cable_element(t, u, c) and spine to leaf on the next.
 */
int ft_elements(const struct ft_topo *t);
int ft_cable_element(const struct ft_topo *t, int uplink, int cable);

/* What an element is, for a person: "node3/mlx5_0 out", "leaf0 -> spine1 #0". */
void ft_element_name(const struct ft_topo *t, int element, char *buf, size_t len);

/*
 * The elements a connection from NIC a to NIC b crosses, in order, into
 * path[FT_PATH_MAX]; hash picks the spine and cable where there are several
 * (ECMP: one connection always takes one path). Returns their number (2
 * within a leaf or without switches, 4 across spines), or -1 when b cannot
 * be reached.
 */
int ft_path(const struct ft_topo *t, int a, int b, uint64_t hash, int *path);
/* A connection's hash, as a switch hashes a flow's header: both ends' identities. */
uint64_t ft_flow_hash(uint32_t src_qpn, uint32_t dst_qpn, int a, int b);

/* The fault an element suffers: its own, its switches' and its uplink's together. */
void ft_element_fault(const struct ft_topo *t, int element, struct ft_fault *out);
/* An element's rate when healthy, in Mbit/s as its ports report it (before rate_div); 0 unknown. */
double ft_element_mbps(const struct ft_topo *t, int element);

/* ---- ports (topo_port.c) ---- */

/* The rate a port spec (LINK:WIDTH:SPEED[:STATE], "ib:4x:ndr") reports in Mbit/s; 0 malformed. */
double ft_port_mbps(const char *port);
/* Whether the spec's link layer is Ethernet (RoCE). */
bool ft_port_is_eth(const char *port);

#endif
