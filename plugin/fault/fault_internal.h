/* What the files applying FABRICLAB_FAULT share: the parsed rules and the process-wide pacers. */
#ifndef FL_FAULT_INTERNAL_H
#define FL_FAULT_INTERNAL_H

#include "fault.h"
#include "transport/pace.h"

/* A shared pacer's dir beside FL_FAULT_TX/RX: a peer's receive throttle, paced at its sender. */
#define FL_FAULT_PEER_RX 4

/* Rule index of the pacer that stands for FABRICLAB_LINK_RATE. */
#define FL_FAULT_LINK_RATE_RULE (-1)

const struct fl_fault_spec *fl_fault_rules(void);
/* FABRICLAB_LINK_RATE in bytes/s, 0 unset. */
uint64_t fl_fault_link_rate(void);
/* FABRICLAB_PORT_SPEED in bytes/s, 0 unset. */
uint64_t fl_fault_port_speed(void);
/* The rule in canonical form, kept from init. */
const char *fl_fault_rule_text(int rule);

/*
 * The pacer that rule `rule` keeps for (dev, peer, dir): one per device (peer
 * "") or per hop, shared by every connection it covers; created on first use
 * with the rate (0: none) and stall windows (for 0: none), never freed. NULL
 * when the table is full.
 */
struct fl_pacer *fl_fault_shared_pacer(int rule, int dev, const char *peer, int dir,
				       uint64_t rate_bytes_per_s, uint64_t stall_for_ns,
				       uint64_t stall_every_ns);
/* Tells the observer (fl_fault_set_observer), if any, of a fault just applied. */
void fl_fault_observe(uint32_t conn_id, const char *action, const char *rule, uint64_t delay_ns,
		      uint64_t rate_bytes_per_s);
/* Adds one connection to the injected entry (rule, dev, peer, dir), creating it from e. */
void fl_fault_note_injected(int rule, const struct fl_fault_injected *e);

#endif
