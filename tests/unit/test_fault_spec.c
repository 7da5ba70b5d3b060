/* FABRICLAB_FAULT grammar: every action and selector, every error, matching, describing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "plugin/base/error.h"
#include "plugin/fault/fault_spec.h"
#include "plugin/base/fl_types.h"

static struct fl_fault_spec spec;

static const struct fl_fault_rule *parse_one(const char *text)
{
	if (fl_fault_parse(text, &spec) != FL_OK)
		fail_msg("%s: %s", text, fl_error_text());
	assert_int_equal(spec.nrules, 1);
	return &spec.rules[0];
}

/*
 * Asserts the value is refused with a message that names the rule and holds
 * every fragment, and that the message was not cut short by the error buffer.
 */
static void expect_error(const char *text, int rule, const char *frag1, const char *frag2)
{
	char prefix[64];
	const char *msg;

	spec.nrules = 99;
	fl_error_clear();
	assert_int_equal(fl_fault_parse(text, &spec), FL_ERR_USAGE);
	assert_int_equal(spec.nrules, 0);
	msg = fl_error_text();
	snprintf(prefix, sizeof(prefix), "FABRICLAB_FAULT rule %d (", rule);
	if (strncmp(msg, prefix, strlen(prefix)) || !strstr(msg, frag1) ||
	    (frag2 && !strstr(msg, frag2)))
		fail_msg("for \"%.60s\" got \"%s\"", text, msg);
	assert_true(strlen(msg) < FL_ERROR_LEN - 1);
}

static void test_issue_example(void **state)
{
	const struct fl_fault_rule *r = spec.rules;

	(void)state;
	assert_int_equal(fl_fault_parse("throttle:node=node3,dev=eth0,rate=50%,dir=both;"
					"slow:node=node5,factor=2;nogdr:node=node1",
					&spec),
			 FL_OK);
	assert_int_equal(spec.nrules, 3);
	assert_int_equal(r[0].action, FL_FAULT_THROTTLE);
	assert_string_equal(r[0].where.node, "node3");
	assert_string_equal(r[0].where.dev, "eth0");
	assert_string_equal(r[0].where.peer, "");
	assert_int_equal(r[0].where.rank, -1);
	assert_int_equal(r[0].throttle.kind, FL_FAULT_RATE_FRACTION);
	assert_true(r[0].throttle.fraction == 0.5);
	assert_int_equal(r[0].throttle.dir, FL_FAULT_BOTH);
	assert_int_equal(r[1].action, FL_FAULT_SLOW);
	assert_string_equal(r[1].where.node, "node5");
	assert_true(r[1].slow.factor == 2.0);
	assert_int_equal(r[1].slow.delay_ns, 0);
	assert_int_equal(r[2].action, FL_FAULT_NOGDR);
	assert_string_equal(r[2].where.node, "node1");
}

static void expect_rate_bytes(const char *text, uint64_t bytes_per_s)
{
	const struct fl_fault_rule *r = parse_one(text);

	assert_int_equal(r->throttle.kind, FL_FAULT_RATE_BYTES);
	assert_int_equal(r->throttle.bytes_per_s, bytes_per_s);
}

static void test_throttle_rates_and_dir(void **state)
{
	const struct fl_fault_rule *r;

	(void)state;
	r = parse_one("throttle:rate=12.5%");
	assert_true(r->throttle.fraction == 0.125);
	assert_int_equal(r->throttle.dir, FL_FAULT_BOTH);
	r = parse_one("throttle:rate=100%,dir=tx");
	assert_true(r->throttle.fraction == 1.0);
	assert_int_equal(r->throttle.dir, FL_FAULT_TX);
	r = parse_one("throttle:dir=rx,rate=1%");
	assert_int_equal(r->throttle.dir, FL_FAULT_RX);
	expect_rate_bytes("throttle:rate=10gbit", 1250000000ULL);
	expect_rate_bytes("throttle:rate=10GBit", 1250000000ULL);
	expect_rate_bytes("throttle:rate=800mbit", 100000000ULL);
	expect_rate_bytes("throttle:rate=2.5gbyte", 2500000000ULL);
	expect_rate_bytes("throttle:rate=1kbit", 125);
	expect_rate_bytes("throttle:rate=3kbyte", 3000);
	expect_rate_bytes("throttle:rate=7mbyte", 7000000);
	expect_rate_bytes("throttle:rate=1.6tbit", 200000000000ULL);
	expect_rate_bytes("throttle:rate=100tbit", 12500000000000ULL);
	expect_rate_bytes("throttle:rate=2tbyte", 2000000000000ULL);
}

