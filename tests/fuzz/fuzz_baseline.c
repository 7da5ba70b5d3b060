/*
 * The baseline loader of `fabriclab sweep --baseline` on any file content: it
 * loads or fails with a message, never crashes, leaks or hangs; a loaded
 * baseline has pairs in range, none repeated (without case), each found again
 * by its names. The input goes into a memfd named through /proc/self/fd.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "shim/shim.h"
#include "tools/sweep/sweep.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sweep_baseline base;
	char path[64];
	int fd = memfd_create("baseline.json", MFD_CLOEXEC);

	if (fd < 0)
		abort();
	if (size && write(fd, data, size) != (ssize_t)size)
		abort();
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	if (sweep_baseline_load(path, &base)) {
		if (!shim_error_text()[0])
			abort(); /* a failure always says why */
	} else {
		for (size_t i = 0; i < base.npairs; i++) {
			const struct sweep_base_pair *p = &base.pairs[i];

			if (!(p->gbs > 0) || !isfinite(p->gbs) || !p->src[0] || !p->dst[0] ||
			    sweep_baseline_find(&base, p->src, p->dst) != p->gbs)
				abort();
		}
	}
	sweep_baseline_free(&base);
	close(fd);
	return 0;
}
