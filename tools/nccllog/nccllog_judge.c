/*
 * What a person checks in the logs by hand: every rank on an RDMA network
 * (NET/IB or a net plugin, not the NET/Socket fallback), GPUDirect RDMA on
 * every NET connection, and every rank like the others (network, NCCL
 * version where it is printed, number of IB devices). A rank is flagged with
 * every reason that applies.
 */
#include "nccllog.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "shim/shim.h"

struct why {
	char text[NL_WHY_LEN];
};

__attribute__((format(printf, 2, 3))) static void why(struct why *w, const char *fmt, ...)
{
	size_t used = strlen(w->text);
	va_list ap;

	if (used && used + 2 < sizeof(w->text)) {
		strcpy(w->text + used, "; ");
		used += 2;
	}
	va_start(ap, fmt);
	vsnprintf(w->text + used, sizeof(w->text) - used, fmt, ap);
	va_end(ap);
}

/* A value and the first rank that has it: sorting these finds the majority in n log n. */
struct seen {
	const char *value;
	size_t first;
};

static int cmp_seen(const void *pa, const void *pb)
{
	const struct seen *a = pa, *b = pb;
	int c = strcmp(a->value, b->value);

	return c ? c : (a->first > b->first) - (a->first < b->first);
}

/* The most common non-empty value of a field (first seen on a tie), or "". */
static const char *majority(const struct nl_log *log, size_t offset)
{
	struct seen *all = malloc((log->n + 1) * sizeof(*all)), best = { "", 0 };
	size_t n = 0, best_count = 0;

	if (!all)
		return NULL;
	for (size_t i = 0; i < log->n; i++) {
		const char *v = *(const char *const *)((const char *)&log->ranks[i] + offset);

		if (v && *v)
			all[n++] = (struct seen){ v, i };
	}
	qsort(all, n, sizeof(*all), cmp_seen);
	for (size_t i = 0, run; i < n; i += run) {
		for (run = 1; i + run < n && !strcmp(all[i].value, all[i + run].value); run++)
			;
		/* all[i] is the run's first rank: sorted by rank within a value */
		if (run > best_count || (run == best_count && all[i].first < best.first)) {
			best = all[i];
			best_count = run;
		}
	}
	free(all);
	return best.value;
}

static int majority_nib(const struct nl_log *log)
{
	size_t count[NL_MAX_DEVS + 1] = { 0 }, first[NL_MAX_DEVS + 1];
	int best = 0;

	for (size_t i = log->n; i-- > 0;) {
		int nib = log->ranks[i].nib;

		count[nib]++;
		first[nib] = i;
	}
	for (int k = 0; k <= NL_MAX_DEVS; k++) {
		if (count[k] > count[best] || (count[k] == count[best] && count[k] &&
					       first[k] < first[best]))
			best = k;
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

static void network(const struct nl_rank *r, struct why *w, const char *usual)
{
	const char *net = nl_str(r->network);

	if (!*net) {
		why(w, "no \"Using network\" line: NCCL_DEBUG=INFO not set, or the log stops "
		    "before init");
		return;
	}
	if (!strcmp(net, "Socket"))
		why(w, "NET/Socket: NCCL fell back to TCP%s%s", r->socket_if ? " over " : "",
		    nl_str(r->socket_if));
	else if (strcmp(net, usual))
		why(w, "network %s, the others %s", net, usual);
}

static void gpudirect(const struct nl_rank *r, struct why *w, bool others_have_it)
{
	int plain = r->net_conns - r->gdr_conns;

	if (!r->net_conns || !plain || !strcmp(nl_str(r->network), "Socket"))
		return; /* NET/Socket never does GPUDirect: the fallback is the finding */
	if (!r->gdr_conns)
		why(w, "no GPUDirect RDMA on its %d NET connection%s%s%s", r->net_conns,
		    r->net_conns == 1 ? "" : "s",
		    others_have_it ? " (other ranks use GDRDMA)" : "",
		    r->gdr_disabled ? "; NCCL says GPU Direct RDMA Disabled" : "");
	else
		why(w, "%d of its %d NET connections without GPUDirect RDMA", plain,
		    r->net_conns);
}

int nl_judge(struct nl_log *log, size_t *flagged)
{
	const char *net = majority(log, offsetof(struct nl_rank, network));
	const char *version = majority(log, offsetof(struct nl_rank, version));
	int nib = majority_nib(log);
	bool gdr = any_gdr(log);

	*flagged = 0;
	if (!net || !version)
		return shim_fail(FL_ERR_SYSTEM, "out of memory judging %zu ranks", log->n);
	for (size_t i = 0; i < log->n; i++) {
		struct nl_rank *r = &log->ranks[i];
		const char *has = nl_str(r->network);
		struct why w = { "" };

		network(r, &w, net);
		gpudirect(r, &w, gdr);
		if (r->version && strcmp(r->version, version))
			why(&w, "NCCL %s, the others %s", r->version, version);
		if (r->nib != nib && *has && strcmp(has, "Socket"))
			why(&w, "%d IB device%s, the others %d", r->nib, r->nib == 1 ? "" : "s",
			    nib);
		r->why = w.text[0] ? nl_keep(log, w.text, strlen(w.text)) : NULL;
		if (w.text[0] && !r->why)
			return shim_fail(FL_ERR_SYSTEM, "out of memory judging %zu ranks", log->n);
		*flagged += w.text[0] != '\0';
	}
	return FL_OK;
}
