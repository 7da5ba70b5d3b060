/*
 * One rank of the real-NCCL driver, written from NCCL's documented API (nccl.h, "Creating a
 * communicator with options"/"Using multiple NCCL communicators" in NCCL's user guide): the
 * unique id from rank 0, ncclCommInitRank, collectives on a stream, ncclCommGetAsyncError while
 * waiting, ncclCommAbort past the deadline, ncclCommFinalize + ncclCommDestroy at the end.
 */
#include "driver_rank.h"

#include <cuda_runtime_api.h>
#include <nccl.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "driver_check.h"
#include "driver_uid.h"

#define MAX_SIZES 64

struct rank_state {
	const struct drv_args *a;
	int rank;
	ncclComm_t comm;
	int comm_live; /* comm initialized and neither destroyed nor aborted */
	cudaStream_t stream;
	float *send, *recv; /* device, a->max_bytes each */
	float *host;        /* pinned, a->max_bytes: the pattern, then what came back */
	double *stat;       /* device, 1 double: per-size figures reduced across ranks */
	double deadline;
	char *err;
	size_t errlen;
};

struct size_result {
	double us;      /* per call, the slowest rank's */
	double wrong;   /* summed over ranks */
};

static int fail(struct rank_state *s, int rc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(s->err, s->errlen, fmt, ap);
	va_end(ap);
	return rc;
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

#define CUDA_TRY(s, call)                                                                     \
	do {                                                                                  \
		cudaError_t e_ = (call);                                                      \
		if (e_ != cudaSuccess)                                                        \
			return fail(s, DRV_EXIT_FAILED, "%s: %s", #call, cudaGetErrorString(e_)); \
	} while (0)

#define NCCL_TRY(s, call)                                                                     \
	do {                                                                                  \
		ncclResult_t r_ = (call);                                                     \
		if (r_ != ncclSuccess)                                                        \
			return nccl_failed(s, #call, r_);                                     \
	} while (0)

static int nccl_failed(struct rank_state *s, const char *what, ncclResult_t r)
{
	const char *last = ncclGetLastError(s->comm_live ? s->comm : NULL);

	return fail(s, DRV_EXIT_FAILED, "%s: %s%s%s", what, ncclGetErrorString(r),
		    last && *last ? ": " : "", last ? last : "");
}

int drv_nccl_version(void)
{
	int v = 0;

	return ncclGetVersion(&v) == ncclSuccess ? v : 0;
}

int drv_nccl_header_version(void)
{
	return NCCL_VERSION_CODE;
}

int drv_gpu_probe(const struct drv_args *a, char *msg, size_t len)
{
	const char *visible = getenv("CUDA_VISIBLE_DEVICES");
	struct cudaDeviceProp p;
	char bus[32] = "?";
	int n = 0;
	cudaError_t e = cudaGetDeviceCount(&n);

	if (e != cudaSuccess || n <= a->device) {
		snprintf(msg, len, "no GPU: CUDA device %d is not available (%s%s%s; "
			 "CUDA_VISIBLE_DEVICES=%s)", a->device,
			 e != cudaSuccess ? "cudaGetDeviceCount: " : "",
			 e != cudaSuccess ? cudaGetErrorString(e) : "",
			 e != cudaSuccess ? "" : n == 0 ? "no CUDA device visible" :
						       "fewer devices visible",
			 visible ? visible : "unset");
		return DRV_EXIT_NO_GPU;
	}
	e = cudaGetDeviceProperties(&p, a->device);
	if (e != cudaSuccess) {
		snprintf(msg, len, "no GPU: CUDA device %d: cudaGetDeviceProperties: %s", a->device,
			 cudaGetErrorString(e));
		return DRV_EXIT_NO_GPU;
	}
	cudaDeviceGetPCIBusId(bus, sizeof(bus), a->device);
	snprintf(msg, len, "GPU %d: %s, PCI %s, %.1f GiB, %d of %d visible", a->device, p.name,
		 bus, (double)p.totalGlobalMem / (1 << 30), a->device + 1, n);
	return DRV_EXIT_OK;
}

/* Waits for the stream, watching NCCL's asynchronous errors and the run's deadline; a
 * communicator past the deadline is aborted, as NCCL documents for a hung operation. */
static int wait_stream(struct rank_state *s)
{
	for (;;) {
		cudaError_t e = cudaStreamQuery(s->stream);
		ncclResult_t r = ncclSuccess;

		if (e == cudaSuccess)
			return DRV_EXIT_OK;
		if (e != cudaErrorNotReady)
			return fail(s, DRV_EXIT_FAILED, "cudaStreamQuery: %s", cudaGetErrorString(e));
		NCCL_TRY(s, ncclCommGetAsyncError(s->comm, &r));
		if (r != ncclSuccess && r != ncclInProgress)
			return nccl_failed(s, "asynchronous error", r);
		if (now_s() > s->deadline) {
			ncclCommAbort(s->comm);
			s->comm_live = 0;
			return fail(s, DRV_EXIT_FAILED, "timed out waiting for NCCL (--timeout %.0f s)",
				    s->a->timeout_s);
		}
		sched_yield();
	}
}

static int next_rank(const struct rank_state *s)
{
	return (s->rank + 1) % s->a->ranks;
}

static int prev_rank(const struct rank_state *s)
{
	return (s->rank + s->a->ranks - 1) % s->a->ranks;
}

static int launch(struct rank_state *s, enum drv_op op, size_t count)
{
	if (op == DRV_OP_ALL_REDUCE) {
		NCCL_TRY(s, ncclAllReduce(s->send, s->recv, count, ncclFloat, ncclSum, s->comm,
					  s->stream));
		return DRV_EXIT_OK;
	}
	/* Every rank sends to the next and receives from the previous, in one group so that
	 * neither call waits for the other (nccl.h: ncclSend/ncclRecv). */
	NCCL_TRY(s, ncclGroupStart());
	NCCL_TRY(s, ncclSend(s->send, count, ncclFloat, next_rank(s), s->comm, s->stream));
	NCCL_TRY(s, ncclRecv(s->recv, count, ncclFloat, prev_rank(s), s->comm, s->stream));
	NCCL_TRY(s, ncclGroupEnd());
	return DRV_EXIT_OK;
}

/* Copies the result back and counts what is wrong; says where the first wrong element is. */
static int check_result(struct rank_state *s, enum drv_op op, size_t count, size_t *wrong)
{
	size_t first, n;
	double expect = 0;

	CUDA_TRY(s, cudaMemcpy(s->host, s->recv, count * DRV_ELEM_BYTES, cudaMemcpyDeviceToHost));
	if (op == DRV_OP_ALL_REDUCE)
		n = drv_wrong_all_reduce(s->host, count, s->a->ranks, &first);
	else
		n = drv_wrong_from(s->host, count, prev_rank(s), &first);
	if (n) {
		for (int r = 0; r < s->a->ranks && op == DRV_OP_ALL_REDUCE; r++)
			expect += drv_value(r, first);
		if (op != DRV_OP_ALL_REDUCE)
			expect = drv_value(prev_rank(s), first);
		fprintf(stderr, "nccl_driver: rank %d: %s of %zu B: %zu of %zu elements wrong, the "
			"first at %zu: %g, expected %g\n", s->rank, drv_op_name(op),
			count * DRV_ELEM_BYTES, n, count, first, (double)s->host[first], expect);
	}
	*wrong += n;
	return DRV_EXIT_OK;
}

/* calls of op on count elements into a receive buffer set to NaN first; *us per call. */
static int run_calls(struct rank_state *s, enum drv_op op, size_t count, int calls, double *us,
		     size_t *wrong)
{
	double t0;
	int rc;

	CUDA_TRY(s, cudaMemsetAsync(s->recv, 0xff, count * DRV_ELEM_BYTES, s->stream));
	if ((rc = wait_stream(s)))
		return rc;
	t0 = now_s();
	for (int i = 0; i < calls; i++)
		if ((rc = launch(s, op, count)))
			return rc;
	if ((rc = wait_stream(s)))
		return rc;
	*us = (now_s() - t0) * 1e6 / calls;
	return check_result(s, op, count, wrong);
}

/* One figure reduced across the ranks (op: ncclMax or ncclSum). */
static int reduce_figure(struct rank_state *s, double *v, ncclRedOp_t op)
{
	int rc;

	CUDA_TRY(s, cudaMemcpy(s->stat, v, sizeof(*v), cudaMemcpyHostToDevice));
	NCCL_TRY(s, ncclAllReduce(s->stat, s->stat, 1, ncclDouble, op, s->comm, s->stream));
	if ((rc = wait_stream(s)))
		return rc;
	CUDA_TRY(s, cudaMemcpy(v, s->stat, sizeof(*v), cudaMemcpyDeviceToHost));
	return DRV_EXIT_OK;
}

static int run_size(struct rank_state *s, enum drv_op op, size_t bytes, struct size_result *out)
{
	size_t count = bytes / DRV_ELEM_BYTES, wrong = 0;
	double us = 0;
	int rc;

	if (s->a->warmup > 0 && (rc = run_calls(s, op, count, s->a->warmup, &us, &wrong)))
		return rc;
	if ((rc = run_calls(s, op, count, s->a->iters, &us, &wrong)))
		return rc;
	out->us = us;
	out->wrong = (double)wrong;
	if ((rc = reduce_figure(s, &out->us, ncclMax)))
		return rc;
	return reduce_figure(s, &out->wrong, ncclSum);
}

static void print_header(const struct rank_state *s, const char *gpu)
{
	const char *vars[] = { "NCCL_NET", "NCCL_NET_PLUGIN", "NCCL_PROFILER_PLUGIN",
			       "NCCL_ALGO", "NCCL_PROTO", "FABRICLAB_TRANSPORT" };
	int v = drv_nccl_version();

	printf("# nccl_driver: NCCL %d.%d.%d (library %d, header %d), %d ranks, %s\n",
	       v / 10000, v / 100 % 100, v % 100, v, NCCL_VERSION_CODE, s->a->ranks, gpu);
	printf("# float32 out of place, %d warm-up + %d timed calls per size, every element "
	       "checked after each\n#", s->a->warmup, s->a->iters);
	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		printf(" %s=%s", vars[i], getenv(vars[i]) ? getenv(vars[i]) : "");
	printf("\n");
	fflush(stdout);
}

static int run_op(struct rank_state *s, enum drv_op op, size_t *wrong_total)
{
	size_t sizes[MAX_SIZES], n = drv_sizes(s->a, sizes, MAX_SIZES);
	double factor = op == DRV_OP_ALL_REDUCE ? 2.0 * (s->a->ranks - 1) / s->a->ranks : 1.0;
	double bus_sum = 0;
	int rc;

	if (s->rank == 0)
		printf("#\n# %s\n# %12s %12s %8s %6s %12s %12s %12s %8s\n", drv_op_name(op),
		       "size(B)", "count", "type", "redop", "time(us)", "algbw(GB/s)",
		       "busbw(GB/s)", "#wrong");
	for (size_t i = 0; i < n; i++) {
		struct size_result r;
		double algbw;

		if ((rc = run_size(s, op, sizes[i], &r)))
			return rc;
		algbw = (double)sizes[i] / (r.us * 1e-6) / 1e9;
		bus_sum += algbw * factor;
		*wrong_total += (size_t)r.wrong;
		if (s->rank == 0) {
			printf("  %12zu %12zu %8s %6s %12.1f %12.3f %12.3f %8.0f\n", sizes[i],
			       sizes[i] / DRV_ELEM_BYTES, "float",
			       op == DRV_OP_ALL_REDUCE ? "sum" : "none", r.us, algbw,
			       algbw * factor, r.wrong);
			fflush(stdout);
		}
	}
	if (s->rank == 0)
		printf("# %s: avg busbw %.3f GB/s\n", drv_op_name(op), n ? bus_sum / n : 0.0);
	return DRV_EXIT_OK;
}

static int get_id(struct rank_state *s, ncclUniqueId *id)
{
	if (s->rank == 0) {
		NCCL_TRY(s, ncclGetUniqueId(id));
		if (drv_uid_publish(s->a->id_file, id, sizeof(*id), s->err, s->errlen))
			return DRV_EXIT_FAILED;
		return DRV_EXIT_OK;
	}
	if (drv_uid_wait(s->a->id_file, id, sizeof(*id), s->a->id_timeout_s, s->err, s->errlen))
		return DRV_EXIT_FAILED;
	return DRV_EXIT_OK;
}

static int set_up(struct rank_state *s)
{
	size_t bytes = s->a->max_bytes / DRV_ELEM_BYTES * DRV_ELEM_BYTES;
	ncclUniqueId id;
	int rc;

	CUDA_TRY(s, cudaSetDevice(s->a->device));
	if ((rc = get_id(s, &id)))
		return rc;
	NCCL_TRY(s, ncclCommInitRank(&s->comm, s->a->ranks, id, s->rank));
	s->comm_live = 1;
	CUDA_TRY(s, cudaStreamCreateWithFlags(&s->stream, cudaStreamNonBlocking));
	CUDA_TRY(s, cudaMalloc((void **)&s->send, bytes));
	CUDA_TRY(s, cudaMalloc((void **)&s->recv, bytes));
	CUDA_TRY(s, cudaMalloc((void **)&s->stat, sizeof(double)));
	CUDA_TRY(s, cudaMallocHost((void **)&s->host, bytes));
	/* The send buffer holds the pattern once; every size sends a prefix of it. */
	drv_fill(s->host, bytes / DRV_ELEM_BYTES, s->rank);
	CUDA_TRY(s, cudaMemcpy(s->send, s->host, bytes, cudaMemcpyHostToDevice));
	return DRV_EXIT_OK;
}

static void tear_down(struct rank_state *s, int ok)
{
	if (s->comm_live) {
		if (ok)
			ok = ncclCommFinalize(s->comm) == ncclSuccess;
		if (ok)
			ncclCommDestroy(s->comm);
		else
			ncclCommAbort(s->comm);
		s->comm_live = 0;
	}
	cudaFreeHost(s->host);
	cudaFree(s->stat);
	cudaFree(s->recv);
	cudaFree(s->send);
	if (s->stream)
		cudaStreamDestroy(s->stream);
}

int drv_rank_run(const struct drv_args *a, int rank, void *ctx, char *err, size_t errlen)
{
	struct rank_state s = { .a = a, .rank = rank, .err = err, .errlen = errlen,
				.deadline = now_s() + a->timeout_s };
	const unsigned ops[] = { DRV_OP_ALL_REDUCE, DRV_OP_SENDRECV };
	char gpu[512];
	size_t wrong = 0;
	int rc;

	(void)ctx;
	if ((rc = drv_gpu_probe(a, gpu, sizeof(gpu)))) {
		snprintf(err, errlen, "%s", gpu);
		return rc;
	}
	rc = set_up(&s);
	if (!rc && rank == 0)
		print_header(&s, gpu);
	for (size_t i = 0; !rc && i < sizeof(ops) / sizeof(ops[0]); i++)
		if (a->ops & ops[i])
			rc = run_op(&s, (enum drv_op)ops[i], &wrong);
	tear_down(&s, rc == DRV_EXIT_OK);
	if (!rc && rank == 0) {
		printf("# wrong elements: %zu %s\n", wrong, wrong ? "FAILED" : "(OK)");
		fflush(stdout);
	}
	/* Every rank knows the sum; rank 0 alone says it. */
	if (!rc && wrong)
		return rank ? DRV_EXIT_WRONG :
			      fail(&s, DRV_EXIT_WRONG, "%zu elements wrong over all sizes and ranks",
				   wrong);
	return rc;
}
