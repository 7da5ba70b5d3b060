/* Binding the CUDA runtime and driver symbols the shim and the doctor use. */
#include "cuda_load.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "plugin/base/fl_types.h"
#include "shim_env.h"
#include "shim_error.h"

static const char *const runtime_names[] = { "libcudart.so", "libcudart.so.13",
					     "libcudart.so.12" };

struct binding {
	const char *symbol;
	size_t offset; /* of the function pointer in struct shim_cuda */
};

#define BIND(field, sym) { sym, offsetof(struct shim_cuda, field) }

static const struct binding runtime_syms[] = {
	BIND(get_device_count, "cudaGetDeviceCount"),
	BIND(set_device, "cudaSetDevice"),
	BIND(malloc_device, "cudaMalloc"),
	BIND(free_device, "cudaFree"),
	BIND(copy, "cudaMemcpy"),
	BIND(pci_bus_id, "cudaDeviceGetPCIBusId"),
	BIND(attribute, "cudaDeviceGetAttribute"),
	BIND(error_string, "cudaGetErrorString"),
};

static const struct binding driver_syms[] = {
	BIND(driver_init, "cuInit"),
	BIND(driver_attribute, "cuDeviceGetAttribute"),
	BIND(range_handle, "cuMemGetHandleForAddressRange"),
};

/* Every symbol or none: a half-bound table would fail later, far from the cause. */
static int bind_all(void *lib, const struct binding *b, size_t n, struct shim_cuda *cu)
{
	for (size_t i = 0; i < n; i++) {
		void *fn = dlsym(lib, b[i].symbol);

		if (!fn)
			return shim_fail(FL_ERR_USAGE, "CUDA runtime: symbol %s missing",
					 b[i].symbol);
		memcpy((char *)cu + b[i].offset, &fn, sizeof(fn));
	}
	return FL_OK;
}

static void *open_runtime(char *tried, size_t len)
{
	const char *env = shim_env(SHIM_CUDA_LIB_ENV);
	void *lib;

	if (env) {
		snprintf(tried, len, "%s=%s", SHIM_CUDA_LIB_ENV, env);
		return dlopen(env, RTLD_NOW | RTLD_LOCAL);
	}
	tried[0] = '\0';
	for (size_t i = 0; i < sizeof(runtime_names) / sizeof(runtime_names[0]); i++) {
		lib = dlopen(runtime_names[i], RTLD_NOW | RTLD_LOCAL);
		if (lib)
			return lib;
		snprintf(tried + strlen(tried), len - strlen(tried), "%s%s", i ? ", " : "",
			 runtime_names[i]);
	}
	return NULL;
}

static void load_driver(struct shim_cuda *cu)
{
	const char *env = shim_env(SHIM_CUDA_DRIVER_ENV);

	cu->driver = dlopen(env ? env : "libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (cu->driver && (bind_all(cu->driver, driver_syms, 3, cu) || cu->driver_init(0))) {
		dlclose(cu->driver);
		cu->driver = NULL;
		cu->driver_attribute = NULL;
		cu->range_handle = NULL;
	}
}

int shim_cuda_load(struct shim_cuda *cu)
{
	char tried[256];
	int rc;

	memset(cu, 0, sizeof(*cu));
	cu->runtime = open_runtime(tried, sizeof(tried));
	if (!cu->runtime)
		return shim_fail(FL_ERR_USAGE, "GPU memory asked for, but no CUDA runtime loads "
				 "(tried %s: %s); set %s to libcudart.so's path", tried,
				 dlerror(), SHIM_CUDA_LIB_ENV);
	rc = bind_all(cu->runtime, runtime_syms, sizeof(runtime_syms) / sizeof(runtime_syms[0]),
		      cu);
	if (rc) {
		shim_cuda_unload(cu);
		return rc;
	}
	load_driver(cu);
	/* the emulated GPU's: NCCL reduces in its kernel, in device memory (2.30.7
	 * src/device/prims_simple.h:246-262, reduceCopy), no copy to the host and back, and
	 * neither does an emulated job, whose host<->device copies the emulated copy engine paces */
	*(void **)&cu->kernel_sum = dlsym(cu->runtime, "fakecudaKernelSum");
	return FL_OK;
}

void shim_cuda_unload(struct shim_cuda *cu)
{
	if (cu->driver)
		dlclose(cu->driver);
	if (cu->runtime)
		dlclose(cu->runtime);
	memset(cu, 0, sizeof(*cu));
}

const char *shim_cuda_error(const struct shim_cuda *cu, int err)
{
	const char *text = cu->error_string ? cu->error_string(err) : NULL;

	return text ? text : "unknown CUDA error";
}
