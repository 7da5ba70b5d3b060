/* Interface choice (NCCL_SOCKET_IFNAME syntax, defaults) and what sysfs says about a device. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "plugin/base/error.h"
#include "plugin/base/fl_types.h"
#include "plugin/transport/socket/sock_config.h"
#include "plugin/transport/socket/sock_iface.h"

/* The transport keeps its devices for the process; a test frees what discovery allocated. */
static void free_discovered(struct sock_iface *ifaces, int count)
{
	for (int i = 0; i < count; i++)
		free(ifaces[i].pci_path);
}

static int matches(const char *spec, const char *ifname)
{
	struct sock_ifilter f;

	assert_int_equal(sock_ifilter_parse(spec, &f), FL_OK);
	return sock_ifilter_match(&f, ifname);
}

static void test_prefix_lists(void **state)
{
	(void)state;
	assert_true(matches("eth", "eth0"));
	assert_true(matches("eth", "eth12"));
	assert_false(matches("eth", "ib0"));
	assert_true(matches("eth,ib", "ib1"));
	assert_true(matches("eth,,ib,", "ib1")); /* empty names are ignored */
	assert_false(matches("eth,ib", "enp5s0"));
	assert_false(matches("", "eth0")); /* nothing listed, nothing chosen */
}

static void test_exclusion(void **state)
{
	(void)state;
	assert_false(matches("^docker,lo", "docker0"));
	assert_false(matches("^docker,lo", "lo"));
	assert_true(matches("^docker,lo", "eth0"));
	assert_true(matches("^", "eth0")); /* excluding nothing keeps everything */
}

static void test_exact_names(void **state)
{
	(void)state;
	assert_true(matches("=eth0", "eth0"));
	assert_false(matches("=eth0", "eth00"));
	assert_false(matches("=eth", "eth0"));
	assert_true(matches("=eth0,ib1", "ib1"));
	assert_false(matches("^=eth0", "eth0"));
	assert_true(matches("^=eth0", "eth00"));
}

static void test_bad_lists(void **state)
{
	char many[512] = "";
	struct sock_ifilter f;

	(void)state;
	assert_int_equal(sock_ifilter_parse("averyveryverylongname0", &f), FL_ERR_USAGE);
	assert_non_null(strstr(fl_error_text(), "too long"));
	for (int i = 0; i <= SOCK_IFILTER_MAX; i++)
		snprintf(many + strlen(many), sizeof(many) - strlen(many), "e%d,", i);
	assert_int_equal(sock_ifilter_parse(many, &f), FL_ERR_USAGE);
}

static void candidate(struct sock_candidate *c, const char *name)
{
	struct sockaddr_in *in = (struct sockaddr_in *)&c->addr;

	memset(c, 0, sizeof(*c));
	strcpy(c->name, name);
	in->sin_family = AF_INET;
	c->addrlen = sizeof(*in);
}

static int pick(const char *const *names, int n, const char *spec, int *picked)
{
	struct sock_candidate cands[32];

	for (int i = 0; i < n; i++)
		candidate(&cands[i], names[i]);
	return sock_iface_select(cands, n, spec, picked, SOCK_MAX_DEVS);
}

static void test_default_prefers_ib(void **state)
{
	static const char *const names[] = { "lo", "docker0", "eth0", "ib0", "virbr0", "ib1" };
	int picked[SOCK_MAX_DEVS];

	(void)state;
	assert_int_equal(pick(names, 6, NULL, picked), 2);
	assert_int_equal(picked[0], 3);
	assert_int_equal(picked[1], 5);
}

static void test_default_skips_docker_lo_virbr(void **state)
{
	static const char *const names[] = { "lo", "docker0", "eth0", "virbr0", "enp1s0" };
	int picked[SOCK_MAX_DEVS];

	(void)state;
	assert_int_equal(pick(names, 5, "", picked), 2);
	assert_int_equal(picked[0], 2);
	assert_int_equal(picked[1], 4);
}

static void test_default_falls_back_to_lo(void **state)
{
	static const char *const names[] = { "docker0", "lo" };
	static const char *const only_docker[] = { "docker0" };
	int picked[SOCK_MAX_DEVS];

	(void)state;
	assert_int_equal(pick(names, 2, NULL, picked), 1);
	assert_int_equal(picked[0], 1);
	assert_int_equal(pick(only_docker, 1, NULL, picked), 0);
}

