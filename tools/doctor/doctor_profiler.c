/*
 * Which ncclProfiler_vN the NCCL on this node takes from fabriclab: NCCL probes
 * its own newest version first and falls back (2.23.4 src/misc/profiler.cc
 * takes v1; 2.26.2 src/plugin/profiler.cc:52-57 v3 first; 2.28.9 v5; 2.30.7
 * v6; 2.31 v7). The NCCL found is asked its version (ncclGetVersion); the
 * plugin's INFO line at each communicator's init says what NCCL really took.
 */
#include <dlfcn.h>
#include <stdlib.h>

#include "doctor.h"
#include "plugin/abi/profiler_abi.h"

static const char *nccl_lib(void)
{
	const char *env = getenv("FABRICLAB_NCCL_LIB");

	return env && *env ? env : "libnccl.so.2";
}

void doctor_check_nccl_profiler(struct doctor *d)
{
	const char *name = nccl_lib();
	void *lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
	int (*get_version)(int *) = lib ? (int (*)(int *))dlsym(lib, "ncclGetVersion") : NULL;
	int code = 0, abi;

	if (!get_version || get_version(&code) != 0) {
		doctor_add(d, DOCTOR_INFO, "nccl-profiler", name, "NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT",
			   "no NCCL here to ask (%s): fabriclab exports ncclProfiler_v1..v7 and logs "
			   "\"NCCL took ncclProfiler_vN\" at each communicator's init", name);
	} else if ((abi = fl_prof_abi_for_nccl(code)) == 0) {
		doctor_add(d, DOCTOR_WARN, "nccl-profiler", name, "NCCL_DEBUG=INFO",
			   "NCCL %d.%d.%d has no profiler plugin interface (2.23 or later needed)",
			   code / 10000, code / 100 % 100, code % 100);
	} else {
		doctor_add(d, DOCTOR_PASS, "nccl-profiler", name, "NCCL_DEBUG=INFO",
			   "NCCL %d.%d.%d takes ncclProfiler_v%d of fabriclab's v1..v7",
			   code / 10000, code / 100 % 100, code % 100, abi);
	}
	if (lib)
		dlclose(lib);
}
