/* `fabriclab trace` options and output: windows, then the merged report and its verdict. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "plugin/base/error.h"
#include "trace.h"

#define EXIT_OUTPUT 1
#define EXIT_USAGE 2

struct trace_opts {
	bool json;
	uint64_t window_ns;
	const char *perfetto; /* the timeline's file, or NULL */
};

void trace_usage(FILE *out)
{
	fprintf(out,
		"usage: fabriclab trace TRACE_DIR [--window SECONDS] [--json] [--perfetto FILE]\n"
		"\n"
		"Reads the fabriclab:* events of an LTTng trace (every CTF trace under\n"
		"TRACE_DIR, per-uid or per-pid buffers), rebuilds each process's hops from\n"
		"its request events alone, and prints every hop's wire bandwidth over time\n"
		"windows, the live findings the plugin emitted while the job ran (each with\n"
		"the time from its hop's first traffic), then the merged report and\n"
		"the verdict exactly as `fabriclab report` would from the JSON reports of the\n"
		"same run.\n"
		"\n"
		"  --window S    window width in seconds (default 0.1)\n"
		"  --json        the merged report as `fabriclab report --json` prints it, with\n"
		"                one more member, \"trace\": events, processes, windows per hop,\n"
		"                live findings, discarded events\n"
		"  --perfetto F  also write the timeline to F as Chrome trace event JSON (open it\n"
		"                in the Perfetto UI or chrome://tracing): a process per traced\n"
		"                process, rows per hop (wire busy, GB/s and peer wait per window)\n"
		"                and per connection (each request with its phases), faults and\n"
		"                live findings, the verdict at the end\n"
		"  -h, --help    this text\n"
		"\n"
		"Events carry their process's pid: no context is needed to tell processes apart\n"
		"(a trace of an older provider, without that field, needs the vpid context). Events\n"
		"LTTng discarded (a ring buffer too small) are counted in every output, and the\n"
		"windows they fall in are marked; docs/tracing.md has the recording recipe.\n"
		"Exit status: 0 done; 2 bad usage or a trace that cannot be read; 1 output error.\n"
		"environment: FABRICLAB_VERDICT_MIN_RATIO, _MIN_BYTES, _MIN_MESSAGES as for\n"
		"`fabriclab report`\n");
}

static int parse_window(const char *text, uint64_t *ns)
{
	char *end;
	double s = strtod(text, &end);

	if (end == text || *end || !(s >= 1e-6 && s <= 86400))
		return -1;
	*ns = (uint64_t)(s * 1e9);
	return 0;
}

static int parse_opts(int argc, char **argv, struct trace_opts *o)
{
	static const struct option longs[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "window", required_argument, NULL, 'w' },
		{ "perfetto", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", longs, NULL)) != -1) {
		switch (c) {
		case 'j': o->json = true; break;
		case 'p': o->perfetto = optarg; break;
		case 'w':
			if (!parse_window(optarg, &o->window_ns))
				break;
			fprintf(stderr, "fabriclab trace: --window takes seconds from 0.000001 to "
					"86400, not \"%s\"\n", optarg);
			return EXIT_USAGE;
		case 'h': trace_usage(stdout); return 0;
		default:
			fprintf(stderr, "fabriclab trace: bad option \"%s\" (see `fabriclab trace "
					"--help`)\n", argv[optind - 1]);
			return EXIT_USAGE;
		}
	}
	if (optind != argc - 1) {
		trace_usage(stderr);
		return EXIT_USAGE;
	}
	return -1;
}

static int load(const char *dir, const struct trace_opts *o, struct trace_model *m,
		struct report_set *set)
{
	struct fl_verdict_params params;
	int err = fl_verdict_params_from_env(&params);

