/*
 * `fabriclab nccl-log` output: a line per rank and what was flagged, or the
 * same as JSON. Every string comes from the logs, so it goes out escaped
 * (tools/common/tool_text.h): a log line must not drive the reader's
 * terminal, and a host name that is not UTF-8 must not cost its rank's JSON
 * entry. The header says when bytes were escaped.
 */
#include "nccllog.h"

#include <jansson.h>
#include <string.h>

#include "shim/shim.h"
#include "tools/common/tool_text.h"

#define COLUMN_LEN 256

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

/* s escaped into a column of the table; "-" when unseen. */
static const char *column(char *buf, const char *s)
{
	if (!s || !*s)
		return "-";
	tool_text_escape(buf, COLUMN_LEN, s);
	return buf;
}

static bool rank_escaped(const struct nl_rank *r)
{
	const char *fields[] = { r->key,       r->host,	      r->version, r->network,
				 r->plugin,    r->socket_if, r->first_warn };
	char devs[COLUMN_LEN];

	for (size_t f = 0; f < sizeof(fields) / sizeof(fields[0]); f++) {
		if (fields[f] && tool_text_needs_escape(fields[f]))
			return true;
	}
	devices(r, devs, sizeof(devs));
	return tool_text_needs_escape(devs);
}

static size_t ranks_escaped(const struct nl_log *log)
{
	size_t n = 0;

	for (size_t i = 0; i < log->n; i++)
		n += rank_escaped(&log->ranks[i]);
	return n;
}

static void print_rank(const struct nl_rank *r, FILE *out)
{
	char key[COLUMN_LEN], ver[COLUMN_LEN], net[COLUMN_LEN], plug[COLUMN_LEN], devs[COLUMN_LEN],
		devs_esc[COLUMN_LEN], rank[16], gdr[16];

	snprintf(rank, sizeof(rank), r->rank >= 0 ? "%ld" : "?", r->rank);
	snprintf(gdr, sizeof(gdr), "%d/%d", r->gdr_conns, r->net_conns);
	devices(r, devs, sizeof(devs));
	fprintf(out, "%-22s %5s %-18s %-10s %-12s %-9s %s\n", column(key, r->key), rank,
		column(ver, r->version), column(net, r->network), column(plug, r->plugin), gdr,
		column(devs_esc, devs));
}

static void print_flagged(const struct nl_log *log, FILE *out)
{
	for (size_t i = 0; i < log->n; i++) {
		const struct nl_rank *r = &log->ranks[i];

		if (!r->why)
			continue;
		fputs("  ", out);
		tool_text_put(out, r->key);
		fprintf(out, " (rank %ld%s", r->rank, r->host ? " on " : "");
		tool_text_put(out, nl_str(r->host));
		fputs("): ", out);
		tool_text_put(out, r->why);
		fputc('\n', out);
		if (r->first_warn) {
			fputs("    its first NCCL WARN: ", out);
			tool_text_put(out, r->first_warn);
			fputc('\n', out);
		}
	}
}

void nl_print_text(const struct nl_log *log, size_t flagged, FILE *out)
{
	size_t escaped = ranks_escaped(log);
	char net[COLUMN_LEN];

	fprintf(out, "# fabriclab nccl-log: %zu rank%s in %zu lines (%zu from NCCL)\n", log->n,
		log->n == 1 ? "" : "s", log->lines, log->nccl_lines);
	if (escaped)
		fprintf(out, "# %zu rank%s with bytes that are no printable UTF-8 (controls, other "
			"encodings), shown as \\xNN\n", escaped, escaped == 1 ? "" : "s");
	fprintf(out, "%-22s %5s %-18s %-10s %-12s %-9s %s\n", "process", "rank", "nccl", "network",
		"plugin", "gdr", "ib devices");
	for (size_t i = 0; i < log->n; i++)
		print_rank(&log->ranks[i], out);
	fprintf(out, "# gdr = NET connections via GDRDMA / all NET connections of the rank\n");
	if (!flagged) {
		fprintf(out, "all %zu ranks on network %s, every NET connection with GPUDirect "
			"RDMA\n", log->n, column(net, log->n ? log->ranks[0].network : NULL));
		return;
	}
	fprintf(out, "%zu rank%s flagged:\n", flagged, flagged == 1 ? "" : "s");
	print_flagged(log, out);
	fprintf(out, "to confirm: NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET <job> on the flagged "
		"node; `fabriclab doctor` there (ports, GPUDirect readiness)\n");
}

static json_t *devices_json(const struct nl_rank *r)
{
	json_t *a = json_array();

	for (int i = 0; a && i < r->nib; i++) {
		json_t *d = json_pack("{s:o, s:i, s:o}", "name", tool_text_json(r->ib[i].name),
				      "port", r->ib[i].port, "link", tool_text_json(r->ib[i].link));

		if (json_array_append_new(a, d)) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

static json_t *rank_json(const struct nl_rank *r)
{
	return json_pack("{s:o, s:o, s:I, s:I, s:o, s:o, s:o, s:o, s:o, s:i, s:i, s:o, s:o}",
			 "process", tool_text_json(r->key), "host", tool_text_json_opt(nl_str(r->host)),
			 "pid", (json_int_t)r->pid, "rank", (json_int_t)r->rank, "nccl_version",
			 tool_text_json_opt(nl_str(r->version)), "network",
			 tool_text_json_opt(nl_str(r->network)), "plugin",
			 tool_text_json_opt(nl_str(r->plugin)), "ib_devices", devices_json(r),
			 "socket", tool_text_json_opt(nl_str(r->socket_if)), "net_connections",
			 r->net_conns, "gdr_connections", r->gdr_conns, "flagged",
			 tool_text_json_opt(nl_str(r->why)), "first_warn",
			 tool_text_json_opt(nl_str(r->first_warn)));
}

/*
 * Streamed: the envelope by hand, then one rank at a time as a line of its
 * own, so a million ranks cost one rank's JSON tree, not a million of them.
 */
int nl_print_json(const struct nl_log *log, size_t flagged, FILE *out)
{
	int rc = 0;

	fprintf(out, "{\n \"format\": \"fabriclab-nccl-log\",\n \"ranks_flagged\": %zu,\n "
		"\"lines\": %zu,\n \"ranks_escaped\": %zu,\n \"ranks\": [", flagged, log->lines,
		ranks_escaped(log));
	for (size_t i = 0; !rc && i < log->n; i++) {
		/* every rank or an error: a rank left out would read as a job without it */
		json_t *r = rank_json(&log->ranks[i]);

		if (!r)
			return shim_fail(FL_ERR_SYSTEM, "out of memory building the JSON of rank "
					 "%zu of %zu", i, log->n);
		fputs(i ? ",\n  " : "\n  ", out);
		rc = json_dumpf(r, out, JSON_COMPACT);
		json_decref(r);
	}
	fputs(log->n ? "\n ]\n}\n" : "]\n}\n", out);
	if (rc || fflush(out) || ferror(out))
		return shim_fail(FL_ERR_SYSTEM, "cannot write the JSON output");
	return FL_OK;
}
