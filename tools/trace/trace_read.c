/*
 * Reading a CTF trace with libbabeltrace2: one source.ctf.fs component per
 * trace found under the folder, a filter.utils.muxer that orders their
 * messages by time, and a simple sink that hands every fabriclab event to the
 * model. Only this file knows babeltrace2's types.
 */
#include <babeltrace2/babeltrace.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "plugin/base/error.h"
#include "plugin/base/fl_text.h"
#include "trace.h"

#define PROVIDER_PREFIX "fabriclab:"
#define MAX_TRACES 4096

struct trace_fields {
	const bt_field *payload;
};

struct reader {
	struct trace_model *m;
	int failed;
};

static const bt_field *member(const struct trace_fields *f, const char *name)
{
	if (!f->payload || bt_field_get_class_type(f->payload) != BT_FIELD_CLASS_TYPE_STRUCTURE)
		return NULL;
	return bt_field_structure_borrow_member_field_by_name_const(f->payload, name);
}

static int64_t field_s64(const bt_field *field)
{
	bt_field_class_type t = bt_field_get_class_type(field);

	if (bt_field_class_type_is(t, BT_FIELD_CLASS_TYPE_SIGNED_INTEGER))
		return bt_field_integer_signed_get_value(field);
	if (bt_field_class_type_is(t, BT_FIELD_CLASS_TYPE_UNSIGNED_INTEGER))
		return (int64_t)bt_field_integer_unsigned_get_value(field);
	return 0;
}

uint64_t trace_field_u64(const struct trace_fields *f, const char *name)
{
	const bt_field *field = member(f, name);

	if (!field)
		return 0;
	if (bt_field_class_type_is(bt_field_get_class_type(field),
				   BT_FIELD_CLASS_TYPE_UNSIGNED_INTEGER))
		return bt_field_integer_unsigned_get_value(field);
	return (uint64_t)field_s64(field);
}

int64_t trace_field_s64(const struct trace_fields *f, const char *name)
{
	const bt_field *field = member(f, name);

	return field ? field_s64(field) : 0;
}

double trace_field_double(const struct trace_fields *f, const char *name)
{
	const bt_field *field = member(f, name);
	bt_field_class_type t;

	if (!field)
		return 0.0;
	t = bt_field_get_class_type(field);
	if (t == BT_FIELD_CLASS_TYPE_DOUBLE_PRECISION_REAL)
		return bt_field_real_double_precision_get_value(field);
	if (t == BT_FIELD_CLASS_TYPE_SINGLE_PRECISION_REAL)
		return bt_field_real_single_precision_get_value(field);
	return (double)field_s64(field);
}

/*
 * Strings enter the model here, escaped once (plugin/base/fl_text.h): a node or
 * device name that is not UTF-8, or carries ESC or U+202E, reaches the text,
 * JSON and Perfetto outputs as printable \xNN, never raw (JSON would refuse
 * it, a terminal obey it). Each result lives until ESCAPED_RING more calls;
 * every caller copies it at once.
 */
#define ESCAPED_RING 16
#define ESCAPED_LEN 1024

static const char *escaped(const char *s)
{
	static char ring[ESCAPED_RING][ESCAPED_LEN];
	static unsigned next;
	char *out;

	if (!s || !fl_text_needs_escape(s))
		return s ? s : "";
	out = ring[next++ % ESCAPED_RING];
	fl_text_escape(out, ESCAPED_LEN, s);
	return out;
}

const char *trace_field_str(const struct trace_fields *f, const char *name)
{
	const bt_field *field = member(f, name);

	if (!field || bt_field_get_class_type(field) != BT_FIELD_CLASS_TYPE_STRING)
		return "";
	return escaped(bt_field_string_get_value(field));
}

static const bt_value *trace_env(const bt_trace *trace, const char *name)
{
	return bt_trace_borrow_environment_entry_value_by_name_const(trace, name);
}

