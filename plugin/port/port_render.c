/* The node's RDMA ports in the report and in `fabriclab doctor --json`: JSON and text. */
#include <stdio.h>
#include <string.h>

#include "base/json_out.h"
#include "port_info.h"

static void counter_json(struct fl_json *j, const struct fl_counter *c, const struct fl_port *base)
{
	uint64_t delta;
	enum fl_delta_kind kind = fl_counter_delta(
		base ? fl_counter_find(&base->counters, c->name) : NULL, c, &delta);

	fl_json_object_inline(j, c->name);
	fl_json_uint(j, "value", c->value);
	if (kind == FL_DELTA_MISSING)
		fl_json_null(j, "delta");
	else
		fl_json_uint(j, "delta", delta);
	if (kind != FL_DELTA_OK && kind != FL_DELTA_MISSING)
		fl_json_string(j, "note", fl_delta_kind_name(kind));
	fl_json_string(j, "severity", fl_counter_severity_name(c->severity));
	fl_json_end(j);
}

static void rising_json(struct fl_json *j, const struct fl_port *p, const struct fl_port *base)
{
	struct fl_counter_change ch[FL_PORT_COUNTERS];
	int n = fl_port_rising(p, base, FL_COUNTER_CONGESTION, ch, FL_PORT_COUNTERS);

	fl_json_array(j, "rising");
	for (int i = 0; i < n; i++) {
		fl_json_object_inline(j, NULL);
		fl_json_string(j, "counter", ch[i].counter->name);
		fl_json_uint(j, "delta", ch[i].delta);
		fl_json_string(j, "severity", fl_counter_severity_name(ch[i].counter->severity));
		if (ch[i].kind != FL_DELTA_OK)
			fl_json_string(j, "note", fl_delta_kind_name(ch[i].kind));
		fl_json_end(j);
	}
	fl_json_end(j);
}

/* A RoCE port's lossless settings: null where the driver does not say. */
static void qos_json(struct fl_json *j, const struct fl_port *p)
{
	const struct fl_port_qos *q = &p->qos;
	char bits[FL_QOS_PRIOS + 1];

	if (!p->netdev[0]) {
		fl_json_null(j, "qos");
		return;
	}
	fl_json_object(j, "qos");
	fl_json_string(j, "trust", q->have_trust ? q->trust : NULL);
	fl_qos_bits_text(q->pfc, bits);
	fl_json_string(j, "pfc", q->have_pfc ? bits : NULL);
	fl_qos_bits_text(q->ecn_np, bits);
	fl_json_string(j, "ecn_np", q->have_ecn ? bits : NULL);
	fl_qos_bits_text(q->ecn_rp, bits);
	fl_json_string(j, "ecn_rp", q->have_ecn ? bits : NULL);
	fl_json_end(j);
}

static void port_json(struct fl_json *j, const struct fl_port *p, const struct fl_port *base,
		      double seconds)
{
	fl_json_object(j, NULL);
	fl_json_string(j, "name", p->name);
	fl_json_string(j, "device", p->dev);
	fl_json_int(j, "port", p->num);
	fl_json_string(j, "link_layer", p->link_layer);
	fl_json_string(j, "netdev", p->netdev[0] ? p->netdev : NULL);
	fl_json_string(j, "hca_type", p->hca_type);
	fl_json_string(j, "pci_path", p->pci_path[0] ? p->pci_path : NULL);
	fl_json_string(j, "state", p->state_name);
	fl_json_string(j, "phys_state", p->phys_name);
	fl_json_bool(j, "active", fl_port_is_active(p));
	fl_json_string(j, "rate", p->rate_text);
	fl_json_double(j, "active_gbps", p->active_gbps);
	if (p->max_gbps > 0) {
		fl_json_double(j, "max_gbps", p->max_gbps);
		fl_json_string(j, "max_from", p->max_from);
	} else {
		fl_json_null(j, "max_gbps");
		fl_json_null(j, "max_from");
	}
	fl_json_bool(j, "trained_down", fl_port_trained_down(p));
	qos_json(j, p);
	fl_json_double(j, "delta_seconds", base ? seconds : 0.0);
	fl_json_object(j, "counters");
	for (int i = 0; i < p->counters.n; i++)
		counter_json(j, &p->counters.c[i], base);
	fl_json_end(j);
	rising_json(j, p, base);
	fl_json_end(j);
}

void fl_ports_json(struct fl_json *j, const char *key, const struct fl_port_list *now,
		   const struct fl_port_list *base, double seconds)
{
	fl_json_array(j, key);
	for (int i = 0; now && i < now->n; i++)
		port_json(j, &now->p[i], base ? fl_ports_find(base, now->p[i].name) : NULL,
			  seconds);
	fl_json_end(j);
}

static void rate_text(const struct fl_port *p, char *buf, size_t len)
{
	if (p->max_gbps > 0)
		snprintf(buf, len, "%g of %g Gb/s (%s)%s", p->active_gbps, p->max_gbps, p->max_from,
			 fl_port_trained_down(p) ? ": TRAINED DOWN" : "");
	else
		snprintf(buf, len, "%g Gb/s (highest rate unknown)", p->active_gbps);
}

void fl_ports_text(FILE *f, const char *indent, const struct fl_port_list *now,
		   const struct fl_port_list *base, double seconds)
{
	for (int i = 0; now && i < now->n; i++) {
		const struct fl_port *p = &now->p[i];
		const struct fl_port *b = base ? fl_ports_find(base, p->name) : NULL;
		struct fl_counter_change ch[FL_PORT_COUNTERS];
		int n = fl_port_rising(p, b, FL_COUNTER_CONGESTION, ch, FL_PORT_COUNTERS);
		char rate[128];

		rate_text(p, rate, sizeof(rate));
		fprintf(f, "%sport %s%s%s: %s, %s %s, %s\n", indent, p->name,
			p->netdev[0] ? " netdev " : "", p->netdev, p->link_layer,
			p->state_name[0] ? p->state_name : "state unknown", p->phys_name, rate);
		for (int k = 0; k < n; k++)
			fprintf(f, "%s  %s +%llu in %.0f s (%s%s%s)\n", indent, ch[k].counter->name,
				(unsigned long long)ch[k].delta, seconds,
				fl_counter_severity_name(ch[k].counter->severity),
				ch[k].kind != FL_DELTA_OK ? ", " : "",
				ch[k].kind != FL_DELTA_OK ? fl_delta_kind_name(ch[k].kind) : "");
	}
}
