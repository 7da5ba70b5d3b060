/*
 * The hop table (plugin/hop.c): keying by direction and view, the bounded table
 * and its "other" hop, ranks, closed connections' figures, and the watermark
 * that waits for a connection's oldest outstanding request.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "plugin/base/clock.h"
#include "plugin/stats/hop.h"
#include "plugin/base/log.h"

static int warnings;

static void count_warnings(int level, unsigned long flags, const char *file, int line,
			   const char *fmt, ...)
{
	(void)flags, (void)file, (void)line, (void)fmt;
	warnings += level == FL_LOG_WARN;
}

static struct fl_endpoint ep(const char *node, const char *dev, int rank)
{
	struct fl_endpoint e;

	memset(&e, 0, sizeof(e));
	snprintf(e.node, sizeof(e.node), "%s", node);
	snprintf(e.dev_name, sizeof(e.dev_name), "%s", dev);
	e.rank = rank;
	return e;
}

static struct fl_conn_stats *new_conn(void)
{
	struct fl_conn_stats *s = aligned_alloc(64, sizeof(*s));

	assert_non_null(s);
	fl_stats_init(s);
	return s;
}

static void attach(struct fl_conn_stats *s, enum fl_hop_view view, const char *self_dev,
		   const char *peer_node, int self_rank, int peer_rank)
{
	struct fl_endpoint self = ep("me", self_dev, self_rank);
	struct fl_endpoint peer = ep(peer_node, "d0", peer_rank);
	struct fl_hop_key key;

	fl_hop_key_make(&key, view, &self, &peer);
	fl_hop_attach(s, &key, 0, view == FL_HOP_SEND ? self_rank : peer_rank,
		      view == FL_HOP_SEND ? peer_rank : self_rank);
}

/* One request: posted at post, done now, with a wire interval, acknowledged (a verbs write's) or not. */
static void timed_request(struct fl_conn_stats *s, unsigned slot, uint64_t bytes, uint64_t post,
			  uint64_t ws, uint64_t we, int acked)
{
	struct fl_xfer_times t = { .wire_start_ns = ws, .wire_end_ns = we, .acked = acked };

	fl_stats_post(s, slot, post);
	fl_stats_complete(s, slot, bytes, we + 1, &t);
}

/* ... as a socket's: done when the kernel has its bytes, no round trip waited for. */
static void request(struct fl_conn_stats *s, unsigned slot, uint64_t bytes, uint64_t post,
		    uint64_t ws, uint64_t we)
{
	timed_request(s, slot, bytes, post, ws, we, 0);
}

static const struct fl_hop_snapshot *find(const struct fl_hop_snapshot *h, int n, const char *src,
					  const char *dst, int view)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(h[i].key.src_node, src) && !strcmp(h[i].key.dst_node, dst) &&
		    h[i].key.view == view)
			return &h[i];
	fail_msg("no hop %s -> %s view %d", src, dst, view);
	return NULL;
}

static int reset(void **state)
{
	(void)state;
	fl_hops_reset();
	warnings = 0;
	return 0;
}

static void test_keys_separate_directions_devices_and_views(void **state)
{
	struct fl_conn_stats *c[5];
	struct fl_hop_snapshot *h;
	int n;

	(void)state;
	for (int i = 0; i < 5; i++)
		c[i] = new_conn();
	attach(c[0], FL_HOP_SEND, "d0", "peer", 0, 1);
	attach(c[1], FL_HOP_SEND, "d0", "peer", 0, 1); /* a second channel: same hop */
	attach(c[2], FL_HOP_SEND, "d1", "peer", 0, 1); /* other local device */
	attach(c[3], FL_HOP_RECV, "d0", "peer", 0, 1); /* the other direction */
	attach(c[4], FL_HOP_SEND, "d0", "other-peer", 0, 2);
	n = fl_hops_snapshot(&h);
	assert_int_equal(n, 4);
	assert_int_equal(h[0].connections, 2);
	assert_string_equal(h[0].key.src_dev, "d0");
	assert_string_equal(h[1].key.src_dev, "d1");
	assert_int_equal(find(h, n, "peer", "me", FL_HOP_RECV)->connections, 1);
	assert_int_equal(find(h, n, "peer", "me", FL_HOP_RECV)->src_rank, 1);
	assert_int_equal(find(h, n, "peer", "me", FL_HOP_RECV)->dst_rank, 0);
	assert_int_equal(find(h, n, "me", "other-peer", FL_HOP_SEND)->dst_rank, 2);
	free(h);
	for (int i = 0; i < 5; i++) {
		fl_hop_detach(c[i]);
		free(c[i]);
	}
}