	if (!err && o->perfetto)
		err = trace_pf_open(o->perfetto, &m->pf);
	err = err ? err : trace_read(dir, m);
	if (!err && m->reused_ids && !m->vpid_seen)
		err = fl_fail(FL_ERR_USAGE, "%s mixes processes without a vpid context: record "
					    "with `lttng add-context -u -t vpid`", dir);
	if (!err && !m->events)
		err = fl_fail(FL_ERR_USAGE, "no fabriclab event in %s", dir);
	err = err ? err : trace_model_to_reports(m, set);
	err = err ? err : report_merge(set, &params);
	if (err) {
		fprintf(stderr, "fabriclab trace: %s\n", fl_error_text());
		trace_pf_abort(m->pf);
		m->pf = NULL;
		return EXIT_USAGE;
	}
	return 0;
}

void trace_print_discards(const struct trace_model *m, FILE *out)
{
	fprintf(out, "discarded by LTTng: %llu events", (unsigned long long)m->discarded_events);
	if (m->discarded_packets)
		fprintf(out, ", %llu packets", (unsigned long long)m->discarded_packets);
	if (m->discarded_events || m->discarded_packets)
		fputs(" (its ring buffer was full: the figures below lack them; "
		      "see docs/tracing.md for larger buffers)", out);
	fputc('\n', out);
}

static void own_verdicts(const struct trace_model *m, FILE *out)
{
	bool any = false;

	for (size_t i = 0; i < m->nprocs; i++) {
		if (!m->procs[i].verdict[0])
			continue;
		fprintf(out, "%s %s: %s", any ? "," : "each process's own verdict event:",
			m->procs[i].node, m->procs[i].verdict);
		any = true;
	}
	if (any)
		fputc('\n', out);
}

static int print(const struct trace_model *m, const struct report_set *set,
		 const struct trace_opts *o)
{
	int err;

	if (o->json) {
		err = trace_print_json(m, set, o->window_ns, stdout);
	} else {
		printf("fabriclab trace: %llu events from %zu processes\n",
		       (unsigned long long)m->events, set->nfiles);
		trace_print_discards(m, stdout);
		if (m->skipped_files)
			printf("note: %llu stream files were skipped (not regular files, or empty: "
			       "stderr names each)\n", (unsigned long long)m->skipped_files);
		if (m->orphans)
			printf("note: %llu request_done events of connections whose conn_up the "
			       "trace lacks were left out\n", (unsigned long long)m->orphans);
		err = trace_print_windows(m, set, o->window_ns, stdout);
		own_verdicts(m, stdout);
		trace_print_live(m, stdout);
		err = err ? err : report_print_text(set, stdout);
		if (!err && (m->discarded_events || m->discarded_packets))
			printf("note: this verdict rests on part of the traffic: LTTng discarded %llu "
			       "events\n", (unsigned long long)m->discarded_events);
	}
	if (err)
		fprintf(stderr, "fabriclab trace: %s\n", fl_error_text());
	return err ? EXIT_OUTPUT : 0;
}

int trace_main(int argc, char **argv)
{
	struct trace_opts o = { false, 100000000ULL, NULL };
	struct trace_model m;
	struct report_set set;
	int rc = parse_opts(argc, argv, &o);

	if (rc >= 0)
		return rc;
	memset(&m, 0, sizeof(m));
	memset(&set, 0, sizeof(set));
	rc = load(argv[optind], &o, &m, &set);
	if (!rc)
		rc = print(&m, &set, &o);
	if (!rc && m.pf) {
		rc = trace_pf_finish(m.pf, &m, &set, o.window_ns) ? EXIT_OUTPUT : 0;
		if (rc)
			fprintf(stderr, "fabriclab trace: %s\n", fl_error_text());
		else if (!o.json)
			printf("timeline: %s (Chrome trace event JSON: Perfetto UI, chrome://tracing)\n",
			       o.perfetto);
	} else {
		trace_pf_abort(m.pf);
	}
	m.pf = NULL;
	report_free(&set);
	trace_model_free(&m);
	return rc;
}
