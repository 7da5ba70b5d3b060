/*
 * The node's RDMA ports as the kernel shows them in sysfs: state, active rate
 * against the highest rate the port could run at, and the counters that find
 * bad links (docs/doctor.md). Read by the report thread and by `fabriclab
 * doctor`, never on the data path. The sysfs root is a parameter so that tests
 * read fixture trees (FABRICLAB_SYSFS_ROOT).
 */
#ifndef FL_PORT_INFO_H
#define FL_PORT_INFO_H

#include <net/if.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define FL_PORT_MAX 16 /* ports of one node looked at */
#define FL_PORT_COUNTERS 64 /* counters kept per port */
#define FL_PORT_NAME_LEN 48 /* "mlx5_0/1" */
#define FL_COUNTER_NAME_LEN 48

/* IB port states as sysfs numbers them ("4: ACTIVE"). */
enum fl_port_state {
	FL_PORT_STATE_UNKNOWN = 0,
	FL_PORT_DOWN = 1,
	FL_PORT_INIT = 2,
	FL_PORT_ARMED = 3,
	FL_PORT_ACTIVE = 4,
	FL_PORT_ACTIVE_DEFER = 5,
};

#define FL_PHYS_LINK_UP 5 /* "5: LinkUp" */

/* What a rising counter means. */
enum fl_counter_severity {
	FL_COUNTER_INFO, /* traffic, not trouble */
	FL_COUNTER_CONGESTION, /* drops, pauses, waits: a loaded or congested fabric */
	FL_COUNTER_ERROR, /* a bad cable, transceiver or port */
};

struct fl_counter {
	/* Where it came from: "counters/symbol_error", "hw_counters/out_of_buffer",
	 * "statistics/rx_dropped" (the netdev), "ethtool/rx_pause_ctrl_phy". */
	char name[FL_COUNTER_NAME_LEN];
	uint64_t value;
	uint8_t width; /* bits */
	bool saturating; /* IB PMA counters stop at their maximum instead of wrapping */
	uint8_t severity; /* enum fl_counter_severity */
};

struct fl_counter_set {
	int n;
	struct fl_counter c[FL_PORT_COUNTERS];
};

/* How a counter moved between two samples. */
enum fl_delta_kind {
	FL_DELTA_OK,
	FL_DELTA_WRAPPED, /* passed its width's maximum: counted around */
	FL_DELTA_RESET, /* went back (perfquery -R, driver reload): counted from 0 */
	FL_DELTA_SATURATED, /* stuck at its maximum: the delta is a lower bound */
	FL_DELTA_MISSING, /* not there in the earlier sample */
};

#define FL_QOS_PRIOS 8 /* Ethernet priorities (PCP values) */

/* A RoCE interface's lossless settings (port_qos.c); have_* false = not exposed. */
struct fl_port_qos {
	bool have_trust, have_pfc, have_ecn;
	char trust[8];              /* "pcp" or "dscp" */
	bool pfc[FL_QOS_PRIOS];
	bool ecn_np[FL_QOS_PRIOS];  /* notification point: sends CNPs for marked packets */
	bool ecn_rp[FL_QOS_PRIOS];  /* reaction point: slows down on CNPs (DCQCN) */
};

struct fl_port {
	char dev[FL_PORT_NAME_LEN]; /* "mlx5_0" */
	int num; /* port number, from 1 */
	char name[FL_PORT_NAME_LEN]; /* "mlx5_0/1" */
	char link_layer[16]; /* "InfiniBand", "Ethernet" */
	char hca_type[32]; /* "MT4123": ports of one model should train alike */
	int state; /* enum fl_port_state */
	char state_name[24]; /* "ACTIVE" */
	int phys_state;
	char phys_name[40]; /* "LinkUp" */
	char rate_text[48]; /* sysfs `rate`: "200 Gb/sec (4X HDR)" */
	double active_gbps; /* 0 unknown */
	double max_gbps; /* highest rate it could run at; 0 unknown */
	char max_from[32]; /* how max_gbps was found: "link modes", "same HCA model" */
	char netdev[IFNAMSIZ]; /* RoCE: the Ethernet interface, "" if none */
	char pci_path[256]; /* real path of the device's PCI function, "" if none */
	struct fl_port_qos qos; /* RoCE: netdev's lossless settings */
	struct fl_counter_set counters;
};

struct fl_port_list {
	int n;
	struct fl_port p[FL_PORT_MAX];
};

/* --- port_qos.c --- */
/* netdev's trust, PFC and ECN under root into q (all unknown when netdev is ""). */
void fl_port_read_qos(const char *root, const char *netdev, struct fl_port_qos *q);
/* Eight 0/1 in priority order, spaces or commas between allowed; false when not that. */
bool fl_qos_parse_bits(const char *text, bool out[FL_QOS_PRIOS]);
/* "00010000": priority 0 first. */
void fl_qos_bits_text(const bool bits[FL_QOS_PRIOS], char out[FL_QOS_PRIOS + 1]);

