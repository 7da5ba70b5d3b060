/*
 * The diagnosis from 10 Gb/s TCP to 800 Gb/s XDR, on hop sets a simple model of
 * the fabric computes (no lab run): where a request's time on the wire is
 * short against the round trip, so latency is significant, every fault of the
 * field is named with its kind and culprit and healthy rings name nothing.
 *
 * The model, per hop: a step puts `in_flight` requests of `request` bytes out
 * at once (NCCL: channels per NIC x sends in flight per connection); they leave
 * one after the other at the port's rate and each completes a round trip
 * later, so a step keeps the hop busy in_flight x request / rate + round trip.
 * The figures are what the plugin measures of that: bytes, busy time (union of
 * posted -> done), the requests' outstanding time summed, their median time.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "plugin/base/fl_types.h"
#include "plugin/verdict/verdict.h"

#define MAX_NODES 16
#define GiB (1ULL << 30)

struct fabric {
	const char *name;
	const char *transport; /* "ib" (verbs: senders time the wire) or "socket" */
	double line_gbs;       /* GB/s */
	double rtt_us;         /* round trip with the completion */
	uint64_t request;      /* NCCL's send size */
	int in_flight;         /* requests out at once on the hop */
};

/* Real figures: docs/lab.md and the landscape's 3a/3b (NCCL v2.30.7 step sizes). */
static const struct fabric fabrics[] = {
	{ "tcp 10G, simple", "socket", 1.25, 30.0, 512 << 10, 8 },
	{ "hdr 200G, simple", "ib", 25.0, 3.0, 512 << 10, 8 },
	{ "ndr 400G, simple", "ib", 50.0, 2.6, 512 << 10, 8 },
	{ "ndr 400G, ll", "ib", 50.0, 2.6, 32 << 10, 16 },
	{ "xdr 800G, simple", "ib", 100.0, 2.6, 512 << 10, 8 },
	{ "xdr 800G, ll128", "ib", 100.0, 2.6, 576000, 8 },
	{ "xdr 800G, 1 channel", "ib", 100.0, 2.6, 512 << 10, 4 },
	{ "roce 400G, simple", "ib", 50.0, 5.0, 512 << 10, 8 },
};

/* What is wrong with one hop. */
struct hop_fault {
	double rate;     /* share of the line rate the port trains at (1: healthy) */
	double add_us;   /* added one-way latency */
	double paused;   /* share of the time the port is paused */
	double late_us;  /* the receiver posts this late each step (a straggler) */
};

static const struct hop_fault healthy = { 1.0, 0.0, 0.0, 0.0 };

/* Deterministic spread of healthy hops: +-1.5%, as a quiet lab shows (docs/report-format.md). */
static const double noise[MAX_NODES] = { 1.0,   0.985, 1.01, 0.995, 1.015, 0.99,  1.005, 0.988,
					 1.012, 0.997, 1.0,  0.986, 1.008, 0.993, 1.002, 0.991 };

static struct fl_hop_figures hops[MAX_NODES];
static struct hop_fault faults[MAX_NODES];

