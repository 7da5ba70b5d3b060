/*
 * A bench artifact: the thinnest layer between NCCL and a net plugin, so that `make bench` can
 * say what any layer costs before fabriclab's own work is counted. It loads the plugin named by
 * FABRICLAB_FORWARD_INNER, which must export the same ncclNetPlugin_vN as this object
 * (FORWARD_VERSION, 11 or 12: their isend, irecv and test take the same arguments), and hands
 * NCCL that plugin's table with isend, irecv and test replaced:
 *
 *   FORWARD_WRAP=0   one more call on the way; NCCL holds the inner's own requests.
 *   FORWARD_WRAP=1   NCCL holds a request of ours that points at the inner's, as any layer that
 *                    keeps state per request must (fabriclab's wrap does, in a per-comm pool).
 *   FORWARD_SPIN_NS  with FORWARD_WRAP=1: that many ns of busy waiting once a request is done,
 *                    before test returns it: what a given amount of work per completion costs.
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "plugin/abi/nccl_abi.h"

#if FORWARD_VERSION == 11
#define FORWARD_TABLE fl_abi_net_v11
#define FORWARD_SYMBOL "ncclNetPlugin_v11"
#define FORWARD_EXPORT ncclNetPlugin_v11
#elif FORWARD_VERSION == 12
#define FORWARD_TABLE fl_abi_net_v12
#define FORWARD_SYMBOL "ncclNetPlugin_v12"
#define FORWARD_EXPORT ncclNetPlugin_v12
#else
#error "FORWARD_VERSION: 11 or 12"
#endif
#ifndef FORWARD_SPIN_NS
#define FORWARD_SPIN_NS 0
#endif

__attribute__((visibility("default"))) struct FORWARD_TABLE FORWARD_EXPORT;
static struct FORWARD_TABLE inner;

struct forward_req {
	void *inner;
	struct forward_req *next_free;
};

/*
 * NCCL tests a request on the thread that posted it: its proxy progress posts and tests in one
 * function (2.28.9 src/transport/net.cc:1322 and 1339 for sends, 1482 and 1508 for receives).
 * initial-exec: no __tls_get_addr per call.
 */
static __thread __attribute__((tls_model("initial-exec"))) struct forward_req *free_reqs;

static struct forward_req *req_get(void)
{
	struct forward_req *r = free_reqs;

	if (!r)
		return malloc(sizeof(*r)); /* as many as are ever outstanding at once, then reused */
	free_reqs = r->next_free;
	return r;
}

static void req_put(struct forward_req *r)
{
	r->next_free = free_reqs;
	free_reqs = r;
}

static void spin(void)
{
	struct timespec t0, t;

	if (!FORWARD_SPIN_NS)
		return;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do
		clock_gettime(CLOCK_MONOTONIC, &t);
	while ((t.tv_sec - t0.tv_sec) * 1000000000LL + (t.tv_nsec - t0.tv_nsec) < FORWARD_SPIN_NS);
}

/* The inner's request wrapped in ours; NULL from the inner ("not now") stays NULL. */
static int wrapped(int rc, void *inner_req, void **request)
{
	struct forward_req *r;

	*request = NULL;
	if (rc || !inner_req)
		return rc;
	r = req_get();
	if (!r)
		return 2; /* ncclSystemError */
	r->inner = inner_req;
	*request = r;
	return 0;
}

static int forward_isend(void *comm, void *data, size_t size, int tag, void *mh, void *ph,
			 void **request)
{
	void *inner_req = NULL;
	int rc;

	if (!FORWARD_WRAP)
		return inner.isend(comm, data, size, tag, mh, ph, request);
	rc = inner.isend(comm, data, size, tag, mh, ph, &inner_req);
	return wrapped(rc, inner_req, request);
}

static int forward_irecv(void *comm, int n, void **data, size_t *sizes, int *tags, void **mhs,
			 void **phs, void **request)
{
	/* NCCL's hint (an optional receive's request) is the inner's to read */
	void *inner_req = *request;
	int rc;

	if (!FORWARD_WRAP)
		return inner.irecv(comm, n, data, sizes, tags, mhs, phs, request);
	rc = inner.irecv(comm, n, data, sizes, tags, mhs, phs, &inner_req);
	return wrapped(rc, inner_req, request);
}

static int forward_test(void *request, int *done, int *sizes)
{
	struct forward_req *r = request;
	int rc;

	if (!FORWARD_WRAP)
		return inner.test(request, done, sizes);
	rc = inner.test(r->inner, done, sizes);
	if (!rc && *done) {
		spin();
		req_put(r);
	}
	return rc;
}

/* The inner's table as it exports it: a plugin may fill its slots inside init (IBext does). */
static const struct FORWARD_TABLE *inner_table;

/*
 * NCCL calls init for every communicator before any other slot (2.28.9
 * src/plugin/net.cc:172-183) and keeps the plugin's own table, reading its slots at each use
 * (src/plugin/net/net_v11.cc:16-19), so the copy taken again after the inner's init is what
 * it calls.
 */
static void take_inner_table(void)
{
	inner = *inner_table;
	FORWARD_EXPORT = inner;
	FORWARD_EXPORT.isend = forward_isend;
	FORWARD_EXPORT.irecv = forward_irecv;
	FORWARD_EXPORT.test = forward_test;
}

static int forward_init(void **ctx, uint64_t comm_id, struct fl_abi_comm_config *config,
			fl_abi_logger_fn logger, fl_abi_prof_callback_fn prof)
{
	int rc = inner_table->init(ctx, comm_id, config, logger, prof);

	/* once filled, never rewritten: another comm's proxy thread may be reading our slots */
	if (memcmp(&inner, inner_table, sizeof(inner))) {
		take_inner_table();
		FORWARD_EXPORT.init = forward_init;
	}
	return rc;
}

/* Why the inner could not be loaded, said when NCCL calls init (ncclInvalidUsage). */
static char load_error[512];

static int forward_init_fails(void **ctx, uint64_t comm_id, struct fl_abi_comm_config *config,
			      fl_abi_logger_fn logger, fl_abi_prof_callback_fn prof)
{
	(void)ctx, (void)comm_id, (void)config, (void)logger, (void)prof;
	fprintf(stderr, "forward: %s\n", load_error);
	return 5;
}

__attribute__((constructor)) static void forward_load(void)
{
	const char *path = getenv("FABRICLAB_FORWARD_INNER");
	void *lib = path ? dlopen(path, RTLD_NOW | RTLD_LOCAL) : NULL;
	void *table = lib ? dlsym(lib, FORWARD_SYMBOL) : NULL;

	if (!table) {
		if (!path)
			snprintf(load_error, sizeof(load_error), "FABRICLAB_FORWARD_INNER is unset: "
				 "expected the path of a net plugin exporting " FORWARD_SYMBOL);
		else
			snprintf(load_error, sizeof(load_error), "FABRICLAB_FORWARD_INNER=%s: %s",
				 path, lib ? "exports no " FORWARD_SYMBOL : dlerror());
		FORWARD_EXPORT.name = "forward";
		FORWARD_EXPORT.init = forward_init_fails;
		return;
	}
	inner_table = table;
	take_inner_table();
	FORWARD_EXPORT.init = forward_init;
}