static void test_full_table_counts_the_rest_as_other(void **state)
{
	static struct fl_conn_stats *c[FL_MAX_HOPS + 3];
	struct fl_hop_snapshot *h;
	const struct fl_hop_snapshot *other;
	char peer[32];
	int n;

	(void)state;
	fl_log_set_logger(count_warnings);
	for (int i = 0; i < FL_MAX_HOPS + 3; i++) {
		c[i] = new_conn();
		snprintf(peer, sizeof(peer), "peer%d", i);
		attach(c[i], FL_HOP_SEND, "d0", peer, 0, i);
		request(c[i], 0, 100, 10, 20, 30);
	}
	n = fl_hops_snapshot(&h);
	assert_int_equal(n, FL_MAX_HOPS + 1);
	assert_int_equal(warnings, 1);
	other = find(h, n, FL_HOP_OTHER, FL_HOP_OTHER, FL_HOP_SEND);
	assert_int_equal(other->connections, 3);
	assert_int_equal(other->t.bytes, 300);
	assert_int_equal(find(h, n, "me", "peer7", FL_HOP_SEND)->t.bytes, 100);
	free(h);
	for (int i = 0; i < FL_MAX_HOPS + 3; i++) {
		fl_hop_detach(c[i]);
		free(c[i]);
	}
}

/* Closed connections keep counting; tags fill ranks nobody announced. */
static void test_detached_figures_and_tag_ranks_remain(void **state)
{
	struct fl_conn_stats *a = new_conn(), *b = new_conn();
	uint64_t T = fl_clock_ns() + 1000000000ULL;
	struct fl_hop_snapshot *h;

	(void)state;
	attach(a, FL_HOP_RECV, "d0", "peer", -1, -1);
	attach(b, FL_HOP_RECV, "d0", "peer", -1, -1);
	atomic_fetch_or(&a->mem_types, 0x2);
	fl_stats_note_tag(a, 12);
	request(a, 0, 1000, T, T, T + 100);
	request(b, 0, 500, T, T + 200, T + 300);
	fl_hop_detach(a);
	free(a);
	assert_int_equal(fl_hops_snapshot(&h), 1);
	assert_int_equal(h[0].t.bytes, 1500);
	assert_int_equal(h[0].t.messages, 2);
	assert_int_equal(h[0].wire_ns, 200);
	assert_int_equal(h[0].mem_types, 0x2);
	assert_int_equal(h[0].src_rank, 12);
	assert_int_equal(h[0].dst_rank, -1);
	free(h);
	fl_hop_detach(b);
	free(b);
}

/*
 * Connection a has a request outstanding since pa while b completes later
 * intervals and a report folds; a's interval, when it comes, lies before b's
 * and must still count.
 */
static void test_outstanding_request_holds_the_watermark(void **state)
{
	struct fl_conn_stats *a = new_conn(), *b = new_conn();
	uint64_t pa = fl_clock_ns();
	struct fl_xfer_times t = { .wire_start_ns = pa + 10, .wire_end_ns = pa + 50 };
	struct fl_hop_snapshot *h;

	(void)state;
	attach(a, FL_HOP_SEND, "d0", "peer", 0, 1);
	attach(b, FL_HOP_SEND, "d0", "peer", 0, 1);
	fl_stats_post(a, 3, pa);
	request(b, 0, 10, pa + 1, pa + 100, pa + 200);
	request(b, 0, 10, pa + 2, pa + 300, pa + 400);
	/* one run closed in b's rings: the first a ring takes is escaped, three words */
	assert_int_equal(fl_hops_drain(), FL_RUN_WORDS_MAX);
	assert_int_equal(fl_hops_snapshot(&h), 1);
	assert_int_equal(h[0].wire_ns, 200);
	free(h);
	fl_stats_complete(a, 3, 10, pa + 60, &t);
	assert_int_equal(fl_hops_snapshot(&h), 1);
	assert_int_equal(h[0].wire_ns, 240);
	assert_int_equal(h[0].t.wire_bridged_ns, 0);
	free(h);
	fl_hop_detach(a);
	fl_hop_detach(b);
	free(a);
	free(b);
}

