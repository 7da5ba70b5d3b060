/* `fabriclab nccl-log` output: a line per rank and what was flagged, or the same as JSON. */
#include "nccllog.h"

#include <jansson.h>
#include <string.h>

#include "shim/shim.h"

static void devices(const struct nl_rank *r, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (int i = 0; i < r->nib && used + 1 < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%s%s:%d/%s", i ? "," : "",
					 r->ib[i].name, r->ib[i].port, r->ib[i].link);
	if (!r->nib)
		snprintf(buf, len, "-");
}

void nl_print_text(const struct nl_log *log, size_t flagged, FILE *out)
{
	char devs[256];

	fprintf(out, "# fabriclab nccl-log: %zu rank%s in %zu lines (%zu from NCCL)\n", log->n,
		log->n == 1 ? "" : "s", log->lines, log->nccl_lines);
	fprintf(out, "%-22s %5s %-18s %-10s %-12s %-9s %s\n", "process", "rank", "nccl", "network",
		"plugin", "gdr", "ib devices");
	for (size_t i = 0; i < log->n; i++) {
		const struct nl_rank *r = &log->ranks[i];
		char rank[16], gdr[16];

		snprintf(rank, sizeof(rank), r->rank >= 0 ? "%ld" : "?", r->rank);
		snprintf(gdr, sizeof(gdr), "%d/%d", r->gdr_conns, r->net_conns);
		devices(r, devs, sizeof(devs));
		fprintf(out, "%-22s %5s %-18s %-10s %-12s %-9s %s\n", r->key, rank,
			r->version[0] ? r->version : "-", r->network[0] ? r->network : "-",
			r->plugin[0] ? r->plugin : "-", gdr, devs);
	}
	fprintf(out, "# gdr = NET connections via GDRDMA / all NET connections of the rank\n");
	if (!flagged) {
		fprintf(out, "all %zu ranks on network %s, every NET connection with GPUDirect "
			"RDMA\n", log->n, log->n ? log->ranks[0].network : "-");
		return;
	}
	fprintf(out, "%zu rank%s flagged:\n", flagged, flagged == 1 ? "" : "s");
	for (size_t i = 0; i < log->n; i++) {
		const struct nl_rank *r = &log->ranks[i];

		if (!r->why[0])
			continue;
		fprintf(out, "  %s (rank %ld%s%s): %s\n", r->key, r->rank, r->host[0] ? " on " : "",
			r->host, r->why);
		if (r->first_warn[0])
			fprintf(out, "    its first NCCL WARN: %s\n", r->first_warn);
	}
	fprintf(out, "to confirm: NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET <job> on the flagged "
		"node; `fabriclab doctor` there (ports, GPUDirect readiness)\n");
}

static json_t *devices_json(const struct nl_rank *r)
{
	json_t *a = json_array();

	for (int i = 0; i < r->nib; i++)
		json_array_append_new(a, json_pack("{s:s, s:i, s:s}", "name", r->ib[i].name,
						   "port", r->ib[i].port, "link", r->ib[i].link));
	return a;
}

static json_t *opt_string(const char *s)
{
	return s[0] ? json_string(s) : json_null();
}

int nl_print_json(const struct nl_log *log, size_t flagged, FILE *out)
{
	json_t *ranks = json_array(), *root;
	int rc;

	for (size_t i = 0; i < log->n; i++) {
		const struct nl_rank *r = &log->ranks[i];

		json_array_append_new(ranks, json_pack(
			"{s:s, s:o, s:I, s:I, s:o, s:o, s:o, s:o, s:o, s:i, s:i, s:o, s:o}",
			"process", r->key, "host", opt_string(r->host), "pid", (json_int_t)r->pid,
			"rank", (json_int_t)r->rank, "nccl_version", opt_string(r->version),
			"network", opt_string(r->network), "plugin", opt_string(r->plugin),
			"ib_devices", devices_json(r), "socket", opt_string(r->socket_if),
			"net_connections", r->net_conns, "gdr_connections", r->gdr_conns,
			"flagged", opt_string(r->why), "first_warn", opt_string(r->first_warn)));
	}
	root = json_pack("{s:s, s:I, s:I, s:o}", "format", "fabriclab-nccl-log", "ranks_flagged",
			 (json_int_t)flagged, "lines", (json_int_t)log->lines, "ranks", ranks);
	if (!root)
		return shim_fail(FL_ERR_SYSTEM, "cannot build the JSON output");
	rc = json_dumpf(root, out, JSON_INDENT(1));
	fputc('\n', out);
	json_decref(root);
	return rc ? shim_fail(FL_ERR_SYSTEM, "cannot write the JSON output") : FL_OK;
}
