/* Host or GPU memory for the shim's buffers, and the copies that reach GPU memory. */
#include "shim_mem.h"

#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <strings.h>
#include <unistd.h>

#include "shim.h"
#include "boot_socket.h"
#include "shim_env.h"

static int cuda_fail(struct shim_world *w, const char *call, int err)
{
	return shim_fail(FL_ERR_SYSTEM, "%s on GPU %d failed: %s (%d)", call, w->mem.gpu,
			 shim_cuda_error(&w->mem.cuda, err), err);
}

/* What NCCL's flush rule reads (nccl_rules.h); a runtime that cannot say leaves it unknown (0). */
static void read_compute_capability(struct shim_mem *m)
{
	int major = 0, minor = 0;

	if (m->cuda.attribute(&major, SHIM_CUDA_ATTR_CC_MAJOR, m->gpu) ||
	    m->cuda.attribute(&minor, SHIM_CUDA_ATTR_CC_MINOR, m->gpu))
		major = minor = 0;
	m->cc = major * 10 + minor;
}

/* torchrun's LOCAL_RANK picks the GPU among those CUDA_VISIBLE_DEVICES leaves visible. */
static int choose_gpu(struct shim_world *w)
{
	struct shim_mem *m = &w->mem;
	long local = 0;
	int count = 0, err;

	err = m->cuda.get_device_count(&count);
	if (err || count < 1)
		return shim_fail(FL_ERR_USAGE, "%s=cuda (--mem cuda): no GPU visible "
				 "(cudaGetDeviceCount: %s, %d devices)", SHIM_MEM_ENV,
				 err ? shim_cuda_error(&m->cuda, err) : "ok", count);
	if (shim_env_long("LOCAL_RANK", 0, 0, 1 << 20, &local))
		return FL_ERR_USAGE;
	m->gpu = (int)(local % count);
	err = m->cuda.set_device(m->gpu);
	if (err)
		return cuda_fail(w, "cudaSetDevice", err);
	read_compute_capability(m);
	return FL_OK;
}

int shim_mem_open(struct shim_world *w)
{
	const char *kind = shim_env(SHIM_MEM_ENV);
	int rc;

	w->mem = (struct shim_mem){ .kind = SHIM_MEM_HOST };
	if (!kind || !strcasecmp(kind, "host"))
		return FL_OK;
	if (strcasecmp(kind, "cuda"))
		return shim_fail(FL_ERR_USAGE, "%s=%s: expected host or cuda", SHIM_MEM_ENV, kind);
	rc = shim_cuda_load(&w->mem.cuda);
	if (rc) /* the tools' --mem cuda is what sets it */
		return shim_fail_context(rc, "%s=cuda (--mem cuda): ", SHIM_MEM_ENV);
	w->mem.kind = SHIM_MEM_CUDA;
	return choose_gpu(w);
}

int shim_mem_plan(struct shim_world *w)
{
	struct shim_mem *m = &w->mem;
	struct shim_coll_shape c;

	if (m->kind != SHIM_MEM_CUDA)
		return FL_OK;
	m->gdr = (w->props.ptr_support & (FL_PTR_CUDA | FL_PTR_DMABUF)) != 0;
	m->dmabuf = (w->props.ptr_support & FL_PTR_DMABUF) && m->cuda.range_handle;
	w->gdr_flush = m->gdr && shim_rules_need_flush(&w->rules, m->cc, w->props.force_flush);
	shim_rules_coll(&w->rules, w->rules.proto, &c);
	m->scratch_bytes = c.recv_bytes; /* a reduction reads one slice at a time */
	for (int i = 0; m->gdr && i < 2; i++)
		if (posix_memalign((void **)&m->scratch[i], 4096, m->scratch_bytes))
			return shim_fail(FL_ERR_SYSTEM, "out of memory for reduction scratch");
	SHIM_INFO(SHIM_LOG_INIT | SHIM_LOG_NET, "shim: GPU memory on GPU %d: %s%s (compute "
		  "capability %d.%d)", m->gpu,
		  m->gdr ? m->dmabuf ? "the plugin registers it (GPUDirect RDMA) through dma-buf, "
				     : "the plugin registers it (GPUDirect RDMA), "
			 : "the plugin offers host memory only, staging through host bounce "
			   "buffers (one extra copy each way)",
		  !m->gdr ? "" : w->gdr_flush ? "receives flushed"
					      : "receives not flushed (NCCL's needFlush is off)",
		  m->cc / 10, m->cc % 10);
	return FL_OK;
}

void shim_mem_close(struct shim_world *w)
{
	struct shim_mem *m = &w->mem;

	for (int i = 0; i < 2; i++)
		free(m->scratch[i]);
	if (m->kind == SHIM_MEM_CUDA)
		shim_cuda_unload(&m->cuda);
	*m = (struct shim_mem){ .kind = SHIM_MEM_HOST };
}

int shim_mem_alloc(struct shim_world *w, size_t bytes, void **ptr)
{
	int err;

	*ptr = NULL;
	if (w->mem.kind == SHIM_MEM_HOST) {
		if (posix_memalign(ptr, 4096, bytes ? bytes : 1))
			return shim_fail(FL_ERR_SYSTEM, "cannot allocate %zu bytes", bytes);
		return FL_OK;
	}
	err = w->mem.cuda.malloc_device(ptr, bytes ? bytes : 1);
	return err ? cuda_fail(w, "cudaMalloc", err) : FL_OK;
}