/* A request of a transport that times whole requests (ext): its wire is posted -> done. */
static void whole_request(struct fl_conn_stats *s, unsigned slot, uint64_t post, uint64_t done)
{
	struct fl_xfer_times t = { .wire_start_ns = post, .wire_end_ns = done,
				   .whole_request = 1 };

	fl_stats_post(s, slot, post);
	fl_stats_complete(s, slot, 8, done, &t);
}

/* A connection whose wire ring carries its active runs: its active ring is never written. */
static void test_whole_requests_keep_their_runs_once(void **state)
{
	struct fl_conn_stats *a = new_conn();
	uint64_t base = fl_clock_ns() - 1000000;
	struct fl_hop_snapshot *h;

	(void)state;
	a->active_is_wire = 1;
	attach(a, FL_HOP_SEND, "d0", "peer", 0, 1);
	fl_stats_post(a, 7, base); /* outstanding: holds the watermark at base */
	whole_request(a, 0, base + 100, base + 200);
	whole_request(a, 0, base + 150, base + 250);
	whole_request(a, 0, base + 400, base + 500);
	whole_request(a, 0, base + 1000, base + 1100);
	assert_int_equal(atomic_load(&a->active.head), 0);
	assert_int_equal(atomic_load(&a->active.open_end), 0);
	fl_hops_drain();
	assert_int_equal(fl_hops_snapshot(&h), 1);
	assert_int_equal(h[0].wire_ns, 350);
	assert_int_equal(h[0].active_ns, 350);
	assert_int_equal(h[0].t.active_bridged_ns, 0);
	assert_int_equal(h[0].t.union_bridges, 0);
	free(h);
	fl_stats_unpost(a, 7);
	fl_hop_detach(a);
	free(a);
}

/*
 * A member that times its own wire joins a hop of whole-request members: the active union is
 * kept apart from then on, from what both held, and the whole-request members' runs reach it.
 */
static void test_a_member_with_its_own_wire_keeps_active_apart(void **state)
{
	struct fl_conn_stats *a = new_conn(), *b = new_conn();
	uint64_t base = fl_clock_ns() - 1000000;
	struct fl_xfer_times t = { .wire_start_ns = base + 250, .wire_end_ns = base + 300 };
	struct fl_hop_snapshot *h;

	(void)state;
	a->active_is_wire = 1;
	attach(a, FL_HOP_SEND, "d0", "peer", 0, 1);
	fl_stats_post(a, 7, base);
	whole_request(a, 0, base + 0, base + 100);
	fl_hops_drain(); /* the run is the hop's now, pending past the watermark */
	attach(b, FL_HOP_SEND, "d0", "peer", 0, 1);
	fl_stats_post(b, 0, base + 200);
	fl_stats_complete(b, 0, 8, base + 350, &t);
	whole_request(a, 0, base + 320, base + 400);
	fl_hops_drain();
	assert_int_equal(fl_hops_snapshot(&h), 1);
	assert_int_equal(h[0].connections, 2);
	assert_int_equal(h[0].wire_ns, 100 + 50 + 80);  /* [0,100) [250,300) [320,400) */
	assert_int_equal(h[0].active_ns, 100 + 200);    /* [0,100) [200,400) */
	free(h);
	fl_stats_unpost(a, 7);
	fl_hop_detach(b);
	whole_request(a, 0, base + 500, base + 600); /* after b left: still both unions */
	fl_hop_detach(a);
	assert_int_equal(fl_hops_snapshot(&h), 1);
	assert_int_equal(h[0].wire_ns, 230 + 100);
	assert_int_equal(h[0].active_ns, 300 + 100);
	free(h);
	free(a);
	free(b);
}

