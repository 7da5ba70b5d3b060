/*
 * A test artifact: a net plugin that forwards every call to the plugin named by
 * FABRICLAB_TAP_INNER (exporting the same ncclNetPlugin_vN, TAP_VERSION 8 or 12) and writes
 * what the caller did into FABRICLAB_TAP_DIR/tap.<pid>, one line per call ending in the time
 * (us, monotonic), so a test can hold the shim to what NCCL's proxy does
 * (tests/integration/test_shim_nccl_rules.sh):
 *
 *   init prof=P                     P: 1 when a profiler callback was passed (v10+)
 *   isend C R SIZE TAG PH           send comm C, request R (0: not now); PH: 1 with a handle
 *   irecv C R N S1,S2.. T1,T2.. PH HINT   HINT: 1 when *request held NCCL's hint on entry
 *   done R S1,S2..                  test of R said done, with the sizes it wrote
 *   iflush C N S1,S2..
 *   props FF                        getProperties' forceFlush as handed on
 *
 * FABRICLAB_TAP_FORCE_FLUSH=1 sets forceFlush in the inner's properties (NCCL's IB does on
 * mlx5 DataDirect NICs: 2.30.7 src/transport/net_ib/init.cc:554-557). FABRICLAB_TAP_LIE=1
 * reports one byte more than arrived for every receive that wrote a size.
 * FABRICLAB_TAP_EVENTS=handle (v10+) starts and stops a net-plugin profiler event on the handle
 * of every isend through the callback init was given, as NCCL's IB does (2.30.7
 * src/transport/net_ib/p2p.cc:489-490); =null starts them on a NULL handle instead.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "plugin/abi/nccl_abi.h"
#include "plugin/base/fl_types.h"

#if TAP_VERSION == 8
#define TAP_TABLE fl_abi_net_v8
#define TAP_PROPS fl_abi_props_v8
#define TAP_SYMBOL "ncclNetPlugin_v8"
#define TAP_EXPORT ncclNetPlugin_v8
#define SIZE_T int
#elif TAP_VERSION == 12
#define TAP_TABLE fl_abi_net_v12
#define TAP_PROPS fl_abi_props_v12
#define TAP_SYMBOL "ncclNetPlugin_v12"
#define TAP_EXPORT ncclNetPlugin_v12
#define SIZE_T size_t
#else
#error "TAP_VERSION: 8 or 12"
#endif

__attribute__((visibility("default"))) struct TAP_TABLE TAP_EXPORT;
static struct TAP_TABLE inner;
#if TAP_VERSION >= 10
static fl_abi_prof_callback_fn profiler; /* what init was given */
#endif
static FILE *out;
static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;

