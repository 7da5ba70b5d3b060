/*
 * The live judgement (plugin/report/report_live.c) on synthetic windows: a
 * halved hop appears, changes and clears after FL_LIVE_LOW_WINDOWS windows that
 * agree; one dip or one odd window, a window with too little traffic and the
 * view not judged say nothing; a device slow both ways (its receives and its
 * sends) is one finding of kind device, a sender's view alone none;
 * and the textfile (report_live_prom.c) carries what stands, escaped.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "plugin/report/report_live.h"

#define LINE_MBPS 8000 /* 1 GB/s: a window's ratio is its GB/s */
#define WINDOW_NS 500000000ULL

static struct fl_report rep;
static struct fl_hop_snapshot hops[2];
static const struct fl_live_params params = {
	.window_s = 0.5, .low_windows = FL_LIVE_LOW_WINDOWS,
};
static struct {
	int n;
	enum fl_live_state state[8];
	struct fl_live_finding f[8];
} told;

static void notify(enum fl_live_state state, const struct fl_live_finding *f)
{
	if (told.n < 8) {
		told.state[told.n] = state;
		told.f[told.n] = *f;
	}
	told.n++;
}

static void hop(struct fl_hop_snapshot *h, int view, const char *src, const char *dst,
		const char *dev)
{
	memset(h, 0, sizeof(*h));
	h->key.view = view;
	snprintf(h->key.src_node, sizeof(h->key.src_node), "%s", src);
	snprintf(h->key.src_dev, sizeof(h->key.src_dev), "%s", dev);
	snprintf(h->key.dst_node, sizeof(h->key.dst_node), "%s", dst);
	snprintf(h->key.dst_dev, sizeof(h->key.dst_dev), "%s", dev);
}

static int setup(void **state)
{
	(void)state;
	fl_report_live_reset();
	memset(&told, 0, sizeof(told));
	memset(&rep, 0, sizeof(rep));
	snprintf(rep.transport, sizeof(rep.transport), "socket");
	rep.ndevs = 1;
	rep.devs[0].dev = 0;
	rep.devs[0].speed_mbps = LINE_MBPS;
	hop(&hops[0], FL_HOP_RECV, "a", "b", "eth0");
	/* sockets judge receivers: a sender's view is never a finding (and this device sends only) */
	hop(&hops[1], FL_HOP_SEND, "b", "c", "eth1");
	rep.hops = hops;
	rep.nhops = 2;
	return 0;
}

#define REQUEST (1ULL << 20) /* 1 MiB: 1049 us on the wire at line rate, wire-bound */

/* Hop i moved `bytes` in requests of `request` bytes at `ratio` GB/s (its share of 1 GB/s). */
static void moved_in(int i, uint64_t bytes, uint64_t request, double ratio)
{
	uint64_t requests = (bytes + request - 1) / request;

	hops[i].t.bytes += bytes;
	hops[i].t.messages += requests;
	hops[i].t.sizes[fl_size_bucket(request)] += requests;
	/* each request's wire time, as the connection records it (bytes per ns) */
	hops[i].t.wire_times[fl_time_bucket((uint64_t)((double)request / ratio))] += requests;
	hops[i].t.wire_bytes += bytes;
	hops[i].wire_ns += (uint64_t)((double)bytes / ratio);
}

/* The same in 1 MiB requests (1 GB/s: bytes per ns). */
static void moved(int i, uint64_t bytes, double ratio)
{
	moved_in(i, bytes, REQUEST, ratio);
}

static int judge(int k)
{
	return fl_report_live_judge(&rep, &params, 1000.0 + k, (uint64_t)k * WINDOW_NS, notify);
}

/* One window: every hop moved `bytes` in `request`-byte requests at `ratio` of its line rate. */
static int window_in(uint64_t bytes, uint64_t request, double ratio, int k)
{
	for (int i = 0; i < rep.nhops; i++)
		moved_in(i, bytes, request, ratio);
	return judge(k);
}

/* The same in 1 MiB requests; returns the transitions. */
static int window(uint64_t bytes, double ratio, int k)
{
	return window_in(bytes, REQUEST, ratio, k);
}