static void model_hop(const struct fabric *f, size_t i, size_t nodes)
{
	const struct hop_fault *x = &faults[i];
	struct fl_hop_figures *h = &hops[i];
	double rate = f->line_gbs * x->rate * noise[i] * 1e3; /* bytes per us */
	double rtt = f->rtt_us + 2.0 * x->add_us, t = (double)f->request / rate;
	double n = (double)f->in_flight, steps;
	double burst_us = n * t + rtt;
	double outstanding_us = t * n * (n + 1) / 2 + n * rtt;
	/* the others wait on the ring a little each step */
	double wait_us = n * (x->late_us + 0.02 * burst_us);

	memset(h, 0, sizeof(*h));
	snprintf(h->src_node, sizeof(h->src_node), "node%zu", i);
	snprintf(h->dst_node, sizeof(h->dst_node), "node%zu", (i + 1) % nodes);
	snprintf(h->src_dev, sizeof(h->src_dev), "mlx5_0");
	snprintf(h->dst_dev, sizeof(h->dst_dev), "mlx5_0");
	snprintf(h->transport, sizeof(h->transport), "%s", f->transport);
	h->line_rate_gbs = f->line_gbs;
	h->bytes = GiB;
	h->messages = GiB / f->request;
	h->typical_request = f->request;
	steps = (double)h->messages / n;
	h->wire_seconds = steps * burst_us / (1.0 - x->paused) / 1e6;
	h->wire_gbs = (double)h->bytes / h->wire_seconds / 1e9;
	/* a pause catches the requests in flight then; the median request misses it */
	h->wire_p50_us = (n + 1) / 2 * t + rtt;
	outstanding_us = steps * outstanding_us + n * x->paused * h->wire_seconds * 1e6;
	if (!strcmp(f->transport, "ib")) {
		/* verbs: a sender waits for its receiver to post (its buffer goes out at once) */
		h->send_outstanding_seconds = (outstanding_us + steps * wait_us) / 1e6;
		h->send_wait_seconds = steps * wait_us / 1e6;
	} else {
		/* sockets: a receiver waits for its sender; a late one (the straggler) waits least */
		double recv_wait = n * (x->late_us ? 0.02 * burst_us : 0.5 * burst_us);

		h->outstanding_seconds = (outstanding_us + steps * recv_wait) / 1e6;
		h->peer_wait_seconds = steps * recv_wait / 1e6;
		h->active_seconds = h->wire_seconds + steps * recv_wait / n / 1e6;
	}
	h->mem_types = FL_PTR_CUDA;
	h->gdr_capable = 1;
}

static void model(const struct fabric *f, size_t nodes)
{
	for (size_t i = 0; i < nodes; i++)
		model_hop(f, i, nodes);
}

static void clear_faults(void)
{
	for (size_t i = 0; i < MAX_NODES; i++)
		faults[i] = healthy;
}

/* The port of node k: its outgoing hop (k -> k+1) and its incoming one (k-1 -> k). */
static void fault_device(size_t k, size_t nodes, struct hop_fault x)
{
	faults[k] = x;
	faults[(k + nodes - 1) % nodes] = x;
}

static void judge(size_t nodes, struct fl_verdict *v)
{
	struct fl_verdict_params p;

	fl_verdict_default_params(&p);
	fl_verdict_compute(hops, nodes, &p, v);
}

static void expect(const struct fabric *f, size_t nodes, const char *what,
		   enum fl_verdict_kind kind, const char *node, int hop)
{
	struct fl_verdict v;

	model(f, nodes);
	judge(nodes, &v);
	/*
	 * A ring of 4 leaves two hops to compare a device's two with: "not enough
	 * evidence" whose likeliest culprit is the right one is an honest answer there.
	 */
	if (nodes == 4 && kind != FL_VERDICT_NONE && v.kind == FL_VERDICT_UNSURE && node) {
		char likeliest[64];

		snprintf(likeliest, sizeof(likeliest), " %s/", node);
		assert_non_null(strstr(v.reason, likeliest));
		return;
	}
	if (v.kind != kind || (node && strcmp(v.node, node)) || (hop >= 0 && v.hop != hop))
		print_error("%s, %zu nodes, %s: got %s %s (hop %d): %s\n", f->name, nodes, what,
			    fl_verdict_kind_name(v.kind), v.node, v.hop, v.reason);
	assert_int_equal(v.kind, kind);
	if (node)
		assert_string_equal(v.node, node);
	if (hop >= 0)
		assert_int_equal(v.hop, hop);
	/* every hop judged on its rate: none left out as latency-bound */
	assert_int_equal(v.judged_hops, (int)nodes);
	assert_null(strstr(v.reason, "latency-bound"));
}

