/*
 * `fabriclab trace --perfetto` (tools/trace/trace_perfetto.c) on a hand-built
 * model: overlapping requests of one connection go on separate rows and a row
 * is reused once free; each request's phases lie inside it at the times its
 * fields say; text from the trace is escaped; discarded events become a global
 * instant and otherData; the verdict is the last event. And which windows
 * lack data (trace_window_lost) for discards with and without their times.
 */
#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "tools/trace/trace.h"

struct fixture {
	struct trace_model m;
	struct trace_process p;
	struct trace_hop hop;
	struct trace_conn conn;
	struct report_set set;
	struct trace_discard lost;
	char path[64];
};

static void build(struct fixture *x)
{
	memset(x, 0, sizeof(*x));
	x->hop.hop_id = 42;
	x->hop.is_send = true;
	snprintf(x->hop.key.src_node, sizeof(x->hop.key.src_node), "node0");
	snprintf(x->hop.key.src_dev, sizeof(x->hop.key.src_dev), "lo");
	snprintf(x->hop.key.dst_node, sizeof(x->hop.key.dst_node), "node1");
	snprintf(x->hop.key.dst_dev, sizeof(x->hop.key.dst_dev), "lo");
	x->conn.id = 3;
	x->p.vpid = 1234;
	x->p.rank = 0;
	snprintf(x->p.host, sizeof(x->p.host), "vm");
	snprintf(x->p.node, sizeof(x->p.node), "node0");
	x->p.hops = &x->hop;
	x->p.nhops = 1;
	x->p.conns = &x->conn;
	x->p.nconns = 1;
	x->m.procs = &x->p;
	x->m.nprocs = 1;
	x->m.first_ns = 1000000; /* the origin: 1 ms before it, 0 */
	x->m.last_ns = 20000;
	x->lost = (struct trace_discard){ "vm", 7, 0, 2000, 4000 };
	x->m.discards = &x->lost;
	x->m.ndiscards = 1;
	x->m.discarded_events = 7;
	x->set.verdict.kind = FL_VERDICT_NONE;
	x->set.verdict.hop = -1;
	snprintf(x->path, sizeof(x->path), "/tmp/fl-timeline-%d.json", (int)getpid());
}

static void request(struct fixture *x, uint64_t posted, uint64_t ready, uint64_t ws, uint64_t we,
		    uint64_t done)
{
	struct trace_request r = { .slot = 1, .bytes = 1 << 20, .posted = posted, .ready = ready,
				   .wire_start = ws, .wire_end = we, .done = done };

	assert_int_equal(trace_pf_request(x->m.pf, &x->m, 0, &x->conn, &r), 0);
}

/* The first event whose key is value (borrowed from all), NULL if none. */
static json_t *first_named(json_t *all, const char *key, const char *value)
{
	json_t *e;
	size_t i;

	json_array_foreach(all, i, e) {
		if (json_is_string(json_object_get(e, key)) &&
		    !strcmp(json_string_value(json_object_get(e, key)), value))
			return e;
	}
	return NULL;
}

static json_t *events_named(json_t *all, const char *key, const char *value)
{
	json_t *out = json_array(), *e;
	size_t i;

	json_array_foreach(all, i, e) {
		if (json_is_string(json_object_get(e, key)) &&
		    !strcmp(json_string_value(json_object_get(e, key)), value))
			json_array_append(out, e);
	}
	return out;
}

static double num(json_t *e, const char *key)
{
	return json_number_value(json_object_get(e, key));
}

