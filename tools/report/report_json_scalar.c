/*
 * The scalars of a hop's JSON: strings (UTF-8 checked, escapes decoded),
 * numbers and the three literals, each accepted exactly where jansson accepts
 * it (report_hop_json.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "report_json_parser.h"

static int put_decoded(struct report_json_parser *p, const char *s, size_t n)
{
	struct report_json *j = p->j;

	if (!n) /* nothing before the first escape: the buffer may not exist yet */
		return 0;
	if (j->decoded_len + n > j->decoded_cap) {
		size_t cap = j->decoded_cap ? j->decoded_cap : 256;
		char *more;

		while (cap < j->decoded_len + n)
			cap *= 2;
		if (!(more = realloc(j->decoded, cap)))
			return report_json_fail(p, p->at, "out of memory");
		j->decoded = more;
		j->decoded_cap = cap;
	}
	memcpy(j->decoded + j->decoded_len, s, n);
	j->decoded_len += n;
	return 0;
}

/*
 * The length of the valid UTF-8 character at t[i] (2 to 4 bytes, lead byte
 * >= 0x80), 0 when it is not one: a stray or missing continuation byte, an
 * overlong form, a surrogate, past U+10FFFF, or cut by the end.
 */
static size_t utf8_len(const char *t, size_t i, size_t end)
{
	unsigned char c = (unsigned char)t[i];
	size_t n = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
	uint32_t v = c & (n == 2 ? 0x1f : n == 3 ? 0x0f : 0x07);

	if (!n || end - i < n)
		return 0;
	for (size_t k = 1; k < n; k++) {
		unsigned char d = (unsigned char)t[i + k];

		if ((d & 0xc0) != 0x80)
			return 0;
		v = (v << 6) | (d & 0x3f);
	}
	if ((n == 3 && v < 0x800) || (n == 4 && v < 0x10000) || (v >= 0xd800 && v <= 0xdfff) ||
	    v > 0x10ffff)
		return 0;
	return n;
}

static int hex4(const char *t, size_t i, size_t end)
{
	int v = 0;

	if (end - i < 4)
		return -1;
	for (size_t k = 0; k < 4; k++) {
		char c = t[i + k];
		int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
			: c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;

		if (d < 0)
			return -1;
		v = v * 16 + d;
	}
	return v;
}

static size_t utf8_encode(uint32_t v, char *out)
{
	if (v < 0x80) {
		out[0] = (char)v;
		return 1;
	}
	if (v < 0x800) {
		out[0] = (char)(0xc0 | (v >> 6));
		out[1] = (char)(0x80 | (v & 0x3f));
		return 2;
	}
	if (v < 0x10000) {
		out[0] = (char)(0xe0 | (v >> 12));
		out[1] = (char)(0x80 | ((v >> 6) & 0x3f));
		out[2] = (char)(0x80 | (v & 0x3f));
		return 3;
	}
	out[0] = (char)(0xf0 | (v >> 18));
	out[1] = (char)(0x80 | ((v >> 12) & 0x3f));
	out[2] = (char)(0x80 | ((v >> 6) & 0x3f));
	out[3] = (char)(0x80 | (v & 0x3f));
	return 4;
}

/* "\uXXXX" at t[p->at] (the backslash), a pair for a surrogate: decoded onto the buffer. */
static int unicode_escape(struct report_json_parser *p)
{
	size_t at = p->at;
	int v = hex4(p->t, at + 2, p->end), low;
	char out[4];

	if (v < 0)
		return report_json_fail(p, at, "invalid escape");
	p->at += 6;
	if (v >= 0xdc00 && v <= 0xdfff)
		return report_json_fail(p, at, "invalid Unicode '\\u%04X'", v);
	if (v >= 0xd800 && v <= 0xdbff) {
		if (p->end - p->at < 2 || p->t[p->at] != '\\' || p->t[p->at + 1] != 'u')
			return report_json_fail(p, at, "invalid Unicode '\\u%04X'", v);
		if ((low = hex4(p->t, p->at + 2, p->end)) < 0)
			return report_json_fail(p, p->at, "invalid escape");
		if (low < 0xdc00 || low > 0xdfff)
			return report_json_fail(p, at, "invalid Unicode '\\u%04X\\u%04X'", v, low);
		p->at += 6;
		v = ((v - 0xd800) << 10) + (low - 0xdc00) + 0x10000;
	}
	if (!v)
		return report_json_fail(p, at, "\\u0000 is not allowed in a string");
	return put_decoded(p, out, utf8_encode((uint32_t)v, out));
}

