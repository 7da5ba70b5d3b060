/*
 * RoCE runs lossless only when the priority its packets travel on has PFC, and
 * stays out of PFC storms only when ECN (DCQCN) is on for that priority at
 * both ends. Which priority NCCL's packets use follows from the NIC's trust
 * mode: with `dscp`, NCCL_IB_TC >> 2 is the DSCP, mapped to a priority
 * (dscp2prio, else DSCP >> 3); with `pcp`, NCCL_IB_SL is the VLAN priority.
 * The settings are read from the interface's sysfs where the driver exposes
 * them, by the port scan the plugin's reports use too (plugin/port/port_qos.c:
 * qos/trust, qos/pfc, ecn/roce_{np,rp}/enable/<prio>), plus qos/dscp2prio
 * ("DSCP PRIO" lines) here; per-priority pause counters come from the ethtool
 * statistics (rx_prio<N>_pause).
 */
#include <stdlib.h>
#include <string.h>

#include "plugin/base/sysfs_read.h"
#include "doctor.h"

#define LOOK_QOS "mlnx_qos -i %s   # or: dcb pfc show dev %s; dcb app show dev %s"
#define LOOK_ECN "grep . /sys/class/net/%s/ecn/roce_*/enable/*"

static long env_long(const char *name)
{
	const char *v = getenv(name);

	return v && *v ? strtol(v, NULL, 0) : 0;
}

/* dscp2prio: the priority of one DSCP, else the default mapping DSCP >> 3. */
static int dscp_prio(const char *root, const char *netdev, int dscp)
{
	char path[512], line[128];
	FILE *f;
	int prio = dscp >> 3;

	snprintf(path, sizeof(path), "%s/class/net/%s/qos/dscp2prio", root, netdev);
	f = fopen(path, "r");
	if (!f)
		return prio;
	while (fgets(line, sizeof(line), f)) {
		int d, p;

		if (sscanf(line, "%d %d", &d, &p) == 2 && d == dscp && p >= 0 && p < DOCTOR_PRIOS)
			prio = p;
	}
	fclose(f);
	return prio;
}

static void read_pauses(const struct fl_port *p, struct doctor_roce *r)
{
	char name[FL_COUNTER_NAME_LEN];

	for (int i = 0; i < DOCTOR_PRIOS; i++) {
		const struct fl_counter *c;

		snprintf(name, sizeof(name), "ethtool/rx_prio%d_pause", i);
		c = fl_counter_find(&p->counters, name);
		r->rx_pause[i] = c ? c->value : 0;
		snprintf(name, sizeof(name), "ethtool/tx_prio%d_pause", i);
		c = fl_counter_find(&p->counters, name);
		r->tx_pause[i] = c ? c->value : 0;
	}
}

/* The settings port_scan read (fl_port_read_qos), and the priority NCCL's packets take. */
static void read_roce(const char *root, const struct fl_port *p, struct doctor_roce *r)
{
	const struct fl_port_qos *q = &p->qos;

	memset(r, 0, sizeof(*r));
	snprintf(r->netdev, sizeof(r->netdev), "%s", p->netdev);
	snprintf(r->port, sizeof(r->port), "%s", p->name);
	r->tc = env_long("NCCL_IB_TC");
	r->sl = env_long("NCCL_IB_SL");
	r->dscp = (int)((r->tc >> 2) & 63);
	r->have_trust = q->have_trust;
	/* The NIC's default is pcp: said so in the check's message. */
	snprintf(r->trust, sizeof(r->trust), "%s", q->have_trust ? q->trust : "pcp");
	r->prio = !strcmp(r->trust, "dscp") ? dscp_prio(root, r->netdev, r->dscp) :
		  (int)(r->sl & 7);
	r->have_pfc = q->have_pfc;
	memcpy(r->pfc, q->pfc, sizeof(r->pfc));
	r->have_ecn = q->have_ecn;
	memcpy(r->ecn_np, q->ecn_np, sizeof(r->ecn_np));
	memcpy(r->ecn_rp, q->ecn_rp, sizeof(r->ecn_rp));
	read_pauses(p, r);
}

/* "3" or "3,4" or "none": the priorities set in bits. */
static void prio_list(const bool bits[DOCTOR_PRIOS], char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (int p = 0; p < DOCTOR_PRIOS; p++) {
		if (bits[p] && used + 3 < len)
			used += (size_t)snprintf(buf + used, len - used, "%s%d", used ? "," : "",
						 p);
	}
	if (!used)
		snprintf(buf, len, "none");
}

static void mapping(const struct doctor_roce *r, char *buf, size_t len)
{
	if (!strcmp(r->trust, "dscp"))
		snprintf(buf, len, "trust dscp%s: NCCL_IB_TC=%ld -> DSCP %d -> priority %d",
			 r->have_trust ? "" : " (assumed)", r->tc, r->dscp, r->prio);
	else
		snprintf(buf, len, "trust pcp%s: NCCL_IB_SL=%ld -> priority %d",
			 r->have_trust ? "" : " (not readable: the NIC's default assumed)", r->sl,
			 r->prio);
}

/* What to set so that NCCL's packets land on lossless priority `p`. */
static void remedy(const struct doctor_roce *r, int p, char *buf, size_t len)
{
	if (!strcmp(r->trust, "dscp"))
		snprintf(buf, len, "set NCCL_IB_TC=%d (DSCP %d -> priority %d, ECN-capable)",
			 ((p * 8 + 2) << 2) | 2, p * 8 + 2, p);
	else
		snprintf(buf, len, "set NCCL_IB_SL=%d", p);
}

