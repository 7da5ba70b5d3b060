#include "config.h"

#include <errno.h>
#include <stdio.h>
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

const char *fl_quote_value(const char *value, char *out, size_t len)
{
	size_t o = 0, i = 0;

	for (; value[i] && o + 8 < len; i++) {
		unsigned char c = (unsigned char)value[i];

		if (c < 0x20 || c >= 0x7f || c == '"' || c == '\\')
			o += (size_t)snprintf(out + o, len - o, "\\x%02x", c);
		else
			out[o++] = (char)c;
	}
	if (value[i])
		o += (size_t)snprintf(out + o, len - o, "...");
	out[o] = '\0';
	return out;
}

/* Digits only, after an optional '-': no blanks, no '+', as the message promises. */
static int plain_integer_text(const char *v)
{
	if (*v == '-')
		v++;
	return *v >= '0' && *v <= '9';
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
	if (!plain_integer_text(v) || errno || end == v || *end || x < min || x > max) {
		char q[FL_QUOTE_LEN];

		return fl_fail(FL_ERR_USAGE, "%s=\"%s\": expected an integer from %ld to %ld", name,
			       fl_quote_value(v, q, sizeof(q)), min, max);
	}
	*out = x;
	return FL_OK;
}

int fl_parse_bytes(const char *text, size_t *out)
{
	unsigned long long x, scale = 1;
	char *end;

	if (!text || *text < '0' || *text > '9')
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
	if (fl_parse_bytes(v, &x) || x < min || x > max) {
		char q[FL_QUOTE_LEN];

		return fl_fail(FL_ERR_USAGE,
			       "%s=\"%s\": expected a byte count from %zu to %zu (suffix K, M or G allowed)",
			       name, fl_quote_value(v, q, sizeof(q)), min, max);
	}
	*out = x;
	return FL_OK;
}

int fl_env_choice(const char *name, const char *const *choices, int def, int *out)
{
	const char *v = env_value(name);
	char accepted[256] = "", q[FL_QUOTE_LEN];

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
	return fl_fail(FL_ERR_USAGE, "%s=\"%s\": expected one of %s", name,
		       fl_quote_value(v, q, sizeof(q)), accepted);
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