/* --- port_rate.c --- */
/* "200 Gb/sec (4X HDR)" -> 200 (and width 4, speed "HDR" when present); -1 when not a rate. */
int fl_port_rate_parse(const char *text, double *gbps, int *width, char *speed, size_t speed_len);
/* An ethtool link mode name ("100000baseCR4/Full") -> its speed in Mbit/s, 0 when none. */
long fl_link_mode_mbps(const char *name);

/* --- port_counters.c --- */
/*
 * after - before for one counter, by its width and kind: a counter that went
 * back wrapped (if it wraps) or was reset (then the delta counts from 0).
 */
enum fl_delta_kind fl_counter_delta(const struct fl_counter *before, const struct fl_counter *after,
				    uint64_t *delta);
const struct fl_counter *fl_counter_find(const struct fl_counter_set *s, const char *name);
const char *fl_delta_kind_name(enum fl_delta_kind kind);
const char *fl_counter_severity_name(int severity);
/* Reads the counters of one port (and its netdev's) under root into p->counters. */
void fl_port_read_counters(const char *root, struct fl_port *p);
/* Adds name = value unless the set is full; severity and width as given. */
void fl_counter_add(struct fl_counter_set *s, const char *name, uint64_t value, int width,
		    bool saturating, int severity);
/* The severity a counter of the netdev's ethtool statistics gets; -1: not one we keep. */
int fl_ethtool_counter_severity(const char *name);

/* A counter that moved between two samples of one port, with what it means. */
struct fl_counter_change {
	const struct fl_counter *counter; /* in the later sample */
	uint64_t delta;
	enum fl_delta_kind kind;
};
/*
 * The counters of `now` at or above min_severity that rose since `base` (or are
 * stuck at their maximum), in the order of now's set; returns how many (at most max).
 */
int fl_port_rising(const struct fl_port *now, const struct fl_port *base, int min_severity,
		   struct fl_counter_change *out, int max);

/* --- port_render.c --- */
struct fl_json;
/*
 * `key`: [ports] as docs/report-format.md describes them, with each counter's
 * delta since the same port in `base` (NULL: values only) over `seconds`.
 */
void fl_ports_json(struct fl_json *j, const char *key, const struct fl_port_list *now,
		   const struct fl_port_list *base, double seconds);
/* Readable lines, one per port, then its rising counters, each prefixed by indent. */
void fl_ports_text(FILE *f, const char *indent, const struct fl_port_list *now,
		   const struct fl_port_list *base, double seconds);

/* --- port_ethtool.c --- */
/*
 * The netdev's ethtool statistics that find bad links (pause, discard, error
 * counters) into s. On the real /sys through the ETHTOOL_GSTATS ioctl; under
 * any other root from the fixture file <root>/class/net/<if>/ethtool-S.txt,
 * written like `ethtool -S <if>` prints.
 */
void fl_ethtool_stats(const char *root, const char *ifname, struct fl_counter_set *s);
/*
 * Highest speed among the netdev's supported link modes, Mbit/s; 0 unknown.
 * Real /sys: ETHTOOL_GLINKSETTINGS and the link mode names; fixtures: the
 * "Supported link modes:" of <root>/class/net/<if>/ethtool.txt (`ethtool <if>`).
 */
long fl_ethtool_max_mbps(const char *root, const char *ifname);
/* True for the real sysfs, where ioctls describe the same interfaces. */
bool fl_sysfs_is_real(const char *root);

/* --- port_scan.c --- */
/*
 * Every port of every RDMA device under root/class/infiniband, counters
 * included, with max_gbps decided (docs/doctor.md). 0 ports when none exist.
 */
void fl_ports_scan(const char *root, struct fl_port_list *out);
/* Re-reads the state, rate and counters of the ports already listed. */
void fl_ports_refresh(const char *root, struct fl_port_list *ports);
/* Active, and running below the highest rate it could. */
bool fl_port_trained_down(const struct fl_port *p);
bool fl_port_is_active(const struct fl_port *p);
/* The first active port, NULL when none. */
const struct fl_port *fl_ports_first_active(const struct fl_port_list *l);
/* The same port in another sample, by name; NULL when absent. */
const struct fl_port *fl_ports_find(const struct fl_port_list *l, const char *name);

/* --- port_watch.c: the report's view --- */
/* The sample at the plugin's init, the base of every report's deltas. */
void fl_port_watch_start(void);
/* The sample at init; NULL before fl_port_watch_start. */
const struct fl_port_list *fl_port_watch_base(void);
/* A new sample (malloc'd, the caller frees) and the seconds since the base; NULL on no memory. */
struct fl_port_list *fl_port_watch_now(double *seconds);
/* Frees the base, at the plugin's unload after the final report: nothing reads it later. */
void fl_port_watch_stop(void);

#endif
