#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "error.h"
#include "fl_types.h"

static const char *env_value(const char *name)
{
	const char *v = getenv(name);

	return (v && *v) ? v : NULL;
}

int fl_env_long(const char *name, long def, long min, long max, long *out)
{
	const char *v = env_value(name);
	char *end;
	long x;

	*out = def;
	if (!v)
		return FL_OK;
	errno = 0;
	x = strtol(v, &end, 10);
	if (errno || end == v || *end || x < min || x > max)
		return fl_fail(FL_ERR_USAGE, "%s=\"%s\": expected an integer from %ld to %ld", name, v,
			       min, max);
	*out = x;
	return FL_OK;
}

int fl_parse_bytes(const char *text, size_t *out)
{
	unsigned long long x, scale = 1;
	char *end;

	if (!text || !*text || *text == '-')
		return -1;
	errno = 0;
	x = strtoull(text, &end, 10);
	if (errno || end == text)
		return -1;
	switch (*end) {
	case '\0': break;
	case 'k': case 'K': scale = 1ULL << 10; end++; break;
	case 'm': case 'M': scale = 1ULL << 20; end++; break;
	case 'g': case 'G': scale = 1ULL << 30; end++; break;
	default: return -1;
	}
	if ((*end == 'i' || *end == 'I') && scale > 1)
		end++;
	if ((*end == 'b' || *end == 'B') && scale > 1)
		end++;
	if (*end || x > SIZE_MAX / scale)
		return -1;
	*out = (size_t)(x * scale);
	return 0;
}

int fl_env_bytes(const char *name, size_t def, size_t min, size_t max, size_t *out)
{
	const char *v = env_value(name);
	size_t x;

	*out = def;
	if (!v)
		return FL_OK;
	if (fl_parse_bytes(v, &x) || x < min || x > max)
		return fl_fail(FL_ERR_USAGE,
			       "%s=\"%s\": expected a byte count from %zu to %zu (suffix K, M or G allowed)",
			       name, v, min, max);
	*out = x;
	return FL_OK;
}

int fl_env_choice(const char *name, const char *const *choices, int def, int *out)
{
	const char *v = env_value(name);
	char accepted[256] = "";

	*out = def;
	if (!v)
		return FL_OK;
	for (int i = 0; choices[i]; i++) {
		if (!strcasecmp(v, choices[i])) {
			*out = i;
			return FL_OK;
		}
		if (i)
			strncat(accepted, "|", sizeof(accepted) - strlen(accepted) - 1);
		strncat(accepted, choices[i], sizeof(accepted) - strlen(accepted) - 1);
	}
	return fl_fail(FL_ERR_USAGE, "%s=\"%s\": expected one of %s", name, v, accepted);
}

const char *fl_env_first(const char *const *names)
{
	for (; *names; names++) {
		const char *v = env_value(*names);

		if (v)
			return v;
	}
	return NULL;
}