static void test_spec_keeps_order_and_cap(void **state)
{
	static const char *names[20];
	char storage[20][IFNAMSIZ];
	int picked[SOCK_MAX_DEVS];

	(void)state;
	for (int i = 0; i < 20; i++) {
		snprintf(storage[i], IFNAMSIZ, "eth%d", 19 - i);
		names[i] = storage[i];
	}
	assert_int_equal(pick(names, 20, "eth", picked), SOCK_MAX_DEVS);
	for (int i = 0; i < SOCK_MAX_DEVS; i++)
		assert_int_equal(picked[i], i);
	assert_int_equal(pick(names, 20, "=eth3", picked), 1);
	assert_int_equal(picked[0], 16);
}

/* A fake sysfs: class/net/<if>/{speed,device} like the kernel lays it out. */
static char sysroot[64];

static void write_file(const char *rel, const char *text)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", sysroot, rel);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void make_dir(const char *rel)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%s", sysroot, rel);
	assert_int_equal(mkdir(path, 0755), 0);
}

static int make_sysfs(void **state)
{
	char path[256];

	(void)state;
	strcpy(sysroot, "/tmp/fl-sysfs-XXXXXX");
	if (!mkdtemp(sysroot))
		return -1;
	make_dir("class");
	make_dir("class/net");
	make_dir("devices");
	make_dir("devices/pci0000:00");
	make_dir("devices/pci0000:00/0000:00:03.0");
	make_dir("class/net/eth9");
	write_file("class/net/eth9/speed", "25000\n");
	snprintf(path, sizeof(path), "%s/class/net/eth9/device", sysroot);
	if (symlink("../../../devices/pci0000:00/0000:00:03.0", path))
		return -1;
	make_dir("class/net/lo");
	write_file("class/net/lo/speed", "40000\n");
	snprintf(path, sizeof(path), "%s/class/net/lo/device", sysroot);
	if (symlink("../../../devices/pci0000:00/0000:00:03.0", path))
		return -1;
	make_dir("class/net/lo9");
	write_file("class/net/lo9/speed", "-1\n");
	make_dir("class/net/veth9"); /* no speed file at all */
	make_dir("class/net/zero9");
	write_file("class/net/zero9/speed", "0\n");
	make_dir("class/net/junk9");
	write_file("class/net/junk9/speed", "fast\n");
	return 0;
}

static int remove_sysfs(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", sysroot);
	return system(cmd) == 0 ? 0 : -1;
}

static void test_speed_from_sysfs(void **state)
{
	(void)state;
	assert_int_equal(sock_iface_speed(sysroot, "eth9"), 25000);
	assert_int_equal(sock_iface_speed(sysroot, "lo9"), SOCK_DEFAULT_SPEED_MBPS);
	assert_int_equal(sock_iface_speed(sysroot, "veth9"), SOCK_DEFAULT_SPEED_MBPS);
	assert_int_equal(sock_iface_speed(sysroot, "zero9"), SOCK_DEFAULT_SPEED_MBPS);
	assert_int_equal(sock_iface_speed(sysroot, "junk9"), SOCK_DEFAULT_SPEED_MBPS);
	assert_int_equal(sock_iface_speed(sysroot, "absent9"), SOCK_DEFAULT_SPEED_MBPS);
}

static void test_pci_path_from_sysfs(void **state)
{
	char want[512], *got, *expect;

	(void)state;
	snprintf(want, sizeof(want), "%s/devices/pci0000:00/0000:00:03.0", sysroot);
	expect = realpath(want, NULL);
	got = sock_iface_pci_path(sysroot, "eth9");
	assert_non_null(got);
	assert_non_null(expect);
	/* the link is resolved to the device directory itself */
	assert_string_equal(got, expect);
	assert_null(strstr(got, ".."));
	free(got);
	free(expect);
	assert_null(sock_iface_pci_path(sysroot, "lo9"));
	assert_null(sock_iface_pci_path(sysroot, "absent9"));
}