static int simple_escape(struct report_json_parser *p)
{
	static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
	const char *e = p->at + 1 < p->end && p->t[p->at + 1] ? strchr(from, p->t[p->at + 1]) : NULL;

	if (!e)
		return report_json_fail(p, p->at, "invalid escape");
	p->at += 2;
	return put_decoded(p, &to[e - from], 1);
}

/* A string's bytes taken as they are: printable ASCII but the quote and the backslash. */
static const unsigned char plain[256] = {
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, /* 0x00 */
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, /* 0x10 */
	1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, /* 0x20 */
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, /* 0x30 */
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, /* 0x40 */
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1, /* 0x50 */
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, /* 0x60 */
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, /* 0x70 */
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, /* 0x80 */
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, /* 0x90 */
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, /* 0xa0 */
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, /* 0xb0 */
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, /* 0xc0 */
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, /* 0xd0 */
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, /* 0xe0 */
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, /* 0xf0 */
};

/*
 * The string at t[p->at] (its '"'): *at and *len its span in the text, or in
 * the decoded buffer (*decoded) once an escape is met.
 */
int report_json_string(struct report_json_parser *p, size_t *at, size_t *len, bool *decoded)
{
	size_t start = ++p->at, from = start;

	*decoded = false;
	for (;;) {
		unsigned char c;
		size_t n;

		while (p->at < p->end && plain[(unsigned char)p->t[p->at]])
			p->at++;
		if (p->at >= p->end)
			return report_json_fail(p, p->at, "premature end of input in a string");
		c = (unsigned char)p->t[p->at];
		if (c < 0x20)
			return report_json_fail(p, p->at, "control character 0x%x in a string", c);
		if (c >= 0x80) {
			if (!(n = utf8_len(p->t, p->at, p->end)))
				return report_json_fail(p, p->at, "invalid UTF-8 byte 0x%x", c);
			p->at += n;
			continue;
		}
		if (c == '"')
			break;
		if (!*decoded) { /* the first escape: what came before goes to the buffer */
			*decoded = true;
			from = p->j->decoded_len;
		}
		if (put_decoded(p, p->t + start, p->at - start) ||
		    (p->at + 1 < p->end && p->t[p->at + 1] == 'u' ? unicode_escape(p)
							     : simple_escape(p)))
			return -1;
		start = p->at;
	}
	if (*decoded && put_decoded(p, p->t + start, p->at - start))
		return -1;
	*at = *decoded ? from : start;
	*len = *decoded ? p->j->decoded_len - from : p->at - start;
	p->at++; /* the closing '"' */
	return 0;
}

static const double pow10_exact[] = { 1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
				      1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
				      1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22 };

/*
 * A real whose digits fit 2^53 and whose power of ten is exact (|e| <= 22) is
 * one correctly rounded multiplication or division, as strtod rounds it
 * (Clinger's fast path); the rest goes to strtod, as jansson's does.
 */
