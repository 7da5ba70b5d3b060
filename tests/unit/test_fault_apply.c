/*
 * Applying FABRICLAB_FAULT (fault_state.c, fault_conn.c, fault_props.c) against a
 * fake transport: which connections get which pacer, the send hold of slow, the
 * failure of fail, nogdr and the link rate in the properties, what is logged and
 * what the report's injected list holds.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "plugin/base/error.h"
#include "plugin/fault/fault.h"
#include "plugin/base/log.h"
#include "plugin/transport/pace.h"

#define MS 1000000ull

/* ---- a fake transport with two devices, eth0 (10 Gbit/s) and mlx5_0 (GDR-capable) ---- */

static struct fl_pacer *attached; /* what set_pacer got last */

static int fake_devices(int *ndev)
{
	*ndev = 2;
	return FL_OK;
}

static int fake_props(int dev, struct fl_props *p)
{
	memset(p, 0, sizeof(*p));
	p->name = dev ? "mlx5_0" : "eth0";
	p->speed_mbps = dev ? 200000 : 10000;
	p->ptr_support = dev ? FL_PTR_HOST | FL_PTR_CUDA | FL_PTR_DMABUF : FL_PTR_HOST;
	return FL_OK;
}

static void fake_set_pacer(void *comm, struct fl_pacer *p)
{
	(void)comm;
	attached = p;
}

static const struct fl_transport fake = {
	.name = "fake",
	.devices = fake_devices,
	.get_properties = fake_props,
	.set_pacer = fake_set_pacer,
};

/* ---- captured log ---- */

static char logbuf[16384];
static int warns;

static void capture(int level, unsigned long flags, const char *file, int line, const char *fmt,
		    ...)
{
	size_t used = strlen(logbuf);
	va_list ap;

	(void)flags, (void)file, (void)line;
	warns += level == FL_LOG_WARN;
	va_start(ap, fmt);
	vsnprintf(logbuf + used, sizeof(logbuf) - used, fmt, ap);
	va_end(ap);
	used = strlen(logbuf);
	snprintf(logbuf + used, sizeof(logbuf) - used, "\n");
}

static int start(const char *fault, const char *link_rate)
{
	fl_fault_reset_for_tests();
	logbuf[0] = '\0';
	warns = 0;
	attached = NULL;
	setenv("FABRICLAB_NODE_NAME", "node3", 1);
	setenv("FABRICLAB_RANK", "3", 1);
	if (fault)
		setenv(FL_FAULT_ENV, fault, 1);
	else
		unsetenv(FL_FAULT_ENV);
	if (link_rate)
		setenv(FL_LINK_RATE_ENV, link_rate, 1);
	else
		unsetenv(FL_LINK_RATE_ENV);
	fl_log_set_logger(capture);
	return fl_fault_init(&fake);
}

static const struct fl_endpoint me_eth0 = { "node3", "eth0", 0, 3, 0 };
static const struct fl_endpoint me_mlx = { "node3", "mlx5_0", 1, 3, 0 };
static const struct fl_endpoint node4 = { "node4", "eth0", 0, 4, 0 };
static const struct fl_endpoint node5 = { "node5", "eth0", 0, 5, 0 };

static struct fl_fault_conn *attach(bool send, const struct fl_endpoint *self,
				    const struct fl_endpoint *peer)
{
	static uint32_t id;
	struct fl_fault_conn *f = NULL;

	attached = NULL;
	assert_int_equal(fl_fault_attach(&fake, (void *)1, send, ++id, self, peer, &f), FL_OK);
	return f;
}

/* ---- tests ---- */

static void test_unset_costs_nothing(void **state)
{
	struct fl_props p;

	(void)state;
	assert_int_equal(start(NULL, NULL), FL_OK);
	assert_false(fl_fault_active());
	assert_null(attach(true, &me_eth0, &node4));
	assert_null(attached);
	fake_props(1, &p);
	fl_fault_props(1, &p);
	assert_int_equal(p.ptr_support, FL_PTR_HOST | FL_PTR_CUDA | FL_PTR_DMABUF);
	assert_int_equal(p.speed_mbps, 200000);
	assert_string_equal(logbuf, "");
}

