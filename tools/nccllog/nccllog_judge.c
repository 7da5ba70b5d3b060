/*
 * What a person checks in the logs by hand: every rank on an RDMA network
 * (NET/IB or a net plugin, not the NET/Socket fallback), GPUDirect RDMA on
 * every NET connection, and every rank like the others (network, NCCL
 * version where it is printed, number of IB devices). A rank is flagged with
 * every reason that applies.
 */
#include "nccllog.h"

#include <stdarg.h>
#include <string.h>

__attribute__((format(printf, 2, 3))) static void why(struct nl_rank *r, const char *fmt, ...)
{
	size_t used = strlen(r->why);
	va_list ap;

	if (used && used + 2 < sizeof(r->why)) {
		strcpy(r->why + used, "; ");
		used += 2;
	}
	va_start(ap, fmt);
	vsnprintf(r->why + used, sizeof(r->why) - used, fmt, ap);
	va_end(ap);
}

/* The most common non-empty value of a field (first seen on a tie), or "". */
static const char *majority(const struct nl_log *log, size_t offset)
{
	const char *best = "";
	size_t best_count = 0;

	for (size_t i = 0; i < log->n; i++) {
		const char *v = (const char *)&log->ranks[i] + offset;
		size_t count = 0;

		if (!*v)
			continue;
		for (size_t j = 0; j < log->n; j++)
			count += !strcmp(v, (const char *)&log->ranks[j] + offset);
		if (count > best_count) {
			best = v;
			best_count = count;
		}
	}
	return best;
}

static int majority_nib(const struct nl_log *log)
{
	int best = 0;
	size_t best_count = 0;

	for (size_t i = 0; i < log->n; i++) {
		size_t count = 0;

		for (size_t j = 0; j < log->n; j++)
			count += log->ranks[j].nib == log->ranks[i].nib;
		if (count > best_count) {
			best = log->ranks[i].nib;
			best_count = count;
		}
	}
	return best;
}

static bool any_gdr(const struct nl_log *log)
{
	for (size_t i = 0; i < log->n; i++) {
		if (log->ranks[i].gdr_conns)
			return true;
	}
	return false;
}

static void network(struct nl_rank *r, const char *usual)
{
	if (!r->network[0]) {
		why(r, "no \"Using network\" line: NCCL_DEBUG=INFO not set, or the log stops "
		    "before init");
		return;
	}
	if (!strcmp(r->network, "Socket"))
		why(r, "NET/Socket: NCCL fell back to TCP%s%s", r->socket_if[0] ? " over " : "",
		    r->socket_if);
	else if (strcmp(r->network, usual))
		why(r, "network %s, the others %s", r->network, usual);
}

static void gpudirect(struct nl_rank *r, bool others_have_it)
{
	int plain = r->net_conns - r->gdr_conns;

	if (!r->net_conns || !plain || !strcmp(r->network, "Socket"))
		return; /* NET/Socket never does GPUDirect: the fallback is the finding */
	if (!r->gdr_conns)
		why(r, "no GPUDirect RDMA on its %d NET connection%s%s%s", r->net_conns,
		    r->net_conns == 1 ? "" : "s",
		    others_have_it ? " (other ranks use GDRDMA)" : "",
		    r->gdr_disabled ? "; NCCL says GPU Direct RDMA Disabled" : "");
	else
		why(r, "%d of its %d NET connections without GPUDirect RDMA", plain,
		    r->net_conns);
}

size_t nl_judge(struct nl_log *log)
{
	const char *net = majority(log, offsetof(struct nl_rank, network));
	const char *version = majority(log, offsetof(struct nl_rank, version));
	int nib = majority_nib(log);
	bool gdr = any_gdr(log);
	size_t flagged = 0;

	for (size_t i = 0; i < log->n; i++) {
		struct nl_rank *r = &log->ranks[i];

		r->why[0] = '\0';
		network(r, net);
		gpudirect(r, gdr);
		if (r->version[0] && strcmp(r->version, version))
			why(r, "NCCL %s, the others %s", r->version, version);
		if (r->nib != nib && r->network[0] && strcmp(r->network, "Socket"))
			why(r, "%d IB device%s, the others %d", r->nib, r->nib == 1 ? "" : "s",
			    nib);
		flagged += r->why[0] != '\0';
	}
	return flagged;
}
