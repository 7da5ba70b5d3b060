/*
 * The pacer with an injected clock: long-run rates, the one chunk of debt, the
 * burst an idle bucket earns, stall windows, and a shared (device) bucket.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "plugin/transport/pace.h"

#define NS_PER_S 1000000000ull
#define CHUNK (64u << 10)

/* Sends CHUNK pieces as fast as the pacer allows for `span` ns, stepping the clock by `step`. */
static uint64_t bytes_sent_in(struct fl_pacer *p, uint64_t t0, uint64_t span, uint64_t step)
{
	uint64_t sent = 0;

	for (uint64_t t = t0; t < t0 + span; t += step)
		while (fl_pace_allows(p, t, CHUNK))
			sent += CHUNK;
	return sent;
}

static void assert_near(double got, double want, double tol)
{
	if (got < want * (1 - tol) || got > want * (1 + tol))
		fail_msg("got %.0f, want %.0f within %.1f%%", got, want, tol * 100);
}

static void test_long_run_rate_matches_target(void **state)
{
	static const uint64_t rates[] = { 1000000, 125000000, 2500000000ull, 12500000000ull };

	(void)state;
	for (size_t i = 0; i < sizeof(rates) / sizeof(rates[0]); i++) {
		struct fl_pacer p;
		uint64_t t0 = 5 * NS_PER_S;
		double sent, burst = rates[i] / 2000 > CHUNK ? rates[i] / 2000 : CHUNK;
		/* The full bucket's credit and one chunk of debt come on top of the rate. */
		double want = 10.0 * (double)rates[i] + burst + CHUNK;

		fl_pace_init(&p, rates[i], CHUNK, t0);
		/* Ten seconds, the clock ticking every 10 us (every 200 us: a busy poller). */
		sent = (double)bytes_sent_in(&p, t0, 10 * NS_PER_S, 10000);
		assert_near(sent, want, 0.01);
		fl_pace_init(&p, rates[i], CHUNK, t0);
		sent = (double)bytes_sent_in(&p, t0, 10 * NS_PER_S, 200000);
		assert_near(sent, want, 0.01);
	}
}

static void test_one_chunk_of_debt_then_refused(void **state)
{
	struct fl_pacer p;
	uint64_t t0 = NS_PER_S;

	(void)state;
	fl_pace_init(&p, 1000000, CHUNK, t0);
	/* Full bucket: the burst goes, then one more chunk in debt, then nothing. */
	assert_true(fl_pace_allows(&p, t0, CHUNK));
	assert_true(fl_pace_allows(&p, t0, CHUNK));
	assert_false(fl_pace_allows(&p, t0, CHUNK));
	/* The debt (one chunk at 1 MB/s = 65.536 ms) must drain before the next. */
	assert_int_equal(fl_pace_wait_ns(&p, t0), 65536000);
	assert_false(fl_pace_allows(&p, t0 + 65535999, CHUNK));
	assert_true(fl_pace_allows(&p, t0 + 65536000, CHUNK));
}

static void test_a_huge_piece_is_one_debt(void **state)
{
	struct fl_pacer p;

	(void)state;
	fl_pace_init(&p, 1000000, CHUNK, NS_PER_S);
	assert_true(fl_pace_allows(&p, NS_PER_S, 4u << 20));
	/* 4 MiB at 1 MB/s less the 64 KiB credit. */
	assert_int_equal(fl_pace_wait_ns(&p, NS_PER_S), (4194304 - 65536) * 1000ull);
}

static void test_idle_credit_is_capped_at_the_burst(void **state)
{
	struct fl_pacer p;
	uint64_t t0 = NS_PER_S, later = t0 + 100 * NS_PER_S;

	(void)state;
	fl_pace_init(&p, 1000000, CHUNK, t0);
	/* After 100 s idle only burst + one chunk of debt go at once, not 100 MB. */
	assert_int_equal(bytes_sent_in(&p, later, 1, 1), 2 * CHUNK);
}

/* A mover with bytes waiting, run only every 10 ms, still gets its rate; an idle one does not. */
static void test_starved_mover_catches_up_idle_one_does_not(void **state)
{
	struct fl_pacer p;
	uint64_t rate = 100000000, t0 = NS_PER_S, sent = 0;

	(void)state;
	fl_pace_init(&p, rate, CHUNK, t0);
	for (uint64_t t = t0; t < t0 + NS_PER_S; t += 10 * 1000000) {
		while (fl_pace_allows(&p, t, CHUNK)) {
			sent += CHUNK;
			fl_pace_backlog(&p, t);
		}
	}
	assert_near((double)sent, (double)rate, 0.02);
	/* Idle for 10 ms with nothing waiting: only the burst and one chunk of debt at once. */
	fl_pace_init(&p, rate, CHUNK, t0);
	assert_int_equal(bytes_sent_in(&p, t0 + 5 * NS_PER_S, 1, 1), 2 * CHUNK);
	/* Refused, then back 30 ms later: 30 ms of wire time (3 MB) go at once. */
	fl_pace_init(&p, rate, CHUNK, t0);
	while (fl_pace_allows(&p, t0, CHUNK))
		;
	sent = 0;
	while (fl_pace_allows(&p, t0 + 30000000, CHUNK)) {
		sent += CHUNK;
		fl_pace_backlog(&p, t0 + 30000000);
	}
	assert_near((double)sent, 3000000.0, 0.05);
}

