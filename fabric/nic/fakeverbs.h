/* libfabriclab-fakeverbs.so: a stand-in for libibverbs.so.1 for tests (never shipped).
 *
 * It exports libibverbs' ABI as <infiniband/verbs.h> (rdma-core 44) declares it, so a program that
 * dlopen()s it instead of libibverbs.so.1 runs its verbs code unchanged; the data path
 * (post_send, post_recv, poll_cq) is reached through context->ops as the header's inlines do.
 * Several processes of one user form one fabric through shared memory.
 *
 * Configuration (read once, when the first device list is taken): the fabric's description,
 * FABRICLAB_FABRIC=FILE (fabric/README.md: nodes, NICs, switches, physics, faults, the state
 * folder), this process being the node FABRICLAB_FABRIC_NODE or FABRICLAB_NODE_NAME names in it;
 * without one, the defaults. The FABRICLAB_FAKEVERBS_* variables override either, for this
 * process (the table in fabric/README.md):
 *
 * FABRICLAB_FAKEVERBS_DEVICES  devices and ports, `NAME=PORT[+PORT][,NAME=...]`,
 *     PORT = `LINK:WIDTH:SPEED[:STATE]`: LINK ib|eth (roce = eth), WIDTH 1x|2x|4x|8x|12x,
 *     SPEED sdr|ddr|qdr|fdr10|fdr|edr|hdr|ndr or a lane rate 2.5g|5g|10g|14g|25g|50g|100g,
 *     STATE active|down|init|armed (default active).
 *     Default: the description's node's NICs, else `mlx5_0=ib:4x:hdr,mlx5_1=eth:4x:25g`.
 * FABRICLAB_FAKEVERBS_NODE     integer "host" number (default: the description's node, else 0):
 *     LIDs, GUIDs and link-local GIDs differ per node.
 * FABRICLAB_FAKEVERBS_DIR      folder of the shared fabric state (default: the description's
 *     state_dir, else /dev/shm/fabriclab-fakeverbs-<uid>): processes see each other only with
 *     the same folder.
 * FABRICLAB_FAKEVERBS_RETRY_MS cap (ms) on the retry window: how long a request waits for a
 *     responder QP that is not ready yet, or for a responder whose NIC has stopped (a stopped
 *     process), before it fails with IBV_WC_RETRY_EXC_ERR (default: 4.096 us << timeout x
 *     (retry_cnt + 1), at most 8 s). A dead peer process is noticed within ~20 ms regardless.
 * FABRICLAB_FAKEVERBS_INJECT   error rules, `KIND@N[,KIND@N...]`: the N-th send work request that
 *     this process transmits (counted from 1, across all QPs) suffers KIND:
 *       qp_error        the QP goes to ERROR (IBV_EVENT_QP_FATAL), its WRs flush (WR_FLUSH_ERR)
 *       retry_exceeded  the WR completes with IBV_WC_RETRY_EXC_ERR, the QP goes to ERROR
 *       rem_access      the WR completes with IBV_WC_REM_ACCESS_ERR, the QP goes to ERROR
 *       port_down       the QP's port goes DOWN (IBV_EVENT_PORT_ERR on every open context);
 *                       its QPs' WRs then fail with IBV_WC_RETRY_EXC_ERR
 * FABRICLAB_FAKEVERBS_VERBOSE  1: one stderr line per failure the fake detects (why a WR failed).
 * FABRICLAB_FAKEVERBS_DMABUF   1: ibv_reg_dmabuf_mr registers any mappable fd (a memfd standing in
 *     for a GPU dma-buf); default: EOPNOTSUPP, as on a kernel without dma-buf support.
 * FABRICLAB_FAKEVERBS_MAX_SEND_WR  N: every QP's send queue holds at least N WRs, reported back in
 *     ibv_create_qp's attr->cap as drivers that round up do (default: exactly what was asked).
 * FABRICLAB_FAKEVERBS_SYSFS    where the devices' sysfs tree is published (default
 *     <state folder>/sysfs-node<NODE>).
 * FABRICLAB_FAKEVERBS_PHYSICS  1: every RDMA operation takes its time on the fabric
 *     (fv_physics.c): the links' line rate (their width x speed), a one-way latency
 *     (FABRICLAB_FAKEVERBS_LATENCY_NS) and a per-message cost (FABRICLAB_FAKEVERBS_MSG_COST_NS).
 *     Hardware faults of this process's NICs: FABRICLAB_FAKEVERBS_HW_RATE_PCT (trained down to
 *     1-100% of its rate), FABRICLAB_FAKEVERBS_HW_PAUSE_NS=EVERY:FOR (paused FOR ns of every
 *     EVERY), FABRICLAB_FAKEVERBS_HW_ADD_NS (added one-way latency).
 */
#ifndef FABRICLAB_FAKEVERBS_H
#define FABRICLAB_FAKEVERBS_H

#include <stdint.h>

/* Adds injection rules (same grammar as FABRICLAB_FAKEVERBS_INJECT; N counts from the next
 * transmitted send WR). 0, or EINVAL when the text does not parse. */
int fakeverbs_inject(const char *rules);

/* Sets a port's state (an enum ibv_port_state value) at once; going to DOWN raises
 * IBV_EVENT_PORT_ERR, back to ACTIVE IBV_EVENT_PORT_ACTIVE, on each open context of the device.
 * 0, or ENODEV. */
int fakeverbs_set_port_state(const char *device, int port, int state);

/* Send WRs this process has transmitted so far (the count the injection rules use). */
uint64_t fakeverbs_op_count(void);

/* The most send WRs any QP of this process has held at once (posted, their slots not yet freed
 * by polling a completion at or after them) since the last call; the count restarts at 0. */
uint64_t fakeverbs_sq_high_water(void);

/* 1: this process's NIC stops executing the requests that arrive (they queue, as at an HCA
 * that stalls while still acknowledging it is alive); 0: it resumes. Lets a test hold work
 * requests in flight deterministically. */
void fakeverbs_pause_nic(int paused);

/* The emulated fabric's schedule in this process (FABRICLAB_FAKEVERBS_PHYSICS): messages its
 * NIC executed, how many of them later than their bytes arrived by more than one message's
 * wire time (and 0.2 ms), past the first 0.5 s of its fabric traffic and not looped back to
 * itself, and the worst lateness of all. All 0 with the physics off. */
void fakeverbs_schedule(uint64_t *executed, uint64_t *late, uint64_t *worst_ns);

/* The access flags a live MR of this process was registered with (optional flags such as
 * IBV_ACCESS_RELAXED_ORDERING included), or -1. */
struct ibv_mr;
int fakeverbs_mr_access(const struct ibv_mr *mr);

#endif
