/*
 * A hop's parse without a tree (tools/report/report_hop_json.h) held to
 * jansson, which read the hops before: json_loadb with the same flags
 * (JSON_DECODE_ANY | JSON_DISABLE_EOF_CHECK | JSON_REJECT_DUPLICATES) must
 * accept exactly the same texts, stop at the same byte, and give the same
 * values (strings byte for byte, integers, reals bit for bit, members by key).
 * Cases written out for each rule of the grammar, then a few thousand hops
 * mutated byte by byte from a fixed seed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "tools/report/report_hop_json.h"

#define JANSSON_FLAGS (JSON_DECODE_ANY | JSON_DISABLE_EOF_CHECK | JSON_REJECT_DUPLICATES)

static bool same_value(const struct report_json *j, const struct report_json_node *n, json_t *v,
		       char *why, size_t len);

/* report_json_get finds member m by its key (n's index, or its members in order). */
static bool found_by_key(const struct report_json *j, const struct report_json_node *n,
			 const struct report_json_node *m, const char *key)
{
	char *copy = strndup(key, m->key_len);
	bool found = copy && report_json_get(j, n, copy) == m;

	free(copy);
	return found;
}

static bool same_members(const struct report_json *j, const struct report_json_node *n,
			 json_t *v, char *why, size_t len)
{
	if (n->count != json_object_size(v)) {
		snprintf(why, len, "%zu members, jansson %zu", n->count, json_object_size(v));
		return false;
	}
	for (const struct report_json_node *m = report_json_first(j, n); m;
	     m = report_json_next(j, n, m)) {
		const char *key = m->key_decoded ? j->decoded + m->key_at : j->text + m->key_at;
		json_t *e = json_object_getn(v, key, m->key_len);

		if (!e) {
			snprintf(why, len, "key \"%.*s\" not in jansson's object", (int)m->key_len, key);
			return false;
		}
		if (!found_by_key(j, n, m, key)) {
			snprintf(why, len, "report_json_get misses \"%.*s\"", (int)m->key_len, key);
			return false;
		}
		if (!same_value(j, m, e, why, len))
			return false;
	}
	return true;
}

static bool same_elements(const struct report_json *j, const struct report_json_node *n,
			  json_t *v, char *why, size_t len)
{
	size_t i = 0;

	if (n->count != json_array_size(v)) {
		snprintf(why, len, "%zu elements, jansson %zu", n->count, json_array_size(v));
		return false;
	}
	for (const struct report_json_node *e = report_json_first(j, n); e;
	     e = report_json_next(j, n, e)) {
		if (!same_value(j, e, json_array_get(v, i++), why, len))
			return false;
	}
	return i == n->count;
}

static bool same_value(const struct report_json *j, const struct report_json_node *n, json_t *v,
		       char *why, size_t len)
{
	static const json_type types[] = { JSON_NULL,	 JSON_FALSE,  JSON_TRUE,  JSON_INTEGER,
					   JSON_REAL,	 JSON_STRING, JSON_ARRAY, JSON_OBJECT };

	if (types[n->type] != json_typeof(v)) {
		snprintf(why, len, "type %d, jansson %d", n->type, json_typeof(v));
		return false;
	}
	switch (n->type) {
	case REPORT_JSON_INTEGER:
		snprintf(why, len, "%lld, jansson %lld", n->u.i, json_integer_value(v));
		return n->u.i == json_integer_value(v);
	case REPORT_JSON_REAL:
		snprintf(why, len, "%.17g, jansson %.17g", n->u.d, json_real_value(v));
		return !memcmp(&n->u.d, &(double){ json_real_value(v) }, sizeof(double));
	case REPORT_JSON_STRING:
		snprintf(why, len, "string \"%.*s\", jansson \"%s\"", (int)n->u.s.len,
			 report_json_str(j, n), json_string_value(v));
		return n->u.s.len == json_string_length(v) &&
		       !memcmp(report_json_str(j, n), json_string_value(v), n->u.s.len);
	case REPORT_JSON_ARRAY: return same_elements(j, n, v, why, len);
	case REPORT_JSON_OBJECT: return same_members(j, n, v, why, len);
	default: return true;
	}
}