static void test_slow_stall_fail(void **state)
{
	const struct fl_fault_rule *r;

	(void)state;
	r = parse_one("slow:factor=1.5");
	assert_true(r->slow.factor == 1.5);
	r = parse_one("slow:delay=200us");
	assert_int_equal(r->slow.delay_ns, 200000);
	assert_true(r->slow.factor == 0.0);
	r = parse_one("slow:delay=2ms");
	assert_int_equal(r->slow.delay_ns, 2000000);
	r = parse_one("slow:delay=1.5ms");
	assert_int_equal(r->slow.delay_ns, 1500000);
	r = parse_one("slow:delay=750ns");
	assert_int_equal(r->slow.delay_ns, 750);
	r = parse_one("stall:for=5ms,every=100ms");
	assert_int_equal(r->stall.for_ns, 5000000);
	assert_int_equal(r->stall.every_ns, 100000000);
	r = parse_one("stall:every=1m,for=2s");
	assert_int_equal(r->stall.every_ns, 60000000000ULL);
	assert_int_equal(r->stall.for_ns, 2000000000ULL);
	r = parse_one("fail:after=30s");
	assert_int_equal(r->fail.after_ns, 30000000000ULL);
	assert_int_equal(r->fail.after_bytes, 0);
	r = parse_one("fail:after=2h");
	assert_int_equal(r->fail.after_ns, 7200000000000ULL);
	r = parse_one("fail:after_bytes=1G");
	assert_int_equal(r->fail.after_bytes, 1ULL << 30);
	assert_int_equal(r->fail.after_ns, 0);
	r = parse_one("fail:after_bytes=512KiB");
	assert_int_equal(r->fail.after_bytes, 512 * 1024);
	r = parse_one("nogdr");
	assert_int_equal(r->action, FL_FAULT_NOGDR);
	assert_string_equal(r->where.node, "");
	assert_int_equal(r->where.rank, -1);
}

static void test_selectors(void **state)
{
	const struct fl_fault_rule *r;
	char text[128];

	(void)state;
	r = parse_one("fail:node=gpu-a_1.dc,peer=Node4,dev=mlx5_0,rank=17,after=1s");
	assert_string_equal(r->where.node, "gpu-a_1.dc");
	assert_string_equal(r->where.peer, "Node4");
	assert_string_equal(r->where.dev, "mlx5_0");
	assert_int_equal(r->where.rank, 17);
	assert_int_equal(parse_one("nogdr:rank=0")->where.rank, 0);
	assert_int_equal(parse_one("nogdr:rank=2147483647")->where.rank, 2147483647);
	/* The longest names that fit an endpoint and a device name. */
	snprintf(text, sizeof(text), "nogdr:node=%047d,dev=%015d", 7, 9);
	r = parse_one(text);
	assert_int_equal(strlen(r->where.node), FL_NODE_NAME_LEN - 1);
	assert_int_equal(strlen(r->where.dev), FL_DEV_NAME_LEN - 1);
}

static void test_blank_whitespace_and_trailing_semicolon(void **state)
{
	const struct fl_fault_rule *r = spec.rules;

	(void)state;
	assert_int_equal(fl_fault_parse(NULL, &spec), FL_OK);
	assert_int_equal(spec.nrules, 0);
	assert_int_equal(fl_fault_parse("", &spec), FL_OK);
	assert_int_equal(spec.nrules, 0);
	assert_int_equal(fl_fault_parse(" \t\n", &spec), FL_OK);
	assert_int_equal(spec.nrules, 0);
	assert_int_equal(fl_fault_parse(" Throttle : rate = 50% , DIR=tx ;\n nogdr ; ", &spec),
			 FL_OK);
	assert_int_equal(spec.nrules, 2);
	assert_true(r[0].throttle.fraction == 0.5);
	assert_int_equal(r[0].throttle.dir, FL_FAULT_TX);
	assert_int_equal(r[1].action, FL_FAULT_NOGDR);
}

