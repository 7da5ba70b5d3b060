/*
 * FABRICLAB_FAULT parsing. The text is walked in place as spans, never copied
 * whole, so an arbitrarily long value costs a scan and one clean error. Only
 * a value that passed the length cap is copied, into a small stack buffer.
 */
#include "fault_spec.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/config.h"
#include "base/error.h"
#include "fault_units.h"

#define QUOTE_RULE_MAX 40  /* characters of a rule echoed in an error */
#define QUOTE_TOKEN_MAX 24 /* characters of a token echoed in an error */
#define QUOTE_BUF 64
#define NS_PER_S 1000000000.0
#define RATE_MIN_BYTES 125.0   /* 1kbit */
#define RATE_MAX_BYTES 12.5e12 /* 100tbit */
#define FACTOR_MAX 1000.0
#define SIGNIFICANT_DIGITS 15

struct span {
	const char *p;
	size_t len;
};

enum key_id {
	KEY_NODE,
	KEY_PEER,
	KEY_DEV,
	KEY_RANK,
	KEY_RATE,
	KEY_DIR,
	KEY_FACTOR,
	KEY_DELAY,
	KEY_FOR,
	KEY_EVERY,
	KEY_AFTER,
	KEY_AFTER_BYTES,
	KEY_COUNT,
};

/* Returns NULL when the value is accepted, else the accepted form. */
typedef const char *(*value_parser)(struct fl_fault_rule *rule, const char *value);

struct key_desc {
	const char *name;
	unsigned actions; /* bit (1 << action) for each action that takes the key */
	value_parser parse;
};

struct rule_ctx {
	struct span text;
	int index;
	struct fl_fault_rule *rule;
	unsigned seen; /* bit (1 << key_id) per key given */
};

static const char *const action_names[] = {
	[FL_FAULT_THROTTLE] = "throttle",
	[FL_FAULT_SLOW] = "slow",
	[FL_FAULT_NOGDR] = "nogdr",
	[FL_FAULT_STALL] = "stall",
	[FL_FAULT_FAIL] = "fail",
};

#define N_ACTIONS (int)(sizeof(action_names) / sizeof(action_names[0]))

const struct fl_fault_unit fl_fault_duration_units[6] = {
	{ "ns", 1.0 }, { "us", 1e3 }, { "ms", 1e6 }, { "s", 1e9 }, { "m", 60e9 }, { "h", 3600e9 },
};

/* Line rates are decimal: 1gbit is 10^9 bits per second. */
const struct fl_fault_unit fl_fault_rate_units[8] = {
	{ "kbit", 125.0 }, { "mbit", 125e3 }, { "gbit", 125e6 }, { "tbit", 125e9 },
	{ "kbyte", 1e3 },  { "mbyte", 1e6 },  { "gbyte", 1e9 },  { "tbyte", 1e12 },
};


/* ---- spans ---- */

static bool is_blank_char(char ch)
{
	return ch == ' ' || ch == '\t' || ch == '\r' || ch == '\n';
}

static struct span trim(struct span s)
{
	while (s.len && is_blank_char(s.p[0])) {
		s.p++;
		s.len--;
	}
	while (s.len && is_blank_char(s.p[s.len - 1]))
		s.len--;
	return s;
}

/* Cuts *rest at the first sep: *head gets what precedes it. False when sep is absent. */
static bool split(struct span *rest, char sep, struct span *head)
{
	const char *at = memchr(rest->p, sep, rest->len);

	if (!at) {
		*head = *rest;
		rest->p += rest->len;
		rest->len = 0;
		return false;
	}
	head->p = rest->p;
	head->len = (size_t)(at - rest->p);
	rest->len -= head->len + 1;
	rest->p = at + 1;
	return true;
}

static bool span_is(struct span s, const char *word)
{
	return strlen(word) == s.len && !strncasecmp(s.p, word, s.len);
}

/* A printable, bounded copy of user text for an error message. */
static const char *quote(struct span s, size_t max, char *buf)
{
	size_t n = s.len < max ? s.len : max;

	for (size_t i = 0; i < n; i++)
		buf[i] = (s.p[i] >= 0x20 && s.p[i] < 0x7f) ? s.p[i] : '?';
	strcpy(buf + n, s.len > max ? "..." : "");
	return buf;
}