static void test_malformed_values_fail_init(void **state)
{
	(void)state;
	assert_int_equal(start("throttle:rate=50%;slow:factor=x", NULL), FL_ERR_USAGE);
	assert_non_null(strstr(fl_error_text(), "FABRICLAB_FAULT rule 2 (\"slow:factor=x\")"));
	assert_false(fl_fault_active());
	assert_int_equal(start(NULL, "10gbps"), FL_ERR_USAGE);
	assert_non_null(strstr(fl_error_text(), "FABRICLAB_LINK_RATE \"10gbps\": expected a rate"));
	assert_int_equal(start(NULL, "0gbit"), FL_ERR_USAGE);
	assert_int_equal(start(NULL, "2.5GBit"), FL_OK);
	assert_int_equal(fl_fault_line_rate(&fake, 0), 312500000);
}

static void test_unmatched_rules_said_at_info(void **state)
{
	(void)state;
	assert_int_equal(start("throttle:node=node7,rate=50%;nogdr:dev=ib9;slow:rank=1,delay=1ms;"
			       "fail:node=NODE3,after=1s", NULL), FL_OK);
	assert_non_null(strstr(logbuf, "rule 1 (throttle:node=node7,rate=50%,dir=both) matches "
				       "nothing on node node3 (it is for node node7)"));
	assert_non_null(strstr(logbuf, "rule 2 (nogdr:dev=ib9) matches nothing on node node3 (no "
				       "device ib9 here)"));
	assert_non_null(strstr(logbuf, "rule 3 (slow:rank=1,delay=1ms) matches nothing on node "
				       "node3 (this is rank 3)"));
	assert_non_null(strstr(logbuf, "rule 4 (fail:node=NODE3,after=1s) may apply on node node3"));
	assert_int_equal(warns, 0);
}

static void test_device_throttle_shares_one_bucket(void **state)
{
	struct fl_fault_conn *a, *b, *rx;
	struct fl_pacer *pa, *pb;
	struct fl_fault_injected inj[4];

	(void)state;
	assert_int_equal(start("throttle:node=node3,dev=eth0,rate=25%,dir=tx", NULL), FL_OK);
	a = attach(true, &me_eth0, &node4);
	pa = attached;
	b = attach(true, &me_eth0, &node5);
	pb = attached;
	assert_non_null(a);
	assert_non_null(pa);
	assert_non_null(pb);
	assert_true(pa != pb);
	/* Both connections obey one bucket of the device: 25% of 10 Gbit/s. */
	assert_int_equal(pa->nshared, 1);
	assert_ptr_equal(pa->shared[0], pb->shared[0]);
	assert_int_equal(pa->shared[0]->rate_bytes_per_s, 312500000);
	/* dir=tx: receives and the other device are not touched. */
	rx = attach(false, &me_eth0, &node4);
	assert_null(rx);
	assert_null(attach(true, &me_mlx, &node4));
	assert_int_equal(warns, 2);
	assert_non_null(strstr(logbuf, "injected fault on connection"));
	assert_int_equal(fl_fault_injected_list(inj, 4), 1);
	assert_string_equal(inj[0].rule, "throttle:node=node3,dev=eth0,rate=25%,dir=tx");
	assert_string_equal(inj[0].dir, "tx");
	assert_string_equal(inj[0].peer, "");
	assert_int_equal(inj[0].connections, 2);
	fl_fault_release(a);
	fl_fault_release(b);
}

static void test_hop_throttle_buckets_per_peer(void **state)
{
	struct fl_fault_conn *a, *b, *c;
	struct fl_pacer *pa, *pb;

	(void)state;
	assert_int_equal(start("throttle:peer=node4,rate=1gbit", "4gbit"), FL_OK);
	a = attach(true, &me_eth0, &node4);
	pa = attached;
	b = attach(false, &me_eth0, &node4);
	pb = attached;
	/* Each direction of the hop has its own bucket; tx also obeys the link rate. */
	assert_int_equal(pa->nshared, 2);
	assert_int_equal(pa->shared[0]->rate_bytes_per_s, 500000000);
	assert_int_equal(pa->shared[1]->rate_bytes_per_s, 125000000);
	assert_int_equal(pb->nshared, 1);
	assert_int_equal(pb->shared[0]->rate_bytes_per_s, 125000000);
	assert_true(pa->shared[1] != pb->shared[0]);
	/* Toward another peer only the link rate applies. */
	c = attach(true, &me_eth0, &node5);
	assert_int_equal(attached->nshared, 1);
	assert_int_equal(attached->shared[0]->rate_bytes_per_s, 500000000);
	assert_ptr_equal(attached->shared[0], pa->shared[0]);
	fl_fault_release(a);
	fl_fault_release(b);
	fl_fault_release(c);
}

