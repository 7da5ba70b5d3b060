/*
 * A JSON document written as it goes (tool_json_stream.h). The separators and
 * indentation follow what jansson's dump writes for a whole tree (dump.c:
 * '{', a newline and indent before the first member only, ",\n" + indent
 * between members, newline and the outer indent before the closing bracket,
 * "{}" when empty), so a reader cannot tell the two apart.
 */
#include "tool_json_stream.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tool_text.h"

/* A newline and the indent after it, written in one piece when it is this deep or less. */
static const char newline_spaces[] =
	"\n                                                                ";
static const char *const spaces = newline_spaces + 1;
#define SPACES (sizeof(newline_spaces) - 2)

static void flush(struct tool_json_stream *s)
{
	if (!s->failed && s->used && fwrite(s->buf, 1, s->used, s->out) != s->used)
		s->failed = true;
	s->used = 0;
}

/*
 * jansson hands its text over a few bytes at a time: gathered here and written
 * in blocks, not one locked stdio call per token.
 */
static void put(struct tool_json_stream *s, const char *text, size_t len)
{
	if (s->used + len > sizeof(s->buf)) {
		flush(s);
		if (len > sizeof(s->buf)) {
			if (!s->failed && fwrite(text, 1, len, s->out) != len)
				s->failed = true;
			return;
		}
	}
	memcpy(s->buf + s->used, text, len);
	s->used += len;
}

static void put_spaces(struct tool_json_stream *s, size_t n)
{
	while (n > 0) {
		size_t k = n < SPACES ? n : SPACES;

		put(s, spaces, k);
		n -= k;
	}
}

static size_t indent_width(const struct tool_json_stream *s)
{
	return s->flags & JSON_MAX_INDENT;
}

/* What jansson writes between members (space) or inside a bracket (no space), at depth. */
static void indent(struct tool_json_stream *s, int depth, bool space)
{
	size_t n = (size_t)depth * indent_width(s);

	if (n > 0 && n <= SPACES) {
		put(s, newline_spaces, n + 1);
	} else if (indent_width(s) > 0) {
		put(s, "\n", 1);
		put_spaces(s, n);
	} else if (space && !(s->flags & JSON_COMPACT)) {
		put(s, " ", 1);
	}
}

/*
 * member()'s usual case written in one piece: inside a container indented no
 * deeper than SPACES, the whole separator and key fitting the buffer (a hop
 * of the merged report has some sixty members: a put each for the comma, the
 * indent, the quotes and the key cost more than the values). False where the
 * general path must do it.
 */
static bool member_fast(struct tool_json_stream *s, const char *key)
{
	size_t n = s->depth > 0 ? (size_t)s->depth * indent_width(s) : 0;
	size_t len = key ? strlen(key) : 0;
	char *p;

	if (n == 0 || n > SPACES || s->used + n + len + 6 > sizeof(s->buf))
		return false;
	p = s->buf + s->used;
	if (s->members[s->depth - 1])
		*p++ = ',';
	s->members[s->depth - 1] = true;
	*p++ = '\n';
	memset(p, ' ', n);
	p += n;
	if (key) {
		*p++ = '"';
		memcpy(p, key, len);
		p += len;
		*p++ = '"';
		*p++ = ':';
		if (!(s->flags & JSON_COMPACT))
			*p++ = ' ';
	}
	s->used = (size_t)(p - s->buf);
	return true;
}

/* The separator before the next member of the container open at the top, and its key. */
static void member(struct tool_json_stream *s, const char *key)
{
	if (member_fast(s, key))
		return;
	if (s->depth > 0) {
		if (s->members[s->depth - 1])
			put(s, ",", 1);
		indent(s, s->depth, s->members[s->depth - 1]);
		s->members[s->depth - 1] = true;
	}
	if (key) {
		put(s, "\"", 1);
		put(s, key, strlen(key));
		put(s, s->flags & JSON_COMPACT ? "\":" : "\": ", s->flags & JSON_COMPACT ? 2 : 3);
	}
}

void tool_json_stream_init(struct tool_json_stream *s, FILE *out, size_t flags)
{
	memset(s, 0, sizeof(*s));
	s->out = out;
	s->flags = flags;
}

