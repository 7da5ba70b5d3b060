/* A fault rule written back in its canonical form, for log lines and reports. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "fault_spec.h"
#include "fault_units.h"

struct text_out {
	char *buf;
	size_t len;
	size_t used;
};

static void out_add(struct text_out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void out_add(struct text_out *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (o->used >= o->len)
		return;
	va_start(ap, fmt);
	n = vsnprintf(o->buf + o->used, o->len - o->used, fmt, ap);
	va_end(ap);
	if (n > 0)
		o->used += (size_t)n;
}

/* Separates key=value pairs: ':' before the first, ',' before the others. */
static void out_key(struct text_out *o, bool *first, const char *key)
{
	out_add(o, "%c%s=", *first ? ':' : ',', key);
	*first = false;
}

/* In the largest unit that states it exactly, so describe and parse agree. */
static void out_duration(struct text_out *o, uint64_t ns)
{
	static const struct { const char *name; uint64_t ns; } units[] = {
		{ "h", 3600000000000ULL }, { "m", 60000000000ULL }, { "s", 1000000000ULL },
		{ "ms", 1000000ULL },      { "us", 1000ULL },
	};

	for (size_t i = 0; i < FL_FAULT_N_UNITS(units); i++) {
		if (ns % units[i].ns == 0) {
			out_add(o, "%llu%s", (unsigned long long)(ns / units[i].ns), units[i].name);
			return;
		}
	}
	out_add(o, "%lluns", (unsigned long long)ns);
}

static void out_bytes(struct text_out *o, uint64_t bytes)
{
	static const char suffix[] = "GMK";

	for (int i = 0; suffix[i]; i++) {
		uint64_t scale = 1ULL << (10 * (3 - i));

		if (bytes % scale == 0) {
			out_add(o, "%llu%c", (unsigned long long)(bytes / scale), suffix[i]);
			return;
		}
	}
	out_add(o, "%llu", (unsigned long long)bytes);
}

/*
 * The shortest fixed-point text whose parse, divided by `per`, is exactly
 * value: "%g" would write exponents, which the parser does not take.
 */
static void out_decimal(struct text_out *o, double value, double per)
{
	char text[FL_FAULT_VALUE_MAX + 16];

	for (int digits = 0; digits <= FL_FAULT_VALUE_MAX - 2; digits++) {
		double back = 0.0;
		char *end;

		snprintf(text, sizeof(text), "%.*f", digits, value * per);
		end = text + strlen(text);
		while (digits && end[-1] == '0')
			*--end = '\0';
		if (end[-1] == '.')
			*--end = '\0';
		if (fl_fault_parse_decimal(text, &back) && back / per == value)
			break;
	}
	out_add(o, "%s", text);
}

static void out_rate(struct text_out *o, const struct fl_fault_throttle *t)
{
	double bits = (double)t->bytes_per_s * 8.0;
	const struct fl_fault_unit *unit = &fl_fault_rate_units[0];

	if (t->kind == FL_FAULT_RATE_FRACTION) {
		out_decimal(o, t->fraction, 100.0);
		out_add(o, "%%");
		return;
	}
	for (size_t i = 1; i < FL_FAULT_N_BIT_RATE_UNITS; i++) {
		if (bits >= fl_fault_rate_units[i].scale * 8.0)
			unit = &fl_fault_rate_units[i];
	}
	out_add(o, "%.15g%s", bits / (unit->scale * 8.0), unit->name);
}

static void out_where(struct text_out *o, bool *first, const struct fl_fault_where *w)
{
	if (w->node[0]) {
		out_key(o, first, "node");
		out_add(o, "%s", w->node);
	}
	if (w->peer[0]) {
		out_key(o, first, "peer");
		out_add(o, "%s", w->peer);
	}
	if (w->dev[0]) {
		out_key(o, first, "dev");
		out_add(o, "%s", w->dev);
	}
	if (w->rank >= 0) {
		out_key(o, first, "rank");
		out_add(o, "%d", w->rank);
	}
}

static void out_throttle(struct text_out *o, bool *first, const struct fl_fault_throttle *t)
{
	static const char *const dirs[] = {
		[FL_FAULT_TX] = "tx", [FL_FAULT_RX] = "rx", [FL_FAULT_BOTH] = "both"
	};

	out_key(o, first, "rate");
	out_rate(o, t);
	out_key(o, first, "dir");
	out_add(o, "%s", dirs[t->dir & FL_FAULT_BOTH] ? dirs[t->dir & FL_FAULT_BOTH] : "?");
}

static void out_params(struct text_out *o, bool *first, const struct fl_fault_rule *rule)
{
	switch (rule->action) {
	case FL_FAULT_THROTTLE:
		out_throttle(o, first, &rule->throttle);
		break;
	case FL_FAULT_SLOW:
		out_key(o, first, rule->slow.delay_ns ? "delay" : "factor");
		if (rule->slow.delay_ns)
			out_duration(o, rule->slow.delay_ns);
		else
			out_decimal(o, rule->slow.factor, 1.0);
		break;
	case FL_FAULT_STALL:
		out_key(o, first, "for");
		out_duration(o, rule->stall.for_ns);
		out_key(o, first, "every");
		out_duration(o, rule->stall.every_ns);
		break;
	case FL_FAULT_FAIL:
		out_key(o, first, rule->fail.after_bytes ? "after_bytes" : "after");
		if (rule->fail.after_bytes)
			out_bytes(o, rule->fail.after_bytes);
		else
			out_duration(o, rule->fail.after_ns);
		break;
	case FL_FAULT_NOGDR:
		break;
	}
}

const char *fl_fault_describe(const struct fl_fault_rule *rule, char *buf, size_t len)
{
	struct text_out o = { buf, len, 0 };
	bool first = true;

	if (!len)
		return buf;
	buf[0] = '\0';
	out_add(&o, "%s", fl_fault_action_name(rule->action));
	out_where(&o, &first, &rule->where);
	out_params(&o, &first, rule);
	return buf;
}