static void test_reads_the_environment(void **state)
{
	(void)state;
	setenv("FABRICLAB_FAULT", "nogdr:node=n1;slow:factor=3", 1);
	assert_int_equal(fl_fault_from_env(&spec), FL_OK);
	assert_int_equal(spec.nrules, 2);
	assert_true(spec.rules[1].slow.factor == 3.0);
	setenv("FABRICLAB_FAULT", "nogdr:node=n1;slow:factor=0.5", 1);
	assert_int_equal(fl_fault_from_env(&spec), FL_ERR_USAGE);
	assert_int_equal(spec.nrules, 0);
	assert_non_null(strstr(fl_error_text(), "FABRICLAB_FAULT rule 2"));
	unsetenv("FABRICLAB_FAULT");
	assert_int_equal(fl_fault_from_env(&spec), FL_OK);
	assert_int_equal(spec.nrules, 0);
}

static void test_error_unknown_action_and_key(void **state)
{
	(void)state;
	expect_error("nogdr;slowly:factor=2", 2, "unknown action \"slowly\"",
		     "expected throttle, slow, nogdr, stall or fail");
	expect_error(":node=a", 1, "unknown action \"\"", NULL);
	expect_error("throttle:rate=50%,speed=3", 1, "unknown key \"speed\" for throttle",
		     "node, peer, dev, rank, rate, dir");
	/* A key of another action is unknown to this one. */
	expect_error("slow:rate=50%", 1, "unknown key \"rate\" for slow",
		     "node, peer, dev, rank, factor, delay");
	expect_error("nogdr:node", 1, "\"node\": expected key=value", NULL);
}

static void test_error_rates_and_units(void **state)
{
	(void)state;
	expect_error("throttle:rate=fast", 1, "rate \"fast\": expected a percentage", NULL);
	expect_error("throttle:rate=0%", 1, "rate \"0%\"", "above 0 and at most 100");
	expect_error("throttle:rate=100.5%", 1, "rate \"100.5%\"", "at most 100");
	expect_error("throttle:rate=-5%", 1, "rate \"-5%\"", NULL);
	expect_error("throttle:rate=.5%", 1, "rate \".5%\"", NULL);
	expect_error("throttle:rate=5.%", 1, "rate \"5.%\"", NULL);
	expect_error("throttle:rate=0.5kbit", 1, "from 1kbit to 100tbit", NULL);
	expect_error("throttle:rate=101tbit", 1, "from 1kbit to 100tbit", NULL);
	/* Units that do not say bits or bytes are refused, not guessed. */
	expect_error("throttle:rate=10gbps", 1, "rate \"10gbps\": expected a unit %, kbit", NULL);
	expect_error("throttle:rate=10gb", 1, "rate \"10gb\": expected a unit", NULL);
	expect_error("throttle:rate=100", 1, "rate \"100\": expected a unit", NULL);
	expect_error("throttle:rate=", 1, "rate \"\": expected", NULL);
	expect_error("throttle:rate=50%,dir=up", 1, "dir \"up\": expected tx, rx or both", NULL);
}

