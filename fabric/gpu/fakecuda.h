/* The CUDA runtime and driver calls the fake provides, with the C shapes the real ones have. */
#ifndef FAKECUDA_H
#define FAKECUDA_H

#include <stddef.h>

int cudaGetDeviceCount(int *count);
int cudaSetDevice(int dev);
int cudaMalloc(void **ptr, size_t size);
int cudaFree(void *ptr);
int cudaMemcpy(void *dst, const void *src, size_t size, int kind);
int cudaDeviceGetPCIBusId(char *id, int len, int dev);
int cudaDeviceGetAttribute(int *value, int attr, int dev);
const char *cudaGetErrorString(int err);
int cuInit(unsigned flags);
int cuDeviceGetAttribute(int *value, int attr, int dev);
int cuMemGetHandleForAddressRange(void *handle, unsigned long long dptr, size_t size, int type,
				  unsigned long long flags);

/* From the fake verbs (tests only): a NIC write into memory, and a NIC read that flushes. */
void fakecudaNicWrote(const void *addr, unsigned long long ino, size_t off, size_t len);
void fakecudaNicRead(const void *addr, unsigned long long ino, size_t off, size_t len);
/* The GPU's reduction kernel, for the shim (no CUDA call does this): dst = mine + theirs. */
int fakecudaKernelSum(float *dst, const float *mine, const float *theirs, size_t n);

#endif
