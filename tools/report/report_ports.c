/*
 * The RDMA ports each report read from its node's sysfs (`ports`, optional):
 * which one was active beside TCP traffic (the transport verdict names it),
 * and which are suspects, trained down or with error or congestion counters
 * rising. Suspects are evidence shown beside the verdict; the verdict itself
 * rests on the measured hops.
 */
#include <stdlib.h>
#include <string.h>

#include "plugin/base/error.h"
#include "report.h"
#include "tools/common/tool_text.h"
#include "report_fields.h"

/* "symbol_error +60, rx_pause_ctrl_phy +5" from [{counter, delta, severity}]. */
static int get_rising(const struct report_reader *r, json_t *p, struct report_port *out)
{
	json_t *arr, *e;
	size_t k, used = 0;
	int err = report_get_array(r, p, "rising", false, &arr);

	if (err || !arr)
		return err;
	json_array_foreach (arr, k, e) {
		json_t *name = json_object_get(e, "counter"), *delta = json_object_get(e, "delta");
		json_t *sev = json_object_get(e, "severity");
		const char *n, *slash;
		char shown[64];
		int w;

		if (!json_is_string(name) || !json_is_integer(delta))
			return report_bad(r, "rising",
					  "expected {counter, delta, severity} objects");
		n = json_string_value(name);
		slash = strchr(n, '/');
		tool_text_escape(shown, sizeof(shown), slash ? slash + 1 : n); /* it is shown */
		w = snprintf(out->rising + used, sizeof(out->rising) - used, "%s%s +%lld",
			     used ? ", " : "", shown,
			     (long long)json_integer_value(delta));
		used = w > 0 && used + (size_t)w < sizeof(out->rising) ? used + (size_t)w : used;
		out->errors_rising |= json_is_string(sev) &&
				      !strcmp(json_string_value(sev), "error");
	}
	return 0;
}

static int get_bits(const struct report_reader *r, json_t *q, const char *key, bool *have,
		    bool bits[FL_QOS_PRIOS])
{
	char text[32] = "";
	int err = report_get_string(r, q, key, false, text, sizeof(text));

	*have = !err && text[0];
	if (*have && !fl_qos_parse_bits(text, bits))
		return report_bad(r, key, "eight 0/1 in priority order, like \"00010000\"");
	return err;
}

/* `qos`: null or absent where the writer knew nothing (older reports, InfiniBand). */
static int get_qos(const struct report_reader *r, json_t *p, struct fl_port_qos *q)
{
	json_t *obj = json_object_get(p, "qos");
	bool have_np = false, have_rp = false;
	int err;

	if (!obj || json_is_null(obj))
		return 0;
	err = report_expect_object(r, obj);
	err = err ? err : report_get_string(r, obj, "trust", false, q->trust, sizeof(q->trust));
	if (!err && q->trust[0] && strcmp(q->trust, "pcp") && strcmp(q->trust, "dscp"))
		return report_bad(r, "trust", "\"pcp\", \"dscp\" or null");
	q->have_trust = q->trust[0] != '\0';
	err = err ? err : get_bits(r, obj, "pfc", &q->have_pfc, q->pfc);
	err = err ? err : get_bits(r, obj, "ecn_np", &have_np, q->ecn_np);
	err = err ? err : get_bits(r, obj, "ecn_rp", &have_rp, q->ecn_rp);
	q->have_ecn = have_np && have_rp;
	return err;
}

static int read_port(const struct report_reader *r, json_t *p, const char *node,
		     struct report_port *out)
{
	int err = report_expect_object(r, p);

