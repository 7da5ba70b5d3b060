/*
 * A RoCE interface's lossless settings, where the driver exposes them in
 * sysfs (mlx5 does): qos/trust ("pcp" or "dscp"), qos/pfc (eight 0/1 in
 * priority order) and ECN per priority at the notification point
 * (ecn/roce_np/enable/<prio>: sends CNPs) and the reaction point
 * (ecn/roce_rp/enable/<prio>: slows down on CNPs, DCQCN). Read by the report
 * thread (so `fabriclab report` can compare nodes) and by the doctor.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "port_info.h"
#include "base/sysfs_read.h"

/* "0 0 0 1 0 0 0 0", "0,0,0,1,0,0,0,0" or "00010000": eight 0/1 in priority order. */
bool fl_qos_parse_bits(const char *text, bool out[FL_QOS_PRIOS])
{
	int n = 0;

	for (const char *c = text; *c && n < FL_QOS_PRIOS; c++) {
		if (*c == '0' || *c == '1')
			out[n++] = *c == '1';
		else if (!isspace((unsigned char)*c) && *c != ',')
			return false;
	}
	return n == FL_QOS_PRIOS;
}

void fl_qos_bits_text(const bool bits[FL_QOS_PRIOS], char out[FL_QOS_PRIOS + 1])
{
	for (int p = 0; p < FL_QOS_PRIOS; p++)
		out[p] = bits[p] ? '1' : '0';
	out[FL_QOS_PRIOS] = '\0';
}

static void read_ecn(const char *root, const char *netdev, struct fl_port_qos *q)
{
	char buf[16];
	int seen = 0;

	for (int p = 0; p < FL_QOS_PRIOS; p++) {
		if (!fl_read_first_line(buf, sizeof(buf), "%s/class/net/%s/ecn/roce_np/enable/%d",
					root, netdev, p)) {
			q->ecn_np[p] = atoi(buf) != 0;
			seen++;
		}
		if (!fl_read_first_line(buf, sizeof(buf), "%s/class/net/%s/ecn/roce_rp/enable/%d",
					root, netdev, p)) {
			q->ecn_rp[p] = atoi(buf) != 0;
			seen++;
		}
	}
	q->have_ecn = seen == 2 * FL_QOS_PRIOS;
}

void fl_port_read_qos(const char *root, const char *netdev, struct fl_port_qos *q)
{
	char buf[64];

	memset(q, 0, sizeof(*q));
	if (!netdev[0])
		return;
	q->have_trust = !fl_read_first_line(buf, sizeof(buf), "%s/class/net/%s/qos/trust", root,
					    netdev) &&
			(!strcmp(buf, "pcp") || !strcmp(buf, "dscp"));
	if (q->have_trust)
		snprintf(q->trust, sizeof(q->trust), "%s", buf[0] == 'd' ? "dscp" : "pcp");
	q->have_pfc = !fl_read_first_line(buf, sizeof(buf), "%s/class/net/%s/qos/pfc", root,
					  netdev) && fl_qos_parse_bits(buf, q->pfc);
	read_ecn(root, netdev, q);
}