/* One window of b/eth0's receive hop (a -> b) and send hop (b -> c) at their own ratios. */
static int both_ways(double recv_ratio, double send_ratio, int k)
{
	moved(0, 64 << 20, recv_ratio);
	moved(1, 64 << 20, send_ratio);
	return judge(k);
}

static int setup_device(void **state)
{
	setup(state);
	hop(&hops[1], FL_HOP_SEND, "b", "c", "eth0");
	return 0;
}

static void halved_appears_changes_clears(void **state)
{
	struct fl_live_finding now[4];
	int k = 1;

	(void)state;
	assert_int_equal(window(64 << 20, 0.5, k++), 0); /* one window is not enough */
	assert_int_equal(window(64 << 20, 0.5, k++), 1);
	assert_int_equal(told.state[0], FL_LIVE_APPEARED);
	assert_string_equal(told.f[0].kind, "link");
	assert_string_equal(told.f[0].culprit, "a/eth0 -> b/eth0");
	assert_float_equal(told.f[0].ratio, 0.5, 1e-6);
	assert_float_equal(told.f[0].cost, 0.5, 1e-6);
	assert_float_equal(told.f[0].since_unix, 1002.0, 1e-9);
	assert_int_equal(told.f[0].windows, 2);
	assert_int_equal(told.f[0].at_ns, 2 * WINDOW_NS);
	assert_int_equal(fl_report_live_current(now, 4), 1);
	assert_string_equal(now[0].key.src_node, "a");

	assert_int_equal(window(64 << 20, 0.52, k++), 0); /* the same size: no line */
	assert_int_equal(window(64 << 20, 0.3, k++), 0);  /* one window of another size... */
	assert_int_equal(window(64 << 20, 0.5, k++), 0);  /* ...is a starved moment */
	assert_int_equal(window(64 << 20, 0.31, k++), 0);
	assert_int_equal(window(64 << 20, 0.3, k++), 1);  /* two are a change */
	assert_int_equal(told.state[1], FL_LIVE_CHANGED);
	assert_float_equal(told.f[1].ratio, 0.3, 1e-6);
	assert_float_equal(told.f[1].since_unix, 1002.0, 1e-9); /* still since it appeared */

	assert_int_equal(window(64 << 20, 0.35, k++), 0);
	assert_int_equal(window(64 << 20, 0.98, k++), 0); /* one good window is not recovery */
	assert_int_equal(window(64 << 20, 0.33, k++), 0);
	assert_int_equal(window(64 << 20, 0.98, k++), 0);
	assert_int_equal(window(64 << 20, 0.97, k++), 1);
	assert_int_equal(told.state[2], FL_LIVE_CLEARED);
	assert_int_equal(fl_report_live_current(now, 4), 0);
	assert_int_equal(told.n, 3);
}

/* A slow hop whose rate wobbles logs once, not every window. */
static void hovering_logs_once(void **state)
{
	int k = 1;
	double under = 0.5, over = 0.56;

	(void)state;
	assert_int_equal(window(64 << 20, under, k++), 0);
	assert_int_equal(window(64 << 20, under, k++), 1);
	for (int i = 0; i < 4; i++)
		assert_int_equal(window(64 << 20, i % 2 ? under : over, k++), 0);
	assert_int_equal(told.n, 1);
}

/* A window the report thread was starved in is taken, not judged: it neither counts nor resets. */
static void starved_windows_are_not_judged(void **state)
{
	struct fl_live_params starved = params;
	int k = 1;

	(void)state;
	starved.skip = 1;
	assert_int_equal(window(64 << 20, 0.4, k++), 0);
	for (int i = 0; i < 3; i++) {
		hops[0].t.wire_bytes += 64 << 20;
		hops[0].wire_ns += (uint64_t)((double)(64 << 20) / 0.3);
		assert_int_equal(fl_report_live_judge(&rep, &starved, 1000.0 + k, 0, notify), 0);
		k++;
	}
	assert_int_equal(told.n, 0);
	assert_int_equal(window(64 << 20, 0.4, k++), 1); /* the second slow window judged */
	assert_float_equal(told.f[0].ratio, 0.4, 1e-6);  /* the starved ones left out of it */
}

