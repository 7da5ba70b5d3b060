/*
 * Properties through FABRICLAB_TRANSPORT=ext: what the inner plugin reports
 * reaches NCCL unchanged (flsock-v12 reports railId 3 and maxRecvs 1, fields
 * fabriclab's own transports never set so), and an inner older than NCCL's
 * version gets NCCL's defaults for the fields it lacks (flsock-v6).
 */
#include <libgen.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "plugin/entry/net_abi.h"
#include "plugin/transport/ext/ext_inner.h"

static char inner_dir[PATH_MAX];

static void inner_path(char *out, size_t len, const char *name)
{
	snprintf(out, len, "%s/libnccl-net-%s.so", inner_dir, name);
}

static void test_v12_fields_pass_through(void **state)
{
	char path[PATH_MAX + 64], env[PATH_MAX + 100];
	struct fl_abi_comm_config cfg = { .traffic_class = -1 };
	struct fl_abi_props_v12 p;
	void *ctx = NULL;
	int ndev = 0;

	(void)state;
	inner_path(path, sizeof(path), "flsock-v12");
	snprintf(env, sizeof(env), "ext:%s", path);
	setenv("FABRICLAB_TRANSPORT", env, 1);
	assert_int_equal(ncclNetPlugin_v12.init(&ctx, 7, &cfg, NULL, NULL), 0);
	assert_int_equal(ncclNetPlugin_v12.devices(&ndev), 0);
	assert_true(ndev >= 1);
	memset(&p, 0, sizeof(p));
	assert_int_equal(ncclNetPlugin_v12.get_properties(0, &p), 0);
	assert_string_equal(p.name, "lo");
	assert_int_equal(p.rail_id, 3);
	assert_int_equal(p.plane_id, -1);
	assert_int_equal(p.max_recvs, 1);
	assert_int_equal(p.ptr_support, 0x1); /* flsock has no regMrDmaBuf: no dma-buf */
	assert_int_equal(p.vprops.ndevs, 1);
	assert_int_equal(p.net_device_type, FL_ABI_DEVICE_HOST);
	assert_int_equal(ncclNetPlugin_v12.finalize(ctx), 0);
}

static void test_v6_gets_nccl_defaults(void **state)
{
	char path[PATH_MAX + 64];
	struct fl_host_net in;
	struct ext_ctx ctx;
	struct fl_props p;

	(void)state;
	inner_path(path, sizeof(path), "flsock-v6");
	assert_int_equal(ext_inner_load(path, &in), 0);
	assert_int_equal(in.version, 6);
	assert_int_equal(ext_inner_init(&in, NULL, NULL, &ctx), 0);
	assert_int_equal(ext_inner_props(&in, 0, &p), 0);
	assert_string_equal(p.name, "lo");
	assert_int_equal(p.max_p2p_bytes, 1ULL << 30); /* int sizes: NCCL caps them at 1 GiB */
	assert_int_equal(p.max_coll_bytes, 512ULL << 20);
	assert_int_equal(p.vdev_count, 1);
	assert_int_equal(p.vdevs[0], 0);
	assert_int_equal(p.max_multi_request_size, 1);
	assert_int_equal(p.rail_id, -1);
	assert_int_equal(p.reg_is_global, 0);
	assert_int_equal(p.force_flush, 0);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_v12_fields_pass_through),
		cmocka_unit_test(test_v6_gets_nccl_defaults),
	};
	char self[PATH_MAX];

	(void)argc;
	snprintf(self, sizeof(self), "%s", argv[0]);
	snprintf(inner_dir, sizeof(inner_dir), "%s/../inner", dirname(self));
	setenv("FABRICLAB_SOCKET_IFNAME", "lo", 1);
	setenv("FABRICLAB_REPORT", "off", 1);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
