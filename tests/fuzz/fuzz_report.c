/*
 * The report loader of `fabriclab report` on any file content: it loads or
 * fails with a message, never crashes, leaks or hangs. The input goes into a
 * memfd (a regular file) named through /proc/self/fd.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "plugin/base/error.h"
#include "tools/report/report.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct report_set set;
	char path[64];
	int fd = memfd_create("report.json", MFD_CLOEXEC);

	if (fd < 0)
		abort();
	if (size && write(fd, data, size) != (ssize_t)size)
		abort();
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	memset(&set, 0, sizeof(set));
	fl_error_clear();
	if (report_add_file(&set, path) && !fl_error_text()[0])
		abort(); /* a failure always says why */
	report_free(&set);
	close(fd);
	return 0;
}