static const bt_value *env_entry(const bt_event *event, const char *name)
{
	return trace_env(bt_stream_borrow_trace_const(bt_event_borrow_stream_const(event)), name);
}

static const char *host_of(const bt_trace *trace)
{
	const bt_value *host = trace_env(trace, "hostname");

	return host && bt_value_is_string(host) ? escaped(bt_value_string_get(host)) : "";
}

/*
 * Per-uid buffers mix processes: each event's own pid field tells them apart
 * (traces of an older provider need the vpid context); per-pid traces name it.
 */
static int64_t event_pid(const bt_event *event, const struct trace_fields *payload, bool *seen)
{
	struct trace_fields ctx = { bt_event_borrow_common_context_field_const(event) };
	const bt_value *v;

	if (member(payload, "pid")) {
		*seen = true;
		return trace_field_s64(payload, "pid");
	}
	if (member(&ctx, "vpid")) {
		*seen = true;
		return trace_field_s64(&ctx, "vpid");
	}
	v = env_entry(event, "vpid");
	if (v && bt_value_is_signed_integer(v)) {
		*seen = true;
		return bt_value_integer_signed_get(v);
	}
	return 0;
}

/* A clock snapshot in ns of its clock's own time line (LTTng's: CLOCK_MONOTONIC, 1 GHz). */
static uint64_t snapshot_ns(const bt_clock_snapshot *cs)
{
	uint64_t freq = bt_clock_class_get_frequency(bt_clock_snapshot_borrow_clock_class_const(cs));
	uint64_t v = bt_clock_snapshot_get_value(cs);

	if (!freq || freq == 1000000000ULL)
		return v;
	return (uint64_t)((unsigned __int128)v * 1000000000ULL / freq);
}

static void take_event(struct reader *r, const bt_message *msg)
{
	const bt_event *event = bt_message_event_borrow_event_const(msg);
	const char *name = bt_event_class_get_name(bt_event_borrow_class_const(event));
	struct trace_fields f = { bt_event_borrow_payload_field_const(event) };
	uint64_t stamp = 0;
	int64_t pid;

	if (!name || strncmp(name, PROVIDER_PREFIX, strlen(PROVIDER_PREFIX)))
		return;
	if (bt_message_event_borrow_stream_class_default_clock_class_const(msg))
		stamp = snapshot_ns(bt_message_event_borrow_default_clock_snapshot_const(msg));
	pid = event_pid(event, &f, &r->m->vpid_seen);
	r->m->events++;
	if (trace_model_event(r->m, host_of(bt_stream_borrow_trace_const(
					    bt_event_borrow_stream_const(event))),
			      pid, stamp, name + strlen(PROVIDER_PREFIX), &f))
		r->failed = 1;
}

/* LTTng's ring buffer was full: babeltrace2 says how many events (or packets) were lost, when. */
static void take_discard(struct reader *r, const bt_message *msg, bool packets)
{
	const bt_stream *stream = packets ? bt_message_discarded_packets_borrow_stream_const(msg)
					  : bt_message_discarded_events_borrow_stream_const(msg);
	const bt_stream_class *sc = bt_stream_borrow_class_const(stream);
	struct trace_discard d;
	uint64_t count = 0;

	memset(&d, 0, sizeof(d));
	snprintf(d.host, sizeof(d.host), "%s", host_of(bt_stream_borrow_trace_const(stream)));
	if (packets) {
		if (bt_message_discarded_packets_get_count(msg, &count) !=
		    BT_PROPERTY_AVAILABILITY_AVAILABLE)
			count = 1; /* at least one, the trace does not say how many */
		d.packets = count;
		if (bt_stream_class_discarded_packets_have_default_clock_snapshots(sc)) {
			d.start_ns = snapshot_ns(
				bt_message_discarded_packets_borrow_beginning_default_clock_snapshot_const(msg));
			d.end_ns = snapshot_ns(
				bt_message_discarded_packets_borrow_end_default_clock_snapshot_const(msg));
		}
	} else {
		if (bt_message_discarded_events_get_count(msg, &count) !=
		    BT_PROPERTY_AVAILABILITY_AVAILABLE)
			count = 1;
		d.events = count;
		if (bt_stream_class_discarded_events_have_default_clock_snapshots(sc)) {
			d.start_ns = snapshot_ns(
				bt_message_discarded_events_borrow_beginning_default_clock_snapshot_const(msg));
			d.end_ns = snapshot_ns(
				bt_message_discarded_events_borrow_end_default_clock_snapshot_const(msg));
		}
	}
	if (trace_model_discard(r->m, &d))
		r->failed = 1;
}

