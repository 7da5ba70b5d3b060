/* `fabriclab report` options: which reports to read and which outputs to write. */
#include <getopt.h>
#include <string.h>

#include "plugin/base/error.h"
#include "report.h"
#include "tools/common/tool_text.h"
#include "tools/topology/topology.h"

#define EXIT_OUTPUT 1
#define EXIT_USAGE 2

struct report_opts {
	bool json;
	const char *svg;
	const char *prom;
	const char *html;
	const char *topology;
};

void report_usage(FILE *out)
{
	fprintf(out,
		"usage: fabriclab report DIR-or-FILE... [--json] [--svg FILE] [--prom FILE]\n"
		"                        [--html FILE] [--topology FILE]\n"
		"\n"
		"Merges the per-process reports (<node>-<pid>.json) that the plugin writes into\n"
		"FABRICLAB_REPORT_DIR, joins the sender's and the receiver's view of each hop,\n"
		"and prints the cluster verdict (none, link, device, node, rail, switch, gdr,\n"
		"transport, not-enough-evidence), a table of every hop and the commands that\n"
		"would confirm the verdict on the machines. A folder stands for every *.json\n"
		"directly in it.\n"
		"\n"
		"  --json        print the merged report as JSON instead of text\n"
		"  --svg FILE    also draw it: node x node wire-bandwidth heatmap and the ring\n"
		"  --prom FILE   also write a node_exporter textfile (per-hop gauges, verdict)\n"
		"  --html FILE   also write one self-contained page to share: verdict, drawing,\n"
		"                hop table and commands\n"
		"  --topology FILE  the fabric's wiring: fabriclab's description (the lab's\n"
		"                topology.json), ibnetdiscover's output or lldpctl -f json's\n"
		"                (a folder of <node>.json for several hosts); adds the\n"
		"                switches, uplinks and spines the hops share, with commands\n"
		"  -h, --help    this text\n"
		"\n"
		"Wire rate of a hop: the receiver's view for sockets, the sender's for verbs.\n"
		"Exit status: 0 done; 2 bad usage or a report that cannot be read (the file is\n"
		"named); 1 an output file could not be written.\n"
		"\n"
		"environment: FABRICLAB_VERDICT_MIN_RATIO (0.8),\n"
		"FABRICLAB_VERDICT_MIN_BYTES (16M), FABRICLAB_VERDICT_MIN_MESSAGES (8):\n"
		"the effect and the sample a verdict needs\n");
}

static int parse_opts(int argc, char **argv, struct report_opts *o)
{
	static const struct option longs[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "svg", required_argument, NULL, 's' },
		{ "prom", required_argument, NULL, 'p' },
		{ "html", required_argument, NULL, 'H' },
		{ "topology", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", longs, NULL)) != -1) {
		switch (c) {
		case 'j': o->json = true; break;
		case 's': o->svg = optarg; break;
		case 'p': o->prom = optarg; break;
		case 'H': o->html = optarg; break;
		case 't': o->topology = optarg; break;
		case 'h': report_usage(stdout); return 0;
		default:
			fprintf(stderr,
				"fabriclab report: bad option \"%s\" (see `fabriclab report "
				"--help`)\n",
				argv[optind - 1]);
			return EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		report_usage(stderr);
		return EXIT_USAGE;
	}
	return -1;
}

/* Errors name files and fields from the reports: escaped, a terminal reads them. */
static void print_error(void)
{
	fputs("fabriclab report: ", stderr);
	tool_text_put(stderr, fl_error_text());
	fputc('\n', stderr);
}

static void note_duplicates(const struct report_set *set)
{
	for (size_t i = 0; i < set->nfiles; i++) {
		const struct report_file *f = &set->files[i];

		if (f->superseded_by >= 0)
			fprintf(stderr,
				"fabriclab report: note: %s and %s come from the same process "
				"(node %s, pid %lld); using %s\n",
				f->path, set->files[f->superseded_by].path, f->node, f->pid,
				set->files[f->superseded_by].path);
	}
}

static int load(struct report_set *set, int npaths, char **paths, const char *topology,
		struct fl_hop_elements *e)
{
	struct fl_verdict_params params;
	int err = fl_verdict_params_from_env(&params);

	for (int i = 0; !err && i < npaths; i++)
		err = report_add_path(set, paths[i]);
	err = err ? err : report_merge(set, &params);
	if (err) {
		print_error();
		return EXIT_USAGE;
	}
	if (topology)
		report_judge_topology(set, &params, topology, e);
	note_duplicates(set);
	return 0;
}

static int write_outputs(const struct report_set *set, const struct report_opts *o)
{
	int err = o->json ? report_print_json(set, stdout) : report_print_text(set, stdout);

	if (err)
		fprintf(stderr, "fabriclab report: cannot write to stdout\n");
	/* the shared elements: in the text, or said on stderr when they cannot be had */
	if (!err && o->topology)
		topo_report(o->topology, set->figures, set->nhops, o->json ? NULL : stdout, stderr);
	if (!err && o->svg && (err = report_write_svg(set, o->svg)))
		print_error();
	if (!err && o->prom && (err = report_write_prom(set, o->prom)))
		print_error();
	if (!err && o->html && (err = report_write_html(set, o->html)))
		print_error();
	return err ? EXIT_OUTPUT : 0;
}

int report_main(int argc, char **argv)
{
	struct report_opts o = { .json = false };
	struct report_set set;
	struct fl_hop_elements elements = { 0 };
	int rc = parse_opts(argc, argv, &o);

	if (rc >= 0)
		return rc;
	memset(&set, 0, sizeof(set));
	rc = load(&set, argc - optind, argv + optind, o.topology, &elements);
	if (!rc)
		rc = write_outputs(&set, &o);
	report_free(&set);
	fl_hop_elements_free(&elements);
	return rc;
}