/* Both parse text[0..len) alike; returns whether they accepted it. */
static bool agree(struct report_json *j, const char *text, size_t len)
{
	json_error_t jerr;
	json_t *v = json_loadb(text, len, JANSSON_FLAGS, &jerr);
	size_t next = 0;
	int rc = report_json_parse(j, text, 0, len, &next);
	char why[256] = "";

	if ((rc == 0) != (v != NULL)) {
		print_error("%s, jansson %s: \"%.*s\" (%s / %s)\n", rc ? "refused" : "accepted",
			    v ? "accepted" : "refused", (int)(len > 200 ? 200 : len), text,
			    j->error, jerr.text);
		fail();
	}
	if (v) {
		if (next != (size_t)jerr.position) {
			print_error("ends at %zu, jansson at %d: \"%.*s\"\n", next, jerr.position,
				    (int)len, text);
			fail();
		}
		if (!same_value(j, report_json_root(j), v, why, sizeof(why))) {
			print_error("differs from jansson: %s in \"%.*s\"\n", why, (int)len, text);
			fail();
		}
		json_decref(v);
	} else {
		assert_true(j->error[0]);
		assert_true(j->error_at <= len);
	}
	return rc == 0;
}

static bool agree_str(struct report_json *j, const char *text)
{
	return agree(j, text, strlen(text));
}

static const char *const accepted[] = {
	"{}", " \t\r\n{ } ", "[]", "[ ]", "{\"a\":1}", "{\"a\" : [1, 2.5, \"x\", true, false, null]}",
	"{\"a\":{\"b\":{\"c\":[[]]}}}", "0", "-0", "-0.0", "1e5", "1E+5", "1e-5", "0.5e0",
	"9223372036854775807", "-9223372036854775808", "1e-400", "4.9e-324",
	"1.7976931348623157e308", "0.1", "0.30000000000000004", "123456789012345678901234567890.5",
	"1.0000000000000002", "123456.789e-3", "0.000000000000000000001", "1e22", "1e23",
	"\"\"", "\"\\\"\\\\\\/\\b\\f\\n\\r\\t\"", "\"\\u0041\\u00e9\\u4e2d\"", "\"\\uD83D\\uDE00\"",
	"\"\xc3\xa9\xe4\xb8\xad\xf0\x9f\x98\x80\"", "\"\xef\xbf\xbf\xf4\x8f\xbf\xbf\"",
	"{\"a\":1,\"A\":2}", "{\"a\":1,\"b\":{\"a\":2}}", "{\"\\u0061b\":1,\"ab2\":2}",
	"{\"k\":1} trailing text", "true", "false", "null", "[1]x", "0x10", "{\"\xc3\xa9\":1}",
};

static const char *const refused[] = {
	"", " ", "{", "}", "[", "{\"a\"}", "{\"a\":}", "{\"a\" 1}", "{a:1}", "{\"a\":1,}", "[1,]",
	"[,1]", "{,}", "{\"a\":1 \"b\":2}", "[1 2]", "01", "-", "-a", "1.", ".5", "1e", "1e+",
	"+1", "[0x10]", "123456789012345678901234567890", "9223372036854775808", "-9223372036854775809", "1e400", "-1e400", "tru",
	"truex", "True", "nul", "NaN", "Infinity", "\"abc", "\"\\x\"", "\"\\u12\"", "\"\\u12G4\"",
	"\"\\uD800\"", "\"\\uDC00\"", "\"\\uD800\\u0041\"", "\"\\uD800x\"", "\"\\u0000\"",
	"\"a\tb\"", "\"a\nb\"", "\"\x01\"", "\"\x80\"", "\"\xc0\x80\"", "\"\xc1\xbf\"",
	"\"\xe0\x80\x80\"", "\"\xed\xa0\x80\"", "\"\xf4\x90\x80\x80\"", "\"\xf5\x80\x80\x80\"",
	"\"\xc3\"", "\"\xe4\xb8\"", "\xc3\xa9", "{\"a\":1,\"a\":2}", "{\"a\":1,\"\\u0061\":2}",
	"{\"x\":{\"b\":1,\"b\":2}}", "[{\"a\":1,\"a\":1}]", "{\"\\u0000\":1}", "{\"a\":1]", "[1}",
	"]", ":", ",",
};

static void test_the_grammar_as_jansson_reads_it(void **state)
{
	struct report_json j;
	size_t next;
	json_t *v;

	(void)state;
	memset(&j, 0, sizeof(j));
	for (size_t i = 0; i < sizeof(accepted) / sizeof(accepted[0]); i++)
		assert_true(agree_str(&j, accepted[i]));
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++)
		assert_false(agree_str(&j, refused[i]));
	assert_false(agree(&j, "\"a\0b\"", 5)); /* a NUL byte in the text */
	assert_false(agree(&j, "{\"a\0\":1}", 8));
	/*
	 * jansson's one slip, the one difference: a NUL byte right after a number or a literal
	 * is skipped (its look-ahead buffer takes the NUL for empty). A report with a NUL in it is
	 * damaged: refused here.
	 */
	v = json_loadb("[1\0]", 4, JANSSON_FLAGS, NULL);
	assert_non_null(v);
	json_decref(v);
	assert_int_equal(report_json_parse(&j, "[1\0]", 0, 4, &next), -1);
	report_json_free(&j);
}