static void test_stall_windows_on_the_hop(void **state)
{
	struct fl_fault_conn *f;

	(void)state;
	assert_int_equal(start("stall:node=node3,for=5ms,every=100ms", NULL), FL_OK);
	f = attach(false, &me_eth0, &node4);
	assert_non_null(f);
	assert_int_equal(attached->nshared, 1);
	assert_int_equal(attached->shared[0]->stall_for_ns, 5 * MS);
	assert_int_equal(attached->shared[0]->stall_every_ns, 100 * MS);
	assert_int_equal(attached->shared[0]->rate_bytes_per_s, 0);
	fl_fault_release(f);
}

static void test_slow_holds_each_send_and_receive(void **state)
{
	struct fl_fault_conn *f;
	uint64_t t = 1000 * MS;

	(void)state;
	assert_int_equal(start("slow:node=node3,delay=2ms", NULL), FL_OK);
	/* Receives are held as sends are: a slow GPU frees its buffers late. */
	f = attach(false, &me_eth0, &node4);
	assert_non_null(f);
	assert_null(attached);
	assert_true(fl_fault_hold_post(f, 4096, t));
	assert_false(fl_fault_hold_post(f, 4096, t + 2 * MS));
	fl_fault_release(f);
	f = attach(true, &me_eth0, &node4);
	assert_non_null(f);
	assert_null(attached); /* slow needs no pacer: its links stay at full speed */
	assert_true(fl_fault_hold_post(f, 4096, t));
	assert_true(fl_fault_hold_post(f, 4096, t + 2 * MS - 1));
	assert_false(fl_fault_hold_post(f, 4096, t + 2 * MS));
	/* The transport may still refuse: no new hold until it takes the send. */
	assert_false(fl_fault_hold_post(f, 4096, t + 3 * MS));
	fl_fault_post_taken(f);
	assert_true(fl_fault_hold_post(f, 4096, t + 3 * MS));
	assert_false(fl_fault_hold_post(f, 4096, t + 5 * MS));
	fl_fault_release(f);

	/* factor=3 at 8 Mbit/s (1 MB/s): 1000 bytes are held twice their 1 ms. */
	assert_int_equal(start("slow:factor=3", "8mbit"), FL_OK);
	f = attach(true, &me_eth0, &node4);
	assert_true(fl_fault_hold_post(f, 1000, t));
	assert_true(fl_fault_hold_post(f, 1000, t + 2 * MS - 1000));
	assert_false(fl_fault_hold_post(f, 1000, t + 2 * MS));
	fl_fault_release(f);
}

static void test_fail_after_bytes_and_time(void **state)
{
	struct fl_fault_conn *f;

	(void)state;
	assert_int_equal(start("fail:node=node3,after_bytes=1M", NULL), FL_OK);
	f = attach(false, &me_eth0, &node4);
	assert_int_equal(fl_fault_check_fail(f, 0), FL_OK);
	fl_fault_moved(f, 1048575);
	assert_int_equal(fl_fault_check_fail(f, 0), FL_OK);
	fl_fault_moved(f, 1);
	assert_int_equal(fl_fault_check_fail(f, 0), FL_ERR_SYSTEM);
	assert_non_null(strstr(fl_error_text(), "injected fault: FABRICLAB_FAULT rule 1 "
						"(fail:node=node3,after_bytes=1M)"));
	/* Once failed, always failed. */
	assert_int_equal(fl_fault_check_fail(f, 0), FL_ERR_SYSTEM);
	fl_fault_release(f);

	assert_int_equal(start("fail:after=1h", NULL), FL_OK);
	f = attach(true, &me_eth0, &node4);
	assert_int_equal(fl_fault_check_fail(f, 1), FL_OK);
	assert_int_equal(fl_fault_check_fail(f, UINT64_MAX), FL_ERR_SYSTEM);
	fl_fault_release(f);
}