	memset(out, 0, sizeof(*out));
	snprintf(out->node, sizeof(out->node), "%s", node);
	err = err ? err : report_get_string(r, p, "name", true, out->name, sizeof(out->name));
	err = err ? err
		  : report_get_string(r, p, "device", false, out->device, sizeof(out->device));
	err = err ? err
		  : report_get_string(r, p, "netdev", false, out->netdev, sizeof(out->netdev));
	err = err ? err : report_get_bool(r, p, "active", &out->active);
	err = err ? err : report_get_bool(r, p, "trained_down", &out->trained_down);
	err = err ? err : report_get_number(r, p, "active_gbps", false, &out->active_gbps);
	err = err ? err : report_get_number(r, p, "max_gbps", false, &out->max_gbps);
	err = err ? err : report_get_number(r, p, "delta_seconds", false, &out->seconds);
	err = err ? err : get_qos(r, p, &out->qos);
	return err ? err : get_rising(r, p, out);
}

int report_read_ports(const char *path, json_t *root, struct report_file *f)
{
	struct report_reader r = { path, "" };
	const struct report_port *active = NULL;
	json_t *arr, *p;
	size_t i;
	int err = report_get_array(&r, root, "ports", false, &arr);

	if (err || !arr)
		return err;
	f->ports = calloc(json_array_size(arr) + 1, sizeof(*f->ports));
	if (!f->ports)
		return fl_fail(FL_ERR_SYSTEM, "%s: out of memory", path);
	json_array_foreach (arr, i, p) {
		struct report_reader at = report_reader_at(&r, "ports", i);

		err = read_port(&at, p, f->node, &f->ports[f->nports]);
		if (err)
			return err;
		if (f->ports[f->nports].active && !active)
			active = &f->ports[f->nports];
		f->nports++;
	}
	for (size_t v = 0; active && v < f->nviews; v++) {
		f->views[v].v.rdma_port_active = true;
		f->views[v].v.rdma_port = active->name; /* f->ports lives as long as the set */
	}
	return 0;
}

void report_rdma_figures(const struct report_hop *h, struct fl_hop_figures *f)
{
	bool send = h->send.present && h->send.rdma_port_active;
	bool recv = h->recv.present && h->recv.rdma_port_active;
	const struct report_view *v = send ? &h->send : &h->recv;

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

/* The suspect already listed for the same node and port, NULL when none. */
static struct report_port *listed(struct report_set *set, const struct report_port *p)
{
	for (size_t i = 0; i < set->nsuspects; i++) {
		struct report_port *q = &set->suspects[i];

		if (!strcmp(q->node, p->node) && !strcmp(q->name, p->name))
			return q;
	}
	return NULL;
}

/* Several processes of one node read the same ports: the longest-watched reading is kept. */
int report_collect_ports(struct report_set *set)
{
	size_t total = 0;

	for (size_t f = 0; f < set->nfiles; f++)
		total += set->files[f].nports;
	set->suspects = calloc(total + 1, sizeof(*set->suspects));
	if (!set->suspects)
		return fl_fail(FL_ERR_SYSTEM, "out of memory");
	for (size_t f = 0; f < set->nfiles; f++) {
		const struct report_file *file = &set->files[f];

		for (size_t i = 0; file->superseded_by < 0 && i < file->nports; i++) {
			const struct report_port *p = &file->ports[i];
			struct report_port *q = suspect(p) ? listed(set, p) : NULL;

			if (suspect(p) && !q)
				set->suspects[set->nsuspects++] = *p;
			else if (q && p->seconds > q->seconds)
				*q = *p;
		}
	}
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

json_t *report_ports_json(const struct report_set *set)
{
	json_t *a = json_array();

	for (size_t i = 0; a && i < set->nsuspects; i++) {
		const struct report_port *p = &set->suspects[i];

		json_array_append_new(
			a, json_pack("{s:s, s:s, s:s, s:s?, s:b, s:f, s:f, s:f, s:s, s:b, s:b}",
				     "node", p->node, "name", p->name, "device", p->device,
				     "netdev", p->netdev[0] ? p->netdev : NULL, "trained_down",
				     p->trained_down, "active_gbps", p->active_gbps, "max_gbps",
				     p->max_gbps, "delta_seconds", p->seconds, "rising", p->rising,
				     "errors_rising", p->errors_rising, "verdict_device",
				     report_port_is_culprit(set, p)));
	}
	return a;
}