static void take(struct reader *r, const bt_message *msg)
{
	switch (bt_message_get_type(msg)) {
	case BT_MESSAGE_TYPE_EVENT: take_event(r, msg); break;
	case BT_MESSAGE_TYPE_DISCARDED_EVENTS: take_discard(r, msg, false); break;
	case BT_MESSAGE_TYPE_DISCARDED_PACKETS: take_discard(r, msg, true); break;
	default: break;
	}
}

static bt_graph_simple_sink_component_consume_func_status consume(bt_message_iterator *it,
								  void *data)
{
	struct reader *r = data;
	bt_message_array_const msgs;
	uint64_t count;

	switch (bt_message_iterator_next(it, &msgs, &count)) {
	case BT_MESSAGE_ITERATOR_NEXT_STATUS_OK:
		break;
	case BT_MESSAGE_ITERATOR_NEXT_STATUS_END:
		return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_END;
	case BT_MESSAGE_ITERATOR_NEXT_STATUS_AGAIN:
		return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_AGAIN;
	case BT_MESSAGE_ITERATOR_NEXT_STATUS_MEMORY_ERROR:
		return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_MEMORY_ERROR;
	default:
		return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_ERROR;
	}
	for (uint64_t i = 0; i < count; i++) {
		if (!r->failed)
			take(r, msgs[i]);
		bt_message_put_ref(msgs[i]);
	}
	return r->failed ? BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_ERROR
			 : BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_OK;
}

struct trace_dirs {
	char **v;
	size_t n;
};

/* A CTF trace is a folder with a `metadata` file; LTTng nests them (ust/uid/0/64-bit). */
static int find_traces(const char *dir, struct trace_dirs *out, int depth)
{
	char path[PATH_MAX];
	struct stat st;
	struct dirent *e;
	DIR *d;

	snprintf(path, sizeof(path), "%s/metadata", dir);
	if (!stat(path, &st) && S_ISREG(st.st_mode)) {
		if (out->n == MAX_TRACES)
			return fl_fail(FL_ERR_USAGE, "more than %d traces under the folder",
				       MAX_TRACES);
		out->v[out->n] = strdup(dir);
		return out->v[out->n++] ? 0 : fl_fail(FL_ERR_SYSTEM, "out of memory");
	}
	if (depth > 8 || !(d = opendir(dir)))
		return 0;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (!stat(path, &st) && S_ISDIR(st.st_mode) && find_traces(path, out, depth + 1)) {
			closedir(d);
			return -1;
		}
	}
	closedir(d);
	return 0;
}

static const bt_component_class_source *ctf_source(const bt_plugin **plugin)
{
	if (bt_plugin_find("ctf", BT_TRUE, BT_TRUE, BT_TRUE, BT_TRUE, BT_TRUE, plugin) !=
	    BT_PLUGIN_FIND_STATUS_OK)
		return NULL;
	return bt_plugin_borrow_source_component_class_by_name_const(*plugin, "fs");
}

static const bt_component_class_filter *muxer(const bt_plugin **plugin)
{
	if (bt_plugin_find("utils", BT_TRUE, BT_TRUE, BT_TRUE, BT_TRUE, BT_TRUE, plugin) !=
	    BT_PLUGIN_FIND_STATUS_OK)
		return NULL;
	return bt_plugin_borrow_filter_component_class_by_name_const(*plugin, "muxer");
}

