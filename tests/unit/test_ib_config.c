/* The ib transport's pure rules: NCCL_IB_HCA lists, GID choice, port speed tables. */
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

#include "plugin/base/fl_types.h"
#include "plugin/transport/ib/ib_gid.h"
#include "plugin/transport/ib/ib_hca.h"
#include "plugin/transport/ib/ib_speed.h"

static void test_hca_prefix_and_port(void **state)
{
	struct ib_hca_filter f;

	(void)state;
	assert_int_equal(ib_hca_parse("NCCL_IB_HCA", "mlx5_0:1,mlx5_2", &f), FL_OK);
	assert_int_equal(f.n, 2);
	assert_true(ib_hca_match(&f, "mlx5_0", 1));
	assert_false(ib_hca_match(&f, "mlx5_0", 2));  /* port given: only that port */
	assert_true(ib_hca_match(&f, "mlx5_2", 2));   /* no port: any port */
	assert_false(ib_hca_match(&f, "mlx5_1", 1));
	/* prefixes: mlx5_0 also matches mlx5_01 (NCCL's rule), "=" turns that off */
	assert_true(ib_hca_match(&f, "mlx5_01", 1));
	assert_int_equal(ib_hca_parse("NCCL_IB_HCA", "=mlx5_0", &f), FL_OK);
	assert_true(ib_hca_match(&f, "mlx5_0", 1));
	assert_false(ib_hca_match(&f, "mlx5_01", 1));
	assert_int_equal(ib_hca_parse("NCCL_IB_HCA", "mlx5", &f), FL_OK);
	assert_true(ib_hca_match(&f, "mlx5_7", 1));
	assert_false(ib_hca_match(&f, "bnxt_re0", 1));
}

static void test_hca_exclude(void **state)
{
	struct ib_hca_filter f;

	(void)state;
	assert_int_equal(ib_hca_parse("NCCL_IB_HCA", "^mlx5_1", &f), FL_OK);
	assert_true(f.exclude);
	assert_true(ib_hca_match(&f, "mlx5_0", 1));
	assert_false(ib_hca_match(&f, "mlx5_1", 1));
	assert_int_equal(ib_hca_parse("NCCL_IB_HCA", "^=mlx5_1:2", &f), FL_OK);
	assert_true(f.exclude && f.exact);
	assert_true(ib_hca_match(&f, "mlx5_1", 1));
	assert_false(ib_hca_match(&f, "mlx5_1", 2));
	assert_true(ib_hca_match(&f, "mlx5_10", 2));
	/* empty: everything */
	assert_int_equal(ib_hca_parse("NCCL_IB_HCA", "", &f), FL_OK);
	assert_true(ib_hca_match(&f, "anything", 3));
}

static void test_hca_errors(void **state)
{
	struct ib_hca_filter f;
	char many[4096] = "";

	(void)state;
	assert_int_equal(ib_hca_parse("FABRICLAB_IB_HCA", "mlx5_0:x", &f), FL_ERR_USAGE);
	assert_int_equal(ib_hca_parse("FABRICLAB_IB_HCA", "mlx5_0:0", &f), FL_ERR_USAGE);
	assert_int_equal(ib_hca_parse("FABRICLAB_IB_HCA", ":1", &f), FL_ERR_USAGE);
	assert_int_equal(ib_hca_parse("FABRICLAB_IB_HCA", "^", &f), FL_ERR_USAGE);
	for (int i = 0; i < IB_HCA_MAX + 1; i++)
		strcat(many, "d,");
	assert_int_equal(ib_hca_parse("FABRICLAB_IB_HCA", many, &f), FL_ERR_USAGE);
	/* harmless empty entries */
	assert_int_equal(ib_hca_parse("NCCL_IB_HCA", "a,,b,", &f), FL_OK);
	assert_int_equal(f.n, 2);
}

static void test_hca_env_precedence(void **state)
{
	struct ib_hca_filter f;

	(void)state;
	setenv("NCCL_IB_HCA", "mlx5_0", 1);
	setenv("FABRICLAB_IB_HCA", "^mlx5_0", 1);
	assert_int_equal(ib_hca_from_env(&f), FL_OK);
	assert_true(f.exclude);
	unsetenv("FABRICLAB_IB_HCA");
	assert_int_equal(ib_hca_from_env(&f), FL_OK);
	assert_false(f.exclude);
	assert_int_equal(f.n, 1);
	unsetenv("NCCL_IB_HCA");
}

static struct ib_gid_info gid(enum ib_gid_kind kind, const char *text)
{
	struct ib_gid_info g = { .kind = kind, .valid = 1 };