static void test_discover_lo(void **state)
{
	struct sock_iface ifs[SOCK_MAX_DEVS];
	struct sock_config cfg;
	int n = -1;

	(void)state;
	setenv("FABRICLAB_SOCKET_IFNAME", "=lo", 1);
	unsetenv("NCCL_SOCKET_FAMILY");
	unsetenv("FABRICLAB_SYSFS_ROOT");
	assert_int_equal(sock_config_load(&cfg), FL_OK);
	assert_int_equal(sock_iface_discover(&cfg, ifs, SOCK_MAX_DEVS, &n), FL_OK);
	assert_int_equal(n, 1);
	assert_string_equal(ifs[0].name, "lo");
	assert_int_equal(ifs[0].addr.ss_family, AF_INET);
	assert_true(((struct sockaddr_in *)&ifs[0].addr)->sin_addr.s_addr ==
		    htonl(INADDR_LOOPBACK));
	assert_null(ifs[0].pci_path);
	free_discovered(ifs, n);

	setenv("NCCL_SOCKET_FAMILY", "AF_INET6", 1);
	assert_int_equal(sock_config_load(&cfg), FL_OK);
	assert_int_equal(sock_iface_discover(&cfg, ifs, SOCK_MAX_DEVS, &n), FL_OK);
	if (n) { /* only where lo carries ::1 */
		assert_int_equal(ifs[0].addr.ss_family, AF_INET6);
		free_discovered(ifs, n);
	}

	unsetenv("NCCL_SOCKET_FAMILY");
	/* a selection that matches nothing is an error naming it and what exists */
	setenv("FABRICLAB_SOCKET_IFNAME", "=no-such-if0", 1);
	assert_int_equal(sock_config_load(&cfg), FL_OK);
	assert_int_equal(sock_iface_discover(&cfg, ifs, SOCK_MAX_DEVS, &n), FL_ERR_USAGE);
	assert_int_equal(n, 0);
	assert_non_null(strstr(fl_error_text(), "FABRICLAB_SOCKET_IFNAME==no-such-if0"));
	assert_non_null(strstr(fl_error_text(), "matches no network interface"));
	assert_non_null(strstr(fl_error_text(), "lo"));
	unsetenv("FABRICLAB_SOCKET_IFNAME");
	setenv("NCCL_SOCKET_IFNAME", "garbage", 1);
	assert_int_equal(sock_config_load(&cfg), FL_OK);
	assert_int_equal(sock_iface_discover(&cfg, ifs, SOCK_MAX_DEVS, &n), FL_ERR_USAGE);
	assert_non_null(strstr(fl_error_text(), "NCCL_SOCKET_IFNAME=garbage"));
	unsetenv("NCCL_SOCKET_IFNAME");
}

/* FABRICLAB_SYSFS_ROOT redirects what discovery reads about a real interface. */
static void test_sysfs_root_override(void **state)
{
	struct sock_iface ifs[SOCK_MAX_DEVS];
	struct sock_config cfg;
	int n = -1;

	(void)state;
	setenv("FABRICLAB_SOCKET_IFNAME", "=lo", 1);
	setenv("FABRICLAB_SYSFS_ROOT", sysroot, 1);
	assert_int_equal(sock_config_load(&cfg), FL_OK);
	assert_int_equal(sock_iface_discover(&cfg, ifs, SOCK_MAX_DEVS, &n), FL_OK);
	assert_int_equal(n, 1);
	assert_int_equal(ifs[0].speed_mbps, 40000);
	assert_non_null(ifs[0].pci_path);
	assert_non_null(strstr(ifs[0].pci_path, "0000:00:03.0"));
	free_discovered(ifs, n);
	unsetenv("FABRICLAB_SYSFS_ROOT");
	unsetenv("FABRICLAB_SOCKET_IFNAME");
}

static void test_fabriclab_name_wins_over_nccl(void **state)
{
	struct sock_config cfg;

	(void)state;
	setenv("NCCL_SOCKET_IFNAME", "eth", 1);
	setenv("FABRICLAB_SOCKET_IFNAME", "lo", 1);
	assert_int_equal(sock_config_load(&cfg), FL_OK);
	assert_string_equal(cfg.ifspec, "lo");
	unsetenv("FABRICLAB_SOCKET_IFNAME");
	assert_int_equal(sock_config_load(&cfg), FL_OK);
	assert_string_equal(cfg.ifspec, "eth");
	unsetenv("NCCL_SOCKET_IFNAME");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_prefix_lists),
		cmocka_unit_test(test_exclusion),
		cmocka_unit_test(test_exact_names),
		cmocka_unit_test(test_bad_lists),
		cmocka_unit_test(test_default_prefers_ib),
		cmocka_unit_test(test_default_skips_docker_lo_virbr),
		cmocka_unit_test(test_default_falls_back_to_lo),
		cmocka_unit_test(test_spec_keeps_order_and_cap),
		cmocka_unit_test(test_speed_from_sysfs),
		cmocka_unit_test(test_pci_path_from_sysfs),
		cmocka_unit_test(test_discover_lo),
		cmocka_unit_test(test_sysfs_root_override),
		cmocka_unit_test(test_fabriclab_name_wins_over_nccl),
	};

	return cmocka_run_group_tests(tests, make_sysfs, remove_sysfs);
}