static void noise_says_nothing(void **state)
{
	int k = 1;

	(void)state;
	/* one dip between healthy windows (a rank starved of CPU for a moment) */
	for (int i = 0; i < 6; i++)
		assert_int_equal(window(64 << 20, i % 2 ? 0.55 : 0.95, k++), 0);
	/* slow, but with too little traffic to judge: the count of low windows is not reset */
	assert_int_equal(window(FL_LIVE_MIN_BYTES - 1, 0.4, k++), 0);
	assert_int_equal(window(FL_LIVE_MIN_BYTES - 1, 0.4, k++), 0);
	assert_int_equal(told.n, 0);
}

/*
 * Requests too small for the wire to pace them (latency does: 4 KiB is 4.1 us at
 * line rate here) read far below it on a healthy hop and are not judged, nor
 * do they break a run of slow windows of large requests.
 */
static void latency_bound_windows_are_not_judged(void **state)
{
	uint64_t small = 4096, large = 8192; /* 4.1 and 8.2 us at 1 GB/s */
	int k = 1;

	(void)state;
	for (int i = 0; i < 4; i++)
		assert_int_equal(window_in(64 << 20, small, 0.12, k++), 0);
	assert_int_equal(told.n, 0);
	assert_int_equal(window_in(64 << 20, large, 0.5, k++), 0);
	assert_int_equal(window_in(64 << 20, small, 0.95, k++), 0);
	assert_int_equal(window_in(64 << 20, large, 0.5, k++), 1); /* the second slow window */
	assert_int_equal(told.state[0], FL_LIVE_APPEARED);
	assert_float_equal(told.f[0].ratio, 0.5, 1e-6);
	/* the request carrying the median byte decides: here 4 KiB, not judged */
	for (int i = 0; i < 2; i++) {
		moved_in(0, 56 << 20, small, 0.97);
		moved_in(0, 8 << 20, REQUEST, 0.97);
		assert_int_equal(judge(k++), 0);
	}
	assert_int_equal(told.n, 1);
	/* here 1 MiB, though the mean request (4.1 KB) is under the bound: judged */
	for (int i = 0; i < 2; i++) {
		moved_in(0, 16 << 20, 1024, 0.97);
		moved_in(0, 48 << 20, REQUEST, 0.97);
		judge(k++);
	}
	assert_int_equal(told.n, 2);
	assert_int_equal(told.state[1], FL_LIVE_CLEARED);
}

/*
 * A 100 Mbit/s port (12.5 MB/s, the lab's slowest tcp hops; its presets' ports are as slow):
 * halved, it moves 3.1 MB in a 0.5 s window, less than 4 MiB, and is judged all the same,
 * since that is more than a quarter of what the line moves (1.56 MB). A window with less is
 * not.
 */
static void slow_ports_judged_on_a_quarter_of_their_line(void **state)
{
	const double line = 0.0125; /* GB/s: bytes per ns */
	uint64_t halved = (uint64_t)(line * 1e9 * 0.5 * 0.5), little = 1 << 20;
	int k = 1;

	(void)state;
	rep.devs[0].speed_mbps = 100;
	rep.nhops = 1;
	assert_true(halved < FL_LIVE_MIN_BYTES && little < line * 1e9 * 0.5 / 4);
	for (int i = 0; i < 2; i++) {
		moved_in(0, little, REQUEST, 0.5 * line);
		assert_int_equal(judge(k++), 0);
	}
	assert_int_equal(told.n, 0);
	moved_in(0, halved, REQUEST, 0.5 * line);
	assert_int_equal(judge(k++), 0);
	moved_in(0, halved, REQUEST, 0.5 * line);
	assert_int_equal(judge(k++), 1); /* the second slow window */
	assert_int_equal(told.state[0], FL_LIVE_APPEARED);
	assert_float_equal(told.f[0].ratio, 0.5, 1e-3);
}

/*
 * 800 Gb/s (100 GB/s): a 512 KiB request is 5.2 us on the wire, latency-bound
 * alone. An ib sender with 8 of them in flight (4 requests' time outstanding
 * on average beyond one) keeps its wire busy: its windows are judged, and a
 * port at half speed is found. The same hop one request at a time is not.
 */
