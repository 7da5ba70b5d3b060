/*
 * RoCE is lossless only when every NIC and switch hop agrees on the priority
 * that carries it: PFC on that priority, ECN at both ends, the same trust mode.
 * One node set up differently (a replaced NIC, a missed step in the
 * provisioning) pauses or drops the whole job's traffic. Each report carries
 * its node's RoCE settings (ports[].qos, read by the plugin with the doctor's
 * code); here they are compared across the job, and a port that differs from
 * most is named with what the others have.
 */
#include <stdlib.h>
#include <string.h>

#include "plugin/base/error.h"
#include "report.h"
#include "report_index.h"

#define MAX_DIFFS 64

struct roce_ports {
	const struct report_port **p;
	size_t n;
};

static bool has_qos(const struct report_port *p)
{
	return p->netdev[0] && (p->qos.have_trust || p->qos.have_pfc || p->qos.have_ecn);
}

struct seen {
	const struct roce_ports *r;
	const struct report_port *p; /* the one looked up */
};

static bool same_interface(const void *ctx, size_t e)
{
	const struct seen *s = ctx;

	return !strcmp(s->r->p[e]->node, s->p->node) && !strcmp(s->r->p[e]->netdev, s->p->netdev);
}

/*
 * Each (node, netdev) once: every process of a node reads the same
 * interfaces (looked up by name: a fleet's reports hold 10^5 of them).
 */
static int gather(const struct report_set *set, struct roce_ports *r)
{
	struct seen s = { r, NULL };
	struct report_index ix;
	size_t total = 0;

	for (size_t f = 0; f < set->nfiles; f++)
		total += set->files[f].nports;
	r->n = 0;
	r->p = calloc(total + 1, sizeof(*r->p));
	if (!r->p || report_index_init(&ix, total)) {
		free(r->p);
		return fl_fail(FL_ERR_SYSTEM, "out of memory");
	}
	for (size_t f = 0; f < set->nfiles; f++) {
		const struct report_file *file = &set->files[f];

		for (size_t i = 0; file->superseded_by < 0 && i < file->nports; i++) {
			size_t *slot;

			if (!has_qos(&file->ports[i]))
				continue;
			s.p = &file->ports[i];
			slot = report_index_slot(&ix, report_index_hash(s.p->node, s.p->netdev, 0),
						 same_interface, &s);
			if (!*slot) {
				r->p[r->n] = s.p;
				*slot = ++r->n;
			}
		}
	}
	report_index_free(&ix);
	return 0;
}

enum setting { TRUST, PFC, ECN_NP, ECN_RP };

static const char *const setting_keys[] = { "trust", "pfc", "ecn_np", "ecn_rp" };
static const char *const setting_names[] = {
	"trust", "PFC", "ECN notification point (roce_np)", "ECN reaction point (roce_rp)"
};

/* The port's value of one setting ("on", "off", "pcp", "dscp"); NULL when it is unknown. */
static const char *value_of(const struct report_port *p, enum setting s, int prio)
{
	const struct fl_port_qos *q = &p->qos;

	switch (s) {
	case TRUST: return q->have_trust ? q->trust : NULL;
	case PFC: return q->have_pfc ? (q->pfc[prio] ? "on" : "off") : NULL;
	case ECN_NP: return q->have_ecn ? (q->ecn_np[prio] ? "on" : "off") : NULL;
	case ECN_RP: return q->have_ecn ? (q->ecn_rp[prio] ? "on" : "off") : NULL;
	}
	return NULL;
}

static void describe(struct report_lossless_diff *d, enum setting s)
{
	size_t o = d->others;

	if (s == TRUST)
		snprintf(d->text, sizeof(d->text), "%s/%s: trust %s, %s for %zu other%s%s",
			 d->node, d->netdev, d->value, d->others_value, o, o == 1 ? "" : "s",
			 d->split ? " (as many one way as the other)" : "");
	else
		snprintf(d->text, sizeof(d->text), "%s/%s: %s %s on priority %d, %s for %zu "
			 "other%s%s", d->node, d->netdev, setting_names[s],
			 strcmp(d->value, "on") ? d->value : "enabled", d->prio,
			 d->others_value, o, o == 1 ? "" : "s",
			 d->split ? " (as many one way as the other)" : "");
}