static void put(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void put(const char *fmt, ...)
{
	struct timespec ts;
	va_list ap;

	if (!out)
		return;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	pthread_mutex_lock(&out_lock);
	va_start(ap, fmt);
	vfprintf(out, fmt, ap);
	va_end(ap);
	/* when, in us: the line's last field */
	fprintf(out, " %lld\n", (long long)ts.tv_sec * 1000000 + ts.tv_nsec / 1000);
	fflush(out);
	pthread_mutex_unlock(&out_lock);
}

static void put_ints(char *buf, size_t len, int n, const int *v)
{
	size_t at = 0;

	buf[0] = '\0';
	for (int i = 0; i < n && at < len; i++)
		at += (size_t)snprintf(buf + at, len - at, "%s%d", i ? "," : "", v[i]);
}

static int load_inner(void)
{
	const char *path = getenv("FABRICLAB_TAP_INNER"), *dir = getenv("FABRICLAB_TAP_DIR");
	const struct TAP_TABLE *t;
	void *lib;

	if (!path || !(lib = dlopen(path, RTLD_NOW | RTLD_LOCAL)))
		return FL_ERR_SYSTEM;
	t = dlsym(lib, TAP_SYMBOL);
	if (!t)
		return FL_ERR_SYSTEM;
	inner = *t;
	if (dir && !out) {
		char name[4096];

		snprintf(name, sizeof(name), "%s/tap.%d", dir, (int)getpid());
		out = fopen(name, "a");
	}
	return FL_OK;
}

#if TAP_VERSION >= 10
/* An event started and stopped on the handle, as a plugin with profiler events does. */
static void emit(void *ph)
{
	const char *how = getenv("FABRICLAB_TAP_EVENTS");
	void *event = NULL;

	if (!how || !profiler)
		return;
	if (!strcmp(how, "null"))
		ph = NULL;
	profiler(&event, 0 /* ncclProfilerNetEventStart */, ph, 1, NULL);
	profiler(&event, 1 /* ncclProfilerNetEventStop */, ph, 1, NULL);
}
#endif

static int tap_isend(void *comm, void *data, SIZE_T size, int tag, void *mh,
#if TAP_VERSION >= 10
		     void *ph,
#endif
		     void **request)
{
	int rc, has_ph = 0;

#if TAP_VERSION >= 10
	has_ph = ph != NULL;
	rc = inner.isend(comm, data, size, tag, mh, ph, request);
	if (!rc && *request)
		emit(ph);
#else
	rc = inner.isend(comm, data, size, tag, mh, request);
#endif
	put("isend %p %p %zu %d %d", comm, rc ? NULL : *request, (size_t)size, tag, has_ph);
	return rc;
}

static int tap_irecv(void *comm, int n, void **data, SIZE_T *sizes, int *tags, void **mhs,
#if TAP_VERSION >= 10
		     void **phs,
#endif
		     void **request)
{
	char s[256], t[256];
	int rc, has_ph = 0, hint = *request == FL_OPTIONAL_RECV_COMPLETION, sz[FL_MAX_RECVS];

	for (int i = 0; i < n && i < FL_MAX_RECVS; i++)
		sz[i] = (int)sizes[i];
#if TAP_VERSION >= 10
	has_ph = phs != NULL;
	for (int i = 0; phs && i < n; i++)
		has_ph &= phs[i] != NULL;
	rc = inner.irecv(comm, n, data, sizes, tags, mhs, phs, request);
#else
	rc = inner.irecv(comm, n, data, sizes, tags, mhs, request);
#endif
	put_ints(s, sizeof(s), n < FL_MAX_RECVS ? n : FL_MAX_RECVS, sz);
	put_ints(t, sizeof(t), n < FL_MAX_RECVS ? n : FL_MAX_RECVS, tags);
	put("irecv %p %p %d %s %s %d %d", comm, rc ? NULL : *request, n, s, t, has_ph, hint);
	return rc;
}

static int tap_test(void *request, int *done, int *sizes)
{
	int rc = inner.test(request, done, sizes);
	char s[256] = "-";

	if (rc || !*done)
		return rc;
	if (sizes && getenv("FABRICLAB_TAP_LIE") && sizes[0] > 0)
		sizes[0]++;
	if (sizes)
		put_ints(s, sizeof(s), FL_MAX_RECVS, sizes);
	put("done %p %s", request, s);
	return rc;
}

static int tap_iflush(void *comm, int n, void **data, int *sizes, void **mhs, void **request)
{
	char s[256];

	put_ints(s, sizeof(s), n < FL_MAX_RECVS ? n : FL_MAX_RECVS, sizes);
	put("iflush %p %d %s", comm, n, s);
	return inner.iflush ? inner.iflush(comm, n, data, sizes, mhs, request)
			    : (*request = NULL, FL_OK);
}

static int tap_props(int dev, struct TAP_PROPS *props)
{
	int rc = inner.get_properties(dev, props);

#if TAP_VERSION >= 9
	if (!rc && getenv("FABRICLAB_TAP_FORCE_FLUSH"))
		props->force_flush = 1;
	if (!rc)
		put("props %d", props->force_flush);
#endif
	return rc;
}

/* The inner's table with the calls above in place of its own; iflush only where it has one. */
static void splice(void)
{
	TAP_EXPORT = inner;
	TAP_EXPORT.name = "tap";
	TAP_EXPORT.isend = tap_isend;
	TAP_EXPORT.irecv = tap_irecv;
	TAP_EXPORT.test = tap_test;
	TAP_EXPORT.iflush = tap_iflush;
	TAP_EXPORT.get_properties = tap_props;
}

#if TAP_VERSION >= 11
static int tap_init(void **ctx, uint64_t comm_id, struct fl_abi_comm_config *config,
		    fl_abi_logger_fn logger, fl_abi_prof_callback_fn prof)
{
	int rc = load_inner();

	if (rc)
		return rc;
	splice();
	TAP_EXPORT.init = tap_init;
	profiler = prof;
	put("init prof=%d", prof != NULL);
	return inner.init(ctx, comm_id, config, logger, prof);
}
#else
static int tap_init(fl_abi_logger_fn logger)
{
	int rc = load_inner();

	if (rc)
		return rc;
	splice();
	TAP_EXPORT.init = tap_init;
	put("init prof=0");
	return inner.init(logger);
}
#endif

struct TAP_TABLE TAP_EXPORT = { .name = "tap", .init = tap_init };