static void xdr_window(double ratio, double in_flight, int k)
{
	uint64_t bytes = 64 << 20, request = 512 << 10, requests = bytes / request;
	uint64_t busy = (uint64_t)((double)bytes / (100.0 * ratio));

	hops[0].t.bytes += bytes;
	hops[0].t.messages += requests;
	hops[0].t.sizes[fl_size_bucket(request)] += requests;
	hops[0].t.wire_times[fl_time_bucket((uint64_t)((double)request / (100.0 * ratio)))] +=
		requests;
	hops[0].t.wire_bytes += bytes;
	hops[0].wire_ns += busy;
	hops[0].active_ns += busy;
	hops[0].t.outstanding_ns += (uint64_t)(in_flight * (double)busy);
	hops[0].t.peer_wait_ns += busy / 10; /* waits for the receiver: not in flight */
	judge(k);
}

static void xdr_windows_judged_by_requests_in_flight(void **state)
{
	int k = 1;

	(void)state;
	snprintf(rep.transport, sizeof(rep.transport), "ib");
	rep.devs[0].speed_mbps = 800000;
	hop(&hops[0], FL_HOP_SEND, "a", "b", "mlx5_0");
	rep.nhops = 1;
	for (int i = 0; i < 3; i++)
		xdr_window(0.5, 1.05, k++);
	assert_int_equal(told.n, 0);
	xdr_window(0.95, 8.0, k++);
	xdr_window(0.5, 8.0, k++);
	assert_int_equal(told.n, 0);
	xdr_window(0.5, 8.0, k++);
	assert_int_equal(told.n, 1);
	assert_int_equal(told.state[0], FL_LIVE_APPEARED);
	assert_float_equal(told.f[0].ratio, 0.5, 1e-3);
	assert_float_equal(told.f[0].line_gbs, 100.0, 1e-9);
}

/*
 * b/eth0 slow both ways: what it receives (a -> b, judged) and what it sends
 * (b -> c, this process's sender view): one device finding, which stands for
 * the link while it lasts and clears when one direction recovers.
 */
static void slow_both_ways_is_a_device(void **state)
{
	struct fl_live_finding now[4];
	int k = 1;

	(void)state;
	assert_int_equal(both_ways(0.5, 0.45, k++), 0);
	assert_int_equal(both_ways(0.5, 0.45, k++), 2); /* the link, then the device it is */
	assert_string_equal(told.f[0].kind, "link");
	assert_int_equal(told.state[1], FL_LIVE_APPEARED);
	assert_string_equal(told.f[1].kind, "device");
	assert_string_equal(told.f[1].culprit, "b/eth0");
	assert_string_equal(told.f[1].key.src_node, "b");
	assert_float_equal(told.f[1].ratio, 0.5, 1e-6); /* its faster direction */
	assert_float_equal(told.f[1].cost, 0.5, 1e-6);
	assert_float_equal(told.f[1].since_unix, 1002.0, 1e-9);
	assert_int_equal(told.f[1].windows, 2);
	assert_int_equal(fl_report_live_current(now, 4), 1);
	assert_string_equal(now[0].kind, "device");

	assert_int_equal(both_ways(0.5, 0.95, k++), 0); /* one good window of its sends... */
	assert_int_equal(both_ways(0.5, 0.96, k++), 1); /* ...two: one direction is at speed */
	assert_int_equal(told.state[2], FL_LIVE_CLEARED);
	assert_string_equal(told.f[2].culprit, "b/eth0");
	assert_float_equal(told.f[2].ratio, 0.96, 1e-6); /* the window that recovered */
	assert_float_equal(told.f[2].since_unix, 1002.0, 1e-9);
	assert_int_equal(fl_report_live_current(now, 4), 1);
	assert_string_equal(now[0].kind, "link"); /* what is left: the hop into b */
	assert_int_equal(told.n, 3);
}

/* Slow one way only: its receives stay a link, its sends (a sender's view) say nothing. */
static void one_way_is_no_device(void **state)
{
	struct fl_live_finding now[4];
	int k = 1;

	(void)state;
	for (int i = 0; i < 4; i++)
		both_ways(0.5, 0.97, k++);
	assert_int_equal(told.n, 1);
	assert_string_equal(told.f[0].kind, "link");
	fl_report_live_reset();
	memset(&told, 0, sizeof(told));
	for (int i = 0; i < 4; i++)
		assert_int_equal(both_ways(0.97, 0.4, k++), 0);
	assert_int_equal(fl_report_live_current(now, 4), 0);
}