static void add_diff(struct report_set *set, const struct report_port *p, enum setting s,
		     int prio, const char *others_value, size_t others, bool split)
{
	struct report_lossless_diff *d;

	if (set->nlossless >= MAX_DIFFS)
		return;
	d = &set->lossless[set->nlossless++];
	memset(d, 0, sizeof(*d));
	snprintf(d->node, sizeof(d->node), "%s", p->node);
	snprintf(d->netdev, sizeof(d->netdev), "%s", p->netdev);
	snprintf(d->setting, sizeof(d->setting), "%s", setting_keys[s]);
	d->prio = s == TRUST ? -1 : prio;
	snprintf(d->value, sizeof(d->value), "%s", value_of(p, s, prio));
	snprintf(d->others_value, sizeof(d->others_value), "%s", others_value);
	d->others = others;
	d->split = split;
	describe(d, s);
}

/*
 * The ports whose value is the rarer of two; on a tie, those with the weaker
 * setting ("off", "pcp": the NIC's defaults, the likelier omission).
 */
static void compare(struct report_set *set, const struct roce_ports *r, enum setting s, int prio)
{
	const char *a = NULL, *b = NULL, *odd;
	size_t na = 0, nb = 0;

	for (size_t i = 0; i < r->n; i++) {
		const char *v = value_of(r->p[i], s, prio);

		if (!v)
			continue;
		if (!a || !strcmp(v, a)) {
			a = v;
			na++;
		} else {
			b = v;
			nb++;
		}
	}
	if (!na || !nb)
		return;
	if (na == nb)
		odd = !strcmp(a, "off") || !strcmp(a, "pcp") ? a : b;
	else
		odd = na < nb ? a : b;
	for (size_t i = 0; i < r->n; i++) {
		const char *v = value_of(r->p[i], s, prio);

		if (v && !strcmp(v, odd))
			add_diff(set, r->p[i], s, prio, odd == a ? b : a, odd == a ? nb : na,
				 na == nb);
	}
}

int report_compare_lossless(struct report_set *set)
{
	struct roce_ports r;
	int err = gather(set, &r);

	if (err)
		return err;
	set->nroce = r.n;
	set->nlossless = 0;
	set->lossless = calloc(MAX_DIFFS, sizeof(*set->lossless));
	if (!set->lossless) {
		free(r.p);
		return fl_fail(FL_ERR_SYSTEM, "out of memory");
	}
	compare(set, &r, TRUST, 0);
	for (enum setting s = PFC; s <= ECN_RP; s++) {
		for (int prio = 0; prio < FL_QOS_PRIOS; prio++)
			compare(set, &r, s, prio);
	}
	free(r.p);
	return 0;
}

void report_print_lossless(const struct report_set *set, FILE *out)
{
	if (set->nroce < 2)
		return;
	if (!set->nlossless) {
		fprintf(out, "\nRoCE lossless settings: alike on all %zu RoCE interfaces (trust, PFC "
			"and ECN per priority, as each node's report read them)\n", set->nroce);
		return;
	}
	fprintf(out, "\nRoCE lossless settings that differ across the job's %zu RoCE interfaces "
		"(trust, PFC and ECN per priority):\n", set->nroce);
	for (size_t i = 0; i < set->nlossless; i++)
		fprintf(out, "  %s\n", set->lossless[i].text);
	for (size_t i = 0; i < set->nlossless; i++) {
		const struct report_lossless_diff *d = &set->lossless[i];
		bool named = false;

		for (size_t k = 0; k < i && !named; k++)
			named = !strcmp(set->lossless[k].node, d->node) &&
				!strcmp(set->lossless[k].netdev, d->netdev);
		if (!named)
			fprintf(out, "  on %s: fabriclab doctor   # the lossless checks against "
				"NCCL_IB_TC/NCCL_IB_SL; mlnx_qos -i %s or dcb pfc show dev %s\n",
				d->node, d->netdev, d->netdev);
	}
}

json_t *report_lossless_json(const struct report_set *set)
{
	json_t *diffs = json_array();

	for (size_t i = 0; diffs && i < set->nlossless; i++) {
		const struct report_lossless_diff *d = &set->lossless[i];

		json_array_append_new(
			diffs, json_pack("{s:s, s:s, s:s, s:o, s:s, s:s, s:I, s:b, s:s}", "node",
					 d->node, "netdev", d->netdev, "setting", d->setting,
					 "priority", d->prio < 0 ? json_null() : json_integer(d->prio),
					 "value", d->value, "others_value", d->others_value, "others",
					 (json_int_t)d->others, "split", d->split, "text", d->text));
	}
	return json_pack("{s:I, s:o}", "interfaces", (json_int_t)set->nroce, "differences",
			 diffs ? diffs : json_array());
}