static void test_nogdr_and_link_rate_in_properties(void **state)
{
	struct fl_props p;
	struct fl_fault_injected inj[4];

	(void)state;
	assert_int_equal(start("nogdr:node=node3,dev=mlx5_0", "2gbit"), FL_OK);
	for (int round = 0; round < 3; round++) {
		fake_props(1, &p);
		fl_fault_props(1, &p);
		assert_int_equal(p.ptr_support, FL_PTR_HOST);
		assert_int_equal(p.speed_mbps, 2000);
		fake_props(0, &p);
		fl_fault_props(0, &p);
		assert_int_equal(p.ptr_support, FL_PTR_HOST);
		assert_int_equal(p.speed_mbps, 2000);
	}
	/* Said once per device, however often NCCL asks. */
	assert_int_equal(warns, 1);
	assert_non_null(strstr(logbuf, "injected fault on device mlx5_0"));
	assert_int_equal(fl_fault_injected_list(inj, 4), 1);
	assert_string_equal(inj[0].action, "nogdr");
	assert_string_equal(inj[0].dev, "mlx5_0");
	assert_int_equal(inj[0].ptr_support_before, FL_PTR_HOST | FL_PTR_CUDA | FL_PTR_DMABUF);
	assert_int_equal(inj[0].ptr_support_after, FL_PTR_HOST);
}

/* The speed reported for a port that says it wrong: it paces nothing, LINK_RATE wins. */
static void test_port_speed_reported_not_paced(void **state)
{
	struct fl_props p;

	(void)state;
	setenv(FL_PORT_SPEED_ENV, "250mbit", 1);
	assert_int_equal(start(NULL, NULL), FL_OK);
	assert_false(fl_fault_active());
	assert_null(attach(true, &me_eth0, &node4));
	fake_props(1, &p);
	fl_fault_props(1, &p);
	assert_int_equal(p.speed_mbps, 250);
	assert_int_equal(p.ptr_support, FL_PTR_HOST | FL_PTR_CUDA | FL_PTR_DMABUF);
	assert_int_equal(fl_fault_line_rate(&fake, 1), 31250000);
	assert_non_null(strstr(logbuf, "FABRICLAB_PORT_SPEED: every device of node node3 is "
				       "reported at 0.250 Gbit/s (not paced)"));
	assert_int_equal(start(NULL, "2gbit"), FL_OK);
	fake_props(1, &p);
	fl_fault_props(1, &p);
	assert_int_equal(p.speed_mbps, 2000);
	setenv(FL_PORT_SPEED_ENV, "fast", 1);
	assert_int_equal(start(NULL, NULL), FL_ERR_USAGE);
	assert_non_null(strstr(fl_error_text(), "FABRICLAB_PORT_SPEED \"fast\": expected a rate"));
	unsetenv(FL_PORT_SPEED_ENV);
}

static void test_nogdr_with_a_peer_never_applies_to_a_device(void **state)
{
	struct fl_props p;

	(void)state;
	assert_int_equal(start("nogdr:peer=node4", NULL), FL_OK);
	fake_props(1, &p);
	fl_fault_props(1, &p);
	assert_int_equal(p.ptr_support, FL_PTR_HOST | FL_PTR_CUDA | FL_PTR_DMABUF);
	assert_int_equal(warns, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unset_costs_nothing),
		cmocka_unit_test(test_malformed_values_fail_init),
		cmocka_unit_test(test_unmatched_rules_said_at_info),
		cmocka_unit_test(test_device_throttle_shares_one_bucket),
		cmocka_unit_test(test_hop_throttle_buckets_per_peer),
		cmocka_unit_test(test_stall_windows_on_the_hop),
		cmocka_unit_test(test_slow_holds_each_send_and_receive),
		cmocka_unit_test(test_fail_after_bytes_and_time),
		cmocka_unit_test(test_nogdr_and_link_rate_in_properties),
		cmocka_unit_test(test_port_speed_reported_not_paced),
		cmocka_unit_test(test_nogdr_with_a_peer_never_applies_to_a_device),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