void shim_mem_free(struct shim_world *w, void *ptr)
{
	if (!ptr)
		return;
	if (w->mem.kind == SHIM_MEM_HOST)
		free(ptr);
	else
		w->mem.cuda.free_device(ptr);
}

int shim_mem_alloc_net(struct shim_world *w, size_t bytes, void **ptr)
{
	if (shim_mem_net_type(w) == FL_PTR_CUDA)
		return shim_mem_alloc(w, bytes, ptr);
	if (posix_memalign(ptr, 4096, bytes ? bytes : 1))
		return shim_fail(FL_ERR_SYSTEM, "cannot allocate %zu bytes", bytes);
	return FL_OK;
}

void shim_mem_free_net(struct shim_world *w, void *ptr)
{
	if (shim_mem_net_type(w) == FL_PTR_CUDA)
		shim_mem_free(w, ptr);
	else
		free(ptr);
}

static int copy(struct shim_world *w, void *dst, const void *src, size_t bytes, int kind)
{
	int err;

	if (w->mem.kind == SHIM_MEM_HOST) {
		memmove(dst, src, bytes);
		return FL_OK;
	}
	err = bytes ? w->mem.cuda.copy(dst, src, bytes, kind) : 0;
	return err ? cuda_fail(w, "cudaMemcpy", err) : FL_OK;
}

int shim_mem_upload(struct shim_world *w, void *dst, const void *host_src, size_t bytes)
{
	return copy(w, dst, host_src, bytes, SHIM_CUDA_H2D);
}

int shim_mem_download(struct shim_world *w, void *host_dst, const void *src, size_t bytes)
{
	return copy(w, host_dst, src, bytes, SHIM_CUDA_D2H);
}

int shim_mem_copy(struct shim_world *w, void *dst, const void *src, size_t bytes)
{
	return copy(w, dst, src, bytes, SHIM_CUDA_D2D);
}

int shim_mem_copy_net(struct shim_world *w, void *dst, const void *src, size_t bytes)
{
	if (shim_mem_net_type(w) == FL_PTR_CUDA)
		return copy(w, dst, src, bytes, SHIM_CUDA_D2D);
	memmove(dst, src, bytes);
	return FL_OK;
}

int shim_mem_stage_in(struct shim_world *w, const struct shim_buf *buf, size_t bytes)
{
	return shim_mem_download(w, buf->net, buf->data, bytes);
}

int shim_mem_stage_out(struct shim_world *w, const struct shim_buf *buf, size_t bytes)
{
	return shim_mem_upload(w, buf->data, buf->net, bytes);
}

int shim_mem_net_type(const struct shim_world *w)
{
	return w->mem.kind == SHIM_MEM_CUDA && w->mem.gdr ? FL_PTR_CUDA : FL_PTR_HOST;
}

int shim_mem_staged(const struct shim_world *w)
{
	return w->mem.kind == SHIM_MEM_CUDA && !w->mem.gdr;
}

static int register_dmabuf(struct shim_world *w, void *comm, void *ptr, size_t size,
			   void **mhandle)
{
	int fd = -1, err, rc;

	err = w->mem.cuda.range_handle(&fd, (unsigned long long)(uintptr_t)ptr, size,
				       SHIM_CUDA_RANGE_DMABUF_FD, 0);
	if (err)
		return cuda_fail(w, "cuMemGetHandleForAddressRange", err);
	rc = shim_net_reg_mr_dmabuf(&w->net, comm, ptr, size, FL_PTR_CUDA, 0, fd, mhandle);
	close(fd); /* the registration holds its own reference, as NCCL relies on */
	return rc;
}

int shim_mem_register(struct shim_world *w, void *comm, void *ptr, size_t size, void **mhandle)
{
	if (shim_mem_net_type(w) == FL_PTR_CUDA && w->mem.dmabuf)
		return register_dmabuf(w, comm, ptr, size, mhandle);
	return shim_net_reg_mr(&w->net, comm, ptr, size, shim_mem_net_type(w), mhandle);
}

static void add(float *dst, const float *mine, const float *theirs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		dst[i] = mine[i] + theirs[i];
}

int shim_mem_combine(struct shim_world *w, float *dst, const float *mine, const float *theirs,
		     size_t n)
{
	struct shim_mem *m = &w->mem;
	size_t bytes = n * sizeof(float);
	int rc;

	if (shim_mem_net_type(w) == FL_PTR_HOST) {
		if (mine)
			add(dst, mine, theirs, n);
		else
			memcpy(dst, theirs, bytes);
		return FL_OK;
	}
	if (!mine)
		return copy(w, dst, theirs, bytes, SHIM_CUDA_D2D);
	if (m->cuda.kernel_sum) {
		int err = m->cuda.kernel_sum(dst, mine, theirs, n);

		return err ? cuda_fail(w, "the emulated GPU's reduction", err) : FL_OK;
	}
	if (bytes > m->scratch_bytes)
		return shim_fail(FL_ERR_INTERNAL, "a slice of %zu bytes exceeds the step", bytes);
	rc = shim_mem_download(w, m->scratch[0], theirs, bytes);
	if (!rc)
		rc = shim_mem_download(w, m->scratch[1], mine, bytes);
	if (rc)
		return rc;
	add(m->scratch[0], m->scratch[1], m->scratch[0], n);
	return shim_mem_upload(w, dst, m->scratch[0], bytes);
}
