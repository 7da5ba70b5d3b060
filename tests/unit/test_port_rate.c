/* Rates as the kernel writes them: IB `rate` files and ethtool link mode names. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "plugin/port/port_info.h"

static void expect_rate(const char *text, double gbps, int width, const char *speed)
{
	double got;
	int w;
	char s[16];

	assert_int_equal(fl_port_rate_parse(text, &got, &w, s, sizeof(s)), 0);
	assert_true(got > gbps - 1e-9 && got < gbps + 1e-9);
	assert_int_equal(w, width);
	assert_string_equal(s, speed);
}

static void test_kernel_rate_strings(void **state)
{
	(void)state;
	expect_rate("200 Gb/sec (4X HDR)\n", 200.0, 4, "HDR");
	expect_rate("100 Gb/sec (2X HDR)", 100.0, 2, "HDR");
	expect_rate("400 Gb/sec (4X NDR)", 400.0, 4, "NDR");
	expect_rate("2.5 Gb/sec (1X SDR)", 2.5, 1, "SDR");
	expect_rate("56 Gb/sec (4X FDR)", 56.0, 4, "FDR");
	expect_rate("40 Gb/sec (4X FDR10)", 40.0, 4, "FDR10");
	expect_rate("25 Gb/sec (1X EDR)", 25.0, 1, "EDR");
	expect_rate("800 Gb/sec (8X NDR)", 800.0, 8, "NDR");
	expect_rate("  12 Gb/sec (12X SDR)", 12.0, 12, "SDR");
}

static void test_rate_without_width(void **state)
{
	double gbps;
	int w = 7;
	char s[8] = "x";

	(void)state;
	assert_int_equal(fl_port_rate_parse("10 Gb/sec", &gbps, &w, s, sizeof(s)), 0);
	assert_true(gbps == 10.0);
	assert_int_equal(w, 0);
	assert_string_equal(s, "");
	/* the speed name is cut to the buffer, never overflows it */
	assert_int_equal(fl_port_rate_parse("50 Gb/sec (2X VERYLONGNAME)", &gbps, &w, s, 4), 0);
	assert_string_equal(s, "VER");
	assert_int_equal(fl_port_rate_parse("50 Gb/sec (2X HDR)", &gbps, NULL, NULL, 0), 0);
	assert_true(gbps == 50.0);
}

static void test_not_rates(void **state)
{
	double gbps = 1.0;

	(void)state;
	assert_int_equal(fl_port_rate_parse("", &gbps, NULL, NULL, 0), -1);
	assert_true(gbps == 0.0);
	assert_int_equal(fl_port_rate_parse("Gb/sec", &gbps, NULL, NULL, 0), -1);
	assert_int_equal(fl_port_rate_parse("200 Mb/sec", &gbps, NULL, NULL, 0), -1);
	assert_int_equal(fl_port_rate_parse("0 Gb/sec (4X HDR)", &gbps, NULL, NULL, 0), -1);
	assert_int_equal(fl_port_rate_parse("-5 Gb/sec", &gbps, NULL, NULL, 0), -1);
	assert_int_equal(fl_port_rate_parse("fast", &gbps, NULL, NULL, 0), -1);
}

static void test_link_mode_names(void **state)
{
	(void)state;
	assert_int_equal(fl_link_mode_mbps("100000baseCR4/Full"), 100000);
	assert_int_equal(fl_link_mode_mbps("400000baseDR4_2/Full"), 400000);
	assert_int_equal(fl_link_mode_mbps("10baseT/Half"), 10);
	assert_int_equal(fl_link_mode_mbps("2500baseX/Full"), 2500);
	assert_int_equal(fl_link_mode_mbps("Autoneg"), 0);
	assert_int_equal(fl_link_mode_mbps("Pause"), 0);
	assert_int_equal(fl_link_mode_mbps("FEC_RS"), 0);
	assert_int_equal(fl_link_mode_mbps("100000"), 0);
	assert_int_equal(fl_link_mode_mbps(""), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kernel_rate_strings),
		cmocka_unit_test(test_rate_without_width),
		cmocka_unit_test(test_not_rates),
		cmocka_unit_test(test_link_mode_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