static void test_error_numbers_and_durations(void **state)
{
	(void)state;
	expect_error("nogdr;slow:factor=x", 2, "(\"slow:factor=x\"): factor \"x\"",
		     "expected a number > 1");
	expect_error("slow:factor=1", 1, "factor \"1\"", "e.g. factor=2");
	expect_error("slow:factor=1001", 1, "factor \"1001\"", NULL);
	expect_error("slow:factor=2x", 1, "factor \"2x\"", NULL);
	expect_error("slow:delay=200", 1, "delay \"200\"", "unit ns, us, ms or s");
	expect_error("slow:delay=200xs", 1, "delay \"200xs\"", NULL);
	expect_error("slow:delay=0ms", 1, "delay \"0ms\"", NULL);
	expect_error("slow:delay=61s", 1, "delay \"61s\"", "up to 60s");
	expect_error("stall:for=2h,every=3h", 1, "for \"2h\"", "up to 1h");
	expect_error("fail:after=169h", 1, "after \"169h\"", "up to 168h");
	expect_error("fail:after_bytes=0", 1, "after_bytes \"0\"", "above 0");
	expect_error("fail:after_bytes=1T", 1, "after_bytes \"1T\"", "suffix K, M or G");
	expect_error("nogdr:rank=-1", 1, "rank \"-1\"", "from 0 to 2147483647");
	expect_error("nogdr:rank=3a", 1, "rank \"3a\"", NULL);
	expect_error("nogdr:rank=2147483648", 1, "rank \"2147483648\"", NULL);
	expect_error("nogdr:rank=99999999999999999999999", 1, "rank \"9999", NULL);
}

static void test_error_names(void **state)
{
	(void)state;
	expect_error("nogdr:node=a/b", 1, "node \"a/b\"", "letters, digits");
	expect_error("nogdr:node=a:b", 1, "node \"a:b\"", NULL);
	expect_error("nogdr:peer=a b", 1, "peer \"a b\"", NULL);
	expect_error("nogdr:dev=a-device-too-long", 1, "dev \"a-device-too-long\"",
		     "at most 15");
	expect_error("nogdr:node=", 1, "node \"\"", NULL);
	/* Control characters are not echoed into a log line. */
	expect_error("nogdr:node=a\x01" "b", 1, "node \"a?b\"", NULL);
}

static void test_error_duplicates_and_structure(void **state)
{
	(void)state;
	expect_error("throttle:rate=50%,rate=60%", 1, "rate is given twice", NULL);
	expect_error("nogdr:node=a,node=b", 1, "node is given twice", NULL);
	expect_error("throttle:dir=tx,rate=5%,dir=tx", 1, "dir is given twice", NULL);
	expect_error("nogdr;;slow:factor=2", 2, "empty rule", NULL);
	expect_error(";nogdr", 1, "empty rule", NULL);
	expect_error(";", 1, "empty rule", NULL);
	expect_error("nogdr; ;", 2, "empty rule", NULL);
	expect_error("nogdr:", 1, "empty key=value pair", NULL);
	expect_error("throttle:rate=5%,,dir=tx", 1, "empty key=value pair", NULL);
	expect_error("throttle:rate=5%,", 1, "empty key=value pair", NULL);
}

static void test_error_missing_required(void **state)
{
	(void)state;
	expect_error("throttle:node=a,dir=tx", 1, "throttle needs rate=", NULL);
	expect_error("throttle", 1, "throttle needs rate=", NULL);
	expect_error("slow:node=a", 1, "slow needs factor= or delay=", NULL);
	expect_error("slow:factor=2,delay=1ms", 1, "slow takes factor= or delay=, not both", NULL);
	expect_error("stall:for=5ms", 1, "stall needs for= and every=", NULL);
	expect_error("stall:every=5ms", 1, "stall needs for= and every=", NULL);
	expect_error("stall:for=5ms,every=5ms", 1, "for= must be shorter than every=", NULL);
	expect_error("fail", 1, "fail needs after= or after_bytes=", NULL);
	expect_error("fail:after=1s,after_bytes=1M", 1, "not both", NULL);
}

static char *repeat(char ch, size_t n, const char *before, const char *after)
{
	size_t lb = strlen(before), la = strlen(after);
	char *s = malloc(lb + n + la + 1);

	assert_non_null(s);
	memcpy(s, before, lb);
	memset(s + lb, ch, n);
	memcpy(s + lb + n, after, la + 1);
	return s;
}