static void test_unpaced_and_null_always_allow(void **state)
{
	struct fl_pacer p;

	(void)state;
	assert_true(fl_pace_allows(NULL, 0, 1u << 30));
	assert_int_equal(fl_pace_wait_ns(NULL, 0), 0);
	fl_pace_init(&p, 0, 0, 0);
	for (int i = 0; i < 1000; i++)
		assert_true(fl_pace_allows(&p, 0, 1u << 30));
}

static void test_stall_windows_block_then_release(void **state)
{
	struct fl_pacer p;
	uint64_t ms = 1000000, origin = 10 * ms;

	(void)state;
	fl_pace_init(&p, 0, 0, 0);
	fl_pace_set_stall(&p, 2 * ms, 10 * ms, origin);
	assert_false(fl_pace_allows(&p, origin, 1));
	assert_int_equal(fl_pace_wait_ns(&p, origin + ms / 2), 3 * ms / 2);
	assert_true(fl_pace_allows(&p, origin + 2 * ms, 1));
	assert_true(fl_pace_allows(&p, origin + 9 * ms, 1));
	assert_false(fl_pace_allows(&p, origin + 21 * ms, 1));
	assert_true(fl_pace_allows(&p, origin + 22 * ms, 1));
}

static void test_stalls_cut_a_paced_rate_by_their_share(void **state)
{
	struct fl_pacer p;
	uint64_t rate = 1000000000, t0 = NS_PER_S;

	(void)state;
	fl_pace_init(&p, rate, CHUNK, t0);
	/* Paused a quarter of the time: 75% of the rate over many periods, no burst after each. */
	fl_pace_set_stall(&p, 5000000, 20000000, t0);
	assert_near((double)bytes_sent_in(&p, t0, NS_PER_S, 10000), 0.75 * (double)rate, 0.02);
}

/*
 * A stall in one bucket (the hop's) stops a backlogged mover; the rate bucket
 * (the link) gives no catch-up for the pause.
 */
static void test_a_pause_is_not_made_up_by_another_bucket(void **state)
{
	struct fl_pacer own, link, stall;
	uint64_t rate = 1000000000, t0 = NS_PER_S, sent = 0;

	(void)state;
	fl_pace_init(&own, 0, 0, t0);
	fl_pace_init(&link, rate, CHUNK, t0);
	fl_pace_init(&stall, 0, 0, t0);
	fl_pace_set_stall(&stall, 10000000, 20000000, t0);
	assert_true(fl_pace_share(&own, &link));
	assert_true(fl_pace_share(&own, &stall));
	for (uint64_t t = t0; t < t0 + NS_PER_S; t += 10000)
		while (fl_pace_allows(&own, t, CHUNK)) {
			sent += CHUNK;
			fl_pace_backlog(&own, t);
		}
	assert_near((double)sent, 0.5 * (double)rate, 0.02);
}

static void test_shared_device_bucket_limits_the_sum(void **state)
{
	struct fl_pacer dev, a, b;
	uint64_t rate = 100000000, t0 = NS_PER_S, sa = 0, sb = 0;

	(void)state;
	fl_pace_init(&dev, rate, CHUNK, t0);
	fl_pace_init(&a, 0, 0, t0);
	fl_pace_init(&b, 0, 0, t0);
	assert_true(fl_pace_share(&a, &dev));
	assert_true(fl_pace_share(&b, &dev));
	for (uint64_t t = t0; t < t0 + NS_PER_S; t += 10000) {
		while (fl_pace_allows(&a, t, CHUNK))
			sa += CHUNK;
		while (fl_pace_allows(&b, t, CHUNK))
			sb += CHUNK;
	}
	assert_near((double)(sa + sb), (double)rate, 0.01);
}

static void test_hop_bucket_under_a_device_bucket(void **state)
{
	struct fl_pacer dev, hop;
	uint64_t t0 = NS_PER_S;

	(void)state;
	/*
	 * The slower of the two sets the pace, whichever it is: a device at 25 MB/s under a hop
	 * at 100 MB/s (4x off if the device's share were ignored), then the other way round (4x
	 * off if the hop's own bucket were). One second: 25 MB plus a burst and a chunk of debt
	 * of 64 KiB each, 0.5% on top.
	 */
	fl_pace_init(&dev, 25000000, CHUNK, t0);
	fl_pace_init(&hop, 100000000, CHUNK, t0);
	assert_true(fl_pace_share(&hop, &dev));
	assert_near((double)bytes_sent_in(&hop, t0, NS_PER_S, 10000), 25000000.0, 0.01);

	fl_pace_init(&dev, 100000000, CHUNK, t0);
	fl_pace_init(&hop, 25000000, CHUNK, t0);
	assert_true(fl_pace_share(&hop, &dev));
	assert_near((double)bytes_sent_in(&hop, t0, NS_PER_S, 10000), 25000000.0, 0.01);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_long_run_rate_matches_target),
		cmocka_unit_test(test_one_chunk_of_debt_then_refused),
		cmocka_unit_test(test_a_huge_piece_is_one_debt),
		cmocka_unit_test(test_idle_credit_is_capped_at_the_burst),
		cmocka_unit_test(test_unpaced_and_null_always_allow),
		cmocka_unit_test(test_starved_mover_catches_up_idle_one_does_not),
		cmocka_unit_test(test_stall_windows_block_then_release),
		cmocka_unit_test(test_stalls_cut_a_paced_rate_by_their_share),
		cmocka_unit_test(test_a_pause_is_not_made_up_by_another_bucket),
		cmocka_unit_test(test_shared_device_bucket_limits_the_sum),
		cmocka_unit_test(test_hop_bucket_under_a_device_bucket),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
