/*
 * The `fabriclab nccl-log` parser, judgement and both outputs on any bytes:
 * each line parses or is skipped, never crashes, leaks or hangs, and the JSON
 * output always holds every rank the parser found (a rank whose text is not
 * UTF-8 was once dropped from it) and parses back.
 */
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shim/shim.h"
#include "tools/nccllog/nccllog.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void parse_lines(struct nl_log *log, const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1), *line, *save = NULL;
	struct nl_rank *last = NULL;

	if (!text)
		abort();
	memcpy(text, data, size);
	text[size] = '\0';
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (nl_parse_line(log, line, &last))
			abort(); /* only out of memory fails */
	}
	free(text);
}

static void check_json(const struct nl_log *log, size_t flagged)
{
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);
	json_error_t err;
	json_t *root;

	if (!f || nl_print_json(log, flagged, f) || fclose(f))
		abort();
	root = json_loads(out, 0, &err);
	if (!root || json_array_size(json_object_get(root, "ranks")) != log->n)
		abort(); /* every rank, in well-formed JSON */
	json_decref(root);
	free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct nl_log log = { 0 };
	size_t flagged;
	FILE *devnull = fopen("/dev/null", "w");

	if (!devnull)
		abort();
	parse_lines(&log, data, size);
	if (nl_judge(&log, &flagged))
		abort();
	check_json(&log, flagged);
	nl_print_text(&log, flagged, devnull);
	fclose(devnull);
	nl_log_free(&log);
	return 0;
}
