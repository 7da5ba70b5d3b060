/* The socket transport's knobs: defaults, accepted values, and errors that name the variable. */
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <cmocka.h>

#include "plugin/base/error.h"
#include "plugin/base/fl_types.h"
#include "plugin/transport/socket/sock_config.h"

static const char *const knobs[] = {
	"FABRICLAB_SOCKET_NSTREAMS", "FABRICLAB_SOCKET_INLINE",	     "FABRICLAB_SOCKET_MIN_CHUNK",
	"FABRICLAB_SOCKET_BUF",	     "FABRICLAB_SOCKET_HELLO_TIMEOUT_MS", "NCCL_SOCKET_FAMILY",
	"FABRICLAB_SOCKET_IFNAME",   "NCCL_SOCKET_IFNAME",		     "FABRICLAB_SYSFS_ROOT",
};

static int clear_env(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(knobs) / sizeof(knobs[0]); i++)
		unsetenv(knobs[i]);
	return 0;
}

static void test_defaults(void **state)
{
	struct sock_config cfg;

	(void)state;
	assert_int_equal(sock_config_load(&cfg), FL_OK);
	assert_int_equal(cfg.nstreams, 0); /* as NCCL Socket on an ordinary host */
	assert_int_equal(cfg.inline_max, SOCK_DEFAULT_INLINE);
	assert_int_equal(cfg.min_chunk, SOCK_DEFAULT_MIN_CHUNK);
	assert_int_equal(cfg.hello_timeout_ms, 10000);
	assert_int_equal(cfg.sock_buf, 0);
	assert_int_equal(cfg.family, AF_UNSPEC);
	assert_string_equal(cfg.ifspec, "");
	assert_string_equal(cfg.sysfs_root, "/sys");
}

static void test_values(void **state)
{
	struct sock_config cfg;

	(void)state;
	setenv("FABRICLAB_SOCKET_NSTREAMS", "16", 1);
	setenv("FABRICLAB_SOCKET_INLINE", "4K", 1);
	setenv("FABRICLAB_SOCKET_MIN_CHUNK", "1M", 1);
	setenv("FABRICLAB_SOCKET_BUF", "4M", 1);
	setenv("FABRICLAB_SOCKET_HELLO_TIMEOUT_MS", "250", 1);
	setenv("NCCL_SOCKET_FAMILY", "AF_INET6", 1);
	setenv("FABRICLAB_SYSFS_ROOT", "/tmp/x", 1);
	assert_int_equal(sock_config_load(&cfg), FL_OK);
	assert_int_equal(cfg.nstreams, 16);
	assert_int_equal(cfg.inline_max, 4096);
	assert_int_equal(cfg.min_chunk, 1 << 20);
	assert_int_equal(cfg.sock_buf, 4 << 20);
	assert_int_equal(cfg.hello_timeout_ms, 250);
	assert_int_equal(cfg.family, AF_INET6);
	assert_string_equal(cfg.sysfs_root, "/tmp/x");
	setenv("FABRICLAB_SOCKET_NSTREAMS", "0", 1); /* everything rides on control */
	assert_int_equal(sock_config_load(&cfg), FL_OK);
	assert_int_equal(cfg.nstreams, 0);
	clear_env(NULL);
}

static void expect_bad(const char *name, const char *value)
{
	struct sock_config cfg;

	setenv(name, value, 1);
	fl_error_clear();
	assert_int_equal(sock_config_load(&cfg), FL_ERR_USAGE);
	assert_non_null(strstr(fl_error_text(), name));
	unsetenv(name);
}

static void test_bad_values(void **state)
{
	char long_list[SOCK_IFSPEC_LEN + 8];

	(void)state;
	expect_bad("FABRICLAB_SOCKET_NSTREAMS", "17");
	expect_bad("FABRICLAB_SOCKET_NSTREAMS", "two");
	expect_bad("FABRICLAB_SOCKET_INLINE", "2M");
	expect_bad("FABRICLAB_SOCKET_MIN_CHUNK", "1K");
	expect_bad("FABRICLAB_SOCKET_HELLO_TIMEOUT_MS", "0");
	expect_bad("FABRICLAB_SOCKET_BUF", "-1");
	expect_bad("NCCL_SOCKET_FAMILY", "AF_UNIX");
	memset(long_list, 'e', sizeof(long_list) - 1);
	long_list[sizeof(long_list) - 1] = '\0';
	expect_bad("FABRICLAB_SOCKET_IFNAME", long_list);
	expect_bad("NCCL_SOCKET_IFNAME", long_list);
}

/* No host gets helper threads unasked, however many CPUs it has (none measured faster). */
static void test_no_helper_streams_by_default_on_any_host(void **state)
{
	cpu_set_t all, one;
	struct sock_config cfg;

	(void)state;
	assert_int_equal(sched_getaffinity(0, sizeof(all), &all), 0);
	CPU_ZERO(&one);
	CPU_SET(sched_getcpu(), &one);
	assert_int_equal(sched_setaffinity(0, sizeof(one), &one), 0);
	assert_int_equal(sock_config_load(&cfg), FL_OK);
	assert_int_equal(cfg.nstreams, 0);
	assert_int_equal(sched_setaffinity(0, sizeof(all), &all), 0);
	assert_int_equal(sock_config_load(&cfg), FL_OK);
	assert_int_equal(cfg.nstreams, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_defaults, clear_env),
		cmocka_unit_test_setup(test_values, clear_env),
		cmocka_unit_test_setup(test_bad_values, clear_env),
		cmocka_unit_test_setup(test_no_helper_streams_by_default_on_any_host, clear_env),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
