/*
 * Tracing without a session (plugin/trace.c, tools/trace_model.c): the hop id
 * every event carries, hooks that stay off and harmless when the provider is
 * absent or is not a fabriclab provider, the real provider attaching the
 * plugin's tracepoint records (and detaching them at stop), the INFO line, and
 * the interval union `fabriclab trace` rebuilds wire time with. Each provider
 * scenario runs in a child: the provider is loaded once per process.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "plugin/base/log.h"
#include "plugin/stats/stats.h"
#include "plugin/trace/trace.h"
#include "plugin/base/error.h"
#include "tools/trace/trace.h"

static char provider[4096];
static char info[512];

static void keep_info(int level, unsigned long flags, const char *file, int line,
		      const char *fmt, ...)
{
	char line_text[512];
	va_list ap;

	(void)flags, (void)file, (void)line;
	va_start(ap, fmt);
	vsnprintf(line_text, sizeof(line_text), fmt, ap);
	va_end(ap);
	if (level == FL_LOG_INFO && strstr(line_text, "LTTng"))
		snprintf(info, sizeof(info), "%s", line_text);
}

static uint32_t fnv1a(const char *s)
{
	uint32_t h = 2166136261u;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

static void test_hop_id_is_fnv1a_of_the_names(void **state)
{
	(void)state;
	assert_int_equal(fl_trace_hop_id("node0", "lo", "node1", "lo"), fnv1a("node0/lo>node1/lo"));
	/* The value docs/tracing.md shows for this hop. */
	assert_int_equal(fl_trace_hop_id("node0", "lo", "node1", "lo"), 4223490616u);
	assert_int_not_equal(fl_trace_hop_id("node0", "lo", "node1", "lo"),
			     fl_trace_hop_id("node1", "lo", "node0", "lo"));
}

/* A receive connection b/eth1 <- a/eth0, as its owner would describe it. */
struct fake_conn {
	struct fl_endpoint self, peer;
	struct fl_conn_stats *stats;
	struct fl_trace_conn tc;
};

static void fake_conn_init(struct fake_conn *f)
{
	memset(f, 0, sizeof(*f));
	f->stats = aligned_alloc(64, sizeof(*f->stats));
	fl_stats_init(f->stats);
	snprintf(f->self.node, sizeof(f->self.node), "b");
	snprintf(f->self.dev_name, sizeof(f->self.dev_name), "eth1");
	snprintf(f->peer.node, sizeof(f->peer.node), "a");
	snprintf(f->peer.dev_name, sizeof(f->peer.dev_name), "eth0");
	f->tc = (struct fl_trace_conn){ .id = 7, .send = 0, .transport = "socket",
					.self = &f->self, .peer = &f->peer, .stats = f->stats };
}

static int no_props(int dev, struct fl_props *props)
{
	(void)dev, (void)props;
	return FL_ERR_INTERNAL;
}

/* Every hook, as the wrap layer calls them; none may emit or crash while off. */
static int hooks_stay_off(void)
{
	struct fake_conn f;
	struct fl_xfer_times t = { .ready_ns = 10, .wire_start_ns = 20, .wire_end_ns = 30 };
	size_t sizes[1] = { 4096 };
	int tags[1] = { 3 };

	fake_conn_init(&f);
	for (int e = 0; e < FL_TP_EVENTS; e++)
		if (fl_trace_on((enum fl_tp_event)e))
			return 10 + e;
	fl_trace_conn_up(&f.tc, no_props);
	/* A receiver's hop runs peer -> self. */
	if (f.tc.hop_id != fl_trace_hop_id("a", "eth0", "b", "eth1"))
		return 2;
	fl_trace_posted(&f.tc, 0, 1, sizes, tags);
	fl_trace_done(&f.tc, 0, 4096, &t);
	fl_trace_error(&f.tc, "test", 2, "boom");
	fl_trace_error(NULL, "listen", 2, NULL);
	fl_trace_fault(f.tc.id, "throttle", "throttle:rate=50%", 0, 1000);
	fl_trace_tick(UINT64_MAX);
	fl_trace_conn_down(&f.tc);
	fl_trace_stop();
	free(f.stats);
	return 0;
}

