/*
 * The ib sender's cable clock (ib_pace.c): a paced message's wire interval is
 * its bytes at the paced rate, without the time the proxy thread was away
 * between pieces, but with the time a pause window held
 * them (a full send queue is the peer's emulated NIC not running: the host's
 * too); one cable per connection, so messages queue behind each other.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "plugin/transport/ib/ib_comm.h"
#include "plugin/transport/pace.h"

#define RATE 50000000ULL /* 50 MB/s: 5000 bytes are 100 us */
#define US 1000ULL

struct fixture {
	struct fl_pacer pacer;
	struct ib_send_comm comm;
	struct ib_send_req req;
};

static struct fixture *paced(uint64_t rate)
{
	struct fixture *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	fl_pace_init(&f->pacer, rate, 0, 0);
	f->comm.link.pacer = &f->pacer;
	return f;
}

static void test_back_to_back_pieces_take_their_bytes_at_the_rate(void **state)
{
	struct fixture *f = paced(RATE);

	(void)state;
	for (int k = 0; k < 10; k++)
		ib_pace_send_piece(&f->comm, &f->req, 1000 * US + (uint64_t)k * 100 * US, 5000);
	assert_int_equal(f->req.cable_start_ns, 1000 * US);
	assert_int_equal(f->req.cable_free_ns, 2000 * US);
	assert_int_equal(f->req.host_idle_ns, 0);
	free(f);
}

static void test_host_absence_between_pieces_is_left_out(void **state)
{
	struct fixture *f = paced(RATE);

	(void)state;
	ib_pace_send_piece(&f->comm, &f->req, 0, 5000);
	/* the thread is away 50 ms, then posts the rest at once (the pacer's catch-up) */
	for (int k = 0; k < 9; k++)
		ib_pace_send_piece(&f->comm, &f->req, 50000 * US, 5000);
	assert_int_equal(f->req.host_idle_ns, 50000 * US - 100 * US);
	/* the interval the wrap sees: cable_start + idle -> cable_free is 10 pieces, 1 ms */
	assert_int_equal(f->req.cable_free_ns - (f->req.cable_start_ns + f->req.host_idle_ns),
			 1000 * US);
	free(f);
}

static void test_a_pause_window_is_wire_time(void **state)
{
	struct fixture *f = paced(RATE);

	(void)state;
	fl_pace_set_stall(&f->pacer, 40000 * US, 100000 * US, 0); /* paused 0-40 ms of each 100 */
	ib_pace_send_piece(&f->comm, &f->req, 0, 5000);
	ib_pace_send_piece(&f->comm, &f->req, 45000 * US, 5000);
	/* only the 5 ms after the pause ended were the host's */
	assert_int_equal(f->req.host_idle_ns, 5000 * US);
	free(f);
}

static void test_messages_share_one_cable(void **state)
{
	struct fixture *f = paced(RATE);
	struct ib_send_req next = { 0 };

	(void)state;
	ib_pace_send_piece(&f->comm, &f->req, 0, 50000); /* 1 ms of wire */
	ib_pace_send_piece(&f->comm, &next, 10 * US, 5000);
	assert_int_equal(next.cable_start_ns, 1000 * US);
	assert_int_equal(next.cable_free_ns, 1100 * US);
	free(f);
}

static void test_unpaced_links_keep_the_nics_clock(void **state)
{
	struct fixture *f = paced(0);

	(void)state;
	ib_pace_send_piece(&f->comm, &f->req, 0, 5000);
	ib_pace_send_piece(&f->comm, &f->req, 50000 * US, 5000);
	assert_int_equal(f->req.cable_free_ns, 0);
	assert_int_equal(f->req.host_idle_ns, 0);
	free(f);
}

static void test_the_receivers_slower_rate_sets_the_cable(void **state)
{
	struct fixture *f = paced(RATE);

	(void)state;
	f->comm.peer_rx_kib = (uint32_t)((RATE / 2) >> 10); /* the receiver takes half */
	ib_pace_send_piece(&f->comm, &f->req, 0, 5000);
	assert_in_range(f->req.cable_free_ns, 200 * US, 201 * US);
	free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_back_to_back_pieces_take_their_bytes_at_the_rate),
		cmocka_unit_test(test_host_absence_between_pieces_is_left_out),
		cmocka_unit_test(test_a_pause_window_is_wire_time),
		cmocka_unit_test(test_messages_share_one_cable),
		cmocka_unit_test(test_unpaced_links_keep_the_nics_clock),
		cmocka_unit_test(test_the_receivers_slower_rate_sets_the_cable),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