/* XDR and NCCL's LL: the regime the 7.5 us bound refused, one request alone latency-bound. */
static void test_regimes_are_latency_significant(void **state)
{
	(void)state;
	for (size_t r = 0; r < sizeof(fabrics) / sizeof(fabrics[0]); r++) {
		const struct fabric *f = &fabrics[r];
		bool alone = fl_wire_bound(f->request, f->line_gbs, 1.0);

		/* tcp's, hdr's and ndr's 512 KiB steps are wire-bound alone (10.5 us and more) */
		assert_true(alone == (f->request / (f->line_gbs * 1e3) >= 7.5));
		assert_true(fl_wire_bound(f->request, f->line_gbs, f->in_flight));
	}
	assert_false(fl_wire_bound(fabrics[4].request, fabrics[4].line_gbs, 1.0));
	assert_false(fl_wire_bound(fabrics[3].request, fabrics[3].line_gbs, 1.0));
}

static void test_healthy_rings_name_nothing(void **state)
{
	(void)state;
	for (size_t r = 0; r < sizeof(fabrics) / sizeof(fabrics[0]); r++)
		for (size_t nodes = 4; nodes <= MAX_NODES; nodes *= 2) {
			clear_faults();
			expect(&fabrics[r], nodes, "healthy", FL_VERDICT_NONE, NULL, -1);
		}
}

static void test_halved_cable_is_its_device(void **state)
{
	(void)state;
	for (size_t r = 0; r < sizeof(fabrics) / sizeof(fabrics[0]); r++)
		for (size_t nodes = 4; nodes <= MAX_NODES; nodes *= 2) {
			clear_faults();
			fault_device(2, nodes, (struct hop_fault){ .rate = 0.5 });
			expect(&fabrics[r], nodes, "halved cable", FL_VERDICT_DEVICE, "node2", -1);
		}
}

static void test_one_halved_direction_is_a_link(void **state)
{
	(void)state;
	for (size_t r = 0; r < sizeof(fabrics) / sizeof(fabrics[0]); r++)
		for (size_t nodes = 4; nodes <= MAX_NODES; nodes *= 2) {
			clear_faults();
			faults[1].rate = 0.5;
			expect(&fabrics[r], nodes, "halved link", FL_VERDICT_LINK, NULL, 1);
		}
}

static void test_port_trained_down_to_80_90_percent(void **state)
{
	static const double rates[] = { 0.8, 0.85, 0.9 };

	(void)state;
	for (size_t r = 0; r < sizeof(fabrics) / sizeof(fabrics[0]); r++)
		for (size_t nodes = 4; nodes <= MAX_NODES; nodes *= 2)
			for (size_t k = 0; k < 3; k++) {
				clear_faults();
				fault_device(nodes - 1, nodes,
					     (struct hop_fault){ .rate = rates[k] });
				char name[16];

				snprintf(name, sizeof(name), "node%zu", nodes - 1);
				expect(&fabrics[r], nodes, "downgraded port", FL_VERDICT_DEVICE,
				       name, -1);
			}
}

/*
 * A straggler adding 10% to a step a tenth of which is communication: it posts
 * its receives a whole burst late; its wires run at speed.
 */
static void test_straggler_adding_10_percent(void **state)
{
	(void)state;
	for (size_t r = 0; r < sizeof(fabrics) / sizeof(fabrics[0]); r++)
		for (size_t nodes = 4; nodes <= MAX_NODES; nodes *= 2) {
			const struct fabric *f = &fabrics[r];
			double burst = f->in_flight * (double)f->request / (f->line_gbs * 1e3) +
				       f->rtt_us;

			clear_faults();
			faults[(3 + nodes - 1) % nodes].late_us = burst; /* the hop into node3 */
			expect(f, nodes, "straggler", FL_VERDICT_NODE, "node3", -1);
		}
}