/*
 * Four requests posted at once on one connection, each 1 ms on the wire, leave one after the
 * other (a FIFO): each request's own wire time is 1 ms, not 1, 2, 3 and 4 ms, so a burst does
 * not read as slow requests. The longest whole request stays the max. One that ends before the
 * latest end (done out of order) keeps its own start.
 */
static void test_queued_requests_time_only_their_own_wire(void **state)
{
	struct fl_conn_stats *a = new_conn();
	uint64_t base = fl_clock_ns() - 100000000, ms = 1000000;
	struct fl_hop_snapshot *h;
	struct fl_wire_split split;

	(void)state;
	attach(a, FL_HOP_SEND, "d0", "peer", 0, 1);
	for (unsigned i = 0; i < 4; i++)
		request(a, i, 1 << 20, base, base, base + (i + 1) * ms);
	request(a, 4, 1 << 20, base, base + 2 * ms, base + 3 * ms + ms / 2);
	fl_hops_drain();
	assert_int_equal(fl_hops_snapshot(&h), 1);
	assert_int_equal(h[0].wire_ns, 4 * ms);
	assert_in_range(fl_time_percentile(h[0].t.wire_times, 99), ms * 15 / 16, ms * 17 / 16 * 3 / 2);
	assert_in_range(fl_time_percentile(h[0].t.wire_times, 50), ms * 15 / 16, ms * 17 / 16);
	assert_int_equal(h[0].t.wire_max_ns, 4 * ms);
	/* a transport whose requests do not wait for a round trip (a socket's) has no split */
	fl_wire_split(h[0].t.wire_times, h[0].t.wire_times_alone, h[0].t.acked, &split);
	assert_true(!split.alone && !split.queued && split.queued_p50_us == 0.0);
	free(h);
	fl_hop_detach(a);
	free(a);
}

/*
 * Requests that find their connection's wire idle pay the round trip (a verbs write is done
 * when its acknowledgement is back); those queued behind the one before pay only their bytes'
 * time: the two kinds are counted and their medians kept apart (fl_wire_split).
 */
static void test_requests_alone_and_queued_are_told_apart(void **state)
{
	struct fl_conn_stats *a = new_conn();
	uint64_t base = fl_clock_ns() - 100000000, ms = 1000000;
	struct fl_hop_snapshot *h;
	struct fl_wire_split split;

	(void)state;
	attach(a, FL_HOP_SEND, "d0", "peer", 0, 1);
	for (unsigned i = 0; i < 3; i++) /* 1 ms of bytes and 2 ms of round trip, each alone */
		timed_request(a, i, 1 << 20, base + i * 10 * ms, base + i * 10 * ms,
			      base + i * 10 * ms + 3 * ms, 1);
	for (unsigned i = 0; i < 3; i++) /* a burst: the first alone, two queued behind it */
		timed_request(a, 3 + i, 1 << 20, base + 30 * ms, base + 30 * ms,
			      base + (33 + i) * ms, 1);
	fl_hops_drain();
	assert_int_equal(fl_hops_snapshot(&h), 1);
	fl_wire_split(h[0].t.wire_times, h[0].t.wire_times_alone, h[0].t.acked, &split);
	assert_int_equal(split.alone, 4);
	assert_int_equal(split.queued, 2);
	assert_in_range(split.alone_p50_us, 3e3 * 15 / 16, 3e3 * 17 / 16);
	assert_in_range(split.queued_p50_us, 1e3 * 15 / 16, 1e3 * 17 / 16);
	free(h);
	fl_hop_detach(a);
	free(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_keys_separate_directions_devices_and_views, reset),
		cmocka_unit_test_setup(test_full_table_counts_the_rest_as_other, reset),
		cmocka_unit_test_setup(test_detached_figures_and_tag_ranks_remain, reset),
		cmocka_unit_test_setup(test_outstanding_request_holds_the_watermark, reset),
		cmocka_unit_test_setup(test_whole_requests_keep_their_runs_once, reset),
		cmocka_unit_test_setup(test_a_member_with_its_own_wire_keeps_active_apart, reset),
		cmocka_unit_test_setup(test_queued_requests_time_only_their_own_wire, reset),
		cmocka_unit_test_setup(test_requests_alone_and_queued_are_told_apart, reset),
	};

	fl_clock_init();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