/* A scenario in a child process: its exit status is the test's verdict. */
static int in_child(int (*scenario)(void), const char *provider_env)
{
	int status;
	pid_t pid = fork();

	if (pid == 0) {
		setenv("FABRICLAB_LTTNG_PROVIDER", provider_env, 1);
		fl_log_set_logger(keep_info);
		fl_trace_start();
		_exit(scenario());
	}
	assert_true(pid > 0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	return WEXITSTATUS(status);
}

static int off_and_said_so(void)
{
	int rc = hooks_stay_off();

	if (rc)
		return rc;
	if (strstr(info, "LTTng tracing unavailable") || strstr(info, "LTTng tracing off"))
		return 0;
	return 3;
}

static void test_absent_provider_leaves_hooks_off(void **state)
{
	(void)state;
	assert_int_equal(in_child(off_and_said_so, "/nonexistent/libfabriclab-lttng.so"), 0);
}

static void test_provider_off(void **state)
{
	(void)state;
	assert_int_equal(in_child(off_and_said_so, "off"), 0);
}

/* A shared object that is not a fabriclab provider is refused, not called. */
static void test_foreign_object_refused(void **state)
{
	(void)state;
	assert_int_equal(in_child(off_and_said_so, "libm.so.6"), 0);
}

static int attached_then_detached(void)
{
	if (!strstr(info, "LTTng tracing available"))
		return 3;
	if (!fl_trace_points[FL_TP_REQUEST_DONE].event_name ||
	    strcmp(fl_trace_points[FL_TP_REQUEST_DONE].event_name, "request_done") ||
	    strcmp(fl_trace_points[FL_TP_CONN_UP].provider_name, "fabriclab") ||
	    !fl_trace_points[FL_TP_VERDICT].signature)
		return 4;
	fl_trace_stop();
	for (int e = 0; e < FL_TP_EVENTS; e++)
		if (fl_trace_on((enum fl_tp_event)e))
			return 5; /* a session may enable them before: never after stop */
	return 0;
}

static void test_real_provider_attaches(void **state)
{
	(void)state;
	if (access(provider, R_OK)) {
		/* make builds it next to the tests' folder wherever lttng-ust is installed. */
		fail_msg("%s missing: make builds it (liblttng-ust-dev)", provider);
	}
	assert_int_equal(in_child(attached_then_detached, provider), 0);
}

static void test_spans_union(void **state)
{
	struct trace_span v[] = { { 20, 30, 1 }, { 0, 10, 1 }, { 5, 15, 1 }, { 6, 7, 1 },
				  { 30, 31, 1 } };
	struct trace_spans s = { v, 5, 5 };
	struct trace_spans none = { NULL, 0, 0 };

	(void)state;
	/* [0,15] and [20,31]: touching intervals join, nested ones add nothing. */
	assert_int_equal(trace_spans_union(&s), 26);
	assert_int_equal(s.v[0].start, 0);
	assert_int_equal(trace_spans_union(&none), 0);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hop_id_is_fnv1a_of_the_names),
		cmocka_unit_test(test_absent_provider_leaves_hooks_off),
		cmocka_unit_test(test_provider_off),
		cmocka_unit_test(test_foreign_object_refused),
		cmocka_unit_test(test_real_provider_attaches),
		cmocka_unit_test(test_spans_union),
	};
	const char *slash = strrchr(argv[0], '/');

	(void)argc;
	/* build/tests/test_trace -> build/libfabriclab-lttng.so */
	snprintf(provider, sizeof(provider), "%.*s/../libfabriclab-lttng.so",
		 slash ? (int)(slash - argv[0]) : 1, slash ? argv[0] : ".");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
