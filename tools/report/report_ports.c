/*
 * The RDMA ports each report read from its node's sysfs (`ports`, optional,
 * read in report_ports_read.c): which one was active beside TCP traffic (the
 * transport verdict names it), and which are suspects, trained down or with
 * error or congestion counters rising. Suspects are evidence shown beside the
 * verdict; the verdict itself rests on the measured hops.
 */
#include <stdlib.h>
#include <string.h>

#include "plugin/base/error.h"
#include "report.h"
#include "report_index.h"

void report_rdma_figures(const struct report_hop *h, struct fl_hop_figures *f)
{
	bool send = h->send->present && h->send->rdma_port_active;
	bool recv = h->recv->present && h->recv->rdma_port_active;
	const struct report_view *v = send ? h->send : h->recv;

	f->rdma_port_active = send || recv;
	if (!f->rdma_port_active || !v->rdma_port || !v->rdma_port[0])
		return;
	snprintf(f->rdma_node, sizeof(f->rdma_node), "%s",
		 send ? h->key.src_node : h->key.dst_node);
	snprintf(f->rdma_port, sizeof(f->rdma_port), "%s", v->rdma_port);
}

static bool suspect(const struct report_port *p)
{
	return p->trained_down || p->rising[0];
}

struct listed {
	const struct report_set *set;
	const struct report_port *p; /* the one looked up */
};

static bool same_port(const void *ctx, size_t e)
{
	const struct listed *l = ctx;
	const struct report_port *q = &l->set->suspects[e];

	return !strcmp(q->node, l->p->node) && !strcmp(q->name, l->p->name);
}

/*
 * Several processes of one node read the same ports: the longest-watched
 * reading is kept. Each port looked up by node and name: on a fleet where
 * congestion counters rise everywhere, every port is a suspect.
 */
int report_collect_ports(struct report_set *set)
{
	struct listed l = { set, NULL };
	struct report_index ix;
	size_t total = 0;

	for (size_t f = 0; f < set->nfiles; f++)
		total += set->files[f].nports;
	set->suspects = calloc(total + 1, sizeof(*set->suspects));
	if (!set->suspects || report_index_init(&ix, total))
		return fl_fail(FL_ERR_SYSTEM, "out of memory");
	for (size_t f = 0; f < set->nfiles; f++) {
		const struct report_file *file = &set->files[f];

		for (size_t i = 0; file->superseded_by < 0 && i < file->nports; i++) {
			const struct report_port *p = &file->ports[i];
			size_t *slot;

			if (!suspect(p))
				continue;
			l.p = p;
			slot = report_index_slot(&ix, report_index_hash(p->node, p->name, 0), same_port,
						 &l);
			if (!*slot) {
				set->suspects[set->nsuspects] = *p;
				*slot = ++set->nsuspects;
			} else if (p->seconds > set->suspects[*slot - 1].seconds) {
				set->suspects[*slot - 1] = *p;
			}
		}
	}
	report_index_free(&ix);
	return 0;
}

bool report_port_is_culprit(const struct report_set *set, const struct report_port *p)
{
	const struct fl_verdict *v = &set->verdict;
	char dev_port[64];

	if ((v->kind != FL_VERDICT_DEVICE && v->kind != FL_VERDICT_LINK &&
	     v->kind != FL_VERDICT_TRANSPORT) ||
	    strcmp(v->node, p->node) || !v->dev[0])
		return false;
	snprintf(dev_port, sizeof(dev_port), "%s:%s", p->device,
		 strchr(p->name, '/') ? strchr(p->name, '/') + 1 : "");
	return !strcmp(v->dev, p->name) || !strcmp(v->dev, p->device) ||
	       !strcmp(v->dev, dev_port) || (p->netdev[0] && !strcmp(v->dev, p->netdev));
}

void report_print_ports(const struct report_set *set, FILE *out)
{
	if (!set->nsuspects)
		return;
	fprintf(out,
		"\nsuspect RDMA ports (the reports' sysfs readings: evidence, not the verdict; "
		"! = the verdict's device):\n");
	for (size_t i = 0; i < set->nsuspects; i++) {
		const struct report_port *p = &set->suspects[i];

		fprintf(out, "%c %s %s%s%s:", report_port_is_culprit(set, p) ? '!' : ' ', p->node,
			p->name, p->netdev[0] ? " netdev " : "", p->netdev);
		if (p->trained_down)
			fprintf(out, " trained down, %g of %g Gb/s;", p->active_gbps, p->max_gbps);
		if (p->rising[0])
			fprintf(out, " %s counters rising in %.0f s: %s;",
				p->errors_rising ? "error" : "congestion", p->seconds, p->rising);
		fprintf(out, " on %s: fabriclab doctor --interval 10\n", p->node);
	}
}

json_t *report_port_json(const struct report_set *set, size_t i)
{
	const struct report_port *p = &set->suspects[i];

	return json_pack("{s:s, s:s, s:s, s:s?, s:b, s:f, s:f, s:f, s:s, s:b, s:b}", "node",
			 p->node, "name", p->name, "device", p->device, "netdev",
			 p->netdev[0] ? p->netdev : NULL, "trained_down", p->trained_down,
			 "active_gbps", p->active_gbps, "max_gbps", p->max_gbps, "delta_seconds",
			 p->seconds, "rising", p->rising, "errors_rising", p->errors_rising,
			 "verdict_device", report_port_is_culprit(set, p));
}