/* ---- errors ---- */

static int rule_fail(const struct rule_ctx *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int rule_fail(const struct rule_ctx *c, const char *fmt, ...)
{
	char what[FL_ERROR_LEN];
	char rule[QUOTE_BUF];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	return fl_fail(FL_ERR_USAGE, "%s rule %d (\"%s\"): %s", FL_FAULT_ENV, c->index,
		       quote(c->text, QUOTE_RULE_MAX, rule), what);
}

/* ---- numbers ---- */

/* Plain decimal "12" or "2.5"; returns the first character after it, NULL if none. */
/*
 * Digits, then optionally '.' and digits. The first 15 significant digits
 * (DBL_DIG: they survive a trip through a double) are kept as an exact
 * integer and scaled by a power of ten in one correctly rounded division, so
 * the describer's 15-digit text of a value parses back to the same value.
 */
const char *fl_fault_parse_decimal(const char *s, double *out)
{
	static const double pow10[] = { 1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
					1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
					1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22 };
	uint64_t mant = 0;
	int exp10 = 0, kept = 0;
	const char *start = s;
	double value;

	for (; *s >= '0' && *s <= '9'; s++) {
		if (kept < SIGNIFICANT_DIGITS) {
			mant = mant * 10 + (uint64_t)(*s - '0');
			kept += mant != 0;
		} else {
			exp10++;
		}
	}
	if (s == start)
		return NULL;
	if (*s == '.') {
		if (s[1] < '0' || s[1] > '9')
			return NULL;
		for (s++; *s >= '0' && *s <= '9'; s++) {
			if (kept >= SIGNIFICANT_DIGITS)
				continue;
			mant = mant * 10 + (uint64_t)(*s - '0');
			kept += mant != 0;
			exp10--;
		}
	}
	while (mant && mant % 10 == 0 && exp10 < 0) {
		mant /= 10;
		exp10++;
	}
	value = (double)mant;
	for (; exp10 < -22; exp10 += 22)
		value /= 1e22;
	for (; exp10 > 22; exp10 -= 22)
		value *= 1e22;
	*out = exp10 < 0 ? value / pow10[-exp10] : value * pow10[exp10];
	return s;
}

static const struct fl_fault_unit *find_unit(const struct fl_fault_unit *units, size_t n,
					     const char *name)
{
	for (size_t i = 0; i < n; i++) {
		if (!strcasecmp(units[i].name, name))
			return &units[i];
	}
	return NULL;
}

static bool parse_duration(const char *value, double max_ns, uint64_t *out)
{
	const struct fl_fault_unit *unit;
	const char *rest;
	double x, ns;

	rest = fl_fault_parse_decimal(value, &x);
	if (!rest)
		return false;
	unit = find_unit(fl_fault_duration_units, FL_FAULT_N_UNITS(fl_fault_duration_units), rest);
	if (!unit)
		return false;
	ns = x * unit->scale + 0.5;
	if (ns < 1.0 || ns > max_ns + 0.5)
		return false;
	*out = (uint64_t)ns;
	return true;
}

/* ---- value parsers ---- */

static bool is_name(const char *value, size_t max)
{
	size_t n = strspn(value, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
				 "0123456789-_.");

	return n && !value[n] && n <= max;
}

static const char *parse_node(struct fl_fault_rule *rule, const char *value)
{
	if (!is_name(value, sizeof(rule->where.node) - 1))
		return "a node name of letters, digits, '-', '_' or '.', e.g. node=node3";
	strcpy(rule->where.node, value);
	return NULL;
}

static const char *parse_peer(struct fl_fault_rule *rule, const char *value)
{
	if (!is_name(value, sizeof(rule->where.peer) - 1))
		return "a node name of letters, digits, '-', '_' or '.', e.g. peer=node4";
	strcpy(rule->where.peer, value);
	return NULL;
}

static const char *parse_dev(struct fl_fault_rule *rule, const char *value)
{
	if (!is_name(value, sizeof(rule->where.dev) - 1))
		return "a device name of at most 15 letters, digits, '-', '_' or '.', "
		       "e.g. dev=eth0";
	strcpy(rule->where.dev, value);
	return NULL;
}

static const char *parse_rank(struct fl_fault_rule *rule, const char *value)
{
	long long rank = 0;
	const char *s = value;

	for (; *s >= '0' && *s <= '9' && rank <= INT_MAX; s++)
		rank = rank * 10 + (*s - '0');
	if (s == value || *s || rank > INT_MAX)
		return "a rank from 0 to 2147483647, e.g. rank=3";
	rule->where.rank = (int)rank;
	return NULL;
}

static const char *parse_rate(struct fl_fault_rule *rule, const char *value)
{
	struct fl_fault_throttle *t = &rule->throttle;
	const struct fl_fault_unit *unit;
	const char *rest;
	double x, bytes;

	rest = fl_fault_parse_decimal(value, &x);
	if (!rest)
		return "a percentage of line rate like 50% or a rate like 10gbit";
	if (!strcmp(rest, "%")) {
		if (x <= 0.0 || x > 100.0)
			return "a percentage above 0 and at most 100, e.g. rate=50%";
		t->kind = FL_FAULT_RATE_FRACTION;
		t->fraction = x / 100.0;
		return NULL;
	}
	unit = find_unit(fl_fault_rate_units, FL_FAULT_N_UNITS(fl_fault_rate_units), rest);
	if (!unit)
		return "a unit %, kbit, mbit, gbit, tbit, kbyte, mbyte, gbyte or tbyte, "
		       "e.g. rate=10gbit";
	bytes = x * unit->scale;
	if (bytes < RATE_MIN_BYTES || bytes > RATE_MAX_BYTES)
		return "a rate from 1kbit to 100tbit, e.g. rate=10gbit";
	t->kind = FL_FAULT_RATE_BYTES;
	t->bytes_per_s = (uint64_t)(bytes + 0.5);
	return NULL;
}

static const char *parse_dir(struct fl_fault_rule *rule, const char *value)
{
	if (!strcasecmp(value, "tx"))
		rule->throttle.dir = FL_FAULT_TX;
	else if (!strcasecmp(value, "rx"))
		rule->throttle.dir = FL_FAULT_RX;
	else if (!strcasecmp(value, "both"))
		rule->throttle.dir = FL_FAULT_BOTH;
	else
		return "tx, rx or both";
	return NULL;
}

static const char *parse_factor(struct fl_fault_rule *rule, const char *value)
{
	const char *rest = fl_fault_parse_decimal(value, &rule->slow.factor);

	if (!rest || *rest || rule->slow.factor <= 1.0 || rule->slow.factor > FACTOR_MAX) {
		rule->slow.factor = 0.0;
		return "a number > 1 and at most 1000, e.g. factor=2";
	}
	return NULL;
}

static const char *parse_delay(struct fl_fault_rule *rule, const char *value)
{
	if (!parse_duration(value, 60 * NS_PER_S, &rule->slow.delay_ns))
		return "a duration up to 60s with unit ns, us, ms or s, e.g. delay=200us";
	return NULL;
}

static const char *parse_for(struct fl_fault_rule *rule, const char *value)
{
	if (!parse_duration(value, 3600 * NS_PER_S, &rule->stall.for_ns))
		return "a duration up to 1h with unit ns, us, ms, s, m or h, e.g. for=5ms";
	return NULL;
}

static const char *parse_every(struct fl_fault_rule *rule, const char *value)
{
	if (!parse_duration(value, 24 * 3600 * NS_PER_S, &rule->stall.every_ns))
		return "a duration up to 24h with unit ns, us, ms, s, m or h, e.g. every=100ms";
	return NULL;
}

static const char *parse_after(struct fl_fault_rule *rule, const char *value)
{
	if (!parse_duration(value, 7 * 24 * 3600 * NS_PER_S, &rule->fail.after_ns))
		return "a duration up to 168h with unit ns, us, ms, s, m or h, e.g. after=30s";
	return NULL;
}

static const char *parse_after_bytes(struct fl_fault_rule *rule, const char *value)
{
	size_t bytes;

	if (fl_parse_bytes(value, &bytes) || !bytes)
		return "a byte count above 0 with optional suffix K, M or G, e.g. after_bytes=1G";
	rule->fail.after_bytes = bytes;
	return NULL;
}

#define ANY_ACTION ((1u << N_ACTIONS) - 1)
#define ONLY(action) (1u << (action))

static const struct key_desc keys[KEY_COUNT] = {
	[KEY_NODE] = { "node", ANY_ACTION, parse_node },
	[KEY_PEER] = { "peer", ANY_ACTION, parse_peer },
	[KEY_DEV] = { "dev", ANY_ACTION, parse_dev },
	[KEY_RANK] = { "rank", ANY_ACTION, parse_rank },
	[KEY_RATE] = { "rate", ONLY(FL_FAULT_THROTTLE), parse_rate },
	[KEY_DIR] = { "dir", ONLY(FL_FAULT_THROTTLE), parse_dir },
	[KEY_FACTOR] = { "factor", ONLY(FL_FAULT_SLOW), parse_factor },
	[KEY_DELAY] = { "delay", ONLY(FL_FAULT_SLOW), parse_delay },
	[KEY_FOR] = { "for", ONLY(FL_FAULT_STALL), parse_for },
	[KEY_EVERY] = { "every", ONLY(FL_FAULT_STALL), parse_every },
	[KEY_AFTER] = { "after", ONLY(FL_FAULT_FAIL), parse_after },
	[KEY_AFTER_BYTES] = { "after_bytes", ONLY(FL_FAULT_FAIL), parse_after_bytes },
};

/* ---- rules ---- */

static int find_key(struct span name, enum fl_fault_action action)
{
	for (int k = 0; k < KEY_COUNT; k++) {
		if ((keys[k].actions & ONLY(action)) && span_is(name, keys[k].name))
			return k;
	}
	return -1;
}

static int fail_unknown_key(const struct rule_ctx *c, struct span name)
{
	char accepted[128] = "", token[QUOTE_BUF];
	size_t used = 0;

	for (int k = 0; k < KEY_COUNT; k++) {
		if (keys[k].actions & ONLY(c->rule->action))
			used += (size_t)snprintf(accepted + used, sizeof(accepted) - used, "%s%s",
						 used ? ", " : "", keys[k].name);
	}
	return rule_fail(c, "unknown key \"%s\" for %s: expected one of %s",
			 quote(name, QUOTE_TOKEN_MAX, token), action_names[c->rule->action],
			 accepted);
}

static int parse_pair(struct rule_ctx *c, struct span pair)
{
	char token[QUOTE_BUF], value[FL_FAULT_VALUE_MAX + 1];
	struct span name;
	const char *why;
	int k;

	if (!pair.len)
		return rule_fail(c, "empty key=value pair (a stray ',' or ':'?)");
	if (!split(&pair, '=', &name))
		return rule_fail(c, "\"%s\": expected key=value",
				 quote(name, QUOTE_TOKEN_MAX, token));
	name = trim(name);
	pair = trim(pair);
	k = find_key(name, c->rule->action);
	if (k < 0)
		return fail_unknown_key(c, name);
	if (c->seen & (1u << k))
		return rule_fail(c, "%s is given twice; each key may appear once per rule",
				 keys[k].name);
	if (pair.len > FL_FAULT_VALUE_MAX)
		return rule_fail(c, "%s: a value of %zu characters, at most %d are accepted",
				 keys[k].name, pair.len, FL_FAULT_VALUE_MAX);
	memcpy(value, pair.p, pair.len);
	value[pair.len] = '\0';
	why = keys[k].parse(c->rule, value);
	if (why)
		return rule_fail(c, "%s \"%s\": expected %s", keys[k].name,
				 quote(pair, QUOTE_TOKEN_MAX, token), why);
	c->seen |= 1u << k;
	return FL_OK;
}

static bool given(const struct rule_ctx *c, enum key_id k)
{
	return c->seen & (1u << k);
}

/* For a pair of keys of which exactly one must be given. */
static int check_one_of(const struct rule_ctx *c, enum key_id a, enum key_id b,
			const char *example)
{
	const char *action = action_names[c->rule->action];

	if (!given(c, a) && !given(c, b))
		return rule_fail(c, "%s needs %s= or %s=, e.g. %s", action, keys[a].name,
				 keys[b].name, example);
	if (given(c, a) && given(c, b))
		return rule_fail(c, "%s takes %s= or %s=, not both", action, keys[a].name,
				 keys[b].name);
	return FL_OK;
}

static int check_stall(const struct rule_ctx *c)
{
	const struct fl_fault_stall *s = &c->rule->stall;

	if (!given(c, KEY_FOR) || !given(c, KEY_EVERY))
		return rule_fail(c, "stall needs for= and every=, e.g. stall:for=5ms,every=100ms");
	if (s->for_ns >= s->every_ns)
		return rule_fail(c, "for= must be shorter than every= "
				    "(the hop pauses for D every P)");
	return FL_OK;
}

static int check_complete(const struct rule_ctx *c)
{
	switch (c->rule->action) {
	case FL_FAULT_THROTTLE:
		if (!given(c, KEY_RATE))
			return rule_fail(c, "throttle needs rate=, e.g. rate=50%% or rate=10gbit");
		return FL_OK;
	case FL_FAULT_SLOW:
		return check_one_of(c, KEY_FACTOR, KEY_DELAY, "factor=2 or delay=200us");
	case FL_FAULT_STALL:
		return check_stall(c);
	case FL_FAULT_FAIL:
		return check_one_of(c, KEY_AFTER, KEY_AFTER_BYTES, "after=30s or after_bytes=1G");
	case FL_FAULT_NOGDR:
		return FL_OK;
	}
	return FL_OK;
}

static int find_action(struct span name)
{
	for (int a = 0; a < N_ACTIONS; a++) {
		if (span_is(name, action_names[a]))
			return a;
	}
	return -1;
}

static void rule_init(struct fl_fault_rule *rule, enum fl_fault_action action)
{
	memset(rule, 0, sizeof(*rule));
	rule->action = action;
	rule->where.rank = -1;
	if (action == FL_FAULT_THROTTLE)
		rule->throttle.dir = FL_FAULT_BOTH;
}

static int parse_rule(struct span text, int index, struct fl_fault_rule *rule)
{
	struct rule_ctx c = { .text = text, .index = index, .rule = rule };
	struct span rest = text, name, pair;
	char token[QUOTE_BUF];
	bool has_pairs, more;
	int action, err;

	has_pairs = split(&rest, ':', &name);
	name = trim(name);
	action = find_action(name);
	if (action < 0)
		return rule_fail(&c, "unknown action \"%s\": "
				     "expected throttle, slow, nogdr, stall or fail",
				 quote(name, QUOTE_TOKEN_MAX, token));
	rule_init(rule, (enum fl_fault_action)action);
	for (more = has_pairs; more;) {
		more = split(&rest, ',', &pair);
		err = parse_pair(&c, trim(pair));
		if (err)
			return err;
	}
	return check_complete(&c);
}

static bool is_blank(struct span s)
{
	return trim(s).len == 0;
}

int fl_fault_parse(const char *text, struct fl_fault_spec *out)
{
	struct span rest, rule;
	bool more = true;
	int index = 0, err;

	out->nrules = 0;
	if (!text)
		return FL_OK;
	rest = (struct span){ text, strlen(text) };
	if (is_blank(rest))
		return FL_OK;
	while (more) {
		struct rule_ctx at = { .index = ++index };

		more = split(&rest, ';', &rule);
		rule = trim(rule);
		at.text = rule;
		if (!rule.len && !more)
			break; /* one trailing ';' is allowed */
		if (!rule.len)
			err = rule_fail(&at, "empty rule (a stray ';'?)");
		else if (out->nrules == FL_FAULT_MAX_RULES)
			err = rule_fail(&at, "at most %d rules are accepted", FL_FAULT_MAX_RULES);
		else
			err = parse_rule(rule, index, &out->rules[out->nrules]);
		if (err) {
			out->nrules = 0;
			return err;
		}
		out->nrules++;
	}
	return FL_OK;
}

int fl_fault_from_env(struct fl_fault_spec *out)
{
	return fl_fault_parse(getenv(FL_FAULT_ENV), out);
}

const char *fl_fault_action_name(enum fl_fault_action action)
{
	if ((int)action < 0 || (int)action >= N_ACTIONS)
		return "?";
	return action_names[action];
}