/* One source per trace, each of its streams into the next free muxer input. */
static int add_source(bt_graph *g, const bt_component_class_source *cls, const char *path,
		      int index, const bt_component_filter *mux, uint64_t *mux_inputs)
{
	const bt_component_source *src;
	bt_value *params = bt_value_map_create(), *inputs = NULL;
	char name[32];
	int rc = -1;

	snprintf(name, sizeof(name), "src%d", index);
	if (params && !bt_value_map_insert_empty_array_entry(params, "inputs", &inputs) &&
	    !bt_value_array_append_string_element(inputs, path) &&
	    bt_graph_add_source_component(g, cls, name, params, BT_LOGGING_LEVEL_ERROR, &src) ==
		    BT_GRAPH_ADD_COMPONENT_STATUS_OK)
		rc = 0;
	bt_value_put_ref(params);
	if (rc)
		return fl_fail(FL_ERR_USAGE, "%s is not a CTF trace babeltrace2 can read", path);
	for (uint64_t i = 0; i < bt_component_source_get_output_port_count(src); i++) {
		const bt_port_output *out =
			bt_component_source_borrow_output_port_by_index_const(src, i);
		const bt_port_input *in =
			bt_component_filter_borrow_input_port_by_index_const(mux, (*mux_inputs)++);

		if (!in ||
		    bt_graph_connect_ports(g, out, in, NULL) != BT_GRAPH_CONNECT_PORTS_STATUS_OK)
			return fl_fail(FL_ERR_SYSTEM, "cannot connect the streams of %s", path);
	}
	return 0;
}

static int build_graph(bt_graph *g, const struct trace_dirs *dirs, struct reader *r)
{
	const bt_plugin *ctf = NULL, *utils = NULL;
	const bt_component_class_source *src_cls = ctf_source(&ctf);
	const bt_component_class_filter *mux_cls = muxer(&utils);
	const bt_component_filter *mux = NULL;
	const bt_component_sink *sink;
	uint64_t inputs = 0;
	int rc = 0;

	if (!src_cls || !mux_cls)
		rc = fl_fail(FL_ERR_USAGE, "babeltrace2's ctf and utils plugins are not installed");
	if (!rc && bt_graph_add_filter_component(g, mux_cls, "mux", NULL, BT_LOGGING_LEVEL_ERROR,
						 &mux) != BT_GRAPH_ADD_COMPONENT_STATUS_OK)
		rc = fl_fail(FL_ERR_SYSTEM, "cannot create a muxer");
	for (size_t i = 0; !rc && i < dirs->n; i++)
		rc = add_source(g, src_cls, dirs->v[i], (int)i, mux, &inputs);
	if (!rc && bt_graph_add_simple_sink_component(g, "fabriclab", NULL, consume, NULL, r,
						      &sink) != BT_GRAPH_ADD_COMPONENT_STATUS_OK)
		rc = fl_fail(FL_ERR_SYSTEM, "cannot create the sink");
	if (!rc && bt_graph_connect_ports(
			   g, bt_component_filter_borrow_output_port_by_name_const(mux, "out"),
			   bt_component_sink_borrow_input_port_by_name_const(sink, "in"),
			   NULL) != BT_GRAPH_CONNECT_PORTS_STATUS_OK)
		rc = fl_fail(FL_ERR_SYSTEM, "cannot connect the sink");
	bt_plugin_put_ref(ctf);
	bt_plugin_put_ref(utils);
	return rc;
}