static int real(struct report_json_parser *p, size_t from, struct report_json_node *n)
{
	const char *t = p->t;
	uint64_t digits = 0;
	int sig = 0, exp10 = 0, e = 0;
	bool fraction = false;
	size_t i = from + (t[from] == '-');
	char buf[64], *copy = buf;

	for (; i < p->at && t[i] != 'e' && t[i] != 'E'; i++) {
		if (t[i] == '.') {
			fraction = true;
			continue;
		}
		sig += digits || t[i] != '0'; /* leading zeros are no digits of precision */
		digits = digits * 10 + (uint64_t)(t[i] - '0'); /* wraps past 19: then unused */
		exp10 -= fraction;
	}
	if (i < p->at) { /* the exponent, capped: past 10^5 only strtod can say what it is */
		bool neg = t[++i] == '-';

		for (i += t[i] == '-' || t[i] == '+'; i < p->at && e < 100000; i++)
			e = e * 10 + (t[i] - '0');
		exp10 += neg ? -e : e;
	}
	if (sig <= 15 && exp10 >= -22 && exp10 <= 22) {
		double d = exp10 < 0 ? (double)digits / pow10_exact[-exp10]
				     : (double)digits * pow10_exact[exp10];

		n->u.d = t[from] == '-' ? -d : d;
		return 0;
	}
	if (p->at - from >= sizeof(buf) && !(copy = malloc(p->at - from + 1)))
		return report_json_fail(p, from, "out of memory");
	memcpy(copy, t + from, p->at - from);
	copy[p->at - from] = '\0';
	errno = 0;
	n->u.d = strtod(copy, NULL);
	if (copy != buf)
		free(copy);
	/* jansson refuses only an overflow; an underflow reads as the tiny value strtod gives */
	if (errno == ERANGE && (n->u.d > 1.0 || n->u.d < -1.0))
		return report_json_fail(p, from, "real number overflow");
	return 0;
}

/* An integer token: a long long, as jansson's strtoll takes it. */
static int integer(struct report_json_parser *p, size_t from, struct report_json_node *n)
{
	bool neg = p->t[from] == '-';
	uint64_t v = 0, limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;

	for (size_t i = from + neg; i < p->at; i++) {
		unsigned d = (unsigned)(p->t[i] - '0');

		if (v > (limit - d) / 10)
			return report_json_fail(p, from, neg ? "too big negative integer" : "too big integer");
		v = v * 10 + d;
	}
	n->type = REPORT_JSON_INTEGER;
	n->u.i = neg ? (long long)(0 - v) : (long long)v;
	return 0;
}

static bool digit_at(const struct report_json_parser *p, size_t i)
{
	return i < p->end && p->t[i] >= '0' && p->t[i] <= '9';
}

static void skip_digits(struct report_json_parser *p)
{
	while (digit_at(p, p->at))
		p->at++;
}

/* -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? */
int report_json_number(struct report_json_parser *p, struct report_json_node *n)
{
	size_t from = p->at;
	bool is_real = false;

	p->at += p->t[p->at] == '-';
	if (!digit_at(p, p->at) || (p->t[p->at] == '0' && digit_at(p, p->at + 1)))
		return report_json_fail(p, from, "invalid token");
	skip_digits(p);
	if (p->at < p->end && p->t[p->at] == '.') {
		if (!digit_at(p, ++p->at))
			return report_json_fail(p, from, "invalid token");
		skip_digits(p);
		is_real = true;
	}
	if (p->at < p->end && (p->t[p->at] == 'e' || p->t[p->at] == 'E')) {
		p->at++;
		p->at += p->at < p->end && (p->t[p->at] == '+' || p->t[p->at] == '-');
		if (!digit_at(p, p->at))
			return report_json_fail(p, from, "invalid token");
		skip_digits(p);
		is_real = true;
	}
	if (!is_real)
		return integer(p, from, n);
	n->type = REPORT_JSON_REAL;
	return real(p, from, n);
}

/* true, false, null: jansson reads a run of letters, then names it. */
int report_json_literal(struct report_json_parser *p, struct report_json_node *n)
{
	size_t from = p->at, len;

	while (p->at < p->end && ((p->t[p->at] >= 'a' && p->t[p->at] <= 'z') ||
				  (p->t[p->at] >= 'A' && p->t[p->at] <= 'Z')))
		p->at++;
	len = p->at - from;
	if (len == 4 && !memcmp(p->t + from, "true", 4))
		n->type = REPORT_JSON_TRUE;
	else if (len == 5 && !memcmp(p->t + from, "false", 5))
		n->type = REPORT_JSON_FALSE;
	else if (len == 4 && !memcmp(p->t + from, "null", 4))
		n->type = REPORT_JSON_NULL;
	else
		return report_json_fail(p, from, "invalid token");
	return 0;
}