static void test_error_huge_tokens(void **state)
{
	char *text;

	(void)state;
	text = repeat('a', 10000, "nogdr;nogdr:node=", "");
	expect_error(text, 2, "node: a value of 10000 characters, at most 47", NULL);
	free(text);
	text = repeat('9', 10000, "throttle:rate=", "gbit");
	expect_error(text, 1, "rate: a value of 10004 characters", NULL);
	free(text);
	text = repeat('k', 10000, "throttle:", "=1");
	expect_error(text, 1, "unknown key \"kkkkkkkkkkkkkkkkkkkkkkkk...\"", NULL);
	free(text);
	text = repeat('x', 10000, "", ":node=a");
	expect_error(text, 1, "(\"xxxxxxxx", "unknown action");
	free(text);
	/* One character over the cap is refused the same way. */
	text = repeat('n', FL_FAULT_VALUE_MAX + 1, "nogdr:node=", "");
	expect_error(text, 1, "node: a value of 48 characters", NULL);
	free(text);
}

/* A whole value of 10 000 characters: whitespace is fine, 10 000 of rules is not. */
static void test_ten_thousand_character_values(void **state)
{
	char *text = repeat(' ', 10000, "", "nogdr:node=n1");

	(void)state;
	setenv("FABRICLAB_FAULT", text, 1);
	assert_int_equal(fl_fault_from_env(&spec), FL_OK);
	assert_int_equal(spec.nrules, 1);
	free(text);
	text = malloc(10001);
	assert_non_null(text);
	for (int i = 0; i < 10000; i += 5)
		memcpy(text + i, "nogdr", 5);
	text[10000] = '\0';
	/* "nogdrnogdr..." is one unknown action, quoted short. */
	expect_error(text, 1, "unknown action \"nogdrnogdrnogdr", "...");
	/* 1666 rules of "nogdr;" and 4 blanks: refused at rule 33. */
	for (int i = 0; i + 6 <= 10000; i += 6)
		memcpy(text + i, "nogdr;", 6);
	memcpy(text + 9996, "    ", 4);
	expect_error(text, FL_FAULT_MAX_RULES + 1, "at most 32 rules", NULL);
	setenv("FABRICLAB_FAULT", text, 1);
	assert_int_equal(fl_fault_from_env(&spec), FL_ERR_USAGE);
	unsetenv("FABRICLAB_FAULT");
	free(text);
}

static void test_rule_count_limit(void **state)
{
	char text[FL_FAULT_MAX_RULES * 8 + 16] = "";

	(void)state;
	for (int i = 0; i < FL_FAULT_MAX_RULES; i++)
		strcat(text, "nogdr;");
	assert_int_equal(fl_fault_parse(text, &spec), FL_OK);
	assert_int_equal(spec.nrules, FL_FAULT_MAX_RULES);
	strcat(text, "slow:factor=2");
	expect_error(text, FL_FAULT_MAX_RULES + 1, "at most 32 rules", NULL);
}

static bool matches(const struct fl_fault_rule *r, const char *node, const char *dev,
		    const char *peer, int rank)
{
	struct fl_fault_site site = { .node = node, .dev = dev, .peer = peer, .rank = rank };

	return fl_fault_rule_matches(r, &site);
}

static void test_match_without_selectors(void **state)
{
	const struct fl_fault_rule *r = parse_one("nogdr");

	(void)state;
	assert_true(matches(r, "node0", "eth0", "node1", 0));
	assert_true(matches(r, NULL, NULL, NULL, -1));
	assert_true(fl_fault_rule_targets_node(r, "anything"));
	assert_true(fl_fault_rule_targets_node(r, NULL));
}

