/*
 * `fabriclab report` and the ports of each report (tools/report_ports.c):
 * reading `ports`, the active port reaching the transport verdict's figures,
 * suspect ports, and which suspect is the device a verdict names.
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

#include "plugin/base/error.h"
#include "tools/report/report.h"
#include "tools/report/report_hop_json.h"

static const char ports_json[] =
	"{\"ports\": ["
	"{\"name\": \"mlx5_0/1\", \"device\": \"mlx5_0\", \"netdev\": null, \"active\": false,"
	" \"trained_down\": false, \"active_gbps\": 0, \"max_gbps\": null, \"delta_seconds\": 30,"
	" \"rising\": []},"
	"{\"name\": \"mlx5_1/1\", \"device\": \"mlx5_1\", \"netdev\": \"eth2\", \"active\": true,"
	" \"trained_down\": true, \"active_gbps\": 50, \"max_gbps\": 100, \"delta_seconds\": 30,"
	" \"rising\": [{\"counter\": \"ethtool/rx_pause_ctrl_phy\", \"delta\": 5,"
	" \"severity\": \"congestion\"}, {\"counter\": \"counters/symbol_error\", \"delta\": 60,"
	" \"severity\": \"error\"}]}]}";

static struct report_json parsed;     /* each port's table */
static struct report_arena texts; /* their rising counters */

static void load(struct report_file *f, const char *text, int *err)
{
	json_error_t jerr;
	json_t *root = json_loads(text, 0, &jerr);

	assert_non_null(root);
	memset(f, 0, sizeof(*f));
	strcpy(f->node, "n2");
	f->superseded_by = -1;
	f->views = calloc(2, sizeof(*f->views));
	f->nviews = 2;
	f->views[0].is_send = true;
	*err = report_read_ports("r.json", root, NULL, &parsed, &texts, f);
	json_decref(root);
}

static void release(struct report_file *f)
{
	free(f->views);
	free(f->ports);
	report_json_free(&parsed);
	report_arena_free(&texts);
}

static void test_read_ports(void **state)
{
	struct report_file f;
	int err;

	(void)state;
	load(&f, ports_json, &err);
	assert_int_equal(err, 0);
	assert_int_equal(f.nports, 2);
	assert_string_equal(f.ports[1].node, "n2");
	assert_string_equal(f.ports[1].netdev, "eth2");
	assert_true(f.ports[1].trained_down);
	assert_true(f.ports[1].max_gbps == 100.0);
	assert_string_equal(f.ports[1].rising, "rx_pause_ctrl_phy +5, symbol_error +60");
	assert_true(f.ports[1].errors_rising);
	assert_false(f.ports[0].errors_rising);
	/* the first active port reaches every view */
	assert_true(f.views[0].v.rdma_port_active && f.views[1].v.rdma_port_active);
	assert_string_equal(f.views[1].v.rdma_port, "mlx5_1/1");
	release(&f);
}

static void test_bad_ports_name_the_field(void **state)
{
	struct report_file f;
	int err;

	(void)state;
	load(&f, "{\"ports\": [{\"device\": \"mlx5_0\"}]}", &err);
	assert_int_equal(err, FL_ERR_USAGE);
	assert_string_equal(fl_error_text(), "r.json: ports[0].name: missing");
	release(&f);
	load(&f, "{\"ports\": [{\"name\": \"a/1\", \"active_gbps\": \"fast\"}]}", &err);
	assert_int_equal(err, FL_ERR_USAGE);
	assert_non_null(strstr(fl_error_text(), "ports[0].active_gbps"));
	release(&f);
	load(&f, "{\"ports\": 3}", &err);
	assert_int_equal(err, FL_ERR_USAGE);
	release(&f);
	load(&f, "{}", &err); /* reports before ports existed */
	assert_int_equal(err, 0);
	assert_int_equal(f.nports, 0);
	assert_false(f.views[0].v.rdma_port_active);
	release(&f);
}

static void test_rdma_figures_name_the_node_with_the_port(void **state)
{
	struct report_hop h;
	struct report_view send, recv;
	struct fl_hop_figures fig;

	(void)state;
	memset(&h, 0, sizeof(h));
	memset(&send, 0, sizeof(send));
	memset(&recv, 0, sizeof(recv));
	h.send = &send;
	h.recv = &recv;
	h.key.src_node = "a";
	h.key.dst_node = "b";
	h.key.src_dev = h.key.dst_dev = "eth0";
	h.recv->present = true;
	h.recv->rdma_port_active = true;
	h.recv->rdma_port = "mlx5_0/1";
	h.send->present = true;
	memset(&fig, 0, sizeof(fig));
	report_rdma_figures(&h, &fig);
	assert_true(fig.rdma_port_active);
	assert_string_equal(fig.rdma_node, "b"); /* the receiver wrote it */
	assert_string_equal(fig.rdma_port, "mlx5_0/1");
	h.send->rdma_port_active = true;
	h.send->rdma_port = "mlx5_3/1";
	report_rdma_figures(&h, &fig);
	assert_string_equal(fig.rdma_node, "a");
	assert_string_equal(fig.rdma_port, "mlx5_3/1");
}

static void test_suspects_and_the_verdicts_device(void **state)
{
	struct report_set set;
	struct report_file f;
	int err;

	(void)state;
	memset(&set, 0, sizeof(set));
	load(&f, ports_json, &err);
	set.files = &f;
	set.nfiles = 1;
	assert_int_equal(report_collect_ports(&set), 0);
	assert_int_equal(set.nsuspects, 1);
	assert_string_equal(set.suspects[0].name, "mlx5_1/1");
	set.verdict.kind = FL_VERDICT_DEVICE;
	strcpy(set.verdict.node, "n2");
	strcpy(set.verdict.dev, "eth2"); /* sockets name the interface */
	assert_true(report_port_is_culprit(&set, &set.suspects[0]));
	strcpy(set.verdict.dev, "mlx5_1"); /* verbs name the device */
	assert_true(report_port_is_culprit(&set, &set.suspects[0]));
	strcpy(set.verdict.dev, "mlx5_1:1");
	assert_true(report_port_is_culprit(&set, &set.suspects[0]));
	strcpy(set.verdict.dev, "mlx5_10");
	assert_false(report_port_is_culprit(&set, &set.suspects[0]));
	strcpy(set.verdict.dev, "mlx5_1");
	strcpy(set.verdict.node, "n3");
	assert_false(report_port_is_culprit(&set, &set.suspects[0]));
	set.verdict.kind = FL_VERDICT_NODE;
	strcpy(set.verdict.node, "n2");
	assert_false(report_port_is_culprit(&set, &set.suspects[0]));
	free(set.suspects);
	release(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_read_ports),
		cmocka_unit_test(test_bad_ports_name_the_field),
		cmocka_unit_test(test_rdma_figures_name_the_node_with_the_port),
		cmocka_unit_test(test_suspects_and_the_verdicts_device),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
