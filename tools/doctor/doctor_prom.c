/*
 * `--prom FILE`: the doctor's view as a node_exporter textfile (text
 * exposition format), so port state, rate against the best the port could
 * run at, the error and pause counters, GPUDirect readiness and PFC/ECN land
 * in monitoring instead of being checked by hand (docs/doctor.md lists the
 * metrics). Written aside and renamed: the collector never reads half a file.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "doctor.h"
#include "plugin/base/prom_out.h"

static void port_labels(FILE *out, const struct fl_port *p)
{
	fl_prom_label(out, "port", p->name, false);
	fl_prom_label(out, "link_layer", p->link_layer, false);
	fl_prom_label(out, "netdev", p->netdev, true);
}

static void port_gauge(FILE *out, const struct doctor *d, const char *name, const char *help,
		       double (*value)(const struct fl_port *))
{
	fl_prom_header(out, name, "gauge", help);
	for (int i = 0; i < d->ports->n; i++) {
		fprintf(out, "%s{", name);
		port_labels(out, &d->ports->p[i]);
		fprintf(out, "} %g\n", value(&d->ports->p[i]));
	}
}

static double port_up(const struct fl_port *p)
{
	return p->state == FL_PORT_ACTIVE && p->phys_state == FL_PHYS_LINK_UP;
}

static double port_rate(const struct fl_port *p)
{
	return p->active_gbps;
}

static double port_max_rate(const struct fl_port *p)
{
	return p->max_gbps;
}

static void counters(FILE *out, const struct doctor *d)
{
	fl_prom_header(out, "fabriclab_port_counter", "counter",
		       "A port counter that finds bad links "
		       "or congestion, as sysfs or ethtool -S shows it (counter=source/name).");
	for (int i = 0; i < d->ports->n; i++) {
		const struct fl_port *p = &d->ports->p[i];

		for (int k = 0; k < p->counters.n; k++) {
			const struct fl_counter *c = &p->counters.c[k];

			if (c->severity == FL_COUNTER_INFO)
				continue;
			fputs("fabriclab_port_counter{", out);
			fl_prom_label(out, "port", p->name, false);
			fl_prom_label(out, "counter", c->name, false);
			fl_prom_label(out, "severity", fl_counter_severity_name(c->severity), true);
			fprintf(out, "} %llu\n", (unsigned long long)c->value);
		}
	}
}

/* Ready: a GPUDirect check passed and none failed. */
static void gpudirect(FILE *out, const struct doctor *d)
{
	bool passed = false, failed = false;

	for (int i = 0; i < d->nchecks; i++) {
		if (strcmp(d->checks[i].check, "gpudirect"))
			continue;
		passed |= d->checks[i].level == DOCTOR_PASS;
		failed |= d->checks[i].level == DOCTOR_FAIL;
	}
	fl_prom_header(out, "fabriclab_gpudirect_ready", "gauge",
		       "1 when GPUDirect RDMA can work here (peer memory module or dma-buf), "
		       "0 when a gpudirect check failed or none passed.");
	fprintf(out, "fabriclab_gpudirect_ready %d\n", passed && !failed);
}

static void per_prio(FILE *out, const struct doctor_roce *r, const char *name,
		     const bool bits[DOCTOR_PRIOS], const char *point)
{
	for (int p = 0; p < DOCTOR_PRIOS; p++) {
		fprintf(out, "%s{", name);
		fl_prom_label(out, "netdev", r->netdev, false);
		if (point)
			fl_prom_label(out, "point", point, false);
		fprintf(out, "priority=\"%d\"} %d\n", p, bits[p]);
	}
}

static void roce(FILE *out, const struct doctor *d)
{
	fl_prom_header(out, "fabriclab_roce_pfc_enabled", "gauge", "PFC per priority of a RoCE "
	       "interface (absent: not readable).");
	for (int i = 0; i < d->nroce; i++) {
		if (d->roce[i].have_pfc)
			per_prio(out, &d->roce[i], "fabriclab_roce_pfc_enabled", d->roce[i].pfc,
				 NULL);
	}
	fl_prom_header(out, "fabriclab_roce_ecn_enabled", "gauge", "ECN per priority, notification "
	       "point (np: sends CNPs) and reaction point (rp: slows down on CNPs).");
	for (int i = 0; i < d->nroce; i++) {
		if (!d->roce[i].have_ecn)
			continue;
		per_prio(out, &d->roce[i], "fabriclab_roce_ecn_enabled", d->roce[i].ecn_np, "np");
		per_prio(out, &d->roce[i], "fabriclab_roce_ecn_enabled", d->roce[i].ecn_rp, "rp");
	}
	fl_prom_header(out, "fabriclab_roce_nccl_priority", "gauge",
		       "The priority NCCL's RoCE packets "
		       "travel on (trust dscp: NCCL_IB_TC >> 2 mapped; trust pcp: NCCL_IB_SL).");
	fl_prom_header(out, "fabriclab_roce_nccl_lossless", "gauge", "1 when PFC is on for that "
	       "priority, 0 when off, absent when PFC is not readable.");
	for (int i = 0; i < d->nroce; i++) {
		const struct doctor_roce *r = &d->roce[i];

		fputs("fabriclab_roce_nccl_priority{", out);
		fl_prom_label(out, "netdev", r->netdev, false);
		fl_prom_label(out, "trust", r->trust, true);
		fprintf(out, "} %d\n", r->prio);
		if (!r->have_pfc)
			continue;
		fputs("fabriclab_roce_nccl_lossless{", out);
		fl_prom_label(out, "netdev", r->netdev, true);
		fprintf(out, "} %d\n", r->pfc[r->prio]);
	}
}

static void checks(FILE *out, const struct doctor *d)
{
	fl_prom_header(out, "fabriclab_doctor_check", "gauge", "Each doctor line: 0 pass, 1 info, "
	       "2 warn, 3 fail.");
	for (int i = 0; i < d->nchecks; i++) {
		fputs("fabriclab_doctor_check{", out);
		fl_prom_label(out, "check", d->checks[i].check, false);
		fl_prom_label(out, "subject", d->checks[i].subject, true);
		fprintf(out, "} %d\n", d->checks[i].level);
	}
	fl_prom_header(out, "fabriclab_doctor_exit_status", "gauge",
		       "What `fabriclab doctor` exits "
		       "with: 0 fine, 1 a check failed, 3 warnings with --strict.");
	fprintf(out, "fabriclab_doctor_exit_status %d\n", doctor_exit_status(d));
}

static void emit(FILE *out, const struct doctor *d)
{
	port_gauge(out, d, "fabriclab_port_up", "1 when the RDMA port is ACTIVE and LinkUp.",
		   port_up);
	port_gauge(out, d, "fabriclab_port_rate_gbps", "Active rate of the port, Gbit/s.",
		   port_rate);
	port_gauge(out, d, "fabriclab_port_max_rate_gbps", "Highest rate the port could run "
		   "at, Gbit/s (0 unknown): below it, the link trained down.", port_max_rate);
	counters(out, d);
	gpudirect(out, d);
	roce(out, d);
	checks(out, d);
}

int doctor_write_prom(const struct doctor *d, const char *path)
{
	char tmp[4096];
	FILE *out;
	int err;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	out = fopen(tmp, "w");
	if (!out)
		return -1;
	emit(out, d);
	err = ferror(out);
	if (fclose(out) || err || rename(tmp, path)) {
		err = errno ? errno : EIO;
		remove(tmp);
		errno = err;
		return -1;
	}
	return 0;
}
