/* Injected errors: rules that make the N-th transmitted send WR fail in a chosen way, and the
 * port state switch. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fv_internal.h"

#define MAX_RULES 32

struct rule {
	enum fv_inject_kind kind;
	uint64_t at;		/* fires when the op counter reaches this value */
};

static pthread_mutex_t inject_lock = PTHREAD_MUTEX_INITIALIZER;
static struct rule rules[MAX_RULES];
static int nrules;
static _Atomic int armed;
static _Atomic uint64_t ops;

static const struct {
	const char *name;
	enum fv_inject_kind kind;
} kinds[] = {
	{ "qp_error", FV_INJ_QP_ERROR },
	{ "retry_exceeded", FV_INJ_RETRY },
	{ "rem_access", FV_INJ_REM_ACCESS },
	{ "port_down", FV_INJ_PORT_DOWN },
};

static int parse_rule(const char *s, size_t n, uint64_t base, struct rule *out)
{
	const char *at = memchr(s, '@', n);
	char num[32];
	char *end;
	size_t nlen;
	unsigned long long x;

	if (!at)
		return EINVAL;
	nlen = (size_t)(s + n - at - 1);
	if (nlen == 0 || nlen >= sizeof(num))
		return EINVAL;
	memcpy(num, at + 1, nlen);
	num[nlen] = 0;
	errno = 0;
	x = strtoull(num, &end, 10);
	if (errno || *end || x == 0)
		return EINVAL;
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		if (strlen(kinds[i].name) == (size_t)(at - s) &&
		    strncmp(kinds[i].name, s, (size_t)(at - s)) == 0) {
			out->kind = kinds[i].kind;
			out->at = base + x;
			return 0;
		}
	}
	return EINVAL;
}

static int add_rules(const char *text, uint64_t base)
{
	struct rule parsed[MAX_RULES];
	int n = 0;
	const char *p = text;

	while (*p) {
		size_t len = strcspn(p, ",");

		if (n == MAX_RULES || parse_rule(p, len, base, &parsed[n]))
			return EINVAL;
		n++;
		p += len;
		if (*p == ',')
			p++;
	}
	pthread_mutex_lock(&inject_lock);
	if (nrules + n > MAX_RULES) {
		pthread_mutex_unlock(&inject_lock);
		return EINVAL;
	}
	memcpy(rules + nrules, parsed, sizeof(parsed[0]) * (size_t)n);
	nrules += n;
	atomic_store(&armed, nrules > 0);
	pthread_mutex_unlock(&inject_lock);
	return 0;
}

void fv_inject_env_once(const char *described)
{
	const char *v = getenv("FABRICLAB_FAKEVERBS_INJECT");

	if (!v || !*v)
		v = described; /* the environment overrides the description's rules */
	if (v && *v && add_rules(v, 0))
		fprintf(stderr, "fakeverbs: injection rules \"%s\": expected "
			"KIND@N[,KIND@N], KIND qp_error|retry_exceeded|rem_access|port_down, "
			"N >= 1; ignored\n", v);
}

int fakeverbs_inject(const char *text)
{
	if (!text || !fv_config_get())
		return EINVAL;
	return add_rules(text, atomic_load(&ops));
}

uint64_t fakeverbs_op_count(void)
{
	return atomic_load(&ops);
}

enum fv_inject_kind fv_inject_next_op(void)
{
	uint64_t n = atomic_fetch_add(&ops, 1) + 1;
	enum fv_inject_kind kind = FV_INJ_NONE;

	if (!atomic_load(&armed))
		return FV_INJ_NONE;
	pthread_mutex_lock(&inject_lock);
	for (int i = 0; i < nrules; i++) {
		if (rules[i].at == n) {
			kind = rules[i].kind;
			rules[i] = rules[--nrules];
			break;
		}
	}
	atomic_store(&armed, nrules > 0);
	pthread_mutex_unlock(&inject_lock);
	return kind;
}

int fakeverbs_set_port_state(const char *device, int port, int state)
{
	struct fv_config *cfg = fv_config_get();

	if (!cfg || !device || state < IBV_PORT_DOWN || state > IBV_PORT_ACTIVE_DEFER)
		return EINVAL;
	for (int i = 0; i < cfg->ndevs; i++) {
		struct fv_device *d = &cfg->dev[i];
		int old;

		if (strcmp(d->ibdev.name, device) || port < 1 || port > d->nports)
			continue;
		old = atomic_exchange(&d->port[port - 1].state, state);
		if (old == IBV_PORT_ACTIVE && state != IBV_PORT_ACTIVE)
			fv_event_port(d, port, IBV_EVENT_PORT_ERR);
		else if (old != IBV_PORT_ACTIVE && state == IBV_PORT_ACTIVE)
			fv_event_port(d, port, IBV_EVENT_PORT_ACTIVE);
		fv_nic_wake();
		return 0;
	}
	return ENODEV;
}
