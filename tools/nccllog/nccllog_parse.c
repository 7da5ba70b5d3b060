/*
 * One line of NCCL's log. NCCL writes `host:pid:tid [cudaDev] NCCL INFO msg`;
 * launchers may put `[rank]`, `[rank]:`, `[rankN]:` or Open MPI's
 * `[job,rank]<stdout>:` in front. The messages read are those NCCL 2.18 to
 * 2.28 print at INFO: "NCCL version", "NET/IB : Using [i]dev:port/LL ...",
 * "NET/Socket : Using [i]if:addr", "Using network X", "Loaded net plugin X",
 * "comm ... rank R nranks N", channel lines "... via NET/<net>/<dev>[/GDRDMA]"
 * and "GPU Direct RDMA Disabled ...". Anything else is skipped.
 */
#include "nccllog.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "shim/shim.h"

/* Skips a launcher's "[3]", "[rank3]:", "[1,3]<stdout>:"; the rank key, or "" when none. */
static const char *launcher_prefix(const char *line, char *key, size_t len)
{
	const char *p = line + 1, *digits = NULL;
	int ndigits = 0;

	key[0] = '\0';
	if (line[0] != '[')
		return line;
	if (!strncmp(p, "rank", 4))
		p += 4;
	for (;;) { /* Open MPI's [job,rank]: the last number is the rank */
		const char *start = p;

		while (isdigit((unsigned char)*p))
			p++;
		if (p == start)
			return line;
		digits = start;
		ndigits = (int)(p - start);
		if (*p != ',')
			break;
		p++;
	}
	if (*p != ']')
		return line;
	p++;
	if (!strncmp(p, "<stdout>", 8) || !strncmp(p, "<stderr>", 8))
		p += 8;
	if (*p == ':')
		p++;
	while (*p == ' ' || *p == '\t')
		p++;
	/* A bare "[0] NCCL INFO ..." is NCCL's device field of a stripped line, not a rank. */
	if (!strncmp(p, "NCCL ", 5))
		return line;
	snprintf(key, len, "[%.*s]", ndigits, digits);
	return p;
}

/* "host:pid:tid [dev] " in front of "NCCL INFO": host and pid, 0 when it is not there. */
static int nccl_header(const char *start, const char *marker, char *host, size_t len,
		       long *pid)
{
	const char *colon = memchr(start, ':', (size_t)(marker - start));
	char *end;

	if (!colon || colon == start || (size_t)(colon - start) >= len)
		return -1;
	*pid = strtol(colon + 1, &end, 10);
	if (end == colon + 1 || *end != ':')
		return -1;
	snprintf(host, len, "%.*s", (int)(colon - start), start);
	return 0;
}

/*
 * Sets *field to n bytes of src (at most max - 1), unless it already holds
 * them: a flood of the same line from one rank costs nothing more.
 */
static int keep(struct nl_log *log, const char **field, const char *src, size_t n, size_t max)
{
	const char *kept;

	if (n >= max)
		n = max - 1;
	if (*field && !strncmp(*field, src, n) && !(*field)[n])
		return 0;
	kept = nl_keep(log, src, n);
	if (!kept)
		return -1;
	*field = kept;
	return 0;
}

/* The word at src, up to a blank or ';'. */
static int keep_word(struct nl_log *log, const char **field, const char *src, size_t max)
{
	return keep(log, field, src, strcspn(src, " \t\r\n;"), max);
}

/* The rest of the line at src. */
static int keep_line(struct nl_log *log, const char **field, const char *src, size_t max)
{
	return keep(log, field, src, strcspn(src, "\r\n"), max);
}

static void copy_word(char *dst, size_t len, const char *src)
{
	size_t n = strcspn(src, " \t\r\n;");

	snprintf(dst, len, "%.*s", (int)(n < len ? n : len - 1), src);
}