static void test_match_each_selector(void **state)
{
	const struct fl_fault_rule *r;

	(void)state;
	r = parse_one("nogdr:node=node3");
	assert_true(matches(r, "node3", "eth0", "node1", 2));
	assert_true(matches(r, "NODE3", NULL, NULL, -1)); /* host names ignore case */
	assert_false(matches(r, "node30", "eth0", "node1", 2));
	assert_false(matches(r, NULL, "eth0", "node1", 2));
	assert_true(fl_fault_rule_targets_node(r, "node3"));
	assert_false(fl_fault_rule_targets_node(r, "node4"));

	r = parse_one("nogdr:peer=node4");
	assert_true(matches(r, "node3", "eth0", "node4", 2));
	assert_false(matches(r, "node4", "eth0", "node3", 2));
	assert_false(matches(r, "node3", "eth0", NULL, 2)); /* peer not known yet */
	assert_true(fl_fault_rule_targets_node(r, "node3"));

	r = parse_one("nogdr:dev=eth0");
	assert_true(matches(r, "node3", "eth0", "node4", 2));
	assert_false(matches(r, "node3", "ETH0", "node4", 2)); /* device names are exact */
	assert_false(matches(r, "node3", "eth1", "node4", 2));
	assert_false(matches(r, "node3", NULL, "node4", 2));

	r = parse_one("nogdr:rank=2");
	assert_true(matches(r, "node3", "eth0", "node4", 2));
	assert_false(matches(r, "node3", "eth0", "node4", 3));
	assert_false(matches(r, "node3", "eth0", "node4", -1));

	r = parse_one("nogdr:rank=0");
	assert_true(matches(r, NULL, NULL, NULL, 0));
	assert_false(matches(r, NULL, NULL, NULL, -1));
}

static void test_match_all_selectors_together(void **state)
{
	const struct fl_fault_rule *r = parse_one("throttle:node=a,peer=b,dev=ib0,rank=1,rate=5%");

	(void)state;
	assert_true(matches(r, "a", "ib0", "b", 1));
	assert_false(matches(r, "x", "ib0", "b", 1));
	assert_false(matches(r, "a", "ib1", "b", 1));
	assert_false(matches(r, "a", "ib0", "x", 1));
	assert_false(matches(r, "a", "ib0", "b", 0));
	assert_false(matches(r, "b", "ib0", "a", 1)); /* the direction of the hop matters */
}

static void expect_describe(const char *text, const char *canonical)
{
	char buf[FL_FAULT_DESCRIBE_LEN], again[FL_FAULT_DESCRIBE_LEN];

	fl_fault_describe(parse_one(text), buf, sizeof(buf));
	assert_string_equal(buf, canonical);
	/* The canonical form parses back to the same rule. */
	fl_fault_describe(parse_one(buf), again, sizeof(again));
	assert_string_equal(again, canonical);
}

static void test_describe_round_trips(void **state)
{
	(void)state;
	expect_describe("nogdr", "nogdr");
	expect_describe("NOGDR:rank=3,node=n1", "nogdr:node=n1,rank=3");
	expect_describe("throttle:dev=eth0,node=node3,rate=50%",
			"throttle:node=node3,dev=eth0,rate=50%,dir=both");
	expect_describe("throttle:rate=12.5%,dir=rx", "throttle:rate=12.5%,dir=rx");
	expect_describe("throttle:rate=2.5gbyte,dir=tx", "throttle:rate=20gbit,dir=tx");
	expect_describe("throttle:rate=800mbit", "throttle:rate=800mbit,dir=both");
	expect_describe("throttle:rate=1500kbit", "throttle:rate=1.5mbit,dir=both");
	expect_describe("throttle:rate=1kbyte", "throttle:rate=8kbit,dir=both");
	expect_describe("throttle:rate=100tbit", "throttle:rate=100tbit,dir=both");
	expect_describe("slow:peer=p,factor=2.5", "slow:peer=p,factor=2.5");
	expect_describe("slow:delay=1500us", "slow:delay=1500us");
	expect_describe("slow:delay=0.5s", "slow:delay=500ms");
	expect_describe("stall:for=5ms,every=120s", "stall:for=5ms,every=2m");
	expect_describe("fail:after=3600s", "fail:after=1h");
	expect_describe("fail:after=1001ns", "fail:after=1001ns");
	expect_describe("fail:after_bytes=2048M", "fail:after_bytes=2G");
	expect_describe("fail:after_bytes=1000", "fail:after_bytes=1000");
}