	if (!strcmp(text, "v4"))
		memcpy(g.raw, (uint8_t[16]){ [10] = 0xff, [11] = 0xff, 127, 0, 0, 1 }, 16);
	else if (!strcmp(text, "ll"))
		memcpy(g.raw, (uint8_t[16]){ 0xfe, 0x80, [15] = 1 }, 16);
	else if (!strcmp(text, "global"))
		memcpy(g.raw, (uint8_t[16]){ 0x20, 0x01, 0x0d, 0xb8, [15] = 1 }, 16);
	else
		g.valid = 0;
	return g;
}

static void test_gid_pick(void **state)
{
	struct ib_gid_info t[6];

	(void)state;
	/* the fake's mlx5_1 layout: v1 ll, v2 ll, v1 v4, v2 v4 -> 3 */
	t[0] = gid(IB_GID_ROCE_V1, "ll");
	t[1] = gid(IB_GID_ROCE_V2, "ll");
	t[2] = gid(IB_GID_ROCE_V1, "v4");
	t[3] = gid(IB_GID_ROCE_V2, "v4");
	assert_int_equal(ib_gid_pick(t, 4), 3);
	/* RoCE v2 beats v1 whatever the address */
	assert_int_equal(ib_gid_pick(t, 3), 1);
	/* among v2: a routable IPv6 address beats link-local */
	t[2] = gid(IB_GID_ROCE_V2, "global");
	assert_int_equal(ib_gid_pick(t, 3), 2);
	/* empty entries never win; nothing usable -> -1 */
	t[0] = gid(IB_GID_ROCE_V2, "empty");
	assert_int_equal(ib_gid_pick(t, 1), -1);
	/* only v1 left: take it */
	t[0] = gid(IB_GID_ROCE_V1, "ll");
	t[1] = gid(IB_GID_ROCE_V2, "empty");
	assert_int_equal(ib_gid_pick(t, 2), 0);
}

static void test_gid_kind_sysfs(void **state)
{
	char root[] = "/tmp/fabriclab-gid.XXXXXX", path[512];
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(root));
	snprintf(path, sizeof(path), "mkdir -p %s/class/infiniband/mlx5_1/ports/1/gid_attrs/types",
		 root);
	assert_int_equal(system(path), 0);
	snprintf(path, sizeof(path), "%s/class/infiniband/mlx5_1/ports/1/gid_attrs/types/3", root);
	f = fopen(path, "w");
	fputs("RoCE v2\n", f);
	fclose(f);
	snprintf(path, sizeof(path), "%s/class/infiniband/mlx5_1/ports/1/gid_attrs/types/0", root);
	f = fopen(path, "w");
	fputs("IB/RoCE v1\n", f);
	fclose(f);
	assert_int_equal(ib_gid_kind_from_sysfs(root, "mlx5_1", 1, 3), IB_GID_ROCE_V2);
	assert_int_equal(ib_gid_kind_from_sysfs(root, "mlx5_1", 1, 0), IB_GID_ROCE_V1);
	assert_int_equal(ib_gid_kind_from_sysfs(root, "mlx5_1", 1, 7), IB_GID_UNKNOWN);
	assert_int_equal(ib_gid_kind_from_text("garbage"), IB_GID_UNKNOWN);
	snprintf(path, sizeof(path), "rm -rf %s", root);
	assert_int_equal(system(path), 0);
}

static void test_speed_tables(void **state)
{
	(void)state;
	/* active_width codes 1,2,4,8,16 = 1x,4x,8x,12x,2x */
	assert_int_equal(ib_width_lanes(1), 1);
	assert_int_equal(ib_width_lanes(2), 4);
	assert_int_equal(ib_width_lanes(4), 8);
	assert_int_equal(ib_width_lanes(8), 12);
	assert_int_equal(ib_width_lanes(16), 2);
	assert_int_equal(ib_width_lanes(3), 0);
	assert_int_equal(ib_port_mbps(2, 64), 200000);  /* 4x HDR */
	assert_int_equal(ib_port_mbps(2, 32), 100000);  /* 4x EDR / 25G lanes */
	assert_int_equal(ib_port_mbps(2, 128), 400000); /* 4x NDR */
	assert_int_equal(ib_port_mbps(1, 1), 2500);     /* 1x SDR */
	assert_int_equal(ib_port_mbps(8, 16), 168000);  /* 12x FDR */
	assert_int_equal(ib_port_mbps(16, 256), 400000); /* 2x XDR */
	assert_int_equal(ib_port_mbps(2, 3), 0);        /* unknown speed code */
	assert_string_equal(ib_speed_name(64), "HDR");
	assert_string_equal(ib_speed_name(5), "?");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hca_prefix_and_port),
		cmocka_unit_test(test_hca_exclude),
		cmocka_unit_test(test_hca_errors),
		cmocka_unit_test(test_hca_env_precedence),
		cmocka_unit_test(test_gid_pick),
		cmocka_unit_test(test_gid_kind_sysfs),
		cmocka_unit_test(test_speed_tables),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