/* "[0]mlx5_0:1/IB [1]mlx5_1:1/RoCE [RO]; OOB eth0:..." */
static int ib_devices(struct nl_log *log, struct nl_rank *r, const char *list)
{
	struct nl_dev devs[NL_MAX_DEVS];
	const char *p = list, *kept;
	int nib = 0;

	memset(devs, 0, sizeof(devs));
	while ((p = strchr(p, '[')) && nib < NL_MAX_DEVS) {
		struct nl_dev *d = &devs[nib];
		const char *name = strchr(p, ']'), *semi = strchr(list, ';');
		size_t n;

		if (!name || (semi && p > semi))
			break;
		name++;
		n = strcspn(name, ": ;");
		if (!isdigit((unsigned char)p[1]) || !n || name[n] != ':') {
			p = name; /* "[RO]" and the like */
			continue;
		}
		snprintf(d->name, sizeof(d->name), "%.*s", (int)(n < 31 ? n : 31), name);
		d->port = atoi(name + n + 1);
		name = strchr(name + n, '/');
		if (name)
			copy_word(d->link, sizeof(d->link), name + 1);
		nib++;
		p = name ? name : p + 1;
	}
	if (nib == r->nib && (!nib || !memcmp(devs, r->ib, (size_t)nib * sizeof(*devs))))
		return 0;
	kept = nib ? nl_keep(log, (const char *)devs, (size_t)nib * sizeof(*devs)) : NULL;
	if (nib && !kept)
		return -1;
	r->ib = (const struct nl_dev *)kept;
	r->nib = nib;
	return 0;
}

/* "[ncclCommInitRank] comm 0x... rank 3 nranks 8 ..." or "... rank 3 nRanks 8 nNodes ...". */
static void comm_line(struct nl_rank *r, const char *msg)
{
	const char *comm = strstr(msg, "comm 0x"), *p = comm ? strstr(comm, " rank ") : NULL;
	char *end;
	long rank;

	if (!p || r->rank >= 0)
		return;
	rank = strtol(p + 6, &end, 10);
	if (end == p + 6)
		return;
	r->rank = rank;
	if (!strncasecmp(end, " nranks ", 8))
		r->nranks = strtol(end + 8, NULL, 10);
}

/* The old field sizes bound what one rank keeps of a line. */
#define VERSION_MAX 48
#define NETWORK_MAX 32
#define PLUGIN_MAX 48
#define SOCKET_MAX 96
#define WARN_MAX 160

static int message(struct nl_log *log, struct nl_rank *r, const char *msg, bool warn)
{
	const char *p;

	if (warn)
		return r->first_warn ? 0 : keep_line(log, &r->first_warn, msg, WARN_MAX);
	if ((p = strstr(msg, "NCCL version ")))
		return keep_word(log, &r->version, p + 13, VERSION_MAX);
	if (!strncmp(msg, "NET/IB : Using ", 15))
		return ib_devices(log, r, msg + 15);
	if (!strncmp(msg, "NET/Socket : Using ", 19))
		return keep_line(log, &r->socket_if, msg + 19, SOCKET_MAX);
	if (!strncmp(msg, "Using network ", 14))
		return keep_word(log, &r->network, msg + 14, NETWORK_MAX);
	if ((p = strstr(msg, "Loaded net plugin ")))
		return keep_word(log, &r->plugin, p + 18, PLUGIN_MAX);
	if (!strncmp(msg, "Channel ", 8) && (p = strstr(msg, " via NET/"))) {
		r->net_conns++;
		r->gdr_conns += strstr(p, "/GDRDMA") != NULL;
	} else if (strstr(msg, "GPU Direct RDMA Disabled")) {
		r->gdr_disabled++;
	} else {
		comm_line(r, msg);
	}
	return 0;
}

int nl_parse_line(struct nl_log *log, const char *line, struct nl_rank **last)
{
	char key[NL_NAME_LEN], host[NL_NAME_LEN] = "";
	const char *rest = launcher_prefix(line, key, sizeof(key));
	const char *info = strstr(rest, "NCCL INFO "), *warn = strstr(rest, "NCCL WARN ");
	const char *marker = info ? info : warn;
	struct nl_rank *r = *last;
	long pid = 0;

	log->lines++;
	if (!marker && strncmp(rest, "NCCL version ", 13))
		return FL_OK; /* not NCCL's */
	if (marker && nccl_header(rest, marker, host, sizeof(host), &pid))
		host[0] = '\0';
	if (!key[0] && host[0])
		snprintf(key, sizeof(key), "%.40s:%ld", host, pid); /* room for any pid */
	if (key[0])
		r = nl_find_or_add(log, key);
	else if (!r)
		r = nl_find_or_add(log, "?");
	if (!r)
		return shim_fail(FL_ERR_SYSTEM, "out of memory");
	if (host[0] && !r->host) {
		if (keep(log, &r->host, host, strlen(host), NL_NAME_LEN))
			return shim_fail(FL_ERR_SYSTEM, "out of memory");
		r->pid = pid;
	}
	log->nccl_lines++;
	if (message(log, r, marker ? marker + 10 : rest, warn && marker == warn))
		return shim_fail(FL_ERR_SYSTEM, "out of memory");
	*last = r;
	return FL_OK;
}
