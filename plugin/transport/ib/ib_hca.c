#include "ib_hca.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/config.h"
#include "base/error.h"
#include "base/fl_types.h"

static int parse_port(const char *var, const char *text, int *port)
{
	char *end;
	long p;

	errno = 0;
	p = strtol(text, &end, 10);
	if (errno || end == text || *end || p < 1 || p > 255)
		return fl_fail(FL_ERR_USAGE, "%s: port \"%s\" is not a number from 1 to 255", var,
			       text);
	*port = (int)p;
	return FL_OK;
}

static int parse_entry(const char *var, const char *tok, size_t len, struct ib_hca_filter *f)
{
	char buf[IB_HCA_NAME_LEN + 8];
	char *colon;
	int port = -1;

	if (!len)
		return FL_OK; /* "a,,b" and a trailing comma are harmless */
	if (len >= sizeof(buf) || len >= IB_HCA_NAME_LEN + 4)
		return fl_fail(FL_ERR_USAGE, "%s: device name \"%.*s\" is too long", var,
			       (int)len, tok);
	if (f->n == IB_HCA_MAX)
		return fl_fail(FL_ERR_USAGE, "%s: more than %d devices", var, IB_HCA_MAX);
	memcpy(buf, tok, len);
	buf[len] = '\0';
	colon = strchr(buf, ':');
	if (colon) {
		*colon = '\0';
		if (parse_port(var, colon + 1, &port))
			return FL_ERR_USAGE;
	}
	if (!buf[0] || strlen(buf) >= IB_HCA_NAME_LEN)
		return fl_fail(FL_ERR_USAGE, "%s: \"%.*s\" names no device", var, (int)len, tok);
	strcpy(f->entries[f->n].name, buf);
	f->entries[f->n].port = port;
	f->n++;
	return FL_OK;
}

int ib_hca_parse(const char *var, const char *spec, struct ib_hca_filter *f)
{
	const char *p = spec;

	memset(f, 0, sizeof(*f));
	if (!p || !*p)
		return FL_OK;
	if (*p == '^') {
		f->exclude = 1;
		p++;
	}
	if (*p == '=') {
		f->exact = 1;
		p++;
	}
	while (1) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);

		if (parse_entry(var, p, len, f))
			return FL_ERR_USAGE;
		if (!comma)
			break;
		p = comma + 1;
	}
	if (!f->n)
		return fl_fail(FL_ERR_USAGE, "%s=\"%s\": no device named", var, spec);
	return FL_OK;
}

static int entry_matches(const struct ib_hca_filter *f, int i, const char *name, int port)
{
	const char *want = f->entries[i].name;

	if (f->exact ? strcmp(want, name) != 0 : strncmp(want, name, strlen(want)) != 0)
		return 0;
	return f->entries[i].port < 0 || f->entries[i].port == port;
}

int ib_hca_match(const struct ib_hca_filter *f, const char *name, int port)
{
	int hit = 0;

	if (!f->n)
		return 1;
	for (int i = 0; i < f->n && !hit; i++)
		hit = entry_matches(f, i, name, port);
	return f->exclude ? !hit : hit;
}

int ib_hca_from_env(struct ib_hca_filter *f)
{
	static const char *const vars[] = { "FABRICLAB_IB_HCA", "NCCL_IB_HCA", NULL };
	const char *spec = fl_env_first(vars);
	const char *var = getenv("FABRICLAB_IB_HCA") && *getenv("FABRICLAB_IB_HCA") ?
				  "FABRICLAB_IB_HCA" : "NCCL_IB_HCA";

	return ib_hca_parse(var, spec, f);
}