/* A PFC pause storm on one node's port: 40 ms of every 100 ms, both directions. */
static void test_pause_storm_is_its_device(void **state)
{
	(void)state;
	for (size_t r = 0; r < sizeof(fabrics) / sizeof(fabrics[0]); r++)
		for (size_t nodes = 4; nodes <= MAX_NODES; nodes *= 2) {
			clear_faults();
			fault_device(1, nodes, (struct hop_fault){ .rate = 1.0, .paused = 0.4 });
			expect(&fabrics[r], nodes, "pause storm", FL_VERDICT_DEVICE, "node1", -1);
		}
}

/*
 * 20 us more one way on one node: every request through it a round trip of
 * 40 us longer, which the requests in flight no longer cover. Over TCP's 30 us
 * round trip and 8 x 512 KiB in flight (3.4 ms on the wire) it costs 1%: no fault.
 */
static void test_added_latency_is_its_device(void **state)
{
	(void)state;
	for (size_t r = 1; r < sizeof(fabrics) / sizeof(fabrics[0]); r++)
		for (size_t nodes = 4; nodes <= MAX_NODES; nodes *= 2) {
			clear_faults();
			fault_device(2, nodes, (struct hop_fault){ .rate = 1.0, .add_us = 20.0 });
			expect(&fabrics[r], nodes, "added latency", FL_VERDICT_DEVICE, "node2", -1);
		}
	clear_faults();
	fault_device(2, 8, (struct hop_fault){ .rate = 1.0, .add_us = 20.0 });
	expect(&fabrics[0], 8, "added latency over tcp", FL_VERDICT_NONE, NULL, -1);
}

/* Requests in flight as the figures give them, and the rule at its edges. */
static void test_in_flight_and_the_rule(void **state)
{
	struct fl_hop_figures h = { 0 };

	(void)state;
	assert_float_equal(fl_requests_in_flight(4.0, 1.0, 1.5), 2.0, 1e-12);
	assert_float_equal(fl_requests_in_flight(1.0, 2.0, 1.0), 0.0, 1e-12);
	assert_float_equal(fl_requests_in_flight(1.0, 0.0, 0.0), 0.0, 1e-12);
	h.send_outstanding_seconds = 3.0;
	h.send_wait_seconds = 1.0;
	h.wire_seconds = 0.5;
	h.outstanding_seconds = 9.0;
	h.active_seconds = 1.0;
	assert_float_equal(fl_hop_in_flight(&h), 4.0, 1e-12); /* the sender's view first */
	h.send_outstanding_seconds = 0.0;
	assert_float_equal(fl_hop_in_flight(&h), 9.0, 1e-12);
	/* 512 KiB at 100 GB/s: 5.2 us alone; two in flight cover a 5 us round trip */
	assert_false(fl_wire_bound(512 << 10, 100.0, 1.0));
	assert_false(fl_wire_bound(512 << 10, 100.0, 1.9));
	assert_true(fl_wire_bound(512 << 10, 100.0, 2.0));
	/* 4 KiB at 1.25 GB/s (3.3 us): 2.5 in flight are not enough, 2.6 are */
	assert_false(fl_wire_bound(4096, 1.25, 2.5));
	assert_true(fl_wire_bound(4096, 1.25, 2.6));
	/* unknowns judge */
	assert_true(fl_wire_bound(0, 100.0, 0.0));
	assert_true(fl_wire_bound(4096, 0.0, 0.0));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_regimes_are_latency_significant),
		cmocka_unit_test(test_in_flight_and_the_rule),
		cmocka_unit_test(test_healthy_rings_name_nothing),
		cmocka_unit_test(test_halved_cable_is_its_device),
		cmocka_unit_test(test_one_halved_direction_is_a_link),
		cmocka_unit_test(test_port_trained_down_to_80_90_percent),
		cmocka_unit_test(test_straggler_adding_10_percent),
		cmocka_unit_test(test_pause_storm_is_its_device),
		cmocka_unit_test(test_added_latency_is_its_device),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
