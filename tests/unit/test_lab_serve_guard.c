/*
 * The web lab's guard (tools/lab/lab_serve_guard.c) without a server: which
 * Host, Origin, Content-Type and Sec-Fetch-Site values it lets through, for a
 * loopback listener and for one on 0.0.0.0.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "tools/lab/lab_web.h"

static const struct lab_guard loopback = { "127.0.0.1", 8080, false };
static const struct lab_guard anywhere = { "0.0.0.0", 8080, true };
static char why[256];

static int host(const struct lab_guard *g, const char *h)
{
	why[0] = '\0';
	return lab_guard_host(g, h, why, sizeof(why));
}

static void loopback_names_pass(void **state)
{
	(void)state;
	assert_int_equal(host(&loopback, "127.0.0.1:8080"), 0);
	assert_int_equal(host(&loopback, "localhost:8080"), 0);
	assert_int_equal(host(&loopback, "LOCALHOST:8080"), 0);
	assert_int_equal(host(&loopback, "127.0.0.2:8080"), 0);
	assert_int_equal(host(&loopback, "[::1]:8080"), 0);
}

static void rebinding_names_and_other_ports_fail(void **state)
{
	(void)state;
	assert_int_equal(host(&loopback, "evil.example:8080"), -1);
	assert_non_null(strstr(why, "DNS rebinding"));
	assert_int_equal(host(&loopback, "localhost.evil.example:8080"), -1);
	assert_int_equal(host(&loopback, "192.168.1.5:8080"), -1);
	assert_int_equal(host(&loopback, "127.0.0.1:8081"), -1);
	assert_non_null(strstr(why, "port"));
	assert_int_equal(host(&loopback, "127.0.0.1"), -1); /* port 80 */
	assert_int_equal(host(&loopback, "127.0.0.1:"), -1);
	assert_int_equal(host(&loopback, ":8080"), -1);
	assert_int_equal(host(&loopback, "[::1:8080"), -1);
	assert_int_equal(host(&loopback, ""), -1);
	assert_int_equal(host(&loopback, NULL), -1);
	assert_non_null(strstr(why, "missing"));
}

static void any_address_takes_ip_literals_only(void **state)
{
	(void)state;
	assert_int_equal(host(&anywhere, "192.168.1.5:8080"), 0);
	assert_int_equal(host(&anywhere, "localhost:8080"), 0);
	assert_int_equal(host(&anywhere, "gpu-box:8080"), -1);
	assert_int_equal(host(&anywhere, "192.168.1.5.nip.io:8080"), -1);
}

static void origin_must_be_the_host(void **state)
{
	(void)state;
	assert_int_equal(lab_guard_origin(NULL, "127.0.0.1:8080", why, sizeof(why)), 0);
	assert_int_equal(lab_guard_origin("http://127.0.0.1:8080", "127.0.0.1:8080", why,
					  sizeof(why)), 0);
	assert_int_equal(lab_guard_origin("http://localhost:8080", "127.0.0.1:8080", why,
					  sizeof(why)), -1);
	assert_int_equal(lab_guard_origin("http://evil.example", "127.0.0.1:8080", why,
					  sizeof(why)), -1);
	assert_int_equal(lab_guard_origin("null", "127.0.0.1:8080", why, sizeof(why)), -1);
	assert_int_equal(lab_guard_origin("https://127.0.0.1:8080", "127.0.0.1:8080", why,
					  sizeof(why)), -1);
	assert_int_equal(lab_guard_origin("http://127.0.0.1:8080", NULL, why, sizeof(why)), -1);
}

static void json_only(void **state)
{
	(void)state;
	assert_int_equal(lab_guard_json_type("application/json", why, sizeof(why)), 0);
	assert_int_equal(lab_guard_json_type("application/json; charset=utf-8", why,
					     sizeof(why)), 0);
	assert_int_equal(lab_guard_json_type("text/plain", why, sizeof(why)), -1);
	assert_non_null(strstr(why, "expected application/json"));
	assert_int_equal(lab_guard_json_type("application/jsonp", why, sizeof(why)), -1);
	assert_int_equal(lab_guard_json_type("application/x-www-form-urlencoded", why,
					     sizeof(why)), -1);
	assert_int_equal(lab_guard_json_type(NULL, why, sizeof(why)), -1);
}

static void fetch_site(void **state)
{
	(void)state;
	assert_int_equal(lab_guard_fetch_site(NULL, why, sizeof(why)), 0);
	assert_int_equal(lab_guard_fetch_site("same-origin", why, sizeof(why)), 0);
	assert_int_equal(lab_guard_fetch_site("none", why, sizeof(why)), 0);
	assert_int_equal(lab_guard_fetch_site("cross-site", why, sizeof(why)), -1);
	assert_int_equal(lab_guard_fetch_site("same-site", why, sizeof(why)), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(loopback_names_pass),
		cmocka_unit_test(rebinding_names_and_other_ports_fail),
		cmocka_unit_test(any_address_takes_ip_literals_only),
		cmocka_unit_test(origin_must_be_the_host),
		cmocka_unit_test(json_only),
		cmocka_unit_test(fetch_site),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
