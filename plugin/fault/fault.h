/*
 * Applying FABRICLAB_FAULT: the wrap layer's side of fault injection. The
 * rules are parsed once at init; each connection learns which apply to it when
 * it is established (its pacer, a send hold, a failure), getProperties learns
 * the device-wide ones (nogdr, FABRICLAB_LINK_RATE). Every fault applied is
 * logged at WARN, traced, and kept for the report's `injected` list; nothing
 * here feeds the verdict. With FABRICLAB_FAULT and FABRICLAB_LINK_RATE unset,
 * no connection gets any state and the data path pays one NULL test.
 */
#ifndef FL_FAULT_H
#define FL_FAULT_H

#include <stdbool.h>
#include <stdint.h>

#include "fault_spec.h"
#include "base/fl_types.h"
#include "transport/transport.h"

/* Built with -DFABRICLAB_NO_FAULTS: no hook in the data path (for `make bench`). */
#ifdef FABRICLAB_NO_FAULTS
#define FL_FAULTS 0
#else
#define FL_FAULTS 1
#endif

#define FL_LINK_RATE_ENV "FABRICLAB_LINK_RATE"
/* The speed every device reports, instead of what its transport reads; paces nothing. */
#define FL_PORT_SPEED_ENV "FABRICLAB_PORT_SPEED"
#define FL_FAULT_MAX_INJECTED 64

/* One fault applied on this node, as the report lists it. */
struct fl_fault_injected {
	char rule[FL_FAULT_DESCRIBE_LEN]; /* canonical; "link_rate:rate=..." for the lab's rate */
	char action[16];
	char dev[FL_DEV_NAME_LEN];
	char peer[FL_NODE_NAME_LEN]; /* "" when device-wide */
	char dir[8];                 /* "tx", "rx", or "" for device properties */
	int connections;             /* connections it applies to (0 for device properties) */
	uint64_t rate_bytes_per_s;   /* pacing rate, 0 if none */
	uint64_t delay_ns;           /* fixed delay per send, or stall length */
	int ptr_support_before;      /* nogdr: what the device offered, FL_PTR_* */
	int ptr_support_after;
};

/*
 * Who hears of each fault as it is applied (the wrap points it at the tracer):
 * the connection (0 for a device property), the action, the rule in canonical
 * form, the delay added and the pacing rate. NULL: nobody.
 */
typedef void (*fl_fault_observer_fn)(uint32_t conn_id, const char *action, const char *rule,
				     uint64_t delay_ns, uint64_t rate_bytes_per_s);
void fl_fault_set_observer(fl_fault_observer_fn fn);

/* Per connection: NULL when no rule applies (the usual case). */
struct fl_fault_conn;

/*
 * Once, at plugin init: parses FABRICLAB_FAULT and FABRICLAB_LINK_RATE (a
 * malformed value fails init with the parser's message), and says at INFO
 * which rules match nothing on this node.
 */
int fl_fault_init(const struct fl_transport *tp);
/* Whether any rule or a link rate is set at all. */
bool fl_fault_active(void);
/* The device's line rate in bytes/s: FABRICLAB_LINK_RATE, else its reported speed; 0 unknown. */
uint64_t fl_fault_line_rate(const struct fl_transport *tp, int dev);

/* getProperties through the wrap (and the report): link rate or port speed as speed,
 * nogdr's mask. */
void fl_fault_props(int dev, struct fl_props *props);

/*
 * An established connection: attaches a pacer to it through tp->set_pacer
 * when throttle, stall or a link rate apply; *out stays NULL when nothing
 * applies. send: a send comm (tx), else a recv comm (rx).
 */
int fl_fault_attach(const struct fl_transport *tp, void *tcomm, bool send, uint32_t conn_id,
		    const struct fl_endpoint *self, const struct fl_endpoint *peer,
		    struct fl_fault_conn **out);
/* After the transport comm is closed (its threads no longer read the pacer). */
void fl_fault_release(struct fl_fault_conn *f);

/* isend/irecv: true = hold this post back (return a NULL request: NCCL posts it again). */
bool fl_fault_hold_post(struct fl_fault_conn *f, size_t size, uint64_t now_ns);
/* isend/irecv: the transport took the request; the next one gets its own hold. */
void fl_fault_post_taken(struct fl_fault_conn *f);
/* test: FL_OK, or the injected failure (fl_fail text naming the rule) once it is due. */
int fl_fault_check_fail(struct fl_fault_conn *f, uint64_t now_ns);
/* test: a request completed with `bytes` of payload. */
void fl_fault_moved(struct fl_fault_conn *f, uint64_t bytes);

/* The faults applied so far on this node; returns how many were copied. */
int fl_fault_injected_list(struct fl_fault_injected *out, int max);

/* Tests: forget the parsed rules, link rate, shared pacers and injected list. */
void fl_fault_reset_for_tests(void);

#endif
