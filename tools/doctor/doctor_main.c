/* `fabriclab doctor` options, the two counter samples, and the exit status. */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "plugin/base/sysfs_read.h"
#include "doctor.h"

#define MAX_INTERVAL_S 3600.0

void doctor_usage(FILE *out)
{
	fprintf(out,
		"usage: fabriclab doctor [--interval S] [--json] [--prom FILE] [--require-rdma]\n"
		"                        [--strict] [--ext PLUGIN]\n"
		"\n"
		"Checks this node's fabric: RDMA devices through libibverbs and sysfs, each\n"
		"port's state and rate against the highest rate it could run at, the counters\n"
		"that find bad links, GPUDirect RDMA readiness (peer memory module, dma-buf),\n"
		"the PCI placement of GPUs and NICs, the NCCL_* variables in effect, and on\n"
		"RoCE the lossless settings: PFC and ECN per priority, the trust mode, and the\n"
		"priority NCCL_IB_TC / NCCL_IB_SL put NCCL's packets on. Each\n"
		"line says PASS, INFO, WARN or FAIL and the command that looks deeper.\n"
		"\n"
		"  --interval S    read the counters twice, S seconds apart (decimal allowed),\n"
		"                  and judge what rose in between\n"
		"  --json          print the checks and the ports as JSON\n"
		"  --prom FILE     also write node_exporter textfile metrics (docs/doctor.md)\n"
		"  --require-rdma  a node without an active RDMA port fails\n"
		"  --strict        exit 3 when there are warnings but no failure\n"
		"  --ext PLUGIN    the net plugin FABRICLAB_TRANSPORT=ext:PLUGIN would wrap (a\n"
		"                  path or NAME for libnccl-net-NAME.so; default: that variable):\n"
		"                  its ABI version, path, optional entries and every device's\n"
		"                  properties\n"
		"  -h, --help      this text\n"
		"\n"
		"Exit status: 0 no failure (warnings allowed; a node without RDMA warns and\n"
		"exits 0 unless --require-rdma), 1 at least one check failed, 2 bad usage,\n"
		"3 warnings with --strict.\n"
		"\n"
		"environment: FABRICLAB_SYSFS_ROOT (default /sys: another root reads a fixture\n"
		"tree), FABRICLAB_IBVERBS_LIB (default libibverbs.so.1)\n");
}

void doctor_add(struct doctor *d, int level, const char *check, const char *subject,
		const char *command, const char *fmt, ...)
{
	struct doctor_check *c;
	va_list ap;

	if (d->nchecks == d->cap) {
		int cap = d->cap ? 2 * d->cap : 32;
		struct doctor_check *grown = realloc(d->checks, (size_t)cap * sizeof(*grown));

		if (!grown)
			return;
		d->checks = grown;
		d->cap = cap;
	}
	c = &d->checks[d->nchecks++];
	memset(c, 0, sizeof(*c));
	c->level = level;
	snprintf(c->check, sizeof(c->check), "%s", check);
	snprintf(c->subject, sizeof(c->subject), "%s", subject ? subject : "");
	snprintf(c->command, sizeof(c->command), "%s", command ? command : "");
	va_start(ap, fmt);
	vsnprintf(c->message, sizeof(c->message), fmt, ap);
	va_end(ap);
}

const char *doctor_level_name(int level)
{
	switch (level) {
	case DOCTOR_PASS: return "pass";
	case DOCTOR_INFO: return "info";
	case DOCTOR_WARN: return "warn";
	case DOCTOR_FAIL: return "fail";
	}
	return "?";
}

static int parse_interval(const char *text, double *out)
{
	char *end;
	double s;

	errno = 0;
	s = strtod(text, &end);
	if (errno || end == text || *end || !(s > 0.0) || s > MAX_INTERVAL_S) {
		fprintf(stderr,
			"fabriclab doctor: --interval \"%s\": expected seconds, more than 0 and at "
			"most %.0f (e.g. 10 or 0.5)\n",
			text, MAX_INTERVAL_S);
		return DOCTOR_EXIT_USAGE;
	}
	*out = s;
	return 0;
}

/* -1: go on; else the exit status. */
static int parse_opts(int argc, char **argv, struct doctor *d)
{
	static const struct option longs[] = {
		{ "interval", required_argument, NULL, 'i' }, { "json", no_argument, NULL, 'j' },
		{ "require-rdma", no_argument, NULL, 'r' },   { "strict", no_argument, NULL, 's' },
		{ "prom", required_argument, NULL, 'p' },    { "help", no_argument, NULL, 'h' },
		{ "ext", required_argument, NULL, 'e' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", longs, NULL)) != -1) {
		switch (c) {
		case 'i':
			if (parse_interval(optarg, &d->interval_s))
				return DOCTOR_EXIT_USAGE;
			break;
		case 'j': d->json = true; break;
		case 'p': d->prom = optarg; break;
		case 'e': d->ext = optarg; break;
		case 'r': d->require_rdma = true; break;
		case 's': d->strict = true; break;
		case 'h': doctor_usage(stdout); return DOCTOR_EXIT_OK;
		default:
			fprintf(stderr,
				"fabriclab doctor: bad option \"%s\" (see `fabriclab doctor "
				"--help`)\n",
				argv[optind - 1]);
			return DOCTOR_EXIT_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "fabriclab doctor: unexpected argument \"%s\"\n", argv[optind]);
		return DOCTOR_EXIT_USAGE;
	}
	return -1;
}

static void sleep_seconds(double s)
{
	struct timespec ts = { (time_t)s, (long)((s - (double)(time_t)s) * 1e9) };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* The first sample, and with --interval the second one S seconds later. */
static int sample(struct doctor *d)
{
	d->ports = malloc(sizeof(*d->ports));
	if (!d->ports)
		return -1;
	fl_ports_scan(d->root, d->ports);
	if (d->interval_s <= 0.0)
		return 0;
	d->base = malloc(sizeof(*d->base));
	if (!d->base)
		return -1;
	memcpy(d->base, d->ports, sizeof(*d->base));
	/* Said on stderr so that a test can make counters rise between the samples. */
	fprintf(stderr, "fabriclab doctor: first counter sample taken, second in %g s\n",
		d->interval_s);
	sleep_seconds(d->interval_s);
	fl_ports_refresh(d->root, d->ports);
	return 0;
}

int doctor_main(int argc, char **argv)
{
	struct doctor d = { .root = fl_sysfs_root(), .nverbs_devices = -1 };
	int rc = parse_opts(argc, argv, &d);

	if (rc >= 0)
		return rc;
	if (sample(&d)) {
		fprintf(stderr, "fabriclab doctor: out of memory\n");
		return DOCTOR_EXIT_FAIL;
	}
	doctor_check_verbs(&d);
	doctor_check_ports(&d);
	doctor_check_counters(&d);
	doctor_check_gpudirect(&d);
	doctor_check_placement(&d);
	doctor_check_cuda(&d);
	doctor_check_nccl_env(&d);
	doctor_check_nccl_profiler(&d);
	doctor_check_roce(&d);
	doctor_check_ext(&d);
	rc = doctor_exit_status(&d);
	if (d.prom && doctor_write_prom(&d, d.prom)) {
		fprintf(stderr, "fabriclab doctor: --prom %s: %s\n", d.prom, strerror(errno));
		rc = DOCTOR_EXIT_FAIL;
	}
	if (d.json) {
		if (doctor_print_json(&d, stdout))
			rc = DOCTOR_EXIT_FAIL;
	} else {
		doctor_print_text(&d, stdout);
	}
	free(d.checks);
	free(d.ports);
	free(d.base);
	return rc;
}