void tool_json_stream_open(struct tool_json_stream *s, const char *key, char bracket)
{
	if (s->depth >= TOOL_JSON_STREAM_DEPTH) {
		s->failed = true;
		return;
	}
	member(s, key);
	put(s, bracket == '[' ? "[" : "{", 1);
	s->closing[s->depth] = bracket == '[' ? ']' : '}';
	s->members[s->depth++] = false;
}

void tool_json_stream_close(struct tool_json_stream *s)
{
	if (s->depth <= 0) {
		s->failed = true;
		return;
	}
	s->depth--;
	if (s->members[s->depth])
		indent(s, s->depth, false);
	put(s, s->closing[s->depth] == ']' ? "]" : "}", 1);
}

/* jansson's text of one value, each of its lines moved in to the depth it sits at. */
struct shifted {
	struct tool_json_stream *s;
	size_t pad;
};

static int shifted_put(const char *buf, size_t len, void *data)
{
	struct shifted *sh = data;

	while (len > 0) {
		/* JSON strings escape their newlines: a raw one is always jansson's indentation. */
		const char *nl = memchr(buf, '\n', len);
		size_t n = nl ? (size_t)(nl - buf) + 1 : len;

		put(sh->s, buf, n);
		if (nl)
			put_spaces(sh->s, sh->pad);
		buf += n;
		len -= n;
	}
	return sh->s->failed ? -1 : 0;
}

void tool_json_stream_value(struct tool_json_stream *s, const char *key, json_t *value)
{
	struct shifted sh = { s, (size_t)s->depth * indent_width(s) };

	if (!value) {
		s->failed = true;
		return;
	}
	member(s, key);
	if (!s->failed && json_dump_callback(value, shifted_put, &sh, s->flags | JSON_ENCODE_ANY))
		s->failed = true;
	json_decref(value);
}

void tool_json_stream_null(struct tool_json_stream *s, const char *key)
{
	member(s, key);
	put(s, "null", 4);
}

void tool_json_stream_bool(struct tool_json_stream *s, const char *key, bool value)
{
	member(s, key);
	put(s, value ? "true" : "false", value ? 4 : 5);
}