/*
 * Over verbs the receiver times no wire, and an ext receiver's posted -> done holds its wait for
 * the sender: there the receive view is no evidence, the sends stay links.
 */
static void verbs_receives_are_no_evidence(void **state)
{
	int k = 1;

	(void)state;
	snprintf(rep.transport, sizeof(rep.transport), "ib");
	for (int i = 0; i < 4; i++)
		both_ways(0.5, 0.5, k++);
	assert_int_equal(told.n, 1);
	assert_string_equal(told.f[0].kind, "link");
	assert_string_equal(told.f[0].culprit, "b/eth0 -> c/eth0"); /* the send judged for verbs */
	fl_report_live_reset();
	memset(&told, 0, sizeof(told));
	snprintf(rep.transport, sizeof(rep.transport), "ext");
	for (int i = 0; i < 4; i++)
		both_ways(0.5, 0.5, k++);
	assert_int_equal(told.n, 1);
	assert_string_equal(told.f[0].kind, "link");
}

static void textfile_carries_the_findings(void **state)
{
	struct fl_live_finding f = { .kind = "link", .ratio = 0.5, .cost = 0.5,
				     .since_unix = 1002.0 };
	struct fl_live_prom p = { .node = "n\"1", .pid = 42, .rank = 3, .up = 1,
				  .updated_unix = 1003.5, .window_s = 0.5, .findings = &f,
				  .nfindings = 1 };
	char *text;
	size_t len;

	(void)state;
	snprintf(f.culprit, sizeof(f.culprit), "a\\b/eth0 -> c/eth0");
	snprintf(f.key.src_node, sizeof(f.key.src_node), "a\\b");
	assert_int_equal(fl_report_live_prom(&p, &text, &len), 0);
	assert_int_equal(strlen(text), len);
	assert_non_null(strstr(text, "# TYPE fabriclab_live_findings gauge\n"
				     "fabriclab_live_findings{node=\"n\\\"1\",pid=\"42\",rank=\"3\"} 1\n"));
	assert_non_null(strstr(text, "fabriclab_live_finding_ratio{node=\"n\\\"1\",pid=\"42\","
				     "rank=\"3\",kind=\"link\",culprit=\"a\\\\b/eth0 -> c/eth0\","
				     "src_node=\"a\\\\b\","));
	assert_non_null(strstr(text, "} 0.5\n"));
	assert_non_null(strstr(text, "fabriclab_live_finding_since_seconds{"));
	assert_non_null(strstr(text, "dst_dev=\"\"} 1002.000\n")); /* seconds, not 1.002e+03 */
	assert_non_null(strstr(text, "fabriclab_live_up{node=\"n\\\"1\",pid=\"42\",rank=\"3\"} 1\n"));
	free(text);

	p.up = 0;
	p.nfindings = 0;
	assert_int_equal(fl_report_live_prom(&p, &text, &len), 0);
	assert_null(strstr(text, "fabriclab_live_finding_ratio{"));
	assert_non_null(strstr(text, "fabriclab_live_findings{node=\"n\\\"1\",pid=\"42\",rank=\"3\"} 0\n"));
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(halved_appears_changes_clears, setup),
		cmocka_unit_test_setup(hovering_logs_once, setup),
		cmocka_unit_test_setup(starved_windows_are_not_judged, setup),
		cmocka_unit_test_setup(noise_says_nothing, setup),
		cmocka_unit_test_setup(latency_bound_windows_are_not_judged, setup),
		cmocka_unit_test_setup(slow_ports_judged_on_a_quarter_of_their_line, setup),
		cmocka_unit_test_setup(xdr_windows_judged_by_requests_in_flight, setup),
		cmocka_unit_test_setup(slow_both_ways_is_a_device, setup_device),
		cmocka_unit_test_setup(one_way_is_no_device, setup_device),
		cmocka_unit_test_setup(verbs_receives_are_no_evidence, setup_device),
		cmocka_unit_test_setup(textfile_carries_the_findings, setup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