static void test_rows_phases_and_marks(void **state)
{
	struct fixture x;
	json_t *root, *ev, *req, *phases, *e, *last;
	json_error_t err;

	(void)state;
	build(&x);
	assert_int_equal(trace_pf_open(x.path, &x.m.pf), 0);
	trace_pf_origin(x.m.pf, x.m.first_ns);
	/* In completion order, as the trace gives them. */
	request(&x, 1500, 0, 0, 0, 5000);          /* row A */
	request(&x, 1000, 2000, 3000, 8000, 9000); /* posted while A busy: row B */
	request(&x, 9000, 0, 9500, 11000, 12000);  /* A free since 5000: row A again */
	assert_int_equal(trace_pf_instant(x.m.pf, 0, 6000, "fault", "fault \"throttle\"\n",
					  json_pack("{s:s}", "rule", "throttle:node=node0")),
			 0);
	assert_int_equal(trace_pf_finish(x.m.pf, &x.m, &x.set, 100000), 0);
	x.m.pf = NULL;
	free(x.conn.lanes.end);
	free(x.conn.lanes.tid);

	root = json_load_file(x.path, 0, &err);
	if (!root)
		fail_msg("not JSON: %s at line %d", err.text, err.line);
	unlink(x.path);
	ev = json_object_get(root, "traceEvents");
	req = events_named(ev, "cat", "request");
	assert_int_equal(json_array_size(req), 3);
	/* Rows: the first and third request share one, the second has its own. */
	assert_int_equal(num(json_array_get(req, 0), "tid"), num(json_array_get(req, 2), "tid"));
	assert_true(num(json_array_get(req, 0), "tid") != num(json_array_get(req, 1), "tid"));
	assert_string_equal(json_string_value(json_object_get(json_array_get(req, 1), "name")),
			    "send 1 MiB");
	/* The second request's phases, in microseconds from the origin (0). */
	phases = events_named(ev, "cat", "phase");
	{
		static const char *const names[] = { "posted", "ready", "on the wire", "wire done" };
		static const double ts[] = { 1.0, 2.0, 3.0, 8.0 }, dur[] = { 1.0, 1.0, 5.0, 1.0 };
		size_t i, found = 0;

		json_array_foreach(phases, i, e) {
			if (num(e, "tid") != num(json_array_get(req, 1), "tid"))
				continue;
			assert_string_equal(json_string_value(json_object_get(e, "name")),
					    names[found]);
			assert_true(num(e, "ts") == ts[found] && num(e, "dur") == dur[found]);
			found++;
		}
		assert_int_equal(found, 4);
	}
	/* The first request saw neither a ready nor a wire time: one phase, all of it. */
	e = json_array_get(phases, 0);
	assert_true(num(e, "ts") == 1.5 && num(e, "dur") == 3.5);
	/* Text from the trace comes back as written. */
	e = first_named(ev, "cat", "fault");
	assert_non_null(e);
	assert_string_equal(json_string_value(json_object_get(e, "name")), "fault \"throttle\"\n");
	e = first_named(ev, "cat", "lost");
	assert_non_null(e);
	assert_string_equal(json_string_value(json_object_get(e, "name")),
			    "LTTng discarded 7 events");
	assert_string_equal(json_string_value(json_object_get(e, "s")), "g");
	assert_int_equal(json_integer_value(json_object_get(json_object_get(root, "otherData"),
							    "discarded_events")),
			 7);
	last = json_array_get(ev, json_array_size(ev) - 1);
	assert_string_equal(json_string_value(json_object_get(last, "cat")), "verdict");
	assert_string_equal(json_string_value(json_object_get(last, "name")), "verdict: none");
	assert_non_null(first_named(ev, "name", "thread_name"));
	json_decref(req);
	json_decref(phases);
	json_decref(root);
}

static void test_windows_lacking_data(void **state)
{
	struct fixture x;
	struct trace_discard unknown = { "vm", 3, 0, 0, 0 };

	(void)state;
	build(&x);
	assert_int_equal(trace_window_lost(&x.m, 0, 1000), 0);
	assert_int_equal(trace_window_lost(&x.m, 1000, 2000), 7);
	assert_int_equal(trace_window_lost(&x.m, 4000, 1000), 7);
	assert_int_equal(trace_window_lost(&x.m, 4001, 1000), 0);
	/* Lost at a time the trace does not give: every window lacks them. */
	x.m.discards = &unknown;
	assert_int_equal(trace_window_lost(&x.m, 50000, 1000), 3);
}

static void test_unwritable_file(void **state)
{
	struct trace_pf *pf = NULL;

	(void)state;
	assert_int_not_equal(trace_pf_open("/nonexistent-dir/timeline.json", &pf), 0);
	assert_null(pf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rows_phases_and_marks),
		cmocka_unit_test(test_windows_lacking_data),
		cmocka_unit_test(test_unwritable_file),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
