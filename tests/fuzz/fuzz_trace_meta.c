/*
 * CTF metadata checked before babeltrace2 sees it (tools/trace/trace_check.c):
 * any content is accepted as whole or refused with a message, never read past
 * its end. The input is written as the metadata of a private trace folder.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "plugin/base/error.h"
#include "tools/trace/trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[64], path[96];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	FILE *f;

	if (!dir[0]) {
		snprintf(dir, sizeof(dir), "/tmp/fabriclab-fuzz-trace.%d", (int)getpid());
		mkdir(dir, 0700);
		snprintf(path, sizeof(path), "%s/metadata", dir);
	}
	f = fopen(path, "w");
	if (!f || (size && fwrite(data, 1, size, f) != size) || fclose(f))
		abort();
	fl_error_clear();
	if (trace_check_metadata(dir) && !fl_error_text()[0])
		abort();
	return 0;
}