static void check_pfc(struct doctor *d, const struct doctor_roce *r)
{
	char look[256], how[96], on[32], fix[96];
	int first_on = -1;

	snprintf(look, sizeof(look), LOOK_QOS, r->netdev, r->netdev, r->netdev);
	mapping(r, how, sizeof(how));
	if (!r->have_pfc) {
		doctor_add(d, DOCTOR_INFO, "pfc", r->netdev, look, "PFC settings not readable "
			   "here (qos/pfc); NCCL's traffic: %s", how);
		return;
	}
	prio_list(r->pfc, on, sizeof(on));
	for (int p = DOCTOR_PRIOS - 1; p >= 0; p--)
		first_on = r->pfc[p] ? p : first_on;
	if (r->pfc[r->prio]) {
		doctor_add(d, DOCTOR_PASS, "pfc", r->netdev, look, "PFC on priority %d, the one "
			   "NCCL's RoCE traffic uses (%s; PFC on %s)", r->prio, how, on);
	} else if (first_on < 0) {
		doctor_add(d, DOCTOR_WARN, "pfc", r->netdev, look, "PFC off on every priority: "
			   "RoCE runs lossy, drops cost retransmissions (%s)", how);
	} else {
		remedy(r, first_on, fix, sizeof(fix));
		doctor_add(d, DOCTOR_FAIL, "pfc", r->netdev, look, "PFC off on priority %d, the "
			   "one NCCL's RoCE traffic uses (%s), on for %s only: %s", r->prio, how,
			   on, fix);
	}
}

static void check_ecn(struct doctor *d, const struct doctor_roce *r)
{
	char look[128];
	int p = r->prio;

	snprintf(look, sizeof(look), LOOK_ECN, r->netdev);
	if (!r->have_ecn) {
		doctor_add(d, DOCTOR_INFO, "ecn", r->netdev, look, "ECN settings not readable here "
			   "(ecn/roce_np, ecn/roce_rp)");
	} else if (r->ecn_np[p] && r->ecn_rp[p]) {
		doctor_add(d, DOCTOR_PASS, "ecn", r->netdev, look, "ECN on priority %d at both "
			   "points: notification (sends CNPs) and reaction (slows down on them)",
			   p);
	} else {
		doctor_add(d, DOCTOR_WARN, "ecn", r->netdev, look, "ECN on priority %d: "
			   "notification point %s, reaction point %s: without both, congestion is "
			   "handled by pause frames alone (PFC storms, head-of-line blocking)", p,
			   r->ecn_np[p] ? "on" : "OFF", r->ecn_rp[p] ? "on" : "OFF");
	}
}

/* Pause frames on a priority without PFC: the switch port and the NIC disagree. */
static void check_pauses(struct doctor *d, const struct doctor_roce *r)
{
	char look[128];

	snprintf(look, sizeof(look), "ethtool -S %s | grep -E 'prio[0-7]_pause'", r->netdev);
	for (int p = 0; r->have_pfc && p < DOCTOR_PRIOS; p++) {
		if (!r->pfc[p] && (r->rx_pause[p] || r->tx_pause[p]))
			doctor_add(d, DOCTOR_WARN, "pause", r->netdev, look, "pause frames on "
				   "priority %d (rx %llu, tx %llu) where this NIC has PFC off: the "
				   "switch port's PFC settings differ from the NIC's", p,
				   (unsigned long long)r->rx_pause[p],
				   (unsigned long long)r->tx_pause[p]);
	}
	if ((r->rx_pause[r->prio] || r->tx_pause[r->prio]) && (!r->have_pfc || r->pfc[r->prio]))
		doctor_add(d, DOCTOR_INFO, "pause", r->netdev, look, "priority %d: rx pause %llu, "
			   "tx pause %llu since the counters were reset (rising fast under load: "
			   "congestion or a slow receiver; --interval judges the rise)", r->prio,
			   (unsigned long long)r->rx_pause[r->prio],
			   (unsigned long long)r->tx_pause[r->prio]);
}

/* The node's RoCE interfaces should all be set up alike. */
static void check_alike(struct doctor *d)
{
	char a[32], b[32];

	for (int i = 1; i < d->nroce; i++) {
		const struct doctor_roce *r0 = &d->roce[0], *r = &d->roce[i];

		if (!r0->have_pfc || !r->have_pfc || !memcmp(r0->pfc, r->pfc, sizeof(r->pfc)))
			continue;
		prio_list(r0->pfc, a, sizeof(a));
		prio_list(r->pfc, b, sizeof(b));
		doctor_add(d, DOCTOR_WARN, "pfc", r->netdev, NULL, "PFC on %s here, on %s on %s: "
			   "the node's RoCE interfaces differ", b, a, r0->netdev);
	}
}

void doctor_check_roce(struct doctor *d)
{
	d->nroce = 0;
	for (int i = 0; i < d->ports->n; i++) {
		const struct fl_port *p = &d->ports->p[i];
		struct doctor_roce *r = &d->roce[d->nroce];

		if (strcmp(p->link_layer, "Ethernet") || !p->netdev[0])
			continue;
		read_roce(d->root, p, r);
		d->nroce++;
		check_pfc(d, r);
		check_ecn(d, r);
		check_pauses(d, r);
	}
	check_alike(d);
}