static int run_graph(const char *dir, const struct trace_dirs *dirs, struct reader *r)
{
	bt_graph *g = bt_graph_create(0);
	bt_graph_run_status st = BT_GRAPH_RUN_STATUS_AGAIN;
	int rc;

	if (!g)
		return fl_fail(FL_ERR_SYSTEM, "cannot create a babeltrace2 graph");
	rc = build_graph(g, dirs, r);
	while (!rc && st == BT_GRAPH_RUN_STATUS_AGAIN)
		st = bt_graph_run(g);
	if (!rc && st != BT_GRAPH_RUN_STATUS_OK)
		rc = r->failed ? -1
			       : fl_fail(FL_ERR_USAGE, "babeltrace2 could not read the trace in %s",
					 dir);
	bt_graph_put_ref(g);
	bt_current_thread_clear_error();
	return rc;
}

/*
 * libbabeltrace2 asserts (SIGABRT) on some damaged stream packets, e.g. a
 * packet header whose timestamps are all ones, and checks nothing of a stream
 * before: so the streams are first read in a child, which may die for them.
 * Its wait status: exit 0 read; 1 an error the real read names; 2 past the
 * deadline; killed by a signal: a damaged stream.
 */
static int probe_status(const char *what, const struct trace_dirs *dirs)
{
	struct trace_model scratch;
	struct reader r = { &scratch, 0 };
	int status;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return 0; /* no child to spare: the trace is read as before, unguarded */
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		if (null >= 0)
			dup2(null, STDERR_FILENO); /* babeltrace2's own assertion text */
		memset(&scratch, 0, sizeof(scratch));
		if (trace_read_deadline())
			_exit(1);
		_exit(run_graph(what, dirs, &r) ? 1 : 0);
	}
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR)
			return 0; /* not ours to wait for: the real read still says what fails */
	}
	return status;
}

/* The trace folder of a stream that kills babeltrace2, found one folder at a time. */
static const char *crashing_dir(const struct trace_dirs *dirs)
{
	for (size_t i = 0; i < dirs->n; i++) {
		struct trace_dirs one = { &dirs->v[i], 1 };

		if (WIFSIGNALED(probe_status(dirs->v[i], &one)))
			return dirs->v[i];
	}
	return NULL;
}

static int probe(const char *dir, const struct trace_dirs *dirs)
{
	int status = probe_status(dir, dirs);
	const char *where;

	if (WIFEXITED(status) && WEXITSTATUS(status) == 2)
		return fl_fail(FL_ERR_USAGE, "reading %s did not finish within "
			       "FABRICLAB_TRACE_TIMEOUT_MS (a damaged trace?)", dir);
	if (!WIFSIGNALED(status))
		return FL_OK;
	where = dirs->n > 1 ? crashing_dir(dirs) : dirs->v[0];
	return fl_fail(FL_ERR_USAGE, "%s: a damaged CTF stream: libbabeltrace2 died reading "
		       "it (%s); nothing was written", where ? where : dir,
		       strsignal(WTERMSIG(status)));
}

int trace_read(const char *dir, struct trace_model *m)
{
	struct trace_dirs dirs = { calloc(MAX_TRACES, sizeof(char *)), 0 };
	struct reader r = { m, 0 };
	int rc;

	if (!dirs.v)
		return fl_fail(FL_ERR_SYSTEM, "out of memory");
	rc = find_traces(dir, &dirs, 0);
	if (!rc && !dirs.n)
		rc = fl_fail(FL_ERR_USAGE, "no CTF trace (a folder with a metadata file) under %s",
			     dir);
	for (size_t i = 0; !rc && i < dirs.n; i++)
		rc = trace_check_metadata(dirs.v[i]);
	for (size_t i = 0; !rc && i < dirs.n; i++)
		rc = trace_check_streams(dirs.v[i], m);
	if (!rc)
		rc = probe(dir, &dirs);
	if (!rc)
		rc = trace_read_deadline();
	if (!rc) {
		rc = run_graph(dir, &dirs, &r);
		trace_read_done();
	}
	for (size_t i = 0; i < dirs.n; i++)
		free(dirs.v[i]);
	free(dirs.v);
	return rc;
}