/* Many members, so that the repeat is found through the table, not pairwise. */
static void test_repeats_in_large_objects(void **state)
{
	struct report_json j;
	char text[4096];
	size_t n = 0;

	(void)state;
	memset(&j, 0, sizeof(j));
	n += (size_t)snprintf(text + n, sizeof(text) - n, "{");
	for (int k = 0; k < 100; k++)
		n += (size_t)snprintf(text + n, sizeof(text) - n, "%s\"key%d\":%d", k ? "," : "", k, k);
	snprintf(text + n, sizeof(text) - n, "}");
	assert_true(agree_str(&j, text));
	assert_int_equal(report_json_get(&j, report_json_root(&j), "key57")->u.i, 57);
	assert_null(report_json_get(&j, report_json_root(&j), "key100"));
	snprintf(text + n, sizeof(text) - n, ",\"key0\":0}");
	assert_false(agree_str(&j, text));
	snprintf(text, sizeof(text), "{\"in\":{\"a\":1,\"b\":2,\"c\":3,\"d\":4,\"e\":5,\"f\":6,"
		 "\"g\":7,\"h\":8,\"i\":9,\"a\":10}}");
	assert_false(agree_str(&j, text));
	report_json_free(&j);
}

/* jansson's limit: 2048 values deep, a scalar counting as one. */
static void test_depth(void **state)
{
	struct report_json j;
	char *text = malloc(2 * 2049 + 2);

	(void)state;
	memset(&j, 0, sizeof(j));
	assert_non_null(text);
	for (int depth = 2047; depth <= 2049; depth++) {
		memset(text, '[', (size_t)depth);
		text[depth] = '1';
		memset(text + depth + 1, ']', (size_t)depth);
		agree(&j, text, 2 * (size_t)depth + 1);
		memset(text, '[', (size_t)depth);
		memset(text + depth, ']', (size_t)depth);
		agree(&j, text, 2 * (size_t)depth);
	}
	free(text);
	report_json_free(&j);
}

/* A hop as the plugin writes it, with every kind of value a hop has. */
static const char hop[] =
	"{\"src_node\":\"node00001\",\"src_dev\":\"mlx5_0\",\"dst_node\":\"n\\u00e9\","
	"\"dst_dev\":\"mlx5_0\",\"src_rank\":8,\"dst_rank\":-1,\"view\":\"send\","
	"\"transport\":\"ib\",\"line_rate_gbs\":50.0,\"connections\":4,\"bytes\":8589934592,"
	"\"messages\":16384,\"wire_seconds\":0.195225786,\"wire_gbs\":44.000000,"
	"\"wire_time_us\":{\"p50\":11.9,\"p99\":14.3,\"max\":31.0},"
	"\"size_histogram\":[[524288,16384],[1024,3]],\"memory\":[\"cuda\"],\"gdr\":true,"
	"\"link_layer\":null,\"comm_hash\":\"0123456789abcdef\",\"peer_wait_seconds\":1e-3}";

/* One byte changed, dropped or added at random (xorshift, fixed seed). */
static size_t mutate(char *out, size_t cap, uint64_t *seed)
{
	static const char bytes[] = "{}[]:,\"\\0123456789-+.eEtrufalsn u\x80\xc3\xa9\xed\xf0";
	size_t len = strlen(hop);
	uint64_t x = *seed;
	size_t at, what;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	*seed = x;
	at = (size_t)(x % len);
	what = (size_t)((x >> 20) % 3);
	memcpy(out, hop, len);
	if (what == 0) {
		out[at] = bytes[(x >> 32) % (sizeof(bytes) - 1)];
	} else if (what == 1) {
		memmove(out + at, out + at + 1, len - at - 1);
		len--;
	} else if (len + 1 < cap) {
		memmove(out + at + 1, out + at, len - at);
		out[at] = bytes[(x >> 32) % (sizeof(bytes) - 1)];
		len++;
	}
	return len;
}

static void test_mutated_hops(void **state)
{
	struct report_json j;
	char text[sizeof(hop) + 8];
	uint64_t seed = 0x9e3779b97f4a7c15ULL;
	size_t ok = 0, runs = 20000;

	(void)state;
	memset(&j, 0, sizeof(j));
	assert_true(agree_str(&j, hop));
	for (size_t i = 0; i < runs; i++) {
		size_t len = mutate(text, sizeof(text), &seed);

		ok += agree(&j, text, len);
	}
	/* both kinds were tried: a mutation that breaks nothing and one that does */
	assert_true(ok > runs / 10 && ok < runs - runs / 10);
	report_json_free(&j);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_the_grammar_as_jansson_reads_it),
		cmocka_unit_test(test_repeats_in_large_objects),
		cmocka_unit_test(test_depth),
		cmocka_unit_test(test_mutated_hops),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
