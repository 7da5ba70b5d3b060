/*
 * LL and LL128 on the wire: the payload of a step cut into lines that each carry a flag, which
 * is how NCCL's receiving GPU knows data landed without the network saying so (and why NCCL
 * may let a plugin complete such receives early: nccl_rules.h, shim_rules_recv_hint). The
 * layouts are NCCL's sizes (nccl_rules.c: shim_rules_wire_bytes) in the simplest order:
 *   LL     16-byte lines, 4 data bytes and a 4-byte flag twice (src/include/device.h:75-89)
 *   LL128  128-byte lines of 15 data words and a flag word, 16 lines to a 2 KiB slice
 *          (device.h:110-117, src/device/prims_ll128.h:292-294)
 * The flag of a step is its number on the connection plus one (NCCL_LL_FLAG(step + 1),
 * device.h:105, src/transport/net.cc:1385).
 */
#ifndef SHIM_LL_LINES_H
#define SHIM_LL_LINES_H

#include <stddef.h>
#include <stdint.h>

/* Writes `bytes` of payload as lines flagged `flag` into wire; returns the bytes on the wire. */
size_t shim_lines_pack(int proto, void *wire, const void *payload, size_t bytes, uint64_t flag);
/* 1 when every line of a step carrying `bytes` of payload shows `flag`: the step landed. */
int shim_lines_ready(int proto, const void *wire, size_t bytes, uint64_t flag);
/* Reads `bytes` of payload out of a landed step's lines. */
void shim_lines_unpack(int proto, void *payload, const void *wire, size_t bytes);

#endif