/* value's decimal digits ending at end (the caller's buffer); returns where they start. */
static char *digits(char *end, long long value)
{
	unsigned long long u = value < 0 ? 0ULL - (unsigned long long)value : (unsigned long long)value;

	do {
		*--end = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	if (value < 0)
		*--end = '-';
	return end;
}

/* Without printf: a fleet's document has tens of millions of numbers. */
void tool_json_stream_int(struct tool_json_stream *s, const char *key, long long value)
{
	char text[24], *start = digits(text + sizeof(text), value);

	member(s, key);
	put(s, start, (size_t)(text + sizeof(text) - start));
}

/*
 * A whole number below 10^precision (and 10^15) reads under "%.*g" as its
 * digits, to which dtostr adds ".0": written so without printf. Most of a
 * report's reals (rates, line rates, zero waits) are such.
 */
static bool whole_real(struct tool_json_stream *s, double value, int precision)
{
	static const double limit[] = { 1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8,
					1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15 };
	char text[32], *start;

	if (precision < 1 || value != floor(value) || (value == 0.0 && signbit(value)) ||
	    fabs(value) >= limit[precision < 15 ? precision : 15])
		return false;
	memcpy(text + sizeof(text) - 2, ".0", 2);
	start = digits(text + sizeof(text) - 2, (long long)value);
	put(s, start, (size_t)(text + sizeof(text) - start));
	return true;
}

/*
 * A real that is a short decimal (0.1, 12.25: most rates and seconds of a
 * report) written without printf: the digits of value x 10^k, the smallest k
 * that makes it whole, with k of them after the point. "%.*g" writes the same:
 * the product rounds to that whole number only when value lies within 2^-53
 * of the decimal, far inside half a step of precision (15 or fewer)
 * significant digits, so the decimal is value rounded; at most precision
 * digits and 10^-4 or more, "%g" writes it in fixed notation, its trailing
 * zeros stripped (67940.57 x 100 is not whole in binary, x 1000 is).
 */
static bool short_real(struct tool_json_stream *s, double value, int precision)
{
	static const double pow10[] = { 1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9,
					1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18,
					1e19 };
	double mag = fabs(value);
	char text[48], *start, *end = text + sizeof(text);

	if (precision < 1 || precision > 15 || !(mag >= 1e-4) || mag >= pow10[precision])
		return false;
	for (int k = 1; k <= precision + 4; k++) {
		double m = mag * pow10[k];
		unsigned long long whole;

		if (m >= pow10[precision])
			return false; /* more digits than precision: printf rounds */
		if (m != floor(m))
			continue;
		whole = (unsigned long long)m;
		while (k > 0 && whole % 10 == 0) { /* "%g" strips them */
			whole /= 10;
			k--;
		}
		if (k == 0) /* whole once rounded: "%g" gives its digits, dtostr adds ".0" */
			*--end = '0';
		for (int d = 0; d < k; d++) {
			*--end = (char)('0' + whole % 10);
			whole /= 10;
		}
		*--end = '.';
		start = digits(end, (long long)whole);
		if (value < 0)
			*--start = '-';
		put(s, start, (size_t)(text + sizeof(text) - start));
		return true;
	}
	return false;
}

/*
 * As jansson's dtostr (strconv.c): "%.*g", ".0" added when that reads as an
 * integer, the exponent without its '+' and leading zeros ("1e+09" -> "1e9").
 */
void tool_json_stream_real(struct tool_json_stream *s, const char *key, double value)
{
	int precision = (int)((s->flags >> 11) & 0x1F);
	char text[48], *e;
	size_t n;

	if (!isfinite(value)) {
		tool_json_stream_null(s, key);
		return;
	}
	member(s, key);
	if (whole_real(s, value, precision ? precision : 17) ||
	    short_real(s, value, precision))
		return;
	n = (size_t)snprintf(text, sizeof(text) - 3, "%.*g", precision ? precision : 17, value);
	if (!strchr(text, '.') && !strchr(text, 'e')) {
		memcpy(text + n, ".0", 3);
		n += 2;
	}
	if ((e = strchr(text, 'e'))) {
		char *start = e + 1, *end = e + 2;

		if (*start == '-')
			start++;
		while (*end == '0')
			end++;
		memmove(start, end, (size_t)(text + n + 1 - end));
		n -= (size_t)(end - start);
	}
	put(s, text, n);
}

/* valid UTF-8 as jansson's dump_string escapes it: quote, backslash and C0 controls. */
static void put_escaped(struct tool_json_stream *s, const char *v)
{
	static const char hex[] = "0123456789ABCDEF";
	const char *run = v;

	for (; *v; v++) {
		unsigned char c = (unsigned char)*v;
		char esc[7] = { '\\', 0 };
		size_t n = 2;

		if (c >= 0x20 && c != '"' && c != '\\')
			continue;
		put(s, run, (size_t)(v - run));
		run = v + 1;
		switch (c) {
		case '"': esc[1] = '"'; break;
		case '\\': esc[1] = '\\'; break;
		case '\b': esc[1] = 'b'; break;
		case '\f': esc[1] = 'f'; break;
		case '\n': esc[1] = 'n'; break;
		case '\r': esc[1] = 'r'; break;
		case '\t': esc[1] = 't'; break;
		default:
			memcpy(esc + 1, "u00", 3);
			esc[4] = hex[c >> 4];
			esc[5] = hex[c & 15];
			n = 6;
		}
		put(s, esc, n);
	}
	put(s, run, (size_t)(v - run));
}

static bool valid_utf8(const char *v)
{
	while (*v) {
		size_t n = (unsigned char)*v < 0x80 ? 1 : tool_text_char_len(v);

		if (!n)
			return false;
		v += n;
	}
	return true;
}

void tool_json_stream_string(struct tool_json_stream *s, const char *key, const char *value)
{
	char *escaped = NULL;

	if (!value) {
		tool_json_stream_null(s, key);
		return;
	}
	if (!valid_utf8(value) && !(value = escaped = tool_text_dup(value))) {
		s->failed = true;
		return;
	}
	member(s, key);
	put(s, "\"", 1);
	put_escaped(s, value);
	put(s, "\"", 1);
	free(escaped);
}

int tool_json_stream_end(struct tool_json_stream *s)
{
	flush(s);
	return s->failed || s->depth != 0 || ferror(s->out) ? -1 : 0;
}