/* describe -> parse gives back the very rule, to the last bit of its numbers. */
static void expect_same_rule(const char *text)
{
	struct fl_fault_rule first;
	struct fl_fault_spec back;
	char buf[FL_FAULT_DESCRIBE_LEN];

	first = *parse_one(text);
	fl_fault_describe(&first, buf, sizeof(buf));
	if (fl_fault_parse(buf, &back) != FL_OK)
		fail_msg("%s described as %s, which does not parse: %s", text, buf, fl_error_text());
	assert_int_equal(back.nrules, 1);
	if (first.throttle.fraction != back.rules[0].throttle.fraction ||
	    first.slow.factor != back.rules[0].slow.factor ||
	    first.throttle.bytes_per_s != back.rules[0].throttle.bytes_per_s)
		fail_msg("%s described as %s, which parses to another rule", text, buf);
}

static void test_describe_parses_back_to_the_same_rule(void **state)
{
	static const char *const texts[] = {
		"throttle:rate=0.000001%", "throttle:rate=0.0000000001%", "throttle:rate=100%",
		"throttle:rate=99.99999999999999%", "throttle:rate=33.333333333333333333%",
		"throttle:rate=0.1%", "throttle:rate=0.00000000000000000000000000000007%",
		"throttle:rate=12.345678901234567890123%", "slow:factor=1.00000000000001",
		"throttle:rate=0.00000000000000000000000000000880088000000001%",
		"slow:factor=999.999999999", "slow:factor=1000", "slow:factor=1.1",
		"throttle:rate=1.000001kbit", "throttle:rate=99.9999999999999tbit",
	};
	char text[80];
	uint32_t x = 12345;

	(void)state;
	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++)
		expect_same_rule(texts[i]);
	for (int i = 0; i < 3000; i++) { /* decimals of every length */
		int len = snprintf(text, sizeof(text), "throttle:rate=%u.", (x >> 8) % 100);

		for (int d = 0; d <= i % 24; d++) {
			x = x * 1103515245u + 12345u;
			text[len++] = (char)('0' + (x >> 16) % 10);
		}
		text[len] = '\0';
		if (strspn(text + 14, "0.") < strlen(text + 14)) {
			strcat(text, "%");
			expect_same_rule(text);
		}
		memcpy(text, "slow:factor=1", 13);
		memmove(text + 13, text + 14 + ((x >> 4) % 3), strlen(text + 14) + 1);
		text[strcspn(text, "%")] = '\0';
		if (strchr(text, '.') && strspn(text + 14, "0.") < strlen(text + 14))
			expect_same_rule(text);
	}
}

static void test_describe_small_buffer(void **state)
{
	char buf[12];

	(void)state;
	memset(buf, 'z', sizeof(buf));
	fl_fault_describe(parse_one("throttle:node=node3,dev=eth0,rate=50%"), buf, 8);
	assert_string_equal(buf, "throttl");
	assert_int_equal(buf[8], 'z');
	assert_string_equal(fl_fault_action_name(FL_FAULT_STALL), "stall");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_issue_example),
		cmocka_unit_test(test_describe_parses_back_to_the_same_rule),
		cmocka_unit_test(test_throttle_rates_and_dir),
		cmocka_unit_test(test_slow_stall_fail),
		cmocka_unit_test(test_selectors),
		cmocka_unit_test(test_blank_whitespace_and_trailing_semicolon),
		cmocka_unit_test(test_reads_the_environment),
		cmocka_unit_test(test_error_unknown_action_and_key),
		cmocka_unit_test(test_error_rates_and_units),
		cmocka_unit_test(test_error_numbers_and_durations),
		cmocka_unit_test(test_error_names),
		cmocka_unit_test(test_error_duplicates_and_structure),
		cmocka_unit_test(test_error_missing_required),
		cmocka_unit_test(test_error_huge_tokens),
		cmocka_unit_test(test_rule_count_limit),
		cmocka_unit_test(test_ten_thousand_character_values),
		cmocka_unit_test(test_match_without_selectors),
		cmocka_unit_test(test_match_each_selector),
		cmocka_unit_test(test_match_all_selectors_together),
		cmocka_unit_test(test_describe_round_trips),
		cmocka_unit_test(test_describe_small_buffer),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
