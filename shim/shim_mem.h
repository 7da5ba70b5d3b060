/*
 * Where a world's buffers live, and how the shim reaches them. With
 * FABRICLAB_SHIM_MEM=cuda the user's buffers are GPU memory (cudaMalloc on the
 * rank's GPU); the shim never touches them from the host but through
 * cudaMemcpy. When the plugin advertises NCCL_PTR_CUDA (GPUDirect RDMA) the
 * buffers and the receive staging ring are registered as CUDA memory and the
 * plugin moves them directly, receives flushed with iflush where NCCL flushes
 * (nccl_rules.h: compute capability below 9.0, or forceFlush); when
 * it offers host memory only, every collective stages through registered host
 * bounce buffers with one extra copy each way, as NCCL falls back to.
 */
#ifndef SHIM_MEM_H
#define SHIM_MEM_H

#include <stddef.h>

#include "cuda_load.h"

#define SHIM_MEM_ENV "FABRICLAB_SHIM_MEM"

enum shim_mem_kind { SHIM_MEM_HOST, SHIM_MEM_CUDA };

struct shim_mem {
	enum shim_mem_kind kind;
	int gdr;            /* CUDA buffers go to the plugin as CUDA memory */
	int dmabuf;         /* ... registered through a dma-buf fd (regMrDmaBuf) */
	int gpu;            /* the rank's GPU */
	int cc;             /* its compute capability, major * 10 + minor; 0 unknown */
	struct shim_cuda cuda;
	float *scratch[2];  /* host copies of two slices for a reduction (gdr) */
	size_t scratch_bytes;
};

struct shim_world;
struct shim_buf;

/* FABRICLAB_SHIM_MEM (host|cuda); for cuda, loads the runtime and picks the rank's GPU. */
int shim_mem_open(struct shim_world *w);
/* Once the plugin's properties are known: GPUDirect or staging, said at INFO. */
int shim_mem_plan(struct shim_world *w);
void shim_mem_close(struct shim_world *w);

/* Buffers of the world's kind; host ones are page aligned. */
int shim_mem_alloc(struct shim_world *w, size_t bytes, void **ptr);
void shim_mem_free(struct shim_world *w, void *ptr);
/* Memory the plugin moves: GPU memory under GPUDirect, else host memory. */
int shim_mem_alloc_net(struct shim_world *w, size_t bytes, void **ptr);
void shim_mem_free_net(struct shim_world *w, void *ptr);
/* Between the world's memory and the host. */
int shim_mem_upload(struct shim_world *w, void *dst, const void *host_src, size_t bytes);
int shim_mem_download(struct shim_world *w, void *host_dst, const void *src, size_t bytes);
/* Within the world's memory. */
int shim_mem_copy(struct shim_world *w, void *dst, const void *src, size_t bytes);
/* Within network memory (GPU memory under GPUDirect, else host memory). */
int shim_mem_copy_net(struct shim_world *w, void *dst, const void *src, size_t bytes);
/* The plugin's view: NCCL_PTR_CUDA for GPUDirect buffers, else NCCL_PTR_HOST. */
int shim_mem_net_type(const struct shim_world *w);
/*
 * Registers network memory with one comm as NCCL would: a dma-buf fd from the
 * driver and regMrDmaBuf when the plugin offers dma-buf, else regMr with the
 * memory's type.
 */
int shim_mem_register(struct shim_world *w, void *comm, void *ptr, size_t size, void **mhandle);
/* Collectives stage through host bounce buffers (GPU memory, no GPUDirect). */
int shim_mem_staged(const struct shim_world *w);
/* Staging: a buffer's GPU data to its host bounce buffer before a collective, and back after. */
int shim_mem_stage_in(struct shim_world *w, const struct shim_buf *buf, size_t bytes);
int shim_mem_stage_out(struct shim_world *w, const struct shim_buf *buf, size_t bytes);

/* dst = mine + theirs (floats), or dst = theirs when mine is NULL; all in network memory. */
int shim_mem_combine(struct shim_world *w, float *dst, const float *mine, const float *theirs,
		     size_t n);

#endif
