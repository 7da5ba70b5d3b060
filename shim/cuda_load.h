/*
 * The CUDA runtime, loaded at run time into one table (as the plugin loads
 * libibverbs): nothing CUDA is needed to build or load the shim and the tools,
 * and a host without CUDA or a GPU only fails when GPU memory is asked for.
 * The declarations are our own, from the runtime's documented C API; results
 * are cudaError_t values (0 = success).
 */
#ifndef SHIM_CUDA_LOAD_H
#define SHIM_CUDA_LOAD_H

#include <stddef.h>

#define SHIM_CUDA_LIB_ENV "FABRICLAB_CUDART_LIB"
#define SHIM_CUDA_DRIVER_ENV "FABRICLAB_CUDA_DRIVER_LIB"

/* cudaMemcpyKind */
enum shim_cuda_copy { SHIM_CUDA_H2D = 1, SHIM_CUDA_D2H = 2, SHIM_CUDA_D2D = 3 };
/* cudaDeviceAttr and CUdevice_attribute values the tools read */
#define SHIM_CUDA_ATTR_CC_MAJOR 75          /* cudaDevAttrComputeCapabilityMajor */
#define SHIM_CUDA_ATTR_CC_MINOR 76          /* cudaDevAttrComputeCapabilityMinor */
#define SHIM_CUDA_ATTR_GDR_SUPPORTED 116    /* cudaDevAttrGPUDirectRDMASupported */
#define SHIM_CUDA_ATTR_DMABUF_SUPPORTED 124 /* CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED */
#define SHIM_CUDA_RANGE_DMABUF_FD 1         /* CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD */

struct shim_cuda {
	void *runtime; /* dlopen handles */
	void *driver;  /* NULL: no driver API (no dma-buf export) */
	int (*get_device_count)(int *count);
	int (*set_device)(int dev);
	int (*malloc_device)(void **ptr, size_t size);
	int (*free_device)(void *ptr);
	int (*copy)(void *dst, const void *src, size_t size, int kind);
	int (*pci_bus_id)(char *id, int len, int dev);
	int (*attribute)(int *value, int attr, int dev);
	const char *(*error_string)(int err);
	/* driver API, optional */
	int (*driver_init)(unsigned flags);
	int (*driver_attribute)(int *value, int attr, int dev);
	int (*range_handle)(void *handle, unsigned long long dptr, size_t size, int type,
			    unsigned long long flags);
	/* The emulated GPU's reduction kernel (fabric/gpu: dst = mine + theirs in device memory);
	 * NULL on a real runtime, where the shim, which has no kernel, reduces through the host. */
	int (*kernel_sum)(float *dst, const float *mine, const float *theirs, size_t n);
};

/*
 * Loads the runtime (FABRICLAB_CUDART_LIB, else libcudart.so, .so.13, .so.12)
 * and, when present, the driver (FABRICLAB_CUDA_DRIVER_LIB, else libcuda.so.1).
 * FL_OK, or FL_ERR_USAGE with a message naming what was tried.
 */
int shim_cuda_load(struct shim_cuda *cu);
void shim_cuda_unload(struct shim_cuda *cu);
/* "cudaMalloc(1048576) failed: out of memory (2)" style text for a runtime error. */
const char *shim_cuda_error(const struct shim_cuda *cu, int err);

#endif
