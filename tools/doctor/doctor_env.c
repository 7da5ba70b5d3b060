/* The doctor's NCCL_* check: what is set, and settings that keep NCCL off the RDMA ports. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "plugin/base/error.h"
#include "plugin/transport/ib/ib_hca.h"
#include "doctor.h"

extern char **environ;

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void list_variables(struct doctor *d)
{
	char *vars[256], text[600] = "";
	size_t n = 0, used = 0;

	for (char **e = environ; *e && n < 256; e++)
		if (!strncmp(*e, "NCCL_", 5))
			vars[n++] = *e;
	qsort(vars, n, sizeof(vars[0]), cmp_str);
	for (size_t i = 0; i < n && used < sizeof(text); i++) {
		int w = snprintf(text + used, sizeof(text) - used, "%s%s", i ? " " : "", vars[i]);

		used += w > 0 ? (size_t)w : 0;
	}
	doctor_add(d, DOCTOR_INFO, "nccl-env", "", "env | grep ^NCCL_", "%s",
		   n ? text : "no NCCL_* variable set in this environment");
}

static bool is_on(const char *v)
{
	return v && (!strcmp(v, "1") || !strcasecmp(v, "true") || !strcasecmp(v, "yes"));
}

/* Settings that would put NCCL on TCP although an RDMA port is active. */
static void rdma_blockers(struct doctor *d, const struct fl_port *active)
{
	const char *net = getenv("NCCL_NET");

	if (is_on(getenv("NCCL_IB_DISABLE")))
		doctor_add(d, DOCTOR_WARN, "nccl-env", "NCCL_IB_DISABLE", "env | grep ^NCCL_",
			   "NCCL_IB_DISABLE=%s turns off NCCL's IB transport although %s is active",
			   getenv("NCCL_IB_DISABLE"), active->name);
	if (net && !strcasecmp(net, "Socket"))
		doctor_add(d, DOCTOR_WARN, "nccl-env", "NCCL_NET", "env | grep ^NCCL_",
			   "NCCL_NET=%s makes NCCL use TCP although %s is active", net,
			   active->name);
}

static void hca_filter(struct doctor *d)
{
	struct ib_hca_filter f;
	const char *var = getenv("FABRICLAB_IB_HCA") ? "FABRICLAB_IB_HCA" : "NCCL_IB_HCA";
	int matched = 0;

	if (ib_hca_from_env(&f)) {
		doctor_add(d, DOCTOR_FAIL, "nccl-env", var, "env | grep _IB_HCA", "%s",
			   fl_error_text());
		return;
	}
	if (!f.n)
		return;
	for (int i = 0; i < d->ports->n; i++)
		matched += ib_hca_match(&f, d->ports->p[i].dev, d->ports->p[i].num) &&
			   fl_port_is_active(&d->ports->p[i]);
	if (matched)
		doctor_add(d, DOCTOR_PASS, "nccl-env", var, "env | grep _IB_HCA",
			   "%s=%s selects %d active port%s", var, getenv(var), matched,
			   matched == 1 ? "" : "s");
	else
		doctor_add(d, DOCTOR_WARN, "nccl-env", var, "env | grep _IB_HCA; ibv_devinfo -l",
			   "%s=%s selects no active port: NCCL falls back to TCP", var,
			   getenv(var));
}

void doctor_check_nccl_env(struct doctor *d)
{
	const struct fl_port *active = fl_ports_first_active(d->ports);

	list_variables(d);
	if (!active)
		return;
	rdma_blockers(d, active);
	hca_filter(d);
}
