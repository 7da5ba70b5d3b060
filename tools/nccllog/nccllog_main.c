/* `fabriclab nccl-log` options and input: files (one per rank, or interleaved) or stdin. */
#include "nccllog.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "plugin/base/file_read.h"
#include "shim/shim.h"
#include "tools/common/tool_text.h"

#define EXIT_FLAGGED 1
#define EXIT_USAGE 2

void nccllog_usage(FILE *out)
{
	fprintf(out,
		"usage: fabriclab nccl-log [--json] [FILE...]\n"
		"\n"
		"Reads the NCCL_DEBUG=INFO output of every rank (files, or stdin without FILE or\n"
		"with -): one file per rank, or one stream with every rank's lines\n"
		"interleaved, told apart by NCCL's host:pid prefix or a launcher's [rank]\n"
		"prefix ([3], [rank3]:, Open MPI's [1,3]<stdout>:). Prints per rank the NCCL\n"
		"version, the network NCCL chose (IB, the Socket fallback, or a net plugin),\n"
		"the NET connections that use GPUDirect RDMA (\"via NET/IB/0/GDRDMA\" channel\n"
		"lines) and the IB devices and ports; flags every rank that fell back to\n"
		"NET/Socket, has NET connections without GPUDirect RDMA, or differs from the\n"
		"others (network, version, IB devices).\n"
		"\n"
		"  --json      print JSON instead of text\n"
		"  -h, --help  this text\n"
		"\n"
		"NCCL prints its version on rank 0 only; other ranks show \"-\" there. Bytes\n"
		"that are not printable UTF-8 (terminal controls, other encodings) are shown\n"
		"as \\xNN. FILE must be a regular file (pipe a stream into stdin).\n"
		"Exit status: 0 nothing flagged; 1 a rank flagged; 2 bad usage, a file that\n"
		"cannot be read, or no NCCL line at all.\n");
}

static int read_stream(struct nl_log *log, FILE *in, const char *name)
{
	struct nl_rank *last = NULL;
	char *line = NULL;
	size_t cap = 0;
	int rc = FL_OK;

	while (!rc && getline(&line, &cap, in) >= 0)
		rc = nl_parse_line(log, line, &last);
	if (!rc && ferror(in))
		rc = shim_fail(FL_ERR_SYSTEM, "%s: %s", name, strerror(errno));
	free(line);
	return rc;
}

/*
 * A log file, or NULL with the error set: only a regular file, refused before
 * any read that could block (a FIFO named like a log would wait for ever).
 * Pipes come through stdin ("-").
 */
static FILE *open_log(const char *path)
{
	const char *why = NULL;
	int fd = fl_open_regular(path, &why);
	FILE *in;

	if (fd < 0) {
		shim_fail(FL_ERR_USAGE, "%s: %s", path, why);
		return NULL;
	}
	in = fdopen(fd, "r");
	if (!in) {
		shim_fail(FL_ERR_SYSTEM, "%s: %s", path, strerror(errno));
		close(fd);
	}
	return in;
}

static int read_inputs(struct nl_log *log, int nfiles, char **files)
{
	int rc = FL_OK;

	if (!nfiles)
		return read_stream(log, stdin, "stdin");
	for (int i = 0; !rc && i < nfiles; i++) {
		FILE *in = strcmp(files[i], "-") ? open_log(files[i]) : stdin;

		if (!in)
			return FL_ERR_USAGE;
		rc = read_stream(log, in, files[i]);
		if (in != stdin)
			fclose(in);
	}
	return rc;
}

/* The error names a file or quotes a line: escaped, like the output. */
static void print_error(void)
{
	fputs("fabriclab nccl-log: ", stderr);
	tool_text_put(stderr, shim_error_text());
	fputc('\n', stderr);
}

int nccllog_main(int argc, char **argv)
{
	struct nl_log log = { 0 };
	bool json = false;
	int first = 1, rc;
	size_t flagged;

	for (; first < argc && argv[first][0] == '-' && argv[first][1]; first++) {
		if (!strcmp(argv[first], "--json")) {
			json = true;
		} else if (!strcmp(argv[first], "-h") || !strcmp(argv[first], "--help")) {
			nccllog_usage(stdout);
			return 0;
		} else {
			fprintf(stderr, "fabriclab nccl-log: unknown option %s (see `fabriclab "
				"nccl-log --help`)\n", argv[first]);
			return EXIT_USAGE;
		}
	}
	rc = read_inputs(&log, argc - first, argv + first);
	if (!rc && !log.nccl_lines)
		rc = shim_fail(FL_ERR_USAGE, "no NCCL line in %zu lines: was NCCL_DEBUG=INFO "
			       "set?", log.lines);
	if (rc) {
		print_error();
		nl_log_free(&log);
		return EXIT_USAGE;
	}
	rc = nl_judge(&log, &flagged);
	if (!rc && json)
		rc = nl_print_json(&log, flagged, stdout);
	else if (!rc)
		nl_print_text(&log, flagged, stdout);
	nl_log_free(&log);
	if (rc) {
		print_error();
		return EXIT_USAGE;
	}
	return flagged ? EXIT_FLAGGED : 0;
}
